import Foundation
import OpenCoreData

/// An attribute for the one-entity models of these tests.
func testAttribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
    let attribute = NSAttributeDescription()
    attribute.name = name
    attribute.attributeType = type
    return attribute
}

/// A private-queue context on an in-memory store of a model holding only `entity`, whose objects are
/// `type`s (registered under the entity's class name).
func oneEntityContext(_ entity: NSEntityDescription, class type: NSManagedObject.Type) throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
    NSManagedObjectModel.registerManagedObjectClass(type, forName: entity.managedObjectClassName)
    let model = NSManagedObjectModel()
    model.entities = [entity]
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
    let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    return (coordinator, context)
}
