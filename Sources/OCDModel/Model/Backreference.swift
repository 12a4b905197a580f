import CSwiftRuntime
import Synchronization

/// What refers back to an object without keeping it alive: a context for its objects, a store for its
/// object IDs, an entity for its properties. Like a `weak` reference it answers nil once the object is
/// gone, but it gives the object no side table (decision D24): with a side table every retain and
/// release of the object takes the runtime's slow path, and these objects are retained per value read
/// and per ID made.
///
/// The object owns one, attaches itself at the end of its initializer and clears it in its `deinit`;
/// whatever refers back holds the `Backreference` strongly. A load takes its reference with the
/// runtime's `swift_tryRetain`, which fails once the object's deinitialization has begun, under the lock
/// that `clear()` takes: the object's memory cannot be freed between reading the pointer and retaining.
package final class Backreference: @unchecked Sendable {
    /// The object's address, 0 when none (an integer, as raw pointers are not `Sendable`).
    private let address = Mutex<UInt>(0)

    package init() {}

    /// Points this at `object`, which must clear it in its `deinit`.
    package func attach(_ object: AnyObject) {
        let raw = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
        address.withLock { $0 = raw }
    }

    /// Forgets the object: called from its `deinit`, after which every load answers nil.
    package func clear() {
        address.withLock { $0 = 0 }
    }

    /// The object, or nil once it is gone (or being destroyed on another thread).
    @inline(__always)
    package func load<T: AnyObject>(as type: T.Type) -> T? {
        let retained = address.withLock { raw -> UInt in
            guard let pointer = UnsafeMutableRawPointer(bitPattern: raw) else { return 0 }
            return UInt(bitPattern: swift_tryRetain(pointer))
        }
        guard let pointer = UnsafeMutableRawPointer(bitPattern: retained) else { return nil }
        return Unmanaged<T>.fromOpaque(pointer).takeRetainedValue()
    }
}
