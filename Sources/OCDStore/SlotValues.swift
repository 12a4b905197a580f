import Foundation

/// The values of a row or an object by slot of its ``EntityLayout``.
///
/// An integer, double or boolean attribute's value may be held as a plain `Int64`, `Double` or `Bool`
/// rather than an `NSNumber`: it then lives in the existential's inline buffer, with no allocation (560 of
/// a ten-integer object's 1,239 bytes were its `NSNumber`s). Reading through the subscript (or iterating)
/// hands out the stored form every other reader expects, an `NSNumber`; hot paths that know what they want
/// read ``storage`` directly and box nothing. A slot may hold either form: writers keep what they are given.
public struct SlotValues: RandomAccessCollection, MutableCollection, @unchecked Sendable {
    /// The values as held: numbers possibly unboxed.
    public var storage: [Any?]

    @inlinable
    public init(_ storage: [Any?]) { self.storage = storage }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { storage.count }

    /// The value of `slot` in its stored form (an unboxed number as an `NSNumber`).
    @inlinable
    public subscript(slot: Int) -> Any? {
        get { SlotValues.boxed(storage[slot]) }
        set { storage[slot] = newValue }
    }

    /// `value` with an unboxed number turned into the `NSNumber` readers of values expect.
    @inlinable @inline(__always)
    public static func boxed(_ value: Any?) -> Any? {
        let words = self.words(value)
        if words.type == int64Type { return NSNumber(value: Int64(bitPattern: words.value)) }
        if words.type == doubleType { return NSNumber(value: Double(bitPattern: words.value)) }
        if words.type == boolType, let bool = unboxedBool(value) { return NSNumber(value: bool) }
        return value
    }

    /// Whether `value` is an unboxed number (one ``boxed(_:)`` makes an `NSNumber` of).
    @inlinable @inline(__always)
    public static func isUnboxedNumber(_ value: Any?) -> Bool {
        let type = words(value).type
        return type != nil && (type == int64Type || type == doubleType || type == boolType)
    }

    /// The integer held unboxed in `value`, or nil (an `NSNumber` or any other value is not looked into).
    @inlinable @inline(__always)
    public static func unboxedInteger(_ value: Any?) -> Int64? {
        let words = self.words(value)
        return words.type == int64Type ? Int64(bitPattern: words.value) : nil
    }

    /// The double held unboxed in `value`, or nil.
    @inlinable @inline(__always)
    public static func unboxedDouble(_ value: Any?) -> Double? {
        let words = self.words(value)
        return words.type == doubleType ? Double(bitPattern: words.value) : nil
    }

    /// The boolean held unboxed in `value`, or nil.
    @inlinable @inline(__always)
    public static func unboxedBool(_ value: Any?) -> Bool? {
        // A `Bool` writes only the buffer's first byte: the rest of the word was never written, so only
        // that byte is read.
        let bytes = unsafeBitCast(value, to: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, Int, Int, UnsafeRawPointer?).self)
        return bytes.10 == boolType ? bytes.0 != 0 : nil
    }

    /// The first word of the value at `slot` and its type's metadata, read in place: copying the `Any?`
    /// out of the array costs two value-witness calls (copy and destroy of the existential). Not for a
    /// `Bool`, which owns only the word's first byte (``unboxedBool(_:)``).
    @inlinable @inline(__always)
    public func words(at slot: Int) -> (value: UInt64, type: UnsafeRawPointer?) {
        storage.withUnsafeBufferPointer { buffer in
            precondition(slot >= 0 && slot < buffer.count, "slot out of range")
            let value = UnsafeRawPointer(buffer.baseAddress! + slot)
            return (value.load(as: UInt64.self), value.load(fromByteOffset: MemoryLayout<Any?>.stride - MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer?.self))
        }
    }

    /// The first word of the existential's inline buffer and its type's metadata (null for nil). Read
    /// this way because `type(of:)` and `as!` go through the runtime (`swift_getDynamicType`,
    /// `swift_dynamicCast`), about a tenth of reading a value; an `Int64`, a `Double` and a `Bool` always
    /// live inline, and their metadata is theirs.
    @inlinable @inline(__always)
    static func words(_ value: Any?) -> (value: UInt64, type: UnsafeRawPointer?) {
        let words = unsafeBitCast(value, to: (UInt64, Int, Int, UnsafeRawPointer?).self)
        return (words.0, words.3)
    }

    /// The metadata of the unboxed forms, as ``words(at:)`` reports a value's type.
    @inlinable public static var int64Type: UnsafeRawPointer { unsafeBitCast(Int64.self as Any.Type, to: UnsafeRawPointer.self) }
    @inlinable public static var doubleType: UnsafeRawPointer { unsafeBitCast(Double.self as Any.Type, to: UnsafeRawPointer.self) }
    @inlinable public static var boolType: UnsafeRawPointer { unsafeBitCast(Bool.self as Any.Type, to: UnsafeRawPointer.self) }
}
