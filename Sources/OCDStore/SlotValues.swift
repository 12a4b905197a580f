import Foundation

/// The values of a row or an object by slot of its ``EntityLayout``.
///
/// An integer attribute's value may be held as a plain `Int64` rather than an `NSNumber`: it then lives
/// in the existential's inline buffer, with no allocation (560 of a ten-integer object's 1,239 bytes were
/// its `NSNumber`s). Reading through the subscript (or iterating) hands out the stored form every other
/// reader expects, an `NSNumber`; hot paths that know what they want read ``storage`` directly and box
/// nothing. A slot may hold either form: writers keep what they are given.
public struct SlotValues: RandomAccessCollection, MutableCollection, @unchecked Sendable {
    /// The values as held: integers possibly as `Int64`.
    public var storage: [Any?]

    @inlinable
    public init(_ storage: [Any?]) { self.storage = storage }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { storage.count }

    /// The value of `slot` in its stored form (an `Int64` boxed into an `NSNumber`).
    @inlinable
    public subscript(slot: Int) -> Any? {
        get { SlotValues.boxed(storage[slot]) }
        set { storage[slot] = newValue }
    }

    /// `value` with an unboxed integer turned into the `NSNumber` readers of values expect.
    @inlinable @inline(__always)
    public static func boxed(_ value: Any?) -> Any? {
        if let integer = unboxedInteger(value) { return NSNumber(value: integer) }
        return value
    }

    /// The integer held unboxed in `value`, or nil (an `NSNumber` or any other value is not looked into).
    ///
    /// Read from the existential's words (three of inline buffer, then the type's metadata, which is null
    /// for nil): an `Int64` always lives inline, and its metadata is `Int64`'s. `type(of:)` and `as!` go
    /// through the runtime (`swift_getDynamicType`, `swift_dynamicCast`), about a tenth of reading a value.
    @inlinable @inline(__always)
    public static func unboxedInteger(_ value: Any?) -> Int64? {
        let words = unsafeBitCast(value, to: (Int64, Int, Int, UnsafeRawPointer?).self)
        return words.3 == unsafeBitCast(Int64.self as Any.Type, to: UnsafeRawPointer.self) ? words.0 : nil
    }
}
