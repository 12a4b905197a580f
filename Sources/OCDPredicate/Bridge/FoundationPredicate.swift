import Foundation

/// Why a Foundation `Predicate` could not become an `NSPredicate`.
public struct PredicateConversionError: Error, Sendable, CustomStringConvertible {
    /// What could not be converted, e.g. `"a key path with no name: \\Person.age"`.
    public var reason: String
    /// `Can't convert the Predicate to an NSPredicate: <reason>`.
    public var description: String { "Can't convert the Predicate to an NSPredicate: \(reason)" }
}

/// Converts `#Predicate` trees to `NSPredicate`s: each `PredicateExpressions` node converts itself, the
/// way swift-foundation's `NSPredicateConversion` does on Apple platforms.
struct PredicateConversion {
    /// Names of key paths that the key path's root type does not name itself.
    let keyNames: [AnyKeyPath: String]
    /// Variables bound to expressions: the predicate's input is `SELF`; closures inside bind others.
    var variables: [PredicateExpressions.VariableID: NSExpression] = [:]
    var subqueryCount = 0

    func name(of keyPath: AnyKeyPath, rootType: Any.Type) -> String? {
        if let naming = rootType as? KeyPathNaming.Type, let name = naming.keyName(for: keyPath) { return name }
        return keyNames[keyPath]
    }

    enum Converted {
        case expression(NSExpression)
        case predicate(NSPredicate)
    }

    mutating func expression(_ node: Any) throws -> NSExpression {
        switch try convert(node) {
        case .expression(let expression): return expression
        case .predicate(let predicate):
            // A Boolean sub-predicate used as a value (`flag == (a > b)`): TERNARY keeps its meaning.
            return NSExpression(forConditional: predicate, trueExpression: NSExpression(forConstantValue: true), falseExpression: NSExpression(forConstantValue: false))
        }
    }

    mutating func predicate(_ node: Any) throws -> NSPredicate {
        switch try convert(node) {
        case .predicate(let predicate): return predicate
        case .expression(let expression):
            // A Boolean value used as a condition (`$0.isActive`).
            return NSComparisonPredicate(expression, .standard(.equalTo), NSExpression(forConstantValue: true), modifier: .direct, options: [])
        }
    }

    mutating func convert(_ node: Any) throws -> Converted {
        guard let convertible = node as? any ConvertibleToNSPredicate else {
            throw PredicateConversionError(reason: "\(type(of: node)) has no NSPredicate equivalent")
        }
        return try convertible.convert(&self)
    }

    mutating func subqueryVariable() -> String {
        subqueryCount += 1
        return "_local_\(subqueryCount)"
    }
}

protocol ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted
}

extension PredicateConversion.Converted {
    static func comparison(_ lhs: NSExpression, _ op: NSComparisonPredicate.Operator, _ rhs: NSExpression, options: NSComparisonPredicate.Options = []) -> Self {
        .predicate(NSComparisonPredicate(lhs, .standard(op), rhs, modifier: .direct, options: options))
    }
}

extension PredicateExpressions.Variable: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        guard let bound = conversion.variables[key] else {
            throw PredicateConversionError(reason: "a variable that is not the predicate's input")
        }
        return .expression(bound)
    }
}

extension PredicateExpressions.KeyPath: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let base = try conversion.expression(root)
        let name: String
        if keyPath == \String.count || keyPath == \Substring.count {
            name = "length"
        } else if let counted = Root.Output.self as? CountedCollectionKeyPath.Type, keyPath == counted.countKeyPath {
            name = "@count"
        } else if let found = conversion.name(of: keyPath, rootType: Root.Output.self) {
            name = found
        } else {
            throw PredicateConversionError(reason: "a key path with no name: \(keyPath) (make \(Root.Output.self) conform to KeyPathNaming, or pass keyNames)")
        }
        let path = KeyPathComponents(name)
        switch base.node {
        case .evaluatedObject: return .expression(NSExpression(node: .keyPath(path)))
        case .keyPath(let left): return .expression(NSExpression(node: .keyPath(KeyPathComponents(components: left.components + path.components))))
        default: return .expression(NSExpression(node: .keyPathOnValue(base, path)))
        }
    }
}

/// The standard collections whose `count` is `@count` in a key path.
protocol CountedCollectionKeyPath {
    static var countKeyPath: AnyKeyPath { get }
}

extension Array: CountedCollectionKeyPath {
    static var countKeyPath: AnyKeyPath { \Array.count }
}

