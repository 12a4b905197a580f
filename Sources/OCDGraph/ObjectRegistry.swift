import Foundation
import OCDStore

/// A context's registered objects by ID: one object per ID (uniquing). Objects are held weakly, as Core
/// Data holds unchanged objects; changed ones stay alive through the context's inserted, updated and
/// deleted sets. With `retainsRegisteredObjects` every registered object is held strongly.
struct ObjectRegistry {
    private struct Entry {
        weak var object: NSManagedObject?
        var strong: NSManagedObject?
    }

    private var entries: [NSManagedObjectID: Entry] = [:]
    /// Entries whose objects went away are dropped when the table has grown past this.
    private var pruneThreshold = 1024
    var retainsObjects = false {
        didSet {
            for (id, entry) in entries { entries[id]?.strong = retainsObjects ? entry.object : nil }
        }
    }

    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { entries[id]?.object }
        set {
            guard let newValue else {
                entries[id] = nil
                return
            }
            entries[id] = Entry(object: newValue, strong: retainsObjects ? newValue : nil)
            if entries.count > pruneThreshold {
                entries = entries.filter { $0.value.object != nil }
                pruneThreshold = max(1024, entries.count * 2)
            }
        }
    }

    /// The registered objects still alive.
    var values: [NSManagedObject] { entries.values.compactMap(\.object) }
    /// The IDs of the registered objects still alive.
    var keys: [NSManagedObjectID] { entries.compactMap { $0.value.object == nil ? nil : $0.key } }

    mutating func removeAll() { entries = [:] }
}
