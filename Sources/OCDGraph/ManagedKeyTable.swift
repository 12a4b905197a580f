import Foundation

/// What Objective-C's runtime would find by name in a managed object subclass, written down for Swift on
/// Linux: key path → key names, class-provided accessors, custom primitive accessors and `validate<Key>`
/// methods. `@ManagedObject` generates a class's table; a class can also override
/// ``NSManagedObject/managedKeyTable`` by hand:
///
/// ```swift
/// override class var managedKeyTable: ManagedKeyTable {
///     var table = super.managedKeyTable
///     // Rooted at the class whose table this is, so that `\Manager.name` is named in a subclass's table.
///     func entries<Object: Employee>(_: Object.Type) { table.managed(\Object.name, key: "name") }
///     entries(Self.self)
///     table.validator(key: "name") { (object: Employee, value: inout Any?) in try object.validateName(&value) }
///     return table
/// }
/// ```
public struct ManagedKeyTable: @unchecked Sendable {
    struct Accessor {
        let get: (NSManagedObject) -> Any?
        let set: ((NSManagedObject, Any?) -> Void)?
    }

    var keyNames: [AnyKeyPath: String] = [:]
    var accessors: [String: Accessor] = [:]
    var primitiveAccessors: [String: Accessor] = [:]
    var validators: [String: (NSManagedObject, inout Any?) throws -> Void] = [:]

    public init() {}

    /// Names the key path of a `@Managed` property; key-value coding reads the model's storage directly.
    public mutating func managed<Root: NSManagedObject, Value>(_ keyPath: KeyPath<Root, Value>, key: String) {
        keyNames[keyPath] = key
    }

    /// A class-provided read-write accessor: `value(forKey:)` and `setValue(_:forKey:)` call it, as
    /// key-value coding calls a method named after the key.
    public mutating func accessor<Root: NSManagedObject, Value>(_ keyPath: ReferenceWritableKeyPath<Root, Value>, key: String) {
        keyNames[keyPath] = key
        accessors[key] = Accessor(
            get: { ($0 as! Root)[keyPath: keyPath] },
            set: { object, value in
                (object as! Root)[keyPath: keyPath] = ManagedValueCoercion.coerce(value, to: Value.self, key: key, in: object)
            })
    }

    /// A class-provided read-only accessor; `setValue(_:forKey:)` on its key stops.
    public mutating func accessor<Root: NSManagedObject, Value>(_ keyPath: KeyPath<Root, Value>, key: String) {
        keyNames[keyPath] = key
        accessors[key] = Accessor(get: { ($0 as! Root)[keyPath: keyPath] }, set: nil)
    }

    /// A custom primitive accessor pair (`primitiveInt16`): `primitiveValue(forKey:)` and
    /// `setPrimitiveValue(_:forKey:)` use it, so a value kept in the subclass's own storage is persisted.
    public mutating func primitiveAccessor<Root: NSManagedObject, Value>(_ keyPath: ReferenceWritableKeyPath<Root, Value>, key: String) {
        primitiveAccessors[key] = Accessor(
            get: { ($0 as! Root)[keyPath: keyPath] },
            set: { object, value in
                (object as! Root)[keyPath: keyPath] = ManagedValueCoercion.coerce(value, to: Value.self, key: key, in: object)
            })
    }

    /// A read-only custom primitive accessor.
    public mutating func primitiveAccessor<Root: NSManagedObject, Value>(_ keyPath: KeyPath<Root, Value>, key: String) {
        primitiveAccessors[key] = Accessor(get: { ($0 as! Root)[keyPath: keyPath] }, set: nil)
    }

    /// A `validate<Key>(_:)` method: `validateValue(_:forKey:)` and save-time validation call it.
    public mutating func validator<Root: NSManagedObject>(key: String, _ method: @escaping (Root, inout Any?) throws -> Void) {
        validators[key] = { object, value in try method(object as! Root, &value) }
    }

    // MARK: One table per class

    private static let lock = NSLock()
    nonisolated(unsafe) private static var tables: [ObjectIdentifier: Shared] = [:]

