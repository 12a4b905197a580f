import CSwiftRuntime
import Foundation
import OCDStore
import Synchronization

/// A context's registered objects by ID: one object per ID (uniquing). Objects are held weakly, as Core
/// Data holds unchanged objects; changed ones stay alive through the context's inserted, updated and
/// deleted sets. With `retainsRegisteredObjects` every registered object is held strongly.
///
/// Not with Swift `weak` references: a weak reference gives its object a side table, and every retain
/// and release of that object then takes the runtime's slow path (14 % of inserting objects, measured).
/// The table keeps unretained pointers instead; an object leaves it from its `deinit`, and a lookup
/// takes a reference with the runtime's `swift_tryRetain`, which fails for an object already being
/// destroyed (its `deinit` may be waiting for the lock on another thread). Decision D21.
final class ObjectRegistry: @unchecked Sendable {
    private struct Table: @unchecked Sendable {
        var entries: [ObjectIDKey: ObjectPointer] = [:]
    }

    private let table = Mutex(Table())
    /// The strong references of `retainsRegisteredObjects`; touched on the context's queue only, never
    /// under the lock (releasing an object there would run its `deinit`, which takes the lock).
    /// Keyed by address, so that a replaced or removed entry is found without touching its object.
    private var strong: [UnsafeMutableRawPointer: NSManagedObject] = [:]

    var retainsObjects = false {
        didSet {
            strong = [:]
            if retainsObjects { for object in values { strong[ObjectPointer(object).raw] = object } }
        }
    }

    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get {
            table.withLock { table in table.entries[ObjectIDKey(id)]?.tryRetain() }?.takeRetained()
        }
        set {
            if let newValue {
                let pointer = ObjectPointer(newValue)
                newValue.registry = self
                let replaced = table.withLock { table in table.entries.updateValue(pointer, forKey: ObjectIDKey(id)) }
                if retainsObjects {
                    if let replaced, replaced != pointer { strong[replaced.raw] = nil }
                    strong[pointer.raw] = newValue
                }
            } else {
                let removed = table.withLock { table in table.entries.removeValue(forKey: ObjectIDKey(id)) }
                if retainsObjects, let removed {
                    // Taken out of `strong` outside the lock: this may be the object's last reference.
                    _ = strong.removeValue(forKey: removed.raw)
                }
            }
        }
    }

    /// Gives `object` its new ID: its entry (if it has one) moves to `id`, in one lock.
    func move(_ object: NSManagedObject, to id: NSManagedObjectID, keepRegistered: Bool) {
        let pointer = ObjectPointer(object)
        let old = object.objectID
        table.withLock { table in
            if table.entries[ObjectIDKey(old)] == pointer { table.entries[ObjectIDKey(old)] = nil }
            if keepRegistered { table.entries[ObjectIDKey(id)] = pointer }
        }
        object.objectID = id
        if keepRegistered {
            object.registry = self
            if retainsObjects { strong[pointer.raw] = object }
        } else if retainsObjects {
            strong[pointer.raw] = nil
        }
    }

    /// Called from the `deinit` of an object: its entry goes, unless the ID now names another object.
    func objectDeinitializing(_ object: UnsafeMutableRawPointer, id: NSManagedObjectID) {
        table.withLock { table in
            if table.entries[ObjectIDKey(id)]?.raw == object { table.entries[ObjectIDKey(id)] = nil }
        }
    }

    /// The registered objects still alive.
    var values: [NSManagedObject] {
        table.withLock { table in table.entries.values.compactMap { $0.tryRetain() } }.map { $0.takeRetained() }
    }

    /// The IDs of the registered objects still alive.
    var keys: [NSManagedObjectID] { values.map(\.objectID) }

    /// Lets go of the strong references of `retainsRegisteredObjects`: called when the context goes away,
    /// as each object holds this registry and the references would otherwise keep both alive.
    func releaseRetainedObjects() {
        let released = strong
        strong = [:]
        _ = released
    }

    func removeAll() {
        table.withLock { table in table.entries = [:] }
        releaseRetainedObjects()
    }
}

/// An unretained object pointer kept in the lock-protected table.
private struct ObjectPointer: Equatable, @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
    init(_ object: NSManagedObject) { raw = Unmanaged.passUnretained(object).toOpaque() }
    init(raw: UnsafeMutableRawPointer) { self.raw = raw }
    /// A +1 reference, or nil when the object's deinitialization has begun.
    func tryRetain() -> ObjectPointer? { swift_tryRetain(raw).map(ObjectPointer.init(raw:)) }
    /// The object of a +1 pointer, taking over that reference.
    func takeRetained() -> NSManagedObject { Unmanaged<NSManagedObject>.fromOpaque(raw).takeRetainedValue() }
}
