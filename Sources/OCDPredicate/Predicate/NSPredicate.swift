import Foundation
import Synchronization

/// A logical condition that an object satisfies or not: the filter of a fetch request, a validation rule,
/// the test of an array filter.
///
/// Apple's `NSPredicate`, with its names and semantics. Create one from a format string:
///
/// ```swift
/// let adults = NSPredicate(format: "age >= %@ AND department.name LIKE[c] %@", 18, "eng*")
/// adults.evaluate(with: ["age": 30, "department": ["name": "Engineering"]])   // true
/// ```
///
/// `NSPredicate(format:)` returns the concrete kind Apple does: an `NSComparisonPredicate`, an
/// `NSCompoundPredicate`, or a constant predicate for `TRUEPREDICATE`/`FALSEPREDICATE`.
///
/// Differences from Apple platforms (Linux has no Objective-C runtime):
/// - format arguments are `Any?` values rather than `CVarArg`s, so `%@` takes any Swift value;
/// - key paths are read through ``PredicateKeyValueCoding`` (dictionaries, arrays, sets, strings, numbers and
///   managed objects work as they are);
/// - a bad format stops with a precise message, as Apple raises; `init(validatingFormat:)` throws instead,
///   and `evaluateThrowing(with:)` throws where Apple's evaluation raises.
///
/// Predicates are immutable and can be shared between threads.
public class NSPredicate: NSObject, NSCopying, @unchecked Sendable {
    /// What a plain `NSPredicate` is: the constant predicates and block predicates. Comparison and compound
    /// predicates are subclasses.
    enum Kind {
        case constant(Bool)
        case block(@Sendable (Any?, [String: Any]?) -> Bool)
        case subclass
    }

    let kind: Kind
    /// Read on every evaluation of every node, so an atomic rather than a lock.
    private let evaluationBlocked = Atomic<Bool>(false)

    init(kind: Kind) {
        self.kind = kind
        super.init()
    }

    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    public init(value: Bool) {
        self.kind = .constant(value)
        super.init()
    }

    /// A predicate evaluated by a closure, given the object and the substitution variables.
    /// It prints as `BLOCKPREDICATE(…)` and cannot be sent to an SQL store.
    public init(block: @escaping @Sendable (Any?, [String: Any]?) -> Bool) {
        self.kind = .block(block)
        super.init()
    }

    // MARK: Evaluating

    /// Whether `object` satisfies the predicate.
    ///
    /// Stops with Apple's exception reason when the predicate cannot be evaluated against this object (an
    /// unknown key, strings compared with `<` to numbers, an unbound `$VARIABLE`); use
    /// ``evaluateThrowing(with:substitutionVariables:)`` for input you do not control.
    public func evaluate(with object: Any?) -> Bool {
        evaluate(with: object, substitutionVariables: nil)
    }

    /// Whether `object` satisfies the predicate, with `$VARIABLES` bound to the values in `bindings`
    /// (the predicate is not copied).
    public func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        do {
            return try evaluateThrowing(with: object, substitutionVariables: bindings)
        } catch {
            fatalError("NSPredicate: \(error) (predicate: \(predicateFormat))")
        }
    }

    /// Whether `object` satisfies the predicate; throws ``PredicateEvaluationError`` where Apple raises.
    public func evaluateThrowing(with object: Any?, substitutionVariables bindings: [String: Any]? = nil) throws -> Bool {
        let evaluator = Evaluator(bindings: bindings, context: nil)
        return try evaluator.test(self, object: Value(object))
    }

    /// Subclasses evaluate themselves here; `object` is already converted.
    func evaluate(in evaluator: Evaluator, object: Value) throws -> Bool {
        switch kind {
        case .constant(let value): return value
        case .block(let block): return block(object.anyValue, evaluator.rawBindings)
        case .subclass: fatalError("NSPredicate subclass did not override evaluate(in:object:)")
        }
    }

    // MARK: Substitution

    /// A copy in which every `$VARIABLE` is replaced by the value bound to it in `variables` (an
    /// `NSExpression` value is inserted as that expression, `NSNull` as a null constant).
    ///
    /// As on Apple platforms, a variable missing from `variables` stays a variable, and evaluating it later
    /// fails; ``withSubstitutionVariablesThrowing(_:)`` requires every variable instead. `SUBQUERY` iteration
    /// variables are left alone.
    public func withSubstitutionVariables(_ variables: [String: Any]) -> Self {
        // Cannot throw: missing variables are kept.
        try! substituted(Substitution(variables: variables, requireAll: false)) as! Self
    }

    /// Like ``withSubstitutionVariables(_:)``, but every variable must have a value: throws
    /// ``PredicateEvaluationError`` (code `.unboundVariable`, Apple's message) naming the first missing one.
    public func withSubstitutionVariablesThrowing(_ variables: [String: Any]) throws -> Self {
        // `substituted` keeps the dynamic type, so the cast cannot fail.
        try substituted(Substitution(variables: variables, requireAll: true)) as! Self
    }

    func substituted(_ substitution: Substitution) throws -> NSPredicate {
        self
    }

    // MARK: Printing

    /// The predicate in format-string syntax, printed as Apple prints it (`name ==[c] "Ada" AND age > 30`);
    /// parsing it again gives an equal predicate.
    public var predicateFormat: String {
        var printer = FormatPrinter()
        printer.write(self)
        return printer.output
    }

    public override var description: String { predicateFormat }

    // MARK: Secure evaluation

    /// Enables evaluation of a predicate whose evaluation was blocked. On Apple platforms that is a predicate
    /// decoded from an archive; predicates here are not archived (no `NSSecureCoding`), so every predicate
    /// is evaluable and this is kept for source compatibility.
    public func allowEvaluation() {
        evaluationBlocked.store(false, ordering: .relaxed)
        forEachChild(expressions: { $0.allowEvaluation() }, predicates: { $0.allowEvaluation() })
    }

    func blockEvaluation() {
        evaluationBlocked.store(true, ordering: .relaxed)
        forEachChild(expressions: { $0.blockEvaluation() }, predicates: { $0.blockEvaluation() })
    }

    var isEvaluationBlocked: Bool {
        evaluationBlocked.load(ordering: .relaxed)
    }

    func forEachChild(expressions: (NSExpression) -> Void, predicates: (NSPredicate) -> Void) {}

    // MARK: NSObject

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPredicate else { return false }
        if self === other { return true }
        switch (kind, other.kind) {
        case (.constant(let a), .constant(let b)): return a == b
        default: return false
        }
    }

    public override var hash: Int { predicateFormat.hashValue }

    /// The predicate itself: predicates are immutable.
    public func copy(with zone: NSZone? = nil) -> Any { self }
}

