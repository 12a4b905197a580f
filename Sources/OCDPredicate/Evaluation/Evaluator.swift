import Foundation

/// Evaluates predicates and expressions against one object. Holds the variables: `SUBQUERY` iteration
/// variables and `:=` assignments while they are in scope, over the caller's bindings, which are converted
/// only when read (a predicate rarely reads every binding it is given).
final class Evaluator {
    private var variables: [String: Value] = [:]
    let rawBindings: [String: Any]?
    let context: NSMutableDictionary?

    init(bindings: [String: Any]?, context: NSMutableDictionary?) {
        self.rawBindings = bindings
        self.context = context
    }

    func test(_ predicate: NSPredicate, object: Value) throws -> Bool {
        if predicate.isEvaluationBlocked {
            throw PredicateEvaluationError(.evaluationDisabled, "This predicate has evaluation disabled: call allowEvaluation() on it once you trust its source. (\(predicate.predicateFormat))")
        }
        return try predicate.evaluate(in: self, object: object)
    }

    // MARK: Expressions

    func value(of expression: NSExpression, object: Value) throws -> Value {
        if expression.isEvaluationBlocked {
            throw PredicateEvaluationError(.evaluationDisabled, "This expression has evaluation disabled: call allowEvaluation() on it once you trust its source. (\(expression))")
        }
        switch expression.node {
        case .constant(let value):
            return value
        case .evaluatedObject:
            return object
        case .variable(let name):
            return try variable(name)
        case .keyPath(let path):
            return try KeyValueCoding.value(forKeyPath: path.components[...], of: object)
        case .keyPathOnValue(let operand, let path):
            return try KeyValueCoding.value(forKeyPath: path.components[...], of: value(of: operand, object: object))
        case .composition(_, let rhs):
            throw PredicateEvaluationError(.unsupported, "Can't apply '\(rhs)' as a key path component: only keys can follow '.' in a key path; write (a.b)[0] rather than a.b[0].")
        case .function(let name, let arguments, let target):
            if let target {
                return try callMethod(name, target: value(of: target, object: object), arguments: arguments.map { try value(of: $0, object: object) })
            }
            return try callBuiltin(name, arguments, object: object)
        case .symbolic(let symbol):
            throw PredicateEvaluationError(.invalidArgument, "\(symbol.rawValue) can only be used as an index: x[\(symbol.rawValue)].")
        case .set(let operation, let lhs, let rhs):
            return try setOperation(operation, value(of: lhs, object: object), value(of: rhs, object: object))
        case .subquery(let collection, let name, let predicate):
            let source = try value(of: collection, object: object)
            guard let elements = source.collectionElements else {
                if source.isNilOrNull { return .array([]) }
                throw PredicateEvaluationError(.notACollection, "The collection of a SUBQUERY must be an array or a set, not \(KeyValueCoding.typeName(source)).")
            }
            let saved = variables[name]
            defer { variables[name] = saved }
            var kept: [Value] = []
            for element in elements {
                variables[name] = element
                // Inside the subquery, bare key paths and SELF still mean the outer object.
                if try test(predicate, object: object) { kept.append(element) }
            }
            return .array(kept)
        case .aggregate(let elements):
            return .array(try elements.map { try value(of: $0, object: object) })
        case .anyKey:
            throw PredicateEvaluationError(.unsupported, "ANYKEY is only meaningful in Spotlight metadata queries and cannot be evaluated.")
        case .block(let block, let arguments):
            let values = try (arguments ?? []).map { try value(of: $0, object: object).anyValue ?? NSNull() }
            return Value(block(object.anyValue, values, context))
        case .conditional(let predicate, let whenTrue, let whenFalse):
            return try value(of: test(predicate, object: object) ? whenTrue : whenFalse, object: object)
        case .assignment(let name, let valueExpression):
            let result = try value(of: valueExpression, object: object)
            variables[name] = result
            context?[name] = result.anyValue ?? NSNull()
            return result
        }
    }

    private func variable(_ name: String) throws -> Value {
        if let value = variables[name] { return value }
        if let value = rawBindings?[name] {
            let converted = Value(value)
            variables[name] = converted
            return converted
        }
        if let value = context?[name] { return Value(value) }
        throw PredicateEvaluationError(.unboundVariable, "Can't get value for '\(name)' in bindings \(bindingsDescription(rawBindings)).")
    }

