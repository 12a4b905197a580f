import Foundation

/// The comparison operators' semantics (Predicate Programming Guide, "Using Predicates"):
/// nil matches only nil, numbers compare by value across kinds, strings never convert to numbers, string
/// options apply only to strings.
enum Comparison {
    typealias Options = NSComparisonPredicate.Options

    static func evaluate(_ op: NSComparisonPredicate.Op, _ lhs: Value, _ rhs: Value, options: Options) throws -> Bool {
        switch op {
        case .standard(let standard):
            return try evaluate(standard, lhs, rhs, options: options)
        case .utiEquals:
            guard case .string(let a) = lhs, case .string(let b) = rhs else { return false }
            return a == b
        case .utiConformsTo:
            guard case .string(let a) = lhs, case .string(let b) = rhs else { return false }
            return UniformTypes.conforms(a, to: b)
        case .selector(let name):
            return try MethodRegistry.shared.compare(name, lhs, rhs)
        }
    }

    static func evaluate(_ op: NSComparisonPredicate.Operator, _ lhs: Value, _ rhs: Value, options: Options) throws -> Bool {
        switch op {
        case .equalTo:
            return equal(lhs, rhs, options: options)
        case .notEqualTo:
            return !equal(lhs, rhs, options: options)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            if lhs.isNilOrNull || rhs.isNilOrNull { return false }
            let order = try self.order(lhs, rhs, options: options)
            switch op {
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqualTo: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .beginsWith, .endsWith:
            if lhs.isNilOrNull || rhs.isNilOrNull { return false }
            guard case .string(let string) = lhs, case .string(let part) = rhs else {
                throw substringError(lhs, rhs)
            }
            if part.isEmpty { return false }
            let (s, p) = (fold(string, options), fold(part, options))
            return op == .beginsWith ? s.hasPrefix(p) : s.hasSuffix(p)
        case .contains:
            return try contains(lhs, rhs, options: options)
        case .in:
            return try contains(rhs, lhs, options: options)
        case .like:
            if lhs.isNilOrNull || rhs.isNilOrNull { return false }
            guard case .string(let string) = lhs, case .string(let pattern) = rhs else {
                throw PredicateEvaluationError(.typeMismatch, "Can't do LIKE with something that isn't a string (lhs = \(describe(lhs)) rhs = \(describe(rhs)))")
            }
            return Like.matches(fold(string, options), pattern: fold(pattern, options))
        case .matches:
            if lhs.isNilOrNull || rhs.isNilOrNull { return false }
            guard case .string(let string) = lhs, case .string(let pattern) = rhs else {
                throw PredicateEvaluationError(.typeMismatch, "Can't do regex matching on object \(describe(lhs)) with pattern \(describe(rhs)).")
            }
            return try Regex.matches(fold(string, options.subtracting(.caseInsensitive)), pattern: pattern, caseInsensitive: options.contains(.caseInsensitive) && !options.contains(.normalized))
        case .between:
            if lhs.isNilOrNull { return false }
            guard case .array(let bounds) = rhs, bounds.count == 2 else {
                throw PredicateEvaluationError(.invalidArgument, "Can't evaluate BETWEEN: the right hand side must be an array of two values (a lower and an upper bound), not \(describe(rhs)).")
            }
            if bounds[0].isNilOrNull || bounds[1].isNilOrNull { return false }
            return try order(lhs, bounds[0], options: options) != .orderedAscending
                && order(lhs, bounds[1], options: options) != .orderedDescending
        case .customSelector:
            throw PredicateEvaluationError(.unsupported, "A custom selector comparison needs its selector.")
        }
    }

    /// `==`: nil equals only nil; strings fold with the options; everything else as `Value ==`.
    static func equal(_ lhs: Value, _ rhs: Value, options: Options) -> Bool {
        if case .string(let a) = lhs, case .string(let b) = rhs {
            if options.isEmpty || options == .normalized { return a.utf16.elementsEqual(b.utf16) }
            if options.contains(.localeSensitive) && !options.contains(.normalized) {
                return a.compare(b, options: compareOptions(options), range: nil, locale: .current) == .orderedSame
            }
            return fold(a, options).utf16.elementsEqual(fold(b, options).utf16)
        }
        return lhs == rhs
    }

    /// `compare:`: numbers by value, strings by code unit (or folded, or localized), dates in time order.
    /// Other pairs cannot be ordered: Apple raises there, and so do we.
    static func order(_ lhs: Value, _ rhs: Value, options: Options) throws -> ComparisonResult {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)):
            if options.contains(.localeSensitive) && !options.contains(.normalized) {
                return a.compare(b, options: compareOptions(options), range: nil, locale: .current)
            }
            return codeUnitOrder(fold(a, options), fold(b, options))
        case (.date(let a), .date(let b)):
            return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.object(let a), .object(let b)) where uuid(a.value) != nil && uuid(b.value) != nil:
            // NSUUID has `compare:`; byte by byte, the order SQLite gives the 16-byte blobs a store keeps.
            return bytewiseOrder(uuid(a.value)!, uuid(b.value)!)
        default:
            if let a = lhs.numeric, let b = rhs.numeric {
                if let result = Numeric.compare(a, b) { return result }
                // A NaN (a double the store or the app holds): before every number and the same as a NaN,
                // as CFNumberCompare, behind Apple's -[NSNumber compare:], orders it. Throwing instead
                // stopped `evaluate(with:)` and sorts.
                let aIsNaN = a.doubleValue.isNaN, bIsNaN = b.doubleValue.isNaN
                if aIsNaN || bIsNaN { return aIsNaN == bIsNaN ? .orderedSame : (aIsNaN ? .orderedAscending : .orderedDescending) }
            }
            throw PredicateEvaluationError(.typeMismatch, "Can't compare \(describe(lhs)) with \(describe(rhs)): \(KeyValueCoding.typeName(lhs)) and \(KeyValueCoding.typeName(rhs)) have no common order.")
        }
    }

    private static func uuid(_ value: Any) -> UUID? {
        if let uuid = value as? UUID { return uuid }
        return (value as? NSUUID).map { $0 as UUID }
    }

    private static func bytewiseOrder(_ a: UUID, _ b: UUID) -> ComparisonResult {
        withUnsafeBytes(of: a.uuid) { x in
            withUnsafeBytes(of: b.uuid) { y in
                for index in 0..<16 where x[index] != y[index] { return x[index] < y[index] ? .orderedAscending : .orderedDescending }
                return .orderedSame
            }
        }
    }

    /// `compare:` without options: UTF-16 code units in order, so "😀" (0xD83D…) sorts before "｡" (0xFF61).
    static func codeUnitOrder(_ a: String, _ b: String) -> ComparisonResult {
        var x = a.utf16.makeIterator(), y = b.utf16.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let p?, let q?) where p != q: return p < q ? .orderedAscending : .orderedDescending
            default: continue
            }
        }
    }

    /// `collection CONTAINS element` (membership) or `string CONTAINS substring`.
    private static func contains(_ container: Value, _ element: Value, options: Options) throws -> Bool {
        switch container {
        case .nil, .null:
            return false
        case .string(let string):
            if element.isNilOrNull { return false }
            guard case .string(let part) = element else { throw substringError(container, element) }
            if part.isEmpty { return false }
            return fold(string, options).contains(fold(part, options))
        case .array(let elements), .orderedSet(let elements):
            if element.isNilOrNull { return false }
            return elements.contains { equal($0, element, options: options) }
        case .set(let elements):
            if element.isNilOrNull { return false }
            if options.isEmpty { return elements.contains(element) }
            return elements.contains { equal($0, element, options: options) }
        case .dictionary(let pairs):
            if element.isNilOrNull { return false }
            return pairs.values.contains { equal($0, element, options: options) }
        default:
            throw PredicateEvaluationError(.typeMismatch, "Can't look for \(describe(element)) in \(describe(container)): IN and CONTAINS need a collection or a string.")
        }
    }

    private static func substringError(_ lhs: Value, _ rhs: Value) -> PredicateEvaluationError {
        PredicateEvaluationError(.typeMismatch, "Can't do a substring operation with something that isn't a string (lhs = \(describe(lhs)) rhs = \(describe(rhs)))")
    }

    static func describe(_ value: Value) -> String {
        FormatPrinter.constantDescription(value)
    }

    /// Folds case and diacritics as `[c]` and `[d]` ask; `[n]` promises folded input and skips the work.
    static func fold(_ string: String, _ options: Options) -> String {
        if options.contains(.normalized) { return string }
        var foldOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldOptions.insert(.diacriticInsensitive) }
        if foldOptions.isEmpty { return string }
        if string.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII has no diacritics, and lowercasing is its whole case folding.
            return foldOptions.contains(.caseInsensitive) ? string.lowercased() : string
        }
        return string.folding(options: foldOptions, locale: nil)
    }

    private static func compareOptions(_ options: Options) -> String.CompareOptions {
        var result: String.CompareOptions = []
        if options.contains(.caseInsensitive) { result.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { result.insert(.diacriticInsensitive) }
        return result
    }
}

