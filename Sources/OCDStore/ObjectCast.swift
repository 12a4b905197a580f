import Foundation

/// Class casts out of an `Any?` without the runtime's general cast in the common case.
///
/// `isEqual(_:)` receives its argument as an `Any?`, and a `Set` of objects or IDs compares elements
/// through it at every occupied bucket it probes (corelibs' `NSObject.==` passes the right-hand side
/// typed `NSObject`). `as?` out of an `Any?` opens the existential and goes through `swift_dynamicCast`,
/// about 500 instructions; a `Set` of a save's objects asked it for about half its insertions.
package enum ObjectCast {
    /// `value as? T`: when the existential holds a reference typed `T` or `NSObject`, the reference is
    /// its first word and a class-to-class cast (a walk up the superclass chain) answers.
    @inline(__always)
    package static func object<T: NSObject>(_ value: Any?, as _: T.Type) -> T? {
        let words = SlotValues.words(value)
        if let type = words.type,
           type == unsafeBitCast(T.self as AnyClass, to: UnsafeRawPointer.self)
            || type == unsafeBitCast(NSObject.self as AnyClass, to: UnsafeRawPointer.self),
           let address = UnsafeRawPointer(bitPattern: UInt(words.value)) {
            return Unmanaged<NSObject>.fromOpaque(address).takeUnretainedValue() as? T
        }
        return value as? T
    }
}