    private func setOperation(_ operation: NSExpression.SetOperation, _ lhs: Value, _ rhs: Value) throws -> Value {
        guard let a = lhs.collectionElements, let b = rhs.collectionElements else {
            throw PredicateEvaluationError(.notACollection, "Can't evaluate \(operation.rawValue) with \(KeyValueCoding.typeName(lhs)) and \(KeyValueCoding.typeName(rhs)): both sides must be collections.")
        }
        let left = Set(a), right = Set(b)
        switch operation {
        case .union: return .set(left.union(right))
        case .intersect: return .set(left.intersection(right))
        case .minus: return .set(left.subtracting(right))
        }
    }

    // MARK: Comparisons

    func compare(_ predicate: NSComparisonPredicate, object: Value) throws -> Bool {
        let lhs = try value(of: predicate.leftExpression, object: object)
        switch predicate.comparisonPredicateModifier {
        case .direct:
            let rhs = try value(of: predicate.rightExpression, object: object)
            return try Comparison.evaluate(predicate.op, lhs, rhs, options: predicate.options)
        case .any, .all:
            let elements: [Value]
            switch lhs {
            case .array(let values), .orderedSet(let values): elements = values
            case .set(let values): elements = Array(values)
            case .nil, .null: elements = []
            default:
                throw PredicateEvaluationError(.notACollection, "The left hand side for an ALL or ANY operator must be either an NSArray or an NSSet.")
            }
            let rhs = try value(of: predicate.rightExpression, object: object)
            let wantAll = predicate.comparisonPredicateModifier == .all
            for element in elements {
                let holds = try Comparison.evaluate(predicate.op, element, rhs, options: predicate.options)
                if wantAll && !holds { return false }
                if !wantAll && holds { return true }
            }
            return wantAll
        }
    }
}

extension NSExpression {
    /// This expression with `$VARIABLES` replaced; subquery variables are local and stay.
    func substituted(_ substitution: Substitution) throws -> NSExpression {
        func sub(_ e: NSExpression) throws -> NSExpression { try e.substituted(substitution) }
        switch node {
        case .constant, .evaluatedObject, .keyPath, .symbolic, .anyKey:
            return self
        case .variable(let name):
            return try substitution.expression(for: name)
        case .function(let name, let arguments, let target):
            return NSExpression(node: .function(name: name, arguments: try arguments.map(sub), target: try target.map(sub)))
        case .keyPathOnValue(let operand, let path):
            return NSExpression(node: .keyPathOnValue(try sub(operand), path))
        case .composition(let lhs, let rhs):
            return NSExpression(node: .composition(try sub(lhs), try sub(rhs)))
        case .set(let operation, let lhs, let rhs):
            return NSExpression(node: .set(operation, try sub(lhs), try sub(rhs)))
        case .subquery(let collection, let name, let predicate):
            var local = substitution
            local.shadowed.insert(name)
            let inner = try predicate.substituted(local)
            return NSExpression(node: .subquery(collection: try sub(collection), variable: name, predicate: inner))
        case .aggregate(let elements):
            return NSExpression(node: .aggregate(try elements.map(sub)))
        case .block(let block, let arguments):
            return NSExpression(node: .block(block, try arguments?.map(sub)))
        case .conditional(let predicate, let a, let b):
            return NSExpression(node: .conditional(try predicate.substituted(substitution), try sub(a), try sub(b)))
        case .assignment(let name, let value):
            return NSExpression(node: .assignment(variable: name, try sub(value)))
        }
    }

    /// The value of the expression for `object` (the `SELF` of the expression).
    ///
    /// `context` holds variables assigned with `:=` and can supply variable values. Stops with Apple's
    /// exception reason when the expression cannot be evaluated; see
    /// ``expressionValueThrowing(with:context:)``.
    public func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        do {
            return try expressionValueThrowing(with: object, context: context)
        } catch {
            fatalError("NSExpression: \(error) (expression: \(self))")
        }
    }

    /// The value of the expression for `object`, throwing ``PredicateEvaluationError`` where Apple raises.
    public func expressionValueThrowing(with object: Any?, context: NSMutableDictionary? = nil) throws -> Any? {
        let evaluator = Evaluator(bindings: nil, context: context)
        return try evaluator.value(of: self, object: Value(object)).anyValue
    }

    /// A copy with every `$VARIABLE` replaced by the value bound to it; a missing one stays a variable.
    public func withSubstitutionVariables(_ variables: [String: Any]) -> NSExpression {
        // Cannot throw: missing variables are kept.
        try! substituted(Substitution(variables: variables, requireAll: false))
    }

    /// A copy with every `$VARIABLE` replaced by the value bound to it; throws for a missing one.
    public func withSubstitutionVariablesThrowing(_ variables: [String: Any]) throws -> NSExpression {
        try substituted(Substitution(variables: variables, requireAll: true))
    }
}
