import Foundation
import OCDModel
import OCDStore

extension NSEntityDescription {
    /// Creates an object of the entity named `entityName` in the model of `context`'s coordinator, of the
    /// entity's class, and inserts it. Stops when the model has no such entity, as Apple raises.
    public class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext) -> NSManagedObject {
        // Inserting is on the context's queue, so the context's memory of the last entity found by name
        // may be used (the model never changes; the context forgets it when its coordinator changes).
        // `entity(forEntityName:in:)` may be called from any thread, and asks the model.
        context.assertQueue()
        let entity: NSEntityDescription?
        if let last = context.modelLookups.byName, last.name == entityName {
            entity = last.entity
        } else {
            entity = self.entity(forEntityName: entityName, in: context)
            if let entity { context.modelLookups.byName = (entityName, entity) }
        }
        guard let entity else {
            fatalError("+entityForName: could not locate an entity named '\(entityName)' in this model.")
        }
        let type = EntityRuntime.of(EntityLayout.of(entity)).managedObjectClass(of: entity)
        return type.init(entity: entity, insertInto: context)
    }

    /// The entity named `entityName` in the model of `context`'s coordinator.
    public class func entity(forEntityName entityName: String, in context: NSManagedObjectContext) -> NSEntityDescription? {
        guard let model = context.persistentStoreCoordinator?.managedObjectModel else {
            fatalError("+entityForName: nil is not a legal NSPersistentStoreCoordinator for searching for entity name '\(entityName)'")
        }
        return model.entitiesByName[entityName]
    }
}
