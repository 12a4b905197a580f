import Foundation
import Synchronization

/// An expression in a predicate: a constant, a key path, a variable, a function, a subquery…
///
/// Apple's `NSExpression`, with its names and semantics. Build one from a format string
/// (`NSExpression(format: "salary * 1.1")`) or with the `init(for…)` factories, evaluate it with
/// `expressionValue(with:context:)`, print it with `description`.
///
/// Expressions are immutable; they can be shared between threads.
public final class NSExpression: NSObject, NSCopying, @unchecked Sendable {
    /// The kind of an expression, with Apple's raw values.
    public enum ExpressionType: UInt, Sendable {
        case constantValue = 0
        case evaluatedObject = 1
        case variable = 2
        case keyPath = 3
        case function = 4
        case unionSet = 5
        case intersectSet = 6
        case minusSet = 7
        case subquery = 13
        case aggregate = 14
        case anyKey = 15
        case block = 19
        case conditional = 20
    }

    let node: Node

    /// Set for expressions decoded from an untrusted archive; `allowEvaluation()` clears it. Read on every
    /// evaluation, so an atomic rather than a lock.
    private let evaluationBlocked = Atomic<Bool>(false)

    indirect enum Node {
        case constant(Value)
        case evaluatedObject
        case variable(String)
        case keyPath(KeyPathComponents)
        /// A built-in function (`sum:`, `add:to:`, `objectFrom:withIndex:`, `castObject:toType:` …) when
        /// `target` is nil; `FUNCTION(target, 'selector', …)` otherwise.
        case function(name: String, arguments: [NSExpression], target: NSExpression?)
        /// A key path applied to the value of another expression: `$x.name`, `SUBQUERY(…).@count`.
        case keyPathOnValue(NSExpression, KeyPathComponents)
        /// `a.b` where `b` is not a plain key (e.g. `a.d[0]`): parses as Apple's does, fails at evaluation.
        case composition(NSExpression, NSExpression)
        case symbolic(Symbol)
        case set(SetOperation, NSExpression, NSExpression)
        case subquery(collection: NSExpression, variable: String, predicate: NSPredicate)
        case aggregate([NSExpression])
        case anyKey
        case block(@Sendable (Any?, [Any], NSMutableDictionary?) -> Any, [NSExpression]?)
        case conditional(NSPredicate, NSExpression, NSExpression)
        case assignment(variable: String, NSExpression)
    }

    enum Symbol: String {
        case first = "FIRST", last = "LAST", size = "SIZE"
    }

    enum SetOperation: String {
        case union = "UNION", intersect = "INTERSECT", minus = "MINUS"
    }

    init(node: Node) {
        self.node = node
        super.init()
    }

    // MARK: Creating expressions

    /// A constant: a string, number, date, collection, `NSNull`, an object, or nil.
    public convenience init(forConstantValue value: Any?) {
        self.init(node: .constant(Value(value)))
    }

    /// `SELF`: the object the predicate is evaluated against.
    public static func expressionForEvaluatedObject() -> NSExpression {
        NSExpression(node: .evaluatedObject)
    }

    /// `$name`: a variable, replaced by `withSubstitutionVariables(_:)` or bound at evaluation.
    public convenience init(forVariable name: String) {
        self.init(node: .variable(name))
    }

    /// A key path such as `department.name` or `employees.@count`, split on dots and never tokenised.
    public convenience init(forKeyPath keyPath: String) {
        self.init(node: .keyPath(KeyPathComponents(keyPath)))
    }

    /// A key path from a Swift key path whose root names its key paths (``KeyPathNaming``; the `@Managed`
    /// macro provides the names for managed objects). Stops if the key path has no name.
    public convenience init<Root: KeyPathNaming, Value>(forKeyPath keyPath: KeyPath<Root, Value>) {
        guard let name = Root.keyName(for: keyPath) else {
            fatalError("NSExpression: \(Root.self) has no key name for \(keyPath)")
        }
        self.init(forKeyPath: name)
    }

    /// A built-in function by its selector name (`"sum:"`, `"add:to:"`, `"now"` …; the table in the
    /// NSExpression reference). The names without colons (`"sum"`) are accepted too.
    ///
    /// An unknown name stops with Apple's message; `init(validatingFunction:arguments:)` throws instead.
    public convenience init(forFunction name: String, arguments: [Any]) {
        do {
            try self.init(validatingFunction: name, arguments: arguments)
        } catch {
            fatalError(String(describing: error))
        }
    }

