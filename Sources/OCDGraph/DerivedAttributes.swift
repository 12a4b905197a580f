import Foundation
import OCDModel
import OCDStore

extension NSPersistentStoreCoordinator {
    /// Core Data's SQLite store refuses, with this code, to be added for a model whose derived attribute it
    /// cannot keep up to date (no public constant names it).
    static let unsupportedDerivationError = 134097

    /// Throws Core Data's error for a model with a derived attribute no store can keep.
    func checkDerivations() throws {
        do {
            _ = try DerivationPlan.of(managedObjectModel)
        } catch let error as DerivationError {
            throw coreDataError(Self.unsupportedDerivationError, [
                NSLocalizedDescriptionKey: "\(error)", "NSEntityName": error.entity, "NSPropertyName": error.attribute,
            ])
        }
    }
}

extension NSManagedObjectContext {
    /// Gives the registered objects the derived values a save left in the store: as their saved state
    /// (the object's value and its snapshot both), so no change of theirs. Derived attributes are the
    /// store's to compute (Core Data's SQLite store does it with triggers during the save), and Apple's
    /// header says an object shows the recomputed value once the save returns.
    /// Returns the realized objects whose shown value changed, with the old value, for the save to
    /// announce once its bookkeeping is done.
    func takeDerivedValues(_ values: [DerivedValue]) -> [(object: NSManagedObject, slot: Int, old: Any?)] {
        var changed: [(object: NSManagedObject, slot: Int, old: Any?)] = []
        for derived in values {
            guard let object = registry[derived.objectID], derived.slot < object.layout.properties.count else { continue }
            object.rowValues?[derived.slot] = derived.value
            // A fault takes it when it fires, from its row (if it has one; else it reads the store's).
            guard !object.status.contains(.fault) else { continue }
            let old = SlotValues.boxed(object.slots.stored(derived.slot))
            object.slots[derived.slot] = derived.value
            if !NSManagedObject.valuesEqual(old, derived.value) { changed.append((object, derived.slot, old)) }
        }
        return changed
    }
}
