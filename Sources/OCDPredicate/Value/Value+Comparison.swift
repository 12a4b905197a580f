import Foundation

/// A number in the widest form needed to compare it exactly with another.
enum Numeric {
    case int(Int64)
    case double(Double)
    case decimal(Decimal)

    var doubleValue: Double {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .decimal(let d): return NSDecimalNumber(decimal: d).doubleValue
        }
    }

    var decimalValue: Decimal {
        switch self {
        case .int(let i): return Decimal(i)
        // Decimal(Double.infinity) traps; NaN is Decimal's own "not a number".
        case .double(let d): return d.isFinite ? Decimal(d) : .nan
        case .decimal(let d): return d
        }
    }

    /// Three-way comparison; nil when either side is NaN.
    static func compare(_ lhs: Numeric, _ rhs: Numeric) -> ComparisonResult? {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)):
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        case (.int(let a), .double(let b)):
            return compareExactly(a, b)
        case (.double(let a), .int(let b)):
            return compareExactly(b, a).map(\.reversed)
        case (.decimal, .int), (.int, .decimal), (.decimal, .decimal):
            let a = lhs.decimalValue, b = rhs.decimalValue
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        default:
            let a = lhs.doubleValue, b = rhs.doubleValue
            if a.isNaN || b.isNaN { return nil }
            return a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
    }

    /// Compares an integer with a double without rounding the integer (2^53 + 1 is not 2^53).
    private static func compareExactly(_ a: Int64, _ b: Double) -> ComparisonResult? {
        if b.isNaN { return nil }
        if b >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if b < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = b.rounded(.towardZero)
        let wholeInt = Int64(whole)
        if a != wholeInt { return a < wholeInt ? .orderedAscending : .orderedDescending }
        let fraction = b - whole
        return fraction > 0 ? .orderedAscending : (fraction < 0 ? .orderedDescending : .orderedSame)
    }
}

extension ComparisonResult {
    var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}

extension Value {
    var numeric: Numeric? {
        switch self {
        case .bool(let b): return .int(b ? 1 : 0)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .decimal(let d): return .decimal(d)
        default: return nil
        }
    }
}

extension Value: Hashable {
    /// Equality as `isEqual:` sees it: numbers by value across integer, floating point, decimal and boolean;
    /// no conversion between strings and numbers; collections structurally; nil equals NSNull.
    static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.nil, .nil), (.null, .null), (.nil, .null), (.null, .nil): return true
        // isEqual: compares UTF-16 code units: "é" precomposed is not "e" + U+0301.
        case (.string(let a), .string(let b)): return a.utf16.elementsEqual(b.utf16)
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)), (.orderedSet(let a), .orderedSet(let b)),
             (.array(let a), .orderedSet(let b)), (.orderedSet(let a), .array(let b)):
            return a == b
        case (.set(let a), .set(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)): return a == b
        case (.object(let a), .object(let b)): return objectsEqual(a.value, b.value)
        default:
            guard let a = lhs.numeric, let b = rhs.numeric else { return false }
            return Numeric.compare(a, b) == .orderedSame
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .nil, .null: hasher.combine(0)
        case .bool, .int, .double, .decimal:
            // Equal numbers of different kinds must hash alike, so all hash as the nearest Double.
            hasher.combine(numeric!.doubleValue)
        case .string(let s): hasher.combine(s)
        case .date(let d): hasher.combine(d)
        case .data(let d): hasher.combine(d)
        case .array(let a), .orderedSet(let a): hasher.combine(a)
        case .set(let s): hasher.combine(s)
        case .dictionary(let d): hasher.combine(d)
        case .object(let opaque):
            let o = opaque.value
            if let identified = o as? PredicateObjectIdentity {
                hasher.combine(identified.predicateIdentity)
            } else if let hashable = o as? AnyHashable {
                hasher.combine(hashable)
            } else if type(of: o) is AnyClass {
                hasher.combine(ObjectIdentifier(o as AnyObject))
            }
        }
    }
}

func objectsEqual(_ a: Any, _ b: Any) -> Bool {
    if let x = a as? PredicateObjectIdentity, let y = b as? PredicateObjectIdentity { return x.predicateIdentity == y.predicateIdentity }
    if let x = a as? AnyHashable, let y = b as? AnyHashable { return x == y }
    if type(of: a) is AnyClass, type(of: b) is AnyClass { return (a as AnyObject) === (b as AnyObject) }
    return false
}
