import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import Testing
import OCDPredicate
import class OCDPredicate.NSSortDescriptor

/// Adding stores to a coordinator where Apple's Core Data refuses or reads options differently (found by
/// an audit of the container and coordinator; each test failed before its fix).
@Suite("Store management")
struct StoreManagementTests {
    /// A copy of an added store's file carries its identifier, so the two stores' object IDs would be
    /// equal for different rows: a fetch across both returned one object twice and lost the other row.
    @Test func aCopyOfAnAddedStoreIsRefused() throws {
        let folder = TemporaryFolder()
        let original = folder.file("A.sqlite"), copy = folder.file("B.sqlite")
        do {
            let stack = try SQLiteStack(model: TestModel.make(), url: original)
            stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
            // Everything in the main file, so that copying it alone copies the store.
            try stack.coordinator.remove(stack.store)
        }
        try FileManager.default.copyItem(at: original, to: copy)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let first = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: original, options: nil)
        let error = try #require(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: copy, options: nil)
        }
        #expect(error.code == NSPersistentStoreOperationError)
        #expect((error.userInfo[NSLocalizedDescriptionKey] as? String)?.contains("Can't add the same store twice") == true)
        #expect(coordinator.persistentStores.count == 1)
        #expect(coordinator.url(for: first) == original)
        // Refused before it is opened: options that change a file (here its journal mode) are not applied.
        #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: copy,
                                               options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"]])
        }
        #expect(try RawSQL.rows(copy, "PRAGMA journal_mode").first?["journal_mode"] as? String == "wal")

        // Once the first is removed, the copy is a store like any other.
        try coordinator.remove(first)
        let second = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: copy, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let companies = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Company"))
        #expect(companies.map { $0.value(forKey: "name") as? String } == ["Acme"])
        #expect(companies.first?.objectID.persistentStore === second)
    }

    /// Core Data reads its options with `boolValue`: a number or "YES" asks for a read-only store as a
    /// `Bool` does. Only a `Bool` did, so `1` opened the store for writing.
    @Test func aReadOnlyOptionGivenAsANumberOrAStringIsHonoured() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        do { _ = try SQLiteStack(model: TestModel.make(), url: url) }
        for value in [1 as Any, NSNumber(value: 1), "YES", true] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
            let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                                                           options: [NSReadOnlyPersistentStoreOption: value])
            #expect(store.isReadOnly, "\(value)")
        }
        for value in [0 as Any, "NO", false] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
            let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                                                           options: [NSReadOnlyPersistentStoreOption: value])
            #expect(!store.isReadOnly, "\(value)")
        }
    }

    /// A configuration's store made after an entity left the model opens again: the configuration kept
    /// the removed entity, whose version hash the store never recorded (134100 on reopening).
    @Test func aConfigurationStoreOpensAgainAfterAnEntityLeftTheModel() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        func entity(_ name: String) -> NSEntityDescription {
            let attribute = NSAttributeDescription()
            attribute.name = "label"
            attribute.attributeType = .stringAttributeType
            return TestModel.entity(name, [attribute])
        }
        let a = entity("A"), b = entity("B")
        let model = NSManagedObjectModel()
        model.entities = [a, b]
        model.setEntities([a, b], forConfigurationName: "Cloud")
        model.entities = [a]
        let members = try #require(model.entities(forConfigurationName: "Cloud"))
        #expect(members.allSatisfy { member in model.entities.contains { $0 === member } })
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Cloud", at: url, options: nil)
            try coordinator.remove(store)
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Cloud", at: url, options: nil)
    }

    /// A description made without a URL is Apple's default: an SQLite store at `/dev/null`, in memory
    /// only. It had no URL, and loading it failed with 134080.
    @Test func aDescriptionWithoutAURLIsAnSQLiteStoreInMemory() throws {
        let description = NSPersistentStoreDescription()
        #expect(description.type == NSSQLiteStoreType)
        #expect(description.url == URL(fileURLWithPath: "/dev/null"))
        let container = NSPersistentContainer(name: "DevNull", managedObjectModel: TestModel.make())
        container.persistentStoreDescriptions = [description]
        var failures: [Error?] = []
        container.loadPersistentStores { _, error in failures.append(error) }
        #expect(failures.count == 1 && failures[0] == nil, "\(failures)")
        let context = container.newBackgroundContext()
        try context.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Company", into: context).setValue("Acme", forKey: "name")
            try context.save()
        }
        #expect(try container.viewContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "Company")) == 1)
        #expect(FileManager.default.fileExists(atPath: "/dev/null"))
    }

    /// A request's `affectedStores` limits it to those stores, saved rows and unsaved objects alike (the
    /// property did not exist, so every fetch asked every store).
    @Test func affectedStoresLimitAFetchToThoseStores() throws {
        let folder = TemporaryFolder()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let first = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.file("A.sqlite"), options: nil)
        let second = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.file("B.sqlite"), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        func company(_ name: String, in store: NSPersistentStore) {
            let object = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
            object.setValue(name, forKey: "name")
            context.assign(object, to: store)
        }
        company("In A", in: first)
        company("In B", in: second)
        company("Also in B", in: second)
        try context.save()
        company("New in B", in: second)
        company("New in A", in: first)

        func names(_ stores: [NSPersistentStore]?, pending: Bool = true) throws -> [String] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Company")
            request.affectedStores = stores
            request.includesPendingChanges = pending
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
        }
        #expect(try names([first]) == ["In A", "New in A"])
        #expect(try names([second]) == ["Also in B", "In B", "New in B"])
        #expect(try names([second], pending: false) == ["Also in B", "In B"])
        #expect(try names(nil).count == 5)
        #expect(try names([first, second]).count == 5)

        let count = NSFetchRequest<NSManagedObject>(entityName: "Company")
        count.affectedStores = [second]
        count.includesPendingChanges = false
        #expect(try context.count(for: count) == 2)
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Company")
        ids.resultType = .managedObjectIDResultType
        ids.affectedStores = [first]
        ids.includesPendingChanges = false
        #expect(try context.fetch(ids).map { $0.persistentStore === first } == [true])
        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Company")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["name"]
        dictionaries.affectedStores = [first]
        #expect(try context.fetch(dictionaries).compactMap { $0["name"] as? String } == ["In A"])
        #expect((count.copy() as? NSFetchRequest<NSManagedObject>)?.affectedStores?.first === second)
    }
}
