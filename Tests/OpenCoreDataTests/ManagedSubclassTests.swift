import Foundation
import OpenCoreData
import Testing

// A class hierarchy that follows the entity hierarchy (Manager is a subentity of Employee): the subclass's
// key paths to inherited `@Managed` properties are named too. `\InheritingManager.name` never equals
// `\InheritingEmployee.name`, so the superclass's table entries are made for the subclass.

@ManagedObject
class InheritingEmployee: NSManagedObject {
    @Managed var name: String?
}

@ManagedObject
final class InheritingManager: InheritingEmployee {
    @Managed var level: Int64
}

@Suite struct ManagedSubclassTests {
    func context() throws -> NSManagedObjectContext {
        let employee = NSEntityDescription()
        employee.name = "InheritingEmployee"
        employee.managedObjectClassName = "InheritingEmployee"
        employee.properties = [testAttribute("name", .stringAttributeType)]
        let manager = NSEntityDescription()
        manager.name = "InheritingManager"
        manager.managedObjectClassName = "InheritingManager"
        manager.properties = [testAttribute("level", .integer64AttributeType)]
        employee.subentities = [manager]
        NSManagedObjectModel.registerManagedObjectClass(InheritingEmployee.self, forName: "InheritingEmployee")
        NSManagedObjectModel.registerManagedObjectClass(InheritingManager.self, forName: "InheritingManager")
        let model = NSManagedObjectModel()
        model.entities = [employee, manager]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test func inheritedPropertiesAreNamedThroughTheSubclassesKeyPaths() throws {
        #expect(InheritingManager.keyPathString(\.name) == "name")
        #expect(InheritingManager.keyPathString(\.level) == "level")
        #expect(InheritingEmployee.keyPathString(\.name) == "name")
        let byName = NSSortDescriptor(keyPath: \InheritingManager.name, ascending: true)
        #expect(byName.key == "name")
        let predicate = try NSPredicate(converting: #Predicate<InheritingManager> { $0.name == "Ann" && $0.level > 1 })
        #expect(predicate.predicateFormat == #"name == "Ann" AND level > 1"#)
    }

    @Test func aSubclassObjectIsObservedThroughAnInheritedKeyPath() throws {
        let context = try context()
        let manager = InheritingManager(context: context)
        var seen: [String?] = []
        let token = manager.observe(\.name, options: [.new]) { _, change in seen.append(change.newValue ?? nil) }
        manager.name = "Ann"
        manager.setValue("Bo", forKey: "name")
        #expect(seen == ["Ann", "Bo"])
        token.invalidate()
        let request = NSFetchRequest<InheritingManager>(entityName: "InheritingManager")
        request.predicate = try NSPredicate(converting: #Predicate<InheritingManager> { $0.name == "Bo" })
        #expect(try context.fetch(request) == [manager])
    }
}
