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
        let failure: Error
        do {
            guard let convertible = node as? any ConvertibleToNSPredicate else {
                throw PredicateConversionError(reason: "\(type(of: node)) has no NSPredicate equivalent")
            }
            return try convertible.convert(&self)
        } catch {
            failure = error
        }
        // A part that does not read the input (`settings.minimumAge`, `limits.count` of captured values)
        // is a constant, as Apple's conversion evaluates it. Only such a part is evaluated: evaluating one
        // that reads the input would run captured code (which may trap) before the input's read fails.
        if let expression = node as? any PredicateExpression, !Self.readsInput(expression),
           let value = try? Self.evaluateConstant(expression), let constant = try? Self.constantValue(value) {
            return .expression(NSExpression(forConstantValue: constant))
        }
        throw failure
    }

    /// Whether `node` or a node under it is a variable (the input, or a closure's parameter).
    static func readsInput(_ node: Any) -> Bool {
        if node is any PredicateVariableNode { return true }
        // Only children that are expressions: a captured value (a large array) is not walked.
        return Mirror(reflecting: node).children.contains { child in
            child.value is any PredicateExpression && readsInput(child.value)
        }
    }

    private static func evaluateConstant<E: PredicateExpression>(_ expression: E) throws -> Any {
        try expression.evaluate(PredicateBindings())
    }

    /// A Swift value as an NSPredicate constant: characters become strings, comparison results their raw
    /// values, closed ranges `{lower, upper}` (what BETWEEN takes), sequences arrays of such values.
    static func constantValue(_ value: Any) throws -> Any? {
        switch value {
        case let optional as AnyOptional:
            guard let wrapped = optional.wrappedAny else { return nil }
            return try constantValue(wrapped)
        case let character as Character: return String(character)
        case let result as ComparisonResult: return result.rawValue
        case let range as any ClosedRangeBounds: return [try constantValue(range.bounds.lower), try constantValue(range.bounds.upper)]
        case is any RangeComparisons:
            throw PredicateConversionError(reason: "a range other than a...b as a value (only contains(_:) of one converts)")
        // An array of plain values (a captured list of IDs for `ids.contains($0.id)`) as it is; others
        // element by element.
        case is any PlainConstantArray: return value
        case let array as [Any]: return try array.map { try constantValue($0) ?? NSNull() }
        default:
            // Sets, dictionaries and other values are constants as they are.
            return value
        }
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
        let isText = Root.Output.self == String.self || Root.Output.self == Substring.self
        let collection = Root.Output.self as? CountedCollectionKeyPath.Type
        if keyPath == \String.count || keyPath == \Substring.count {
            name = "length"
        } else if let collection, keyPath == collection.countKeyPath {
            name = "@count"
        } else if keyPath == \String.isEmpty || keyPath == \Substring.isEmpty || keyPath == collection?.isEmptyKeyPath {
            // Apple's conversion: `length == 0` for text, `@count == 0` for a collection.
            let count = Self.appending(KeyPathComponents(isText ? "length" : "@count"), to: base)
            return .comparison(count, .equalTo, NSExpression(forConstantValue: 0))
        } else if let collection, keyPath == collection.firstKeyPath || keyPath == collection.lastKeyPath {
            // `x[FIRST]` / `x[LAST]`, Apple's conversion of `first` and `last`.
            return .expression(.binary(.index, base, NSExpression(node: .symbolic(keyPath == collection.firstKeyPath ? .first : .last))))
        } else if let found = conversion.name(of: keyPath, rootType: Root.Output.self) {
            name = found
        } else {
            throw PredicateConversionError(reason: "a key path with no name: \(keyPath) (make \(Root.Output.self) conform to KeyPathNaming, or pass keyNames)")
        }
        return .expression(Self.appending(KeyPathComponents(name), to: base))
    }

    private static func appending(_ path: KeyPathComponents, to base: NSExpression) -> NSExpression {
        switch base.node {
        case .evaluatedObject: return NSExpression(node: .keyPath(path))
        case .keyPath(let left): return NSExpression(node: .keyPath(KeyPathComponents(components: left.components + path.components)))
        default: return NSExpression(node: .keyPathOnValue(base, path))
        }
    }
}

/// The standard collections whose `count` is `@count` in a key path, `isEmpty` `@count == 0`, and
/// `first` and `last` `[FIRST]` and `[LAST]`.
protocol CountedCollectionKeyPath {
    static var countKeyPath: AnyKeyPath { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
    static var firstKeyPath: AnyKeyPath? { get }
    static var lastKeyPath: AnyKeyPath? { get }
}

extension Array: CountedCollectionKeyPath {
    static var countKeyPath: AnyKeyPath { \Array.count }
    static var isEmptyKeyPath: AnyKeyPath { \Array.isEmpty }
    static var firstKeyPath: AnyKeyPath? { \Array.first }
    static var lastKeyPath: AnyKeyPath? { \Array.last }
}

extension Set: CountedCollectionKeyPath {
    static var countKeyPath: AnyKeyPath { \Set.count }
    static var isEmptyKeyPath: AnyKeyPath { \Set.isEmpty }
    // A set's `first` is whichever member it iterates first, and `[FIRST]` takes an array: no equivalent.
    static var firstKeyPath: AnyKeyPath? { nil }
    static var lastKeyPath: AnyKeyPath? { nil }
}

extension Dictionary: CountedCollectionKeyPath {
    static var countKeyPath: AnyKeyPath { \Dictionary.count }
    static var isEmptyKeyPath: AnyKeyPath { \Dictionary.isEmpty }
    static var firstKeyPath: AnyKeyPath? { nil }
    static var lastKeyPath: AnyKeyPath? { nil }
}

extension PredicateExpressions.Value: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(NSExpression(forConstantValue: try PredicateConversion.constantValue(value)))
    }
}

