import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import Testing

/// What a container's store description hands the SQLite store.
@Suite struct ContainerStoreTests {
    /// `timeout` is the option `NSPersistentStoreTimeoutOption`, both ways, and reaches the store.
    @Test func theDescriptionsTimeoutIsTheStoresOption() throws {
        let folder = TemporaryFolder()
        let description = NSPersistentStoreDescription(url: folder.file())
        #expect(description.timeout == 240)
        description.timeout = 7
        #expect((description.options[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue == 7)
        description.setOption(NSNumber(value: 3), forKey: NSPersistentStoreTimeoutOption)
        #expect(description.timeout == 3)
        #expect((description.copy() as? NSPersistentStoreDescription)?.timeout == 3)

        let container = NSPersistentContainer(name: "Timeout", managedObjectModel: TestModel.make())
        container.persistentStoreDescriptions = [description]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        #expect(failure == nil)
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first)
        #expect((store.options?[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue == 3)

        // A description whose timeout was never set still passes its 240 seconds.
        let other = NSPersistentContainer(name: "Default", managedObjectModel: TestModel.make())
        other.persistentStoreDescriptions = [NSPersistentStoreDescription(url: folder.file("Other.sqlite"))]
        other.loadPersistentStores { _, error in failure = error }
        #expect(failure == nil)
        #expect((other.persistentStoreCoordinator.persistentStores.first?.options?[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue == 240)
    }

    /// Xcode's template and Apple's sessions keep an SQLite store in memory with the URL `/dev/null`.
    @Test func aStoreAtDevNullLivesInMemory() throws {
        let model = TestModel.make()
        for _ in 0..<2 {
            let container = NSPersistentContainer(name: "Preview", managedObjectModel: model)
            container.persistentStoreDescriptions.first!.url = URL(fileURLWithPath: "/dev/null")
            var failure: Error?
            container.loadPersistentStores { _, error in failure = error }
            #expect(failure == nil)
            let context = container.viewContext
            // Each container starts empty: nothing was written to a file.
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Company")) == 0)
            _ = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Company")) == 1)
            #expect(container.persistentStoreCoordinator.persistentStores.first is SQLiteStore)
        }
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-wal"))
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-shm"))
    }
}
