import Foundation

/// A format string that is not a valid predicate or expression.
///
/// Thrown by `NSPredicate(validatingFormat:)`, `NSExpression(validatingFormat:)` and the other throwing
/// entry points. Apple's `NSPredicate(format:)` raises `NSInvalidArgumentException` with the reason
/// `Unable to parse the format string "…"`; ours stops with this error's `description`, which starts with
/// the same words and adds where and why.
public struct PredicateParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The format string as given.
    public var format: String
    /// Where the problem is: a distance in `Character`s from the start of `format`.
    public var offset: Int
    /// What the parser expected there, e.g. `"an operator such as ==, <, LIKE or IN"`.
    public var expected: String
    /// What it found instead, e.g. `"'b'"` or `"the end of the string"`.
    public var found: String

    /// An error at `offset` characters into `format`.
    public init(format: String, offset: Int, expected: String, found: String) {
        self.format = format
        self.offset = offset
        self.expected = expected
        self.found = found
    }

    /// The problem and a caret under it:
    /// ```
    /// Unable to parse the format string "a == 1 b == 2": expected the end of the string, found 'b' at offset 7
    ///     a == 1 b == 2
    ///            ^
    /// ```
    public var description: String {
        "Unable to parse the format string \"\(format)\": expected \(expected), found \(found) at offset \(offset)\n\(snippet)"
    }

    /// The line of the format around the offset, with a caret under the offending character.
    public var snippet: String {
        let characters = Array(format)
        let start = max(0, offset - 40)
        let end = min(characters.count, offset + 40)
        let line = String(characters[start..<end]).map { $0 == "\n" || $0 == "\t" || $0 == "\r" ? " " : $0 }
        let pad = String(repeating: " ", count: offset - start)
        return "    \((start > 0 ? "…" : "") + String(line) + (end < characters.count ? "…" : ""))\n    \(start > 0 ? " " : "")\(pad)^"
    }
}

/// A predicate or expression that cannot be evaluated against the given object.
///
/// Apple raises Objective-C exceptions for these (`NSInvalidArgumentException`, `NSUnknownKeyException`,
/// `NSRangeException`); the throwing entry points (`NSPredicate.evaluateThrowing(with:)`,
/// `NSExpression.expressionValueThrowing(with:context:)`) throw this instead, with Apple's reason text where
/// it is known.
public struct PredicateEvaluationError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, so callers can tell the cases apart.
    public enum Code: Sendable, Equatable {
        /// A key the object does not have (`NSUnknownKeyException`).
        case unknownKey
        /// Operands whose types the operator cannot compare or combine.
        case typeMismatch
        /// `ANY`/`ALL`, a collection operator or a set operation applied to something that is not a collection.
        case notACollection
        /// A `$VARIABLE` with no value in the bindings.
        case unboundVariable
        /// A `MATCHES` pattern that is not a valid regular expression.
        case invalidRegularExpression
        /// `BETWEEN` without a two-element range, an index out of range, a bad `CAST` type …
        case invalidArgument
        /// A function, method or operator that cannot run here (`FUNCTION` with an unregistered selector,
        /// `ANYKEY`, `UTI-CONFORMS-TO` without a registered type table).
        case unsupported
        /// A predicate decoded from an untrusted archive, before `allowEvaluation()`.
        case evaluationDisabled
    }

    /// What went wrong.
    public var code: Code
    /// Apple's exception reason where known, otherwise a sentence in its style.
    public var message: String

    /// An error with its code and reason.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The reason.
    public var description: String { message }

    /// The error for a key an object does not have, with Apple's `NSUnknownKeyException` reason.
    public static func unknownKey(_ key: String, in object: Any) -> PredicateEvaluationError {
        PredicateEvaluationError(.unknownKey, "[<\(type(of: object))> valueForUndefinedKey:]: this class is not key value coding-compliant for the key \(key).")
    }
}
