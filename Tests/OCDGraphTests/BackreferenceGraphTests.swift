import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

// Decision D24: an object's context and an object ID's store are back references that answer nil once
// the context or store is gone, like Core Data's, without a weak reference's side table.

@Suite("Back references from objects and IDs")
struct BackreferenceGraphTests {
    @Test func anObjectOutlivingItsContextAnswersNilForIt() throws {
        let stack = try TestStack()
        let object: NSManagedObject
        weak var released: NSManagedObjectContext?
        do {
            let context = stack.newContext()
            released = context
            object = stack.insert("Department", ["name": "R&D"], into: context)
            #expect(object.managedObjectContext === context)
        }
        #expect(released == nil)
        #expect(object.managedObjectContext == nil)
        #expect(object.objectID.isTemporaryID)
    }

    @Test func anObjectIDOutlivingItsStoreAnswersNilForIt() throws {
        let model = TestModel.make()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let id: NSManagedObjectID
        weak var released: NSPersistentStore?
        do {
            let store = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
            released = store
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let object = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
            object.setValue("R&D", forKey: "name")
            try context.save()
            id = object.objectID
            #expect(!id.isTemporaryID)
            #expect(id.persistentStore === store)
            try coordinator.remove(store)
        }
        #expect(released == nil)
        #expect(id.persistentStore == nil)
        #expect(id.entity.name == "Department")
    }

    @Test func eachObjectAnswersTheContextItWasInsertedInto() throws {
        let stack = try TestStack()
        let mine = stack.insert("Department", ["name": "R&D"])
        let other = stack.newContext()
        let theirs = stack.insert("Department", ["name": "Sales"], into: other)
        let employee = stack.insert("Employee", ["name": "Jane"])
        employee.setValue(mine, forKey: "department")
        #expect(employee.value(forKey: "department") as? NSManagedObject === mine)
        #expect(theirs.managedObjectContext === other)
        #expect(mine.managedObjectContext === stack.context)
    }
}
