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
        if let value, Swift.type(of: value) == Int64.self { return NSNumber(value: inlineInt64(value)) }
        return value
    }

    /// The integer held unboxed in `value`, or nil (an `NSNumber` or any other value is not looked into).
    @inlinable @inline(__always)
    public static func unboxedInteger(_ value: Any?) -> Int64? {
        if let value, Swift.type(of: value) == Int64.self { return inlineInt64(value) }
        return nil
    }

    /// The `Int64` an `Any` holds, read from the existential's inline buffer, where an `Int64` always
    /// lives: `as! Int64` goes through the runtime's general cast (`swift_dynamicCast`), a tenth of
    /// reading a value. Only for a value whose dynamic type was checked to be `Int64`.
    @inlinable @inline(__always) @usableFromInline
    static func inlineInt64(_ value: Any) -> Int64 {
        withUnsafeBytes(of: value) { $0.load(as: Int64.self) }
    }
}
