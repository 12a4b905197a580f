import Foundation
import OCDPredicate

/// The JSON conventions of spec/predicates.md §13, shared by `cdtool predicate` and the corpus tests:
/// objects are dictionaries, `null` is `NSNull`, `{"$nil": true}` is nil, `{"$date": S}` a date S seconds
/// after 2001-01-01, `{"$set": [...]}` a set, `{"$decimal": "1.5"}` a decimal, and (in arguments)
/// `{"$expr": "..."}` an `NSExpression`.
public enum PredicateJSON {
    /// A value that does not follow the conventions.
    public struct ConventionError: Error, CustomStringConvertible {
        /// What is wrong with the value.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// Converts a JSON value to the Swift value a predicate sees.
    public static func value(_ json: JSONValue, allowExpressions: Bool = false) throws -> Any? {
        switch json {
        case .null: return NSNull()
        case .bool(let b): return b
        case .integer(let i): return Int(i)
        case .double(let d): return d
        case .string(let s): return s
        case .array(let elements): return try elements.map { try value($0, allowExpressions: allowExpressions) as Any }
        case .object(let pairs):
            if pairs.count == 1, let special = try specialValue(pairs[0].0, pairs[0].1, allowExpressions: allowExpressions) {
                return special.value
            }
            var dictionary: [String: Any] = [:]
            for (key, element) in pairs { dictionary[key] = try value(element, allowExpressions: allowExpressions) as Any }
            return dictionary
        }
    }

    private struct Special { let value: Any? }

    /// `-?digits(.digits)?([eE][+-]?digits)?`, the text `{"$decimal": …}` takes.
    static func isDecimalText(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Bool {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count > 0
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard digits() else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() else { return false }
        }
        return bytes.isEmpty
    }

    private static func specialValue(_ key: String, _ json: JSONValue, allowExpressions: Bool) throws -> Special? {
        switch key {
        case "$nil":
            guard json == .bool(true) else { throw ConventionError(message: "{\"$nil\": …} takes true") }
            return Special(value: nil)
        case "$date":
            switch json {
            case .integer(let i): return Special(value: Date(timeIntervalSinceReferenceDate: Double(i)))
            case .double(let d) where d.isFinite: return Special(value: Date(timeIntervalSinceReferenceDate: d))
            default: throw ConventionError(message: "{\"$date\": …} takes a number of seconds since 2001-01-01")
            }
        case "$set":
            guard case .array(let elements) = json else { throw ConventionError(message: "{\"$set\": …} takes an array") }
            // A Swift set: NSSet hashes boxed Swift values (Decimal) through CF, which does not terminate on Linux.
            var set = Set<AnyHashable>()
            for element in elements {
                guard let hashable = try value(element, allowExpressions: allowExpressions) as? AnyHashable else {
                    throw ConventionError(message: "{\"$set\": …} elements must be strings, numbers, dates or null")
                }
                set.insert(hashable)
            }
            return Special(value: set)
        case "$decimal":
            // The whole text must be a number: Decimal(string:) skips leading spaces and stops at the first
            // character it cannot read ("1.5abc" is 1.5).
            guard case .string(let text) = json, Self.isDecimalText(text),
                  let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw ConventionError(message: "{\"$decimal\": …} takes a decimal number as a string, e.g. \"1.5\"")
            }
            return Special(value: decimal)
        case "$expr":
            guard allowExpressions else { throw ConventionError(message: "{\"$expr\": …} is only allowed among the arguments") }
            guard case .string(let format) = json else { throw ConventionError(message: "{\"$expr\": …} takes an expression format string") }
            return Special(value: try NSExpression(validatingFormat: format, argumentArray: []))
        default:
            return nil
        }
    }

    /// Format arguments: a JSON array, `$expr` allowed.
    public static func arguments(_ text: String?) throws -> [Any] {
        guard let text else { return [] }
        guard case .array(let elements) = try JSONValue.parse(text) else {
            throw ConventionError(message: "the arguments must be a JSON array")
        }
        return try elements.map { try value($0, allowExpressions: true) as Any }
    }

    /// A JSON object of variables (`--variables`, `--substitute`).
    public static func variables(_ text: String?) throws -> [String: Any]? {
        guard let text else { return nil }
        return try variables(JSONValue.parse(text))
    }

    static func variables(_ json: JSONValue) throws -> [String: Any] {
        guard case .object(let pairs) = json else { throw ConventionError(message: "variables must be a JSON object") }
        var result: [String: Any] = [:]
        // A nil variable value is stored as NSNull, as Core Data's templates want it.
        for (key, element) in pairs { result[key] = try value(element) ?? NSNull() }
        return result
    }

    /// What an evaluation object stands for: the object, and optional bindings or substitution variables
    /// from the `{"$object": …, "$bindings": …}` and `{"$object": …, "$substitute": …}` envelopes.
    public struct EvaluationInput {
        /// The object to evaluate against.
        public var object: Any?
        /// Variables bound at evaluation (`$bindings`).
        public var bindings: [String: Any]?
        /// Variables substituted before evaluation (`$substitute`).
        public var substitute: [String: Any]?
    }

    /// Reads an evaluation object, unwrapping the `$object` envelope when present.
    public static func evaluationInput(_ json: JSONValue) throws -> EvaluationInput {
        if case .object(let pairs) = json, pairs.contains(where: { $0.0 == "$object" }) {
            if let unknown = pairs.first(where: { !["$object", "$bindings", "$substitute"].contains($0.0) }) {
                throw ConventionError(message: "the {\"$object\": …} envelope takes only \"$bindings\" or \"$substitute\" beside it, not \"\(unknown.0)\"")
            }
            var input = EvaluationInput(object: try value(json["$object"]!))
            if let bindings = json["$bindings"] { input.bindings = try variables(bindings) }
            if let substitute = json["$substitute"] { input.substitute = try variables(substitute) }
            return input
        }
        return EvaluationInput(object: try value(json))
    }
}