    /// Like `init(forFunction:arguments:)`, throwing a `PredicateParseError` for an unknown function name or
    /// a wrong number of arguments.
    public convenience init(validatingFunction name: String, arguments: [Any]) throws {
        let expressions = arguments.map { $0 as? NSExpression ?? NSExpression(forConstantValue: $0) }
        let resolved = try BuiltinFunction.resolve(name, argumentCount: expressions.count, format: name, offset: 0)
        self.init(node: .function(name: resolved.selector, arguments: expressions, target: nil))
    }

    /// `FUNCTION(target, 'selector', arguments…)`: calls a method registered with
    /// `NSExpression.registerMethod(_:_:)` (Linux has no message sending).
    ///
    /// `valueForKey:` and `valueForKeyPath:` with a key-path argument make the key-path expression Apple's
    /// parser makes for `$x.name` (and archives that way), not a method call.
    public convenience init(forFunction target: NSExpression, selectorName: String, arguments: [Any]?) {
        let expressions = (arguments ?? []).map { $0 as? NSExpression ?? NSExpression(forConstantValue: $0) }
        if selectorName == "valueForKeyPath:" || selectorName == "valueForKey:", expressions.count == 1 {
            let path: KeyPathComponents?
            switch expressions[0].node {
            case .keyPath(let keyPath): path = keyPath
            case .constant(.string(let string)): path = KeyPathComponents(string)
            default: path = nil
            }
            if let path {
                switch target.node {
                case .evaluatedObject: self.init(node: .keyPath(path))
                case .keyPath(let left): self.init(node: .keyPath(KeyPathComponents(components: left.components + path.components)))
                default: self.init(node: .keyPathOnValue(target, path))
                }
                return
            }
        }
        self.init(node: .function(name: selectorName, arguments: expressions, target: target))
    }

    /// `{e1, e2, …}`: evaluates to an array of the elements' values.
    public convenience init(forAggregate subexpressions: [Any]) {
        self.init(node: .aggregate(subexpressions.map { $0 as? NSExpression ?? NSExpression(forConstantValue: $0) }))
    }

    /// `left UNION right`: a set of the elements of both collections.
    public convenience init(forUnionSet left: NSExpression, with right: NSExpression) {
        self.init(node: .set(.union, left, right))
    }

    /// `left INTERSECT right`.
    public convenience init(forIntersectSet left: NSExpression, with right: NSExpression) {
        self.init(node: .set(.intersect, left, right))
    }

    /// `left MINUS right`.
    public convenience init(forMinusSet left: NSExpression, with right: NSExpression) {
        self.init(node: .set(.minus, left, right))
    }

    /// `SUBQUERY(collection, $variable, predicate)`: the elements of `collection` for which `predicate` holds
    /// with `$variable` bound to the element.
    public convenience init(forSubquery collection: NSExpression, usingIteratorVariable variable: String, predicate: NSPredicate) {
        self.init(node: .subquery(collection: collection, variable: variable, predicate: predicate))
    }

    /// `ANYKEY` (Spotlight's "any attribute"); it has no meaning outside metadata queries and cannot be evaluated.
    public static func expressionForAnyKey() -> NSExpression {
        NSExpression(node: .anyKey)
    }

    /// An expression computed by a closure from the evaluated object, the arguments' values and the context.
    public convenience init(block: @escaping @Sendable (Any?, [Any], NSMutableDictionary?) -> Any, arguments: [NSExpression]?) {
        self.init(node: .block(block, arguments))
    }

    /// `TERNARY(predicate, trueExpression, falseExpression)`.
    public convenience init(forConditional predicate: NSPredicate, trueExpression: NSExpression, falseExpression: NSExpression) {
        self.init(node: .conditional(predicate, trueExpression, falseExpression))
    }

    // MARK: Inspecting

    /// The kind of this expression.
    public var expressionType: ExpressionType {
        switch node {
        case .constant, .symbolic: return .constantValue
        case .evaluatedObject: return .evaluatedObject
        case .variable, .assignment: return .variable
        case .keyPath: return .keyPath
        case .function, .keyPathOnValue, .composition: return .function
        case .set(.union, _, _): return .unionSet
        case .set(.intersect, _, _): return .intersectSet
        case .set(.minus, _, _): return .minusSet
        case .subquery: return .subquery
        case .aggregate: return .aggregate
        case .anyKey: return .anyKey
        case .block: return .block
        case .conditional: return .conditional
        }
    }

