import Foundation

/// A predicate that compares two expressions: `age > 30`, `ANY employees.name LIKE[c] "a*"`,
/// `SELF isKindOfClass: "NSNumber"`.
public final class NSComparisonPredicate: NSPredicate, @unchecked Sendable {
    /// How the left expression is used: as one value, or as a collection any or all of whose elements must
    /// satisfy the comparison. (`NONE` is `NOT ANY`: there is no `none` modifier, as on Apple platforms.)
    public enum Modifier: UInt, Sendable {
        case direct = 0
        case all = 1
        case any = 2
    }

    /// The comparison, with Apple's raw values.
    public enum Operator: UInt, Sendable {
        case lessThan = 0
        case lessThanOrEqualTo = 1
        case greaterThan = 2
        case greaterThanOrEqualTo = 3
        case equalTo = 4
        case notEqualTo = 5
        case matches = 6
        case like = 7
        case beginsWith = 8
        case endsWith = 9
        case `in` = 10
        case customSelector = 11
        case contains = 99
        case between = 100
    }

    /// String comparison options: the `[c]`, `[d]`, `[n]` and `[l]` suffixes of an operator.
    public struct Options: OptionSet, Sendable, Hashable {
        /// Apple's bit values.
        public let rawValue: UInt
        /// Options from Apple's bit values.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// `[c]`: case-insensitive.
        public static let caseInsensitive = Options(rawValue: 0x01)
        /// `[d]`: diacritic-insensitive ("é" matches "e").
        public static let diacriticInsensitive = Options(rawValue: 0x02)
        /// `[n]`: the strings are already normalized; compared literally and fast.
        public static let normalized = Options(rawValue: 0x04)
        /// `[l]`: compared in the current locale (Apple's undocumented `NSLocaleSensitivePredicateOption`).
        public static let localeSensitive = Options(rawValue: 0x08)
    }

    /// The operator as the parser knows it: Apple's public ones plus the two UTI operators, which Apple keeps
    /// private and reports as custom selectors.
    enum Op: Equatable {
        case standard(Operator)
        case utiConformsTo
        case utiEquals
        case selector(String)
    }

    let op: Op
    /// The left expression.
    public let leftExpression: NSExpression
    /// The right expression.
    public let rightExpression: NSExpression
    /// `.direct`, `.any` or `.all`.
    public let comparisonPredicateModifier: Modifier
    /// The string options of the comparison.
    public let options: Options

    init(_ lhs: NSExpression, _ op: Op, _ rhs: NSExpression, modifier: Modifier, options: Options) {
        self.leftExpression = lhs
        self.rightExpression = rhs
        self.op = op
        self.comparisonPredicateModifier = modifier
        self.options = options
        super.init(kind: .subclass)
    }

    /// A comparison of two expressions with an operator, a modifier and string options.
    public convenience init(leftExpression: NSExpression, rightExpression: NSExpression, modifier: Modifier, type: Operator, options: Options = []) {
        if type == .customSelector {
            fatalError("NSComparisonPredicate: use init(leftExpression:rightExpression:customSelector:) for a custom selector")
        }
        self.init(leftExpression, .standard(type), rightExpression, modifier: modifier, options: options)
    }

    /// A comparison made by a method of the left value, called with the right value: `SELF isKindOfClass: …`.
    /// The method must be registered with `NSPredicate.registerComparisonSelector(_:_:)`.
    public convenience init(leftExpression: NSExpression, rightExpression: NSExpression, customSelector: Selector) {
        self.init(leftExpression, .selector(customSelector.name), rightExpression, modifier: .direct, options: [])
    }

    /// The operator; `.customSelector` for selector comparisons and the UTI operators.
    public var predicateOperatorType: Operator {
        switch op {
        case .standard(let op): return op
        case .utiConformsTo, .utiEquals, .selector: return .customSelector
        }
    }

    /// The selector of a custom-selector comparison.
    public var customSelector: Selector? {
        switch op {
        case .selector(let name): return Selector(name)
        case .utiConformsTo: return Selector("UTI-CONFORMS-TO")
        case .utiEquals: return Selector("UTI-EQUALS")
        case .standard: return nil
        }
    }

    override func evaluate(in evaluator: Evaluator, object: Value) throws -> Bool {
        try evaluator.compare(self, object: object)
    }

    override func substituted(_ substitution: Substitution) throws -> NSPredicate {
        NSComparisonPredicate(
            try leftExpression.substituted(substitution), op, try rightExpression.substituted(substitution),
            modifier: comparisonPredicateModifier, options: options)
    }

    override func forEachChild(expressions: (NSExpression) -> Void, predicates: (NSPredicate) -> Void) {
        expressions(leftExpression)
        expressions(rightExpression)
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSComparisonPredicate else { return false }
        return op == other.op && comparisonPredicateModifier == other.comparisonPredicateModifier
            && options == other.options && leftExpression == other.leftExpression
            && rightExpression == other.rightExpression
    }
}

/// A predicate that combines others with `AND`, `OR` or `NOT`.
public final class NSCompoundPredicate: NSPredicate, @unchecked Sendable {
    /// The logical operator, with Apple's raw values.
    public enum LogicalType: UInt, Sendable {
        case not = 0
        case and = 1
        case or = 2
    }

    /// `.and`, `.or` or `.not`.
    public let compoundPredicateType: LogicalType
    let predicates: [NSPredicate]

    /// Combines `subpredicates`. `AND` of none is true, `OR` of none is false; `NOT` takes exactly one.
    public init(type: LogicalType, subpredicates: [NSPredicate]) {
        if type == .not && subpredicates.count != 1 {
            fatalError("NSCompoundPredicate: a NOT predicate takes exactly one subpredicate, not \(subpredicates.count)")
        }
        self.compoundPredicateType = type
        self.predicates = subpredicates
        super.init(kind: .subclass)
    }

    /// `p1 AND p2 AND …`.
    public convenience init(andPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .and, subpredicates: subpredicates)
    }

    /// `p1 OR p2 OR …`.
    public convenience init(orPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .or, subpredicates: subpredicates)
    }

    /// `NOT p`.
    public convenience init(notPredicateWithSubpredicate predicate: NSPredicate) {
        self.init(type: .not, subpredicates: [predicate])
    }

    /// The combined predicates (`NSPredicate`s, typed `[Any]` as in Apple's API).
    public var subpredicates: [Any] { predicates }

    override func evaluate(in evaluator: Evaluator, object: Value) throws -> Bool {
        switch compoundPredicateType {
        case .not:
            return try !evaluator.test(predicates[0], object: object)
        case .and:
            for predicate in predicates where try !evaluator.test(predicate, object: object) { return false }
            return true
        case .or:
            for predicate in predicates where try evaluator.test(predicate, object: object) { return true }
            return false
        }
    }

    override func substituted(_ substitution: Substitution) throws -> NSPredicate {
        NSCompoundPredicate(type: compoundPredicateType, subpredicates: try predicates.map { try $0.substituted(substitution) })
    }

    override func forEachChild(expressions: (NSExpression) -> Void, predicates: (NSPredicate) -> Void) {
        self.predicates.forEach(predicates)
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSCompoundPredicate else { return false }
        return compoundPredicateType == other.compoundPredicateType && predicates == other.predicates
    }
}