extension Set: CountedCollectionKeyPath {
    static var countKeyPath: AnyKeyPath { \Set.count }
}

extension Dictionary: CountedCollectionKeyPath {
    static var countKeyPath: AnyKeyPath { \Dictionary.count }
}

extension PredicateExpressions.Value: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(NSExpression(forConstantValue: value))
    }
}

extension PredicateExpressions.NilLiteral: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(NSExpression(forConstantValue: nil))
    }
}

extension PredicateExpressions.Equal: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .comparison(try conversion.expression(lhs), .equalTo, try conversion.expression(rhs))
    }
}

extension PredicateExpressions.NotEqual: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .comparison(try conversion.expression(lhs), .notEqualTo, try conversion.expression(rhs))
    }
}

extension PredicateExpressions.Comparison: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let op: NSComparisonPredicate.Operator
        switch self.op {
        case .lessThan: op = .lessThan
        case .lessThanOrEqual: op = .lessThanOrEqualTo
        case .greaterThan: op = .greaterThan
        case .greaterThanOrEqual: op = .greaterThanOrEqualTo
        }
        return .comparison(try conversion.expression(lhs), op, try conversion.expression(rhs))
    }
}

extension PredicateExpressions.Conjunction: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .predicate(NSCompoundPredicate.flattening(.and, try conversion.predicate(lhs), try conversion.predicate(rhs)))
    }
}

extension PredicateExpressions.Disjunction: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .predicate(NSCompoundPredicate.flattening(.or, try conversion.predicate(lhs), try conversion.predicate(rhs)))
    }
}

extension PredicateExpressions.Negation: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .predicate(NSCompoundPredicate(type: .not, subpredicates: [try conversion.predicate(wrapped)]))
    }
}

extension PredicateExpressions.Arithmetic: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let function: BuiltinFunction
        switch op {
        case .add: function = .add
        case .subtract: function = .subtract
        case .multiply: function = .multiply
        }
        return .expression(.binary(function, try conversion.expression(lhs), try conversion.expression(rhs)))
    }
}

extension PredicateExpressions.FloatDivision: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(.binary(.divide, try conversion.expression(lhs), try conversion.expression(rhs)))
    }
}

extension PredicateExpressions.IntDivision: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(.binary(.divide, try conversion.expression(lhs), try conversion.expression(rhs)))
    }
}

extension PredicateExpressions.IntRemainder: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(.binary(.modulus, try conversion.expression(lhs), try conversion.expression(rhs)))
    }
}

extension PredicateExpressions.UnaryMinus: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(.binary(.subtract, NSExpression(forConstantValue: 0), try conversion.expression(wrapped)))
    }
}

extension PredicateExpressions.ForcedUnwrap: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        try conversion.convert(inner)
    }
}

extension PredicateExpressions.OptionalFlatMap: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let value = try conversion.expression(wrapped)
        conversion.variables[variable.key] = value
        let converted = try conversion.convert(transform)
        // `x?.y`: key-value coding already answers nil for a key of nil, so the variable is just `x`.
        if case .expression(let expression) = converted, expression.expressionType == .keyPath { return converted }
        // Anything else (a comparison, arithmetic) would give a value for nil, or fail on it: nil stays
        // nil, as Apple's conversion writes it, `TERNARY(x != nil, transform, nil)`.
        let transformed: NSExpression
        switch converted {
        case .expression(let expression): transformed = expression
        case .predicate(let predicate):
            transformed = NSExpression(forConditional: predicate, trueExpression: NSExpression(forConstantValue: true), falseExpression: NSExpression(forConstantValue: false))
        }
        let isPresent = NSComparisonPredicate(value, .standard(.notEqualTo), NSExpression(forConstantValue: nil), modifier: .direct, options: [])
        return .expression(NSExpression(forConditional: isPresent, trueExpression: transformed, falseExpression: NSExpression(forConstantValue: nil)))
    }
}

extension PredicateExpressions.NilCoalesce: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let value = try conversion.expression(lhs)
        let isPresent = NSComparisonPredicate(value, .standard(.notEqualTo), NSExpression(forConstantValue: nil), modifier: .direct, options: [])
        return .expression(NSExpression(forConditional: isPresent, trueExpression: value, falseExpression: try conversion.expression(rhs)))
    }
}

extension PredicateExpressions.Conditional: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(NSExpression(forConditional: try conversion.predicate(test), trueExpression: try conversion.expression(trueBranch), falseExpression: try conversion.expression(falseBranch)))
    }
}

