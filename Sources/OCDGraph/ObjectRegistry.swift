import CSwiftRuntime
import Foundation
import OCDModel
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
        var entries = ObjectTable(keys: ObjectKeys())
    }

    private let table = Mutex(Table())
    /// The strong references of `retainsRegisteredObjects`; touched on the context's queue only, never
    /// under the lock (releasing an object there would run its `deinit`, which takes the lock).
    /// Keyed by address, so that a replaced or removed entry is found without touching its object.
    // Unchecked (D23): the context's queue only, never `inout`; read per registered object.
    @exclusivity(unchecked) private var strong: [UnsafeMutableRawPointer: NSManagedObject] = [:]

    @exclusivity(unchecked) var retainsObjects = false {
        didSet {
            strong = [:]
            if retainsObjects { for object in values { strong[ObjectPointer(object).raw] = object } }
        }
    }

    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get {
            table.withLock { table in table.entries[id]?.tryRetain() }?.takeRetained()
        }
        set {
            if let newValue {
                // The table finds an entry's ID through its object.
                assert(newValue.objectID == id, "\(newValue) registered under \(id)")
                let pointer = ObjectPointer(newValue)
                newValue.registry = self
                let replaced = table.withLock { table in table.entries.updateValue(pointer, forKey: id) }
                if retainsObjects {
                    if let replaced, replaced != pointer { strong[replaced.raw] = nil }
                    strong[pointer.raw] = newValue
                }
            } else {
                let removed = table.withLock { table in table.entries.removeValue(forKey: id) }
                if retainsObjects, let removed {
                    // Taken out of `strong` outside the lock: this may be the object's last reference.
                    _ = strong.removeValue(forKey: removed.raw)
                }
            }
        }
    }

    /// Gives `objects[i]` the ID `ids[i]`: its entry (if it has one) moves to the new ID; one lock for all
    /// of them (a save moves every inserted object). An object of the context `owner` stays registered
    /// under its new ID; any other leaves the registry. The ID is set as its entry moves, so that an
    /// object listed twice moves from its latest ID and is never left under two; and between the removal
    /// and the insertion, as the table reads an entry's ID from its object.
    func move(_ objects: [NSManagedObject], to ids: [NSManagedObjectID], owner: Backreference) {
        precondition(objects.count == ids.count, "move(_:to:owner:): \(objects.count) objects, \(ids.count) IDs")
        // One pass: each object is touched once while its memory is in the cache (a save moves 100,000).
        table.withLock { table in
            for index in objects.indices {
                let object = objects[index], id = ids[index]
                let pointer = ObjectPointer(object)
                let old = object.objectID
                if table.entries[old] == pointer { _ = table.entries.removeValue(forKey: old) }
                object.objectID = id
                if object.contextReference === owner {
                    _ = table.entries.updateValue(pointer, forKey: id)
                    // Releasing another registry here is safe: its deinit takes no lock, and it cannot free
                    // objects (whose deinit takes locks), as its context emptied `strong` before letting go.
                    if object.registry !== self { object.registry = self }
                }
            }
        }
        guard retainsObjects else { return }
        for object in objects {
            strong[ObjectPointer(object).raw] = object.contextReference === owner ? object : nil
        }
    }

    /// Called from the `deinit` of an object: its entry goes, unless the ID now names another object.
    func objectDeinitializing(_ object: UnsafeMutableRawPointer, id: NSManagedObjectID) {
        table.withLock { table in
            _ = table.entries.removeValue(forKey: id, ifItIs: ObjectPointer(raw: object))
        }
    }

    /// Whether no object is registered (entries of objects being destroyed included).
    var isEmpty: Bool { table.withLock { table in table.entries.count == 0 } }

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
        table.withLock { table in table.entries = ObjectTable(keys: ObjectKeys()) }
        releaseRetainedObjects()
    }
}