/// `LIKE`: a whole-string glob match where `*` matches any run of characters (newlines too), `?` exactly
/// one character, and a backslash makes the next character literal. Every other character is literal.
enum Like {
    static func matches(_ string: String, pattern: String) -> Bool {
        let s = Array(string), p = Array(pattern)
        // Iterative glob with single-star backtracking: linear in practice, no recursion depth.
        var si = 0, pi = 0
        var starPattern = -1, starString = 0
        while si < s.count {
            if pi < p.count {
                let c = p[pi]
                if c == "*" {
                    starPattern = pi
                    starString = si
                    pi += 1
                    continue
                }
                if c == "\\" && pi + 1 < p.count {
                    if p[pi + 1] == s[si] {
                        si += 1
                        pi += 2
                        continue
                    }
                } else if c == "?" || c == s[si] {
                    si += 1
                    pi += 1
                    continue
                }
            }
            if starPattern >= 0 {
                pi = starPattern + 1
                starString += 1
                si = starString
                continue
            }
            return false
        }
        while pi < p.count && p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

/// `MATCHES`: an ICU regular expression that must match the whole string.
enum Regex {
    private static let cache = RegexCache()

    static func matches(_ string: String, pattern: String, caseInsensitive: Bool) throws -> Bool {
        // The pattern alone is compiled first so that a malformed one is reported as written; the wrapped
        // form `(?:…)\z`, anchored at the start, keeps alternation and `$` meaning what they mean in it.
        let raw = try cache.regex(pattern, caseInsensitive: caseInsensitive, original: pattern)
        let range = NSRange(string.startIndex..<string.endIndex, in: string)
        guard let whole = try? cache.regex("(?:" + pattern + ")\\z", caseInsensitive: caseInsensitive, original: pattern) else {
            // A few valid patterns cannot be wrapped (`\Q…` without `\E`, an `(?x)` comment runs to the end):
            // match them as written and require the match to cover the string.
            return raw.firstMatch(in: string, options: [.anchored], range: range)?.range == range
        }
        return whole.firstMatch(in: string, options: [.anchored], range: range) != nil
    }
}

/// Compiled patterns, because a fetch evaluates the same `MATCHES` once per object.
private final class RegexCache: @unchecked Sendable {
    private let lock = NSLock()
    private var compiled: [String: NSRegularExpression] = [:]

    func regex(_ pattern: String, caseInsensitive: Bool, original: String) throws -> NSRegularExpression {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        if let regex = lock.withLock({ compiled[key] }) { return regex }
        do {
            let regex = try NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : [])
            lock.withLock {
                if compiled.count > 256 { compiled.removeAll() }
                compiled[key] = regex
            }
            return regex
        } catch {
            throw PredicateEvaluationError(.invalidRegularExpression, "Can't do regex matching, reason: Can't open pattern \(error.localizedDescription) (pattern \(original), case \(caseInsensitive ? 1 : 0))")
        }
    }
}