    private func wrongKind(_ property: String) -> Never {
        fatalError("NSExpression: '\(property)' is not defined for an expression of type \(expressionType) (\(self))")
    }

    /// The value of a constant expression (`.constantValue`).
    public var constantValue: Any? {
        switch node {
        case .constant(let value): return value.anyValue
        case .symbolic(let symbol): return symbol.rawValue
        default: wrongKind("constantValue")
        }
    }

    /// The key path of a key-path expression (`.keyPath`).
    public var keyPath: String {
        guard case .keyPath(let path) = node else { wrongKind("keyPath") }
        return path.string
    }

    /// The variable name of a variable expression, without `$`.
    public var variable: String {
        switch node {
        case .variable(let name), .assignment(let name, _): return name
        case .subquery(_, let name, _): return name
        default: wrongKind("variable")
        }
    }

    /// The selector name of a function expression (`"sum:"`, `"add:to:"`, `"valueForKeyPath:"` …).
    public var function: String {
        switch node {
        case .function(let name, _, _): return name
        case .keyPathOnValue, .composition: return "valueForKeyPath:"
        default: wrongKind("function")
        }
    }

    /// The arguments of a function or block expression.
    public var arguments: [NSExpression]? {
        switch node {
        case .function(_, let arguments, _): return arguments
        case .keyPathOnValue(_, let path): return [NSExpression(forConstantValue: path.string)]
        case .composition(_, let rhs): return [rhs]
        case .block(_, let arguments): return arguments
        default: wrongKind("arguments")
        }
    }

    /// The receiver of a function expression: the target of `FUNCTION(…)`, or the expression a key path
    /// is applied to. Built-in functions have a placeholder operand, as on Apple platforms.
    public var operand: NSExpression {
        switch node {
        case .function(_, _, let target): return target ?? NSExpression(forConstantValue: "_NSPredicateUtilities")
        case .keyPathOnValue(let operand, _), .composition(let operand, _): return operand
        default: wrongKind("operand")
        }
    }

    /// The collection of an aggregate (`[NSExpression]`) or subquery expression (its collection expression).
    public var collection: Any {
        switch node {
        case .aggregate(let elements): return elements
        case .subquery(let collection, _, _): return collection
        case .constant(let value) where value.collectionElements != nil: return value.anyValue as Any
        default: wrongKind("collection")
        }
    }

    /// The predicate of a subquery or conditional expression.
    public var predicate: NSPredicate {
        switch node {
        case .subquery(_, _, let predicate), .conditional(let predicate, _, _): return predicate
        default: wrongKind("predicate")
        }
    }

    /// The left operand of a set expression.
    public var left: NSExpression {
        guard case .set(_, let lhs, _) = node else { wrongKind("left") }
        return lhs
    }

    /// The right operand of a set expression.
    public var right: NSExpression {
        guard case .set(_, _, let rhs) = node else { wrongKind("right") }
        return rhs
    }

    /// The expression a conditional returns when its predicate holds.
    public var trueExpression: NSExpression {
        guard case .conditional(_, let value, _) = node else { wrongKind("trueExpression") }
        return value
    }

    /// The expression a conditional returns when its predicate fails.
    public var falseExpression: NSExpression {
        guard case .conditional(_, _, let value) = node else { wrongKind("falseExpression") }
        return value
    }

    /// The closure of a block expression.
    public var expressionBlock: @Sendable (Any?, [Any], NSMutableDictionary?) -> Any {
        guard case .block(let block, _) = node else { wrongKind("expressionBlock") }
        return block
    }

    // MARK: Evaluation control

    /// Enables evaluation of an expression that came from an untrusted archive. Expressions made in code or
    /// from format strings are always evaluable.
    public func allowEvaluation() {
        evaluationBlocked.store(false, ordering: .relaxed)
        forEachChild { $0.allowEvaluation() } predicates: { $0.allowEvaluation() }
    }

    func blockEvaluation() {
        evaluationBlocked.store(true, ordering: .relaxed)
        forEachChild { $0.blockEvaluation() } predicates: { $0.blockEvaluation() }
    }