/// The `init(format:)` family lives in a protocol extension so that it can return the subclass the format
/// describes (`NSPredicate(format: "a == 1") is NSComparisonPredicate`), as Apple's class cluster does.
public protocol _NSPredicateFormatInitializable {}

extension NSPredicate: _NSPredicateFormatInitializable {}

extension _NSPredicateFormatInitializable where Self: NSPredicate {
    /// Parses a format string, substituting `%@`, `%K`, `%d`, `%f` … with `arguments` in order.
    ///
    /// Stops with a message naming the offset and the expected token when the format is malformed, as Apple
    /// raises `NSInvalidArgumentException`; ``init(validatingFormat:_:)`` throws instead.
    public init(format: String, _ arguments: Any?...) {
        self.init(format: format, argumentArray: arguments.map { $0 as Any })
    }

    /// Parses a format string with its arguments in an array.
    public init(format: String, argumentArray arguments: [Any]?) {
        do {
            try self.init(validatingFormat: format, argumentArray: arguments)
        } catch {
            fatalError(String(describing: error))
        }
    }

    /// Parses a format string, throwing ``PredicateParseError`` (with the offset, the expected token and
    /// a snippet) when it is malformed or the arguments do not match its directives.
    public init(validatingFormat format: String, _ arguments: Any?...) throws {
        try self.init(validatingFormat: format, argumentArray: arguments.map { $0 as Any })
    }

    /// Parses a format string with its arguments in an array, throwing ``PredicateParseError``.
    public init(validatingFormat format: String, argumentArray arguments: [Any]?) throws {
        let arguments: [Any?] = (arguments ?? []).map { $0 }
        let predicate = try Parser.parsePredicate(format, arguments: arguments)
        guard let typed = predicate as? Self else {
            throw PredicateParseError(
                format: format, offset: 0,
                expected: "a format describing \(Self.self)",
                found: "\(type(of: predicate))")
        }
        self = typed
    }
}

/// The values for `withSubstitutionVariables(_:)`, converted once.
struct Substitution {
    let variables: [String: Any]
    /// Whether a variable missing from `variables` is an error (else it stays a variable).
    var requireAll = true
    /// `SUBQUERY` iteration variables in scope: local, never substituted.
    var shadowed: Set<String> = []

    func expression(for name: String) throws -> NSExpression {
        if shadowed.contains(name) { return NSExpression(forVariable: name) }
        guard let value = variables[name] else {
            if !requireAll { return NSExpression(forVariable: name) }
            throw PredicateEvaluationError(.unboundVariable, "Can't get value for '\(name)' in bindings \(bindingsDescription(variables)).")
        }
        if let expression = value as? NSExpression { return expression }
        return NSExpression(forConstantValue: value)
    }
}

func bindingsDescription(_ bindings: [String: Any]?) -> String {
    guard let bindings, !bindings.isEmpty else { return "{}" }
    let pairs = bindings.keys.sorted().map { "\($0) = \(FormatPrinter.constantDescription(Value(bindings[$0])))" }
    return "{" + pairs.joined(separator: "; ") + "}"
}
