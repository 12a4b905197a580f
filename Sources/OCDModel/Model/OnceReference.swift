import Synchronization

/// A reference set once, then read by every thread with one atomic load: how a layer keeps its
/// per-entity tables on the objects of the layer below (see `NSEntityDescription.layerCache`).
///
/// Not `AtomicLazyReference`: over `AnyObject` its `load()` is not specialized across modules and
/// instantiates generic metadata on every call, which showed in profiles of reading attributes.
package struct OnceReference: ~Copyable, @unchecked Sendable {
    private let pointer = Atomic<UnsafeMutableRawPointer?>(nil)

    package init() {}

    /// The stored object, unretained (it lives as long as this reference), or nil.
    @inline(__always)
    package func load<T: AnyObject>(as type: T.Type) -> T? {
        guard let raw = pointer.load(ordering: .acquiring) else { return nil }
        return Unmanaged<T>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Stores `object` unless another thread stored one first; returns the stored one.
    package func storeIfNil<T: AnyObject>(_ object: T) -> T {
        let raw = Unmanaged.passRetained(object).toOpaque()
        let (exchanged, original) = pointer.compareExchange(expected: nil, desired: raw, ordering: .acquiringAndReleasing)
        if exchanged { return object }
        Unmanaged<T>.fromOpaque(raw).release()
        return Unmanaged<T>.fromOpaque(original!).takeUnretainedValue()
    }

    deinit {
        if let raw = pointer.load(ordering: .acquiring) { Unmanaged<AnyObject>.fromOpaque(raw).release() }
    }
}
