import CSwiftRuntime
import Observation
import Synchronization

/// Whether Swift Observation may be recording property reads on this thread (a `withObservationTracking`
/// closure is running), so that reads outside one report nothing and make no `ObservationRegistrar`.
///
/// Observation keeps its access list in a thread-local value behind a hidden function of
/// `libswiftObservation.so`; the registrar reads it and does nothing when it is empty, but only after the
/// registrar exists (two allocations per object) and is reached through its resilient layout. The probe
/// finds that function in the library's symbol table and checks once, by tracking a closure of its own,
/// that it answers as expected. Where it cannot (another platform or architecture, a stripped library,
/// a runtime newer than the ones it was checked against), every read is reported, as without the probe
/// (decision D25).
package enum ObservationProbe {
    /// The thread-local getter, checked; nil when unavailable.
    private static func resolveGetter() -> UnsafeMutableRawPointer? {
        // Runtimes whose Observation was read and found to keep its tracking in this one thread-local
        // (5.9 to 6.3); a newer one reports every read until someone checks it and moves the bound.
        #if compiler(>=6.4)
        return nil
        #else
        guard let function = ocd_library_function("/libswiftObservation.so", "_swift_observation_tls_get") else {
            return nil
        }
        // Outside tracking the value is the enclosing one; inside, a list of the tracking's own.
        let outside = ocd_call_pointer_function(function)
        nonisolated(unsafe) var inside: UnsafeMutableRawPointer?
        withObservationTracking {
            inside = ocd_call_pointer_function(function)
        } onChange: {}
        let after = ocd_call_pointer_function(function)
        guard let inside, inside != outside, after == outside else { return nil }
        return function
        #endif
    }

    // Read on every property access, so an atomic with a constant start (a relaxed load is a plain
    // load) rather than a lazy `let`, whose `swift_once` call per read cost as much as the test: 0 until
    // resolved, then 1 when unavailable, else the getter's address. The first answer stored stands.
    private static let resolved = Atomic<UInt>(0)

    private static var getter: UnsafeMutableRawPointer? {
        @inline(__always) get {
            var state = resolved.load(ordering: .relaxed)
            if state == 0 {
                let answer = resolveGetter().map { UInt(bitPattern: $0) } ?? 1
                let (exchanged, current) = resolved.compareExchange(expected: 0, desired: answer, ordering: .relaxed)
                state = exchanged ? answer : current
            }
            return state == 1 ? nil : UnsafeMutableRawPointer(bitPattern: state)
        }
    }

    /// Whether the probe applies to this build: x86_64 Linux with a Swift 6.3 or older runtime.
    package static var isSupportedBuild: Bool {
        #if compiler(>=6.4) || !os(Linux) || !arch(x86_64)
        false
        #else
        true
        #endif
    }

    /// Whether the probe can tell (false: every read is reported).
    package static var isAvailable: Bool { getter != nil }

    /// False only when it is known that no tracking is recording on this thread.
    @inline(__always)
    package static var mayBeTracking: Bool {
        guard let getter else { return true }
        return ocd_call_pointer_function(getter) != nil
    }
}
