import Foundation

/// The evaluator's value model: every operand is converted to this once, so comparisons switch on a tag
/// instead of chaining dynamic casts. Booleans are numbers, as Apple's `@YES` is the number 1.
///
/// `nil` and `null` (NSNull) behave alike in every comparison; they differ only in how a constant prints
/// (`nil` vs `<null>`).
enum Value {
    case `nil`
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    case data(Data)
    case array([Value])
    case orderedSet([Value])
    case set(Set<Value>)
    case dictionary([Value: Value])
    /// Anything else: key-value-coding objects, UUIDs, URLs, user values. Compared with `==` when the value is
    /// `Hashable`, by identity when it is a class instance.
    case object(Opaque)
}

/// A value the evaluator does not look inside, except through `PredicateKeyValueCoding`. The protocol
/// existential is kept from the one conversion, so reading each key needs no dynamic cast.
struct Opaque {
    let value: Any
    let readable: (any PredicateKeyValueCoding)?

    init(_ value: Any) {
        self.value = value
        self.readable = value as? PredicateKeyValueCoding
    }

    init(readable: any PredicateKeyValueCoding) {
        self.value = readable
        self.readable = readable
    }
}

/// Lets `Value(_:)` see through an `Optional` that was boxed into `Any`.
protocol AnyOptional {
    var wrappedAny: Any? { get }
}

extension Optional: AnyOptional {
    var wrappedAny: Any? {
        switch self {
        case .none: return nil
        case .some(let wrapped): return wrapped
        }
    }
}

extension Value {
    /// Converts a Swift or Foundation value. Strings, numbers of every width, `NSNumber`, `Decimal`, dates,
    /// data, arrays, sets, ordered sets, dictionaries and `NSNull` get their own tags; anything else is kept
    /// as an opaque object.
    init(_ any: Any?) {
        guard let any else {
            self = .nil
            return
        }
        // Class instances and values take different paths: every failed cast costs a runtime lookup, and on
        // Linux casting a class instance to String or Int tries Foundation bridging first.
        if type(of: any) is AnyClass {
            self = Value(object: any)
            return
        }
        switch any {
        case let string as String: self = .string(string)
        case let int as Int: self = .int(Int64(int))
        case let double as Double: self = .double(double)
        case let bool as Bool: self = .bool(bool)
        default: self = Value(swiftValue: any)
        }
    }

    private init(object: Any) {
        // Managed objects are the common case: one conformance check.
        if let readable = object as? PredicateKeyValueCoding {
            self = .object(Opaque(readable: readable))
            return
        }
        // NSNumber casts to every numeric Swift type on Linux, so it is recognised by its dynamic type first.
        if type(of: object) is NSNumber.Type, let number = object as? NSNumber {
            self = Value(number: number)
            return
        }
        switch object {
        case let string as NSString: self = .string(string as String)
        case is NSNull: self = .null
        case let date as NSDate: self = .date(date as Date)
        case let data as NSData: self = .data(data as Data)
        case let ordered as NSOrderedSet: self = .orderedSet(ordered.array.map { Value($0) })
        case let array as NSArray: self = .array(array.map { Value($0) })
        case let set as NSSet: self = .set(Set(set.allObjects.map { Value($0) }))
        case let dictionary as NSDictionary:
            var converted: [Value: Value] = [:]
            for (key, value) in dictionary { converted[Value(key)] = Value(value) }
            self = .dictionary(converted)
        default: self = .object(Opaque(object))
        }
    }