    /// The table of `type`, computed once (the class property builds a new table each time).
    static func of(_ type: NSManagedObject.Type) -> ManagedKeyTable { shared(type).table }

    /// A class's table behind one reference, so that an object holds a pointer rather than four dictionaries,
    /// and the hot paths test `hasAccessors` without touching them.
    final class Shared: @unchecked Sendable {
        let table: ManagedKeyTable
        let hasAccessors: Bool
        let hasPrimitiveAccessors: Bool

        init(_ table: ManagedKeyTable) {
            self.table = table
            hasAccessors = !table.accessors.isEmpty
            hasPrimitiveAccessors = !table.primitiveAccessors.isEmpty
        }
    }

    static func shared(_ type: NSManagedObject.Type) -> Shared {
        let key = ObjectIdentifier(type)
        lock.lock()
        if let shared = tables[key] {
            lock.unlock()
            return shared
        }
        lock.unlock()
        let shared = Shared(type.managedKeyTable)
        lock.lock()
        tables[key] = shared
        lock.unlock()
        return shared
    }
}

/// Conversions between the values key-value coding passes around (`Any?`) and typed properties.
public enum ManagedValueCoercion {
    /// `value` as a `T`, converting numbers across their Swift types and collections of managed objects
    /// across their forms; stops with a precise message when the value cannot be a `T`.
    public static func coerce<T>(_ value: Any?, to type: T.Type, key: String, in object: NSManagedObject) -> T {
        if let converted = convert(value, to: T.self) { return converted }
        let given = value.map { "\(Swift.type(of: $0))" } ?? "nil"
        fatalError("Unacceptable type of value for key \"\(key)\" of \(object.entity.name ?? "?"): desired type = \(T.self); given type = \(given); value = \(value.map { "\($0)" } ?? "nil").")
    }

    /// `value` as a `T`, or nil if it cannot be one.
    public static func convert<T>(_ value: Any?, to type: T.Type) -> T? {
        guard let value else {
            if let none = (nil as Any?) as? T { return none }
            if let zero = (T.self as? any ManagedScalarDefault.Type)?.managedZero as? T { return zero }
            if let empty = (T.self as? any ManagedEmptyCollection.Type)?.managedEmpty as? T { return empty }
            if T.self == NSSet.self { return NSSet() as? T }
            if T.self == NSOrderedSet.self { return NSOrderedSet() as? T }
            return nil
        }
        if let direct = value as? T { return direct }
        // Numbers: through NSNumber, which converts exactly (and fails for values out of range).
        if let number = number(from: value), let converted = number as? T { return converted }
        // Collections of managed objects.
        if let objects = managedObjects(in: value) {
            if let set = Set(objects) as? T { return set }
            if T.self == NSSet.self || T.self == NSSet?.self { return NSSet(array: objects) as? T }
            if T.self == NSOrderedSet.self || T.self == NSOrderedSet?.self { return NSOrderedSet(array: objects) as? T }
            if let array = objects as? T { return array }
        }
        // An enum stored as its raw value (Int16, String…): last, as its two conformance checks cost.
        if let enumType = T.self as? any RawRepresentable.Type, let made = makeRaw(enumType, from: value) as? T { return made }
        // Unwrapped first: a nil `Any?` cast to an optional `T` succeeds as an empty optional.
        if let optional = T.self as? any OptionalOfRawRepresentable.Type, let wrapped = optional.wrapping(value),
           let made = wrapped as? T { return made }
        return nil
    }

    static func isRawValue<R: RawRepresentable>(_ value: Any, of type: R.Type) -> Bool {
        convert(value, to: R.RawValue.self) != nil
    }

    /// Nil for an optional enum property whose stored raw value names no case (a value written by a newer
    /// version of the app, with a case this one does not know): the property has no value it can show.
    /// Nil (no answer) for anything else.
    static func unknownCase<T>(_ value: Any?, as type: T.Type) -> T? {
        guard let value, let optional = T.self as? any OptionalOfRawRepresentable.Type, optional.isRawValue(value) else { return nil }
        return (nil as Any?) as? T
    }