extension PredicateExpressions.SequenceContains: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .comparison(try conversion.expression(element), .in, try conversion.expression(sequence))
    }
}

extension PredicateExpressions.CollectionContainsCollection: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .comparison(try conversion.expression(base), .contains, try conversion.expression(other))
    }
}

extension PredicateExpressions.SequenceStartsWith: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .comparison(try conversion.expression(base), .beginsWith, try conversion.expression(prefix))
    }
}

extension PredicateExpressions.SequenceContainsWhere: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let name = conversion.subqueryVariable()
        let collection = try conversion.expression(sequence)
        conversion.variables[variable.key] = NSExpression(forVariable: name)
        let condition = try conversion.predicate(test)
        let subquery = NSExpression(forSubquery: collection, usingIteratorVariable: name, predicate: condition)
        return .comparison(NSExpression(node: .keyPathOnValue(subquery, KeyPathComponents("@count"))), .greaterThan, NSExpression(forConstantValue: 0))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let name = conversion.subqueryVariable()
        let collection = try conversion.expression(sequence)
        conversion.variables[variable.key] = NSExpression(forVariable: name)
        let failing = NSCompoundPredicate(type: .not, subpredicates: [try conversion.predicate(test)])
        let subquery = NSExpression(forSubquery: collection, usingIteratorVariable: name, predicate: failing)
        return .comparison(NSExpression(node: .keyPathOnValue(subquery, KeyPathComponents("@count"))), .equalTo, NSExpression(forConstantValue: 0))
    }
}

extension PredicateExpressions.SequenceMaximum: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(NSExpression(forFunction: "max:", arguments: [try conversion.expression(elements)]))
    }
}

extension PredicateExpressions.SequenceMinimum: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(NSExpression(forFunction: "min:", arguments: [try conversion.expression(elements)]))
    }
}

extension PredicateExpressions.DictionaryKeySubscript: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let base = try conversion.expression(wrapped)
        let keyExpression = try conversion.expression(key)
        // `$0["name"]` on a dictionary input reads the key `name`, as key-value coding does.
        if case .constant(.string(let name)) = keyExpression.node {
            switch base.node {
            case .evaluatedObject: return .expression(NSExpression(node: .keyPath(KeyPathComponents(components: [name]))))
            case .keyPath(let left): return .expression(NSExpression(node: .keyPath(KeyPathComponents(components: left.components + [name]))))
            default: break
            }
        }
        return .expression(.binary(.index, base, keyExpression))
    }
}

extension PredicateExpressions.CollectionIndexSubscript: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(.binary(.index, try conversion.expression(wrapped), try conversion.expression(index)))
    }
}

extension NSCompoundPredicate {
    /// `a AND (b AND c)` as one three-way `AND`, as Apple's conversion and parser build chains.
    static func flattening(_ type: LogicalType, _ lhs: NSPredicate, _ rhs: NSPredicate) -> NSCompoundPredicate {
        func parts(_ predicate: NSPredicate) -> [NSPredicate] {
            if let compound = predicate as? NSCompoundPredicate, compound.compoundPredicateType == type { return compound.predicates }
            return [predicate]
        }
        return NSCompoundPredicate(type: type, subpredicates: parts(lhs) + parts(rhs))
    }
}

extension _NSPredicateFormatInitializable where Self: NSPredicate {
    /// Converts a Foundation `Predicate` built with `#Predicate`, naming key paths through the input type's
    /// ``KeyPathNaming`` conformance (the `@Managed` macro writes it) or `keyNames`. Nil when a node has no
    /// NSPredicate equivalent; ``init(converting:keyNames:)`` says which.
    public init?<Input>(_ predicate: Predicate<Input>, keyNames: [AnyKeyPath: String] = [:]) {
        guard let converted = try? Self(converting: predicate, keyNames: keyNames) else { return nil }
        self = converted
    }

    /// Converts a Foundation `Predicate`, throwing ``PredicateConversionError`` with the node or key path
    /// that has no NSPredicate equivalent.
    public init<Input>(converting predicate: Predicate<Input>, keyNames: [AnyKeyPath: String] = [:]) throws {
        var conversion = PredicateConversion(keyNames: keyNames)
        conversion.variables[predicate.variable.key] = NSExpression.expressionForEvaluatedObject()
        let converted = try conversion.predicate(predicate.expression)
        guard let typed = converted as? Self else {
            throw PredicateConversionError(reason: "the predicate converts to \(type(of: converted)), not \(Self.self)")
        }
        self = typed
    }
}