    private init(swiftValue any: Any) {
        switch any {
        case let value as Value: self = value
        case let date as Date: self = .date(date)
        case let dictionary as [String: Any]:
            var converted: [Value: Value] = Dictionary(minimumCapacity: dictionary.count)
            for (key, value) in dictionary { converted[.string(key)] = Value(value) }
            self = .dictionary(converted)
        case let array as [Any]: self = .array(array.map { Value($0) })
        case let int as Int64: self = .int(int)
        case let int as Int32: self = .int(Int64(int))
        case let int as Int16: self = .int(Int64(int))
        case let int as Int8: self = .int(Int64(int))
        case let int as UInt: self = Value(unsigned: UInt64(int))
        case let int as UInt64: self = Value(unsigned: int)
        case let int as UInt32: self = .int(Int64(int))
        case let int as UInt16: self = .int(Int64(int))
        case let int as UInt8: self = .int(Int64(int))
        case let float as Float: self = .double(Double(float))
        case let decimal as Decimal: self = .decimal(decimal)
        case let substring as Substring: self = .string(String(substring))
        case let data as Data: self = .data(data)
        case let optional as AnyOptional: self = Value(optional.wrappedAny)
        case let set as Set<AnyHashable>: self = .set(Set(set.map { Value($0.base) }))
        case let dictionary as [AnyHashable: Any]:
            var converted: [Value: Value] = [:]
            for (key, value) in dictionary { converted[Value(key.base)] = Value(value) }
            self = .dictionary(converted)
        default: self = .object(Opaque(any))
        }
    }

    private init(number: NSNumber) {
        if let decimal = number as? NSDecimalNumber {
            self = .decimal(decimal.decimalValue)
            return
        }
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "c"), UInt8(ascii: "B"): self = .bool(number.boolValue)
        case UInt8(ascii: "d"), UInt8(ascii: "f"): self = .double(number.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"): self = Value(unsigned: number.uint64Value)
        default: self = .int(number.int64Value)
        }
    }

    private init(unsigned: UInt64) {
        self = unsigned <= UInt64(Int64.max) ? .int(Int64(unsigned)) : .decimal(Decimal(unsigned))
    }

    /// The value as Swift code expects it back: `Int`, `Double`, `Bool`, `Decimal`, `String`, `Date`, `[Any]`,
    /// `Set<AnyHashable>`, `NSOrderedSet`, `[AnyHashable: Any]`, `NSNull`, or the original object.
    var anyValue: Any? {
        switch self {
        case .nil: return nil
        case .null: return NSNull()
        case .bool(let b): return b
        case .int(let i): return Int(exactly: i) ?? i
        case .double(let d): return d
        case .decimal(let d): return d
        case .string(let s): return s
        case .date(let d): return d
        case .data(let d): return d
        case .array(let elements): return elements.map { $0.anyValue ?? NSNull() }
        case .orderedSet(let elements):
            // An ordered set hashes its members, and Linux Foundation's NSDecimalNumber never finishes
            // hashing: ordered decimals are handed out as an array.
            if elements.contains(where: { if case .decimal = $0 { return true } else { return false } }) {
                return elements.map { $0.anyValue ?? NSNull() }
            }
            return NSOrderedSet(array: elements.map { $0.anyValue ?? NSNull() })
        case .set(let elements): return Set(elements.map { $0.hashableAny })
        case .dictionary(let pairs):
            var result: [AnyHashable: Any] = [:]
            for (key, value) in pairs { result[key.hashableAny] = value.anyValue ?? NSNull() }
            return result
        case .object(let object): return object.value
        }
    }

    private var hashableAny: AnyHashable {
        if case .object(let object) = self, let hashable = object.value as? AnyHashable { return hashable }
        if let hashable = anyValue as? AnyHashable { return hashable }
        return AnyHashable(ValueKey(self))
    }

    var isNilOrNull: Bool {
        switch self {
        case .nil, .null: return true
        default: return false
        }
    }

    /// The elements of an array, ordered set or set, in iteration order; nil for anything else.
    var collectionElements: [Value]? {
        switch self {
        case .array(let elements), .orderedSet(let elements): return elements
        case .set(let elements): return Array(elements)
        default: return nil
        }
    }

    var isNumber: Bool {
        switch self {
        case .bool, .int, .double, .decimal: return true
        default: return false
        }
    }
}

/// A `Value` made `Hashable` for places that need an `AnyHashable` of a value with no Swift equivalent.
private struct ValueKey: Hashable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