    /// A stored number that a scalar type cannot hold exactly, as that type reads it on Apple platforms,
    /// whose scalar accessors take `shortValue`, `longLongValue`, `boolValue`, `doubleValue`…: an integer
    /// out of a narrower type's range (an Integer 16 column can hold 70000: SQLite does not enforce
    /// widths) truncated, a fraction set on an integer attribute through `setValue(_:forKey:)` cut off,
    /// any number other than 0 true. Nil for anything else.
    static func scalarReading<T>(_ value: Any?, to type: T.Type) -> T? {
        guard let value, let number = number(from: value) else { return nil }
        let bits = number.int64Value
        switch type {
        case is Int64.Type, is Int64?.Type: return bits as? T
        case is Int.Type, is Int?.Type: return Int(truncatingIfNeeded: bits) as? T
        case is UInt64.Type, is UInt64?.Type: return UInt64(truncatingIfNeeded: bits) as? T
        case is UInt.Type, is UInt?.Type: return UInt(truncatingIfNeeded: bits) as? T
        case is Bool.Type, is Bool?.Type: return number.boolValue as? T
        case is Double.Type, is Double?.Type: return number.doubleValue as? T
        case is Float.Type, is Float?.Type: return number.floatValue as? T
        case is Int16.Type, is Int16?.Type: return Int16(truncatingIfNeeded: bits) as? T
        case is Int32.Type, is Int32?.Type: return Int32(truncatingIfNeeded: bits) as? T
        case is Int8.Type, is Int8?.Type: return Int8(truncatingIfNeeded: bits) as? T
        case is UInt8.Type, is UInt8?.Type: return UInt8(truncatingIfNeeded: bits) as? T
        case is UInt16.Type, is UInt16?.Type: return UInt16(truncatingIfNeeded: bits) as? T
        case is UInt32.Type, is UInt32?.Type: return UInt32(truncatingIfNeeded: bits) as? T
        default: return nil
        }
    }

    static func makeRaw<R: RawRepresentable>(_ type: R.Type, from value: Any) -> R? {
        convert(value, to: R.RawValue.self).flatMap(R.init(rawValue:))
    }

    /// Whether `value` is a class instance or one of the common scalars and strings: nothing an `Optional`
    /// can hide in. Metatype comparisons only, no casts.
    static func isPlainValue(_ value: Any) -> Bool {
        let type = Swift.type(of: value)
        return type == Int64.self || type == Int.self || type == String.self || type == Double.self
            || type == Int32.self || type == Int16.self || type == Bool.self || type == Float.self
            || type == Date.self || type is AnyClass
    }

    static func number(from value: Any) -> NSNumber? {
        // The common cases first, recognised by their metatype: each failed `as?` below costs a dynamic cast.
        let type = Swift.type(of: value)
        if type == Int64.self { return NSNumber(value: value as! Int64) }
        if type == Int.self { return NSNumber(value: value as! Int) }
        if type == Double.self { return NSNumber(value: value as! Double) }
        if type is AnyClass { return type is NSNumber.Type ? value as? NSNumber : nil }
        switch value {
        case let v as Int: return NSNumber(value: v)
        case let v as Int16: return NSNumber(value: v)
        case let v as Int32: return NSNumber(value: v)
        case let v as Int64: return NSNumber(value: v)
        case let v as Int8: return NSNumber(value: v)
        case let v as UInt: return NSNumber(value: v)
        case let v as UInt8: return NSNumber(value: v)
        case let v as UInt16: return NSNumber(value: v)
        case let v as UInt32: return NSNumber(value: v)
        case let v as UInt64: return NSNumber(value: v)
        case let v as Double: return NSNumber(value: v)
        case let v as Float: return NSNumber(value: v)
        case let v as Bool: return NSNumber(value: v)
        // An enum with a numeric raw value is stored as that value.
        case let v as any RawRepresentable: return number(from: v.rawValue)
        default: return nil
        }
    }

