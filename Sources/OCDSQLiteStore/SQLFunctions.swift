import Foundation
import OCDPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSComparisonPredicate
import class OCDPredicate.NSCompoundPredicate
import class OCDPredicate.NSSortDescriptor

/// The SQL functions and collations the predicate translation relies on, registered on each connection:
/// string comparisons with Core Data's options (`[c]`, `[d]`), `LIKE` and `MATCHES` with NSPredicate's
/// semantics, and the sort selectors Core Data's SQL store accepts.
enum SQLFunctions {
    /// `ocd_compare(operator, options, left, right)`: 1 when the NSPredicate comparison holds, else 0.
    /// Runs the predicate layer's own comparison, so SQL and in-memory evaluation agree.
    static let compare = "ocd_compare"
    /// Collation for `caseInsensitiveCompare:` / `localizedCaseInsensitiveCompare:`.
    static let caseInsensitive = "OCD_NOCASE"
    /// Collation for `localizedStandardCompare:`.
    static let localizedStandard = "OCD_LOCALIZED_STANDARD"
    /// Collation for `localizedCompare:`.
    static let localized = "OCD_LOCALIZED"
    /// Collation for `localizedCaseInsensitiveCompare:`.
    static let localizedCaseInsensitive = "OCD_LOCALIZED_NOCASE"

    static func register(on connection: SQLiteConnection) {
        let cache = ComparisonCache()
        connection.registerFunction(compare, arity: 4) { arguments in
            guard case .integer(let op) = arguments[0], case .integer(let options) = arguments[1],
                  let rawOperator = UInt(exactly: op), let rawOptions = UInt(exactly: options),
                  let type = NSComparisonPredicate.Operator(rawValue: rawOperator) else { return .null }
            let left = swiftValue(arguments[2])
            let right = swiftValue(arguments[3])
            return try cache.evaluate(type, NSComparisonPredicate.Options(rawValue: rawOptions), left, right) ? .integer(1) : .integer(0)
        }
        // The collations order exactly as NSSortDescriptor does in memory, so sorted fetches agree.
        registerCollation(connection, caseInsensitive, sortOrder(.caseInsensitiveCompare))
        registerCollation(connection, localizedStandard, sortOrder(.localizedStandardCompare))
        registerCollation(connection, localized, sortOrder(.localizedCompare))
        registerCollation(connection, localizedCaseInsensitive, sortOrder(.localizedCaseInsensitiveCompare))
    }

    /// The order a sort descriptor with `selector` gives two strings.
    private static func sortOrder(_ selector: Selector) -> (String, String) -> ComparisonResult {
        let descriptor = NSSortDescriptor(key: nil, ascending: true, selector: selector)
        return { (try? descriptor.compareThrowing($0, to: $1)) ?? .orderedSame }
    }

    private static func swiftValue(_ value: SQLValue) -> Any? {
        switch value {
        case .null: return nil
        case .integer(let v): return NSNumber(value: v)
        case .real(let v): return NSNumber(value: v)
        case .text(let v): return v
        case .blob(let v): return v
        }
    }

    private static func registerCollation(_ connection: SQLiteConnection, _ name: String, _ order: @escaping (String, String) -> ComparisonResult) {
        let box = Unmanaged.passRetained(CollationBox(order)).toOpaque()
        sqlite3_create_collation_v2_shim(connection.handle, name, box)
    }
}

/// Comparison predicates by operator, options and constant right-hand side, so that a regular expression
/// (`MATCHES`, `LIKE`) is compiled once per query rather than once per row.
private final class ComparisonCache: @unchecked Sendable {
    private let lock = NSLock()
    private var predicates: [String: NSComparisonPredicate] = [:]

    /// Throws what evaluation in memory throws (a pattern that is no regular expression): the statement,
    /// and so the fetch, fails with it, as a fetch from the in-memory store does.
    func evaluate(_ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options, _ left: Any?, _ right: Any?) throws -> Bool {
        // The value's type is part of the key: the number 1 and the string "1" compare differently.
        let text = (right as? Data).map { $0.base64EncodedString() } ?? right.map { "\($0)" } ?? "<nil>"
        let key = "\(type.rawValue)|\(options.rawValue)|\(right.map { "\(Swift.type(of: $0))" } ?? "")|\(text)"
        lock.lock()
        var predicate = predicates[key]
        if predicate == nil {
            predicate = NSComparisonPredicate(leftExpression: NSExpression(forVariable: "value"),
                                              rightExpression: NSExpression(forConstantValue: right),
                                              modifier: .direct, type: type, options: options)
            if predicates.count > 256 { predicates.removeAll() }
            predicates[key] = predicate
        }
        lock.unlock()
        return try predicate!.evaluateThrowing(with: nil, substitutionVariables: ["value": left ?? NSNull()])
    }
}

final class CollationBox {
    let order: (String, String) -> ComparisonResult
    init(_ order: @escaping (String, String) -> ComparisonResult) { self.order = order }
}