/// Object pointers by object ID: open addressing with linear probing, each entry holding the ID's hash
/// and the pointer side by side, so that a lookup at N = 100,000 touches one cache line of the table
/// where a `Dictionary` touches its bitmap, its keys and its values (`existingObject(with:)` is mostly
/// cache misses). Deletion shifts the following entries back, so no tombstones build up.
///
/// An entry's ID is its object's (`Keys`), read only when the hashes match: a found object is touched
/// anyway to retain it, and keeping the ID too made each entry 24 bytes instead of 16 (21 bytes per
/// registered object at N = 100,000). So an object's ID must not change while it has an entry (the
/// registry's `move` takes it out first).
/// Package-visible for its tests (IDTableTests), which force collisions and wrap-around.
package struct IDTable<Keys: IDTableKeys> {
    private struct Entry {
        var hash: Int
        var pointer: ObjectPointer?
    }

    private var entries: [Entry]
    private var shift: Int
    private let keys: Keys
    package private(set) var count = 0

    /// An empty table whose entries' IDs `keys` tells from their pointers.
    package init(keys: Keys) {
        entries = Array(repeating: Entry(hash: 0, pointer: nil), count: 16)
        shift = 64 - 4
        self.keys = keys
    }

    /// Fibonacci hashing: the ID's hash times the golden ratio, top bits. Spreads sequential keys.
    @inline(__always)
    private func home(_ hash: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: hash)) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    /// The index of `id`'s entry, or of the empty entry where it would go.
    @inline(__always)
    private func index(of id: NSManagedObjectID, hash: Int) -> (index: Int, found: Bool) {
        let mask = entries.count - 1
        var index = home(hash)
        return entries.withUnsafeBufferPointer { buffer in
            while true {
                let entry = buffer[index]
                guard let pointer = entry.pointer else { return (index, false) }
                if entry.hash == hash && keys.entry(pointer, isFor: id) { return (index, true) }
                index = (index + 1) & mask
            }
        }
    }

    package subscript(id: NSManagedObjectID) -> ObjectPointer? {
        let (index, found) = index(of: id, hash: id.cachedHash)
        return found ? entries[index].pointer : nil
    }

    /// Sets `id`'s pointer; returns the one it replaced.
    package mutating func updateValue(_ pointer: ObjectPointer, forKey id: NSManagedObjectID) -> ObjectPointer? {
        let hash = id.cachedHash
        let (index, found) = index(of: id, hash: hash)
        if found {
            let old = entries[index].pointer
            entries[index].pointer = pointer
            return old
        }
        if (count + 1) * 4 > entries.count * 3 {
            grow()
            return updateValue(pointer, forKey: id)
        }
        entries[index] = Entry(hash: hash, pointer: pointer)
        count += 1
        return nil
    }

    /// Removes `id`'s entry; returns its pointer.
    package mutating func removeValue(forKey id: NSManagedObjectID) -> ObjectPointer? {
        let (index, found) = index(of: id, hash: id.cachedHash)
        guard found else { return nil }
        return remove(at: index)
    }

    /// Removes `id`'s entry if it holds `pointer`, in one search; whether it did.
    package mutating func removeValue(forKey id: NSManagedObjectID, ifItIs pointer: ObjectPointer) -> Bool {
        let (index, found) = index(of: id, hash: id.cachedHash)
        guard found, entries[index].pointer == pointer else { return false }
        _ = remove(at: index)
        return true
    }

    private mutating func remove(at index: Int) -> ObjectPointer? {
        var hole = index
        let removed = entries[hole].pointer
        let mask = entries.count - 1
        var next = (hole + 1) & mask
        // Backward shift: an entry after the hole moves into it unless its home lies cyclically in
        // (hole, next], where it would become unreachable.
        while entries[next].pointer != nil {
            let wanted = home(entries[next].hash)
            let stays = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if !stays {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = Entry(hash: 0, pointer: nil)
        count -= 1
        return removed
    }

    /// The pointers of every entry.
    package var values: [ObjectPointer] { entries.compactMap(\.pointer) }

    /// For tests: the number of entries, where a hash's probe starts, and where `id`'s entry is.
    package var capacity: Int { entries.count }
    package func homeIndex(ofHash hash: Int) -> Int { home(hash) }
    package func position(of id: NSManagedObjectID) -> Int? {
        let (index, found) = index(of: id, hash: id.cachedHash)
        return found ? index : nil
    }

    private mutating func grow() {
        let old = entries
        entries = Array(repeating: Entry(hash: 0, pointer: nil), count: old.count * 2)
        shift -= 1
        count = 0
        let mask = entries.count - 1
        for entry in old where entry.pointer != nil {
            // Entries are distinct: the first empty entry from the home is the place, with no ID read.
            var index = home(entry.hash)
            while entries[index].pointer != nil { index = (index + 1) & mask }
            entries[index] = entry
            count += 1
        }
    }
}

/// An unretained object pointer kept in the lock-protected table.
package struct ObjectPointer: Equatable, @unchecked Sendable {
    package let raw: UnsafeMutableRawPointer
    init(_ object: NSManagedObject) { raw = Unmanaged.passUnretained(object).toOpaque() }
    package init(raw: UnsafeMutableRawPointer) { self.raw = raw }
    /// A +1 reference, or nil when the object's deinitialization has begun.
    func tryRetain() -> ObjectPointer? { swift_tryRetain(raw).map(ObjectPointer.init(raw:)) }
    /// The object of a +1 pointer, taking over that reference.
    func takeRetained() -> NSManagedObject { Unmanaged<NSManagedObject>.fromOpaque(raw).takeRetainedValue() }
}

/// How an ``IDTable`` tells which ID an entry is for, from its pointer.
package protocol IDTableKeys {
    /// Whether the entry holding `pointer` is the entry of `id`.
    func entry(_ pointer: ObjectPointer, isFor id: NSManagedObjectID) -> Bool
}

/// The registry's: an entry is for its object's ID, read without retaining the object. The table asks
/// under its lock, where the object may be waiting in its `deinit` to leave the table (its properties
/// are intact until then).
struct ObjectKeys: IDTableKeys {
    @inline(__always)
    func entry(_ pointer: ObjectPointer, isFor id: NSManagedObjectID) -> Bool {
        Unmanaged<NSManagedObject>.fromOpaque(pointer.raw)._withUnsafeGuaranteedRef { object in
            let stored = object.objectID
            return stored === id || stored == id
        }
    }
}