    /// The managed objects of a Swift set or array, an NSSet, NSOrderedSet or NSArray; nil for anything else
    /// (including a collection holding something that is not a managed object).
    static func managedObjects(in value: Any) -> [NSManagedObject]? {
        let elements: [Any]
        switch value {
        case let set as Set<AnyHashable>: elements = set.map(\.base)
        case let ordered as NSOrderedSet: elements = ordered.array
        case let set as NSSet: elements = set.allObjects
        case let array as [Any]: elements = array
        case let proxy as ManagedMutableSet: elements = proxy.allObjects
        case let proxy as ManagedMutableOrderedSet: elements = proxy.array
        default: return nil
        }
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(elements.count)
        for element in elements {
            guard let object = element as? NSManagedObject else { return nil }
            objects.append(object)
        }
        return objects
    }
}

/// Scalar types a `@Managed` property may have: nil in the store reads as zero, as Xcode's scalar codegen
/// reads it.
public protocol ManagedScalarDefault { static var managedZero: Self { get } }
extension Int: ManagedScalarDefault { public static var managedZero: Int { 0 } }
extension Int16: ManagedScalarDefault { public static var managedZero: Int16 { 0 } }
extension Int32: ManagedScalarDefault { public static var managedZero: Int32 { 0 } }
extension Int64: ManagedScalarDefault { public static var managedZero: Int64 { 0 } }
extension Double: ManagedScalarDefault { public static var managedZero: Double { 0 } }
extension Float: ManagedScalarDefault { public static var managedZero: Float { 0 } }
extension Bool: ManagedScalarDefault { public static var managedZero: Bool { false } }
extension Int8: ManagedScalarDefault { public static var managedZero: Int8 { 0 } }
extension UInt: ManagedScalarDefault { public static var managedZero: UInt { 0 } }
extension UInt8: ManagedScalarDefault { public static var managedZero: UInt8 { 0 } }
extension UInt16: ManagedScalarDefault { public static var managedZero: UInt16 { 0 } }
extension UInt32: ManagedScalarDefault { public static var managedZero: UInt32 { 0 } }
extension UInt64: ManagedScalarDefault { public static var managedZero: UInt64 { 0 } }

/// Types whose non-optional `@Managed` property reads nil as an empty value: a to-many relationship's
/// set, and the types Apple's `@NSManaged` getters bridge a nil object to an empty value of (`String`,
/// `Data`, `Decimal`, arrays and dictionaries), where other types stop.
public protocol ManagedEmptyCollection { static var managedEmpty: Self { get } }
extension Set: ManagedEmptyCollection { public static var managedEmpty: Set<Element> { [] } }
extension String: ManagedEmptyCollection { public static var managedEmpty: String { "" } }
extension Data: ManagedEmptyCollection { public static var managedEmpty: Data { Data() } }
extension Decimal: ManagedEmptyCollection { public static var managedEmpty: Decimal { Decimal() } }
extension Array: ManagedEmptyCollection { public static var managedEmpty: [Element] { [] } }
extension Dictionary: ManagedEmptyCollection { public static var managedEmpty: [Key: Value] { [:] } }

/// An optional whose wrapped type may be an enum with a raw value (`BoxMood?`), which a stored raw value
/// converts to.
protocol OptionalOfRawRepresentable {
    static func wrapping(_ value: Any) -> Any?
    /// Whether `value` is a raw value of the wrapped enum's raw type (a case of it or not).
    static func isRawValue(_ value: Any) -> Bool
}

extension Optional: OptionalOfRawRepresentable {
    static func wrapping(_ value: Any) -> Any? {
        guard let enumType = Wrapped.self as? any RawRepresentable.Type,
              let made = ManagedValueCoercion.makeRaw(enumType, from: value) as? Wrapped else { return nil }
        return Optional<Wrapped>.some(made)
    }

    static func isRawValue(_ value: Any) -> Bool {
        guard let enumType = Wrapped.self as? any RawRepresentable.Type else { return false }
        return ManagedValueCoercion.isRawValue(value, of: enumType)
    }
}