/// `PredicateExpressions.Variable`, whatever its output type.
protocol PredicateVariableNode {}

extension PredicateExpressions.Variable: PredicateVariableNode {}

/// Values an NSPredicate constant takes as they are.
protocol PlainConstant {}
extension String: PlainConstant {}
extension Int: PlainConstant {}
extension Int64: PlainConstant {}
extension Int32: PlainConstant {}
extension Int16: PlainConstant {}
extension Double: PlainConstant {}
extension Bool: PlainConstant {}
extension UUID: PlainConstant {}
extension Date: PlainConstant {}
extension Data: PlainConstant {}
extension Decimal: PlainConstant {}

/// An array of ``PlainConstant``s.
protocol PlainConstantArray {}
extension Array: PlainConstantArray where Element: PlainConstant {}

/// A closed range's bounds, whatever its bound type.
protocol ClosedRangeBounds {
    var bounds: (lower: Any, upper: Any) { get }
}

extension ClosedRange: ClosedRangeBounds {
    var bounds: (lower: Any, upper: Any) { (lowerBound, upperBound) }
}

/// A range expression's bounds as comparisons against them: `nil` where the range has no such bound.
protocol RangeComparisons {
    /// The lower bound (always inclusive), the upper bound, and whether the upper bound is included.
    var comparisonBounds: (lower: Any?, upper: Any?, includesUpper: Bool) { get }
}

extension Range: RangeComparisons {
    var comparisonBounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (lowerBound, upperBound, false) }
}

extension ClosedRange: RangeComparisons {
    var comparisonBounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (lowerBound, upperBound, true) }
}

extension PartialRangeFrom: RangeComparisons {
    var comparisonBounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (lowerBound, nil, false) }
}

extension PartialRangeThrough: RangeComparisons {
    var comparisonBounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (nil, upperBound, true) }
}

extension PartialRangeUpTo: RangeComparisons {
    var comparisonBounds: (lower: Any?, upper: Any?, includesUpper: Bool) { (nil, upperBound, false) }
}

extension PredicateExpressions.ClosedRange: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        .expression(NSExpression(forAggregate: [try conversion.expression(lower), try conversion.expression(upper)]))
    }
}

extension PredicateExpressions.RangeExpressionContains: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let element = try conversion.expression(self.element)
        // `(a...b).contains(x)` is BETWEEN; `(a..<b).contains(x)` and the partial ranges are comparisons
        // with their bounds, as Apple's conversion writes them.
        if let closed = self.range as? any ClosedRangeOperands {
            let (lower, upper) = closed.operands
            return .comparison(element, .between, NSExpression(forAggregate: [try conversion.expression(lower), try conversion.expression(upper)]))
        }
        let lower: NSExpression?, upper: NSExpression?, includesUpper: Bool
        if let halfOpen = self.range as? any RangeOperands {
            let (l, u) = halfOpen.operands
            (lower, upper, includesUpper) = (try conversion.expression(l), try conversion.expression(u), false)
        } else if let value = try? PredicateConversion.evaluateConstantRange(self.range) {
            let bounds = value.comparisonBounds
            if bounds.includesUpper, let l = bounds.lower, let u = bounds.upper {
                let pair = [try PredicateConversion.constantValue(l), try PredicateConversion.constantValue(u)]
                return .comparison(element, .between, NSExpression(forConstantValue: pair))
            }
            lower = try bounds.lower.map { NSExpression(forConstantValue: try PredicateConversion.constantValue($0)) }
            upper = try bounds.upper.map { NSExpression(forConstantValue: try PredicateConversion.constantValue($0)) }
            includesUpper = bounds.includesUpper
        } else {
            throw PredicateConversionError(reason: "a range that is neither a constant nor written with ... or ..<")
        }
        var parts: [NSPredicate] = []
        if let lower { parts.append(NSComparisonPredicate(element, .standard(.greaterThanOrEqualTo), lower, modifier: .direct, options: [])) }
        if let upper { parts.append(NSComparisonPredicate(element, .standard(includesUpper ? .lessThanOrEqualTo : .lessThan), upper, modifier: .direct, options: [])) }
        return .predicate(parts.count == 1 ? parts[0] : NSCompoundPredicate(type: .and, subpredicates: parts))
    }
}

/// `a...b` written in the predicate: its two operand expressions.
protocol ClosedRangeOperands {
    var operands: (Any, Any) { get }
}

extension PredicateExpressions.ClosedRange: ClosedRangeOperands {
    var operands: (Any, Any) { (lower, upper) }
}

/// `a..<b` written in the predicate: its two operand expressions.
protocol RangeOperands {
    var operands: (Any, Any) { get }
}

extension PredicateExpressions.Range: RangeOperands {
    var operands: (Any, Any) { (lower, upper) }
}

extension PredicateConversion {
    static func evaluateConstantRange<E: PredicateExpression>(_ expression: E) throws -> any RangeComparisons {
        guard let range = try expression.evaluate(PredicateBindings()) as? any RangeComparisons else {
            throw PredicateConversionError(reason: "a range of a kind NSPredicate has no form for")
        }
        return range
    }
}

extension PredicateExpressions.Filter: ConvertibleToNSPredicate {
    func convert(_ conversion: inout PredicateConversion) throws -> PredicateConversion.Converted {
        let name = conversion.subqueryVariable()
        let collection = try conversion.expression(sequence)
        conversion.variables[variable.key] = NSExpression(forVariable: name)
        return .expression(NSExpression(forSubquery: collection, usingIteratorVariable: name, predicate: try conversion.predicate(filter)))
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
