import Foundation
import OCDModel
import OCDStore

extension NSEntityDescription {
    /// Creates an object of the entity named `entityName` in the model of `context`'s coordinator, of the
    /// entity's class, and inserts it. Stops when the model has no such entity, as Apple raises.
    public class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext) -> NSManagedObject {
        guard let entity = entity(forEntityName: entityName, in: context) else {
            fatalError("+entityForName: could not locate an entity named '\(entityName)' in this model.")
        }
        let type = EntityRuntime.of(EntityLayout.of(entity)).managedObjectClass(of: entity)
        return type.init(entity: entity, insertInto: context)
    }

    /// The entity named `entityName` in the model of `context`'s coordinator.
    public class func entity(forEntityName entityName: String, in context: NSManagedObjectContext) -> NSEntityDescription? {
        // The coordinator's model never changes, and the context forgets the entity when its coordinator does.
        if let last = context.modelLookups.byName, last.name == entityName { return last.entity }
        guard let model = context.persistentStoreCoordinator?.managedObjectModel else {
            fatalError("+entityForName: nil is not a legal NSPersistentStoreCoordinator for searching for entity name '\(entityName)'")
        }
        let entity = model.entitiesByName[entityName]
        if let entity { context.modelLookups.byName = (entityName, entity) }
        return entity
    }
}