    var isEvaluationBlocked: Bool {
        evaluationBlocked.load(ordering: .relaxed)
    }

    func forEachChild(_ expression: (NSExpression) -> Void, predicates: (NSPredicate) -> Void) {
        switch node {
        case .constant, .evaluatedObject, .variable, .keyPath, .symbolic, .anyKey: break
        case .function(_, let arguments, let target):
            target.map(expression)
            arguments.forEach(expression)
        case .keyPathOnValue(let operand, _): expression(operand)
        case .composition(let lhs, let rhs), .set(_, let lhs, let rhs):
            expression(lhs)
            expression(rhs)
        case .subquery(let collection, _, let predicate):
            expression(collection)
            predicates(predicate)
        case .aggregate(let elements): elements.forEach(expression)
        case .block(_, let arguments): arguments?.forEach(expression)
        case .conditional(let predicate, let a, let b):
            predicates(predicate)
            expression(a)
            expression(b)
        case .assignment(_, let value): expression(value)
        }
    }

    // MARK: NSObject

    /// The expression in format-string syntax, as Apple prints it.
    public override var description: String {
        var printer = FormatPrinter()
        printer.write(self)
        return printer.output
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSExpression else { return false }
        return self === other || node == other.node
    }

    public override var hash: Int {
        description.hashValue
    }

    /// The expression itself: expressions are immutable.
    public func copy(with zone: NSZone? = nil) -> Any {
        self
    }
}

/// A key path split into its components once, at construction.
struct KeyPathComponents: Hashable {
    let string: String
    let components: [String]

    init(_ string: String) {
        self.string = string
        self.components = string.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    init(components: [String]) {
        self.components = components
        self.string = components.joined(separator: ".")
    }
}

extension NSExpression.Node: Equatable {
    static func == (lhs: NSExpression.Node, rhs: NSExpression.Node) -> Bool {
        switch (lhs, rhs) {
        case (.constant(let a), .constant(let b)): return a == b && a.kindMatches(b)
        case (.evaluatedObject, .evaluatedObject), (.anyKey, .anyKey): return true
        case (.variable(let a), .variable(let b)): return a == b
        case (.keyPath(let a), .keyPath(let b)): return a == b
        case (.function(let n1, let a1, let t1), .function(let n2, let a2, let t2)):
            return n1 == n2 && a1 == a2 && t1 == t2
        case (.keyPathOnValue(let o1, let p1), .keyPathOnValue(let o2, let p2)): return o1 == o2 && p1 == p2
        case (.composition(let l1, let r1), .composition(let l2, let r2)): return l1 == l2 && r1 == r2
        case (.symbolic(let a), .symbolic(let b)): return a == b
        case (.set(let op1, let l1, let r1), .set(let op2, let l2, let r2)): return op1 == op2 && l1 == l2 && r1 == r2
        case (.subquery(let c1, let v1, let p1), .subquery(let c2, let v2, let p2)): return c1 == c2 && v1 == v2 && p1 == p2
        case (.aggregate(let a), .aggregate(let b)): return a == b
        case (.conditional(let p1, let t1, let f1), .conditional(let p2, let t2, let f2)):
            return p1 == p2 && t1 == t2 && f1 == f2
        case (.assignment(let v1, let e1), .assignment(let v2, let e2)): return v1 == v2 && e1 == e2
        case (.constant(let value), .aggregate(let elements)), (.aggregate(let elements), .constant(let value)):
            // `%@` with an array is a constant collection that prints as `{…}` and parses back as an aggregate
            // of constants: the two evaluate alike, so they are equal.
            guard let values = value.collectionElements, values.count == elements.count else { return false }
            return zip(values, elements).allSatisfy { NSExpression.Node.constant($0) == $1.node }
        default: return false
        }
    }
}

extension Value {
    /// Constants are equal as expressions only when they are the same kind of value, so that the string
    /// `"1"` and the number `1` (and `nil` and `<null>`) stay distinct after a round trip.
    func kindMatches(_ other: Value) -> Bool {
        switch (self, other) {
        case (.nil, .nil), (.null, .null): return true
        case (.nil, _), (.null, _), (_, .nil), (_, .null): return false
        default: return isNumber == other.isNumber
        }
    }
}
