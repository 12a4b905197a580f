import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
import Testing

/// A save across two stores is all or nothing when a store fails while writing: the stores written
/// before it undo their writes as the round ends (Documentation/SQLiteStore.md, "Saving and locking").
/// Entity Alpha lives in configuration "A" (the first store), Beta in "B" (an SQLite store whose file
/// refuses Beta rows through a trigger while a test wants the save to fail).
@Suite struct MultiStoreSaveTests {
    private struct TwoStores {
        let coordinator: NSPersistentStoreCoordinator
        let context: NSManagedObjectContext
        let first: NSPersistentStore
        let second: NSPersistentStore
        let secondURL: URL

        init(firstType: String, folder: TemporaryFolder, alphaPhoto: Bool = false) throws {
            func entity(_ name: String) -> NSEntityDescription {
                let entity = NSEntityDescription()
                entity.name = name
                entity.managedObjectClassName = "NSManagedObject"
                let attribute = NSAttributeDescription()
                attribute.name = "name"
                attribute.attributeType = .stringAttributeType
                entity.properties = [attribute]
                return entity
            }
            let alpha = entity("Alpha"), beta = entity("Beta")
            if alphaPhoto {
                let photo = NSAttributeDescription()
                photo.name = "photo"
                photo.attributeType = .binaryDataAttributeType
                photo.allowsExternalBinaryDataStorage = true
                alpha.properties.append(photo)
            }
            let model = NSManagedObjectModel()
            model.entities = [alpha, beta]
            model.setEntities([alpha], forConfigurationName: "A")
            model.setEntities([beta], forConfigurationName: "B")
            coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            first = try coordinator.addPersistentStore(ofType: firstType, configurationName: "A",
                                                       at: firstType == NSSQLiteStoreType ? folder.file("A.sqlite") : nil, options: nil)
            secondURL = folder.file("B.sqlite")
            second = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "B", at: secondURL, options: nil)
            context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
        }

        @discardableResult
        func insert(_ entityName: String, _ name: String) -> NSManagedObject {
            let object = NSEntityDescription.insertNewObject(forEntityName: entityName, into: context)
            object.setValue(name, forKey: "name")
            return object
        }

        /// The names stored for `entityName`, read by a fresh context.
        func stored(_ entityName: String) throws -> [String] {
            let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            reader.persistentStoreCoordinator = coordinator
            return try withExtendedLifetime(reader) {
                try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: entityName)).compactMap { $0.value(forKey: "name") as? String }.sorted()
            }
        }

        func refuseBetas(_ refuse: Bool) throws {
            try RawSQL.execute(secondURL, refuse
                ? "CREATE TRIGGER refuse BEFORE INSERT ON ZBETA BEGIN SELECT RAISE(ABORT, 'refused'); END"
                : "DROP TRIGGER refuse")
        }
    }

    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func aStoreWrittenBeforeAFailingOneKeepsNothing(firstType: String) throws {
        let folder = TemporaryFolder()
        let stores = try TwoStores(firstType: firstType, folder: folder)
        let seed = stores.insert("Alpha", "Seed")
        let doomed = stores.insert("Alpha", "Doomed")
        stores.insert("Beta", "Old")
        try stores.context.save()
        #expect(seed.objectID.persistentStore === stores.first)

        try stores.refuseBetas(true)
        // The first store's part has an update, an insert and a delete; the second store's insert fails.
        seed.setValue("Seed 2", forKey: "name")
        let acme = stores.insert("Alpha", "Acme")
        stores.context.delete(doomed)
        stores.insert("Beta", "Globex")
        #expect(throws: (any Error).self) { try stores.context.save() }
        #expect(try stores.stored("Alpha") == ["Doomed", "Seed"], "the first store keeps none of the failed save")
        #expect(try stores.stored("Beta") == ["Old"])
        #expect(seed.isUpdated && acme.isInserted && doomed.isDeleted, "the context keeps its changes")

        // Once the second store accepts the row, the same changes save whole.
        try stores.refuseBetas(false)
        try stores.context.save()
        #expect(try stores.stored("Alpha") == ["Acme", "Seed 2"])
        #expect(try stores.stored("Beta") == ["Globex", "Old"])
    }

    /// A file in `_EXTERNAL_DATA` whose row the first store deleted stays while the save fails in the
    /// second store (the first store's delete is undone with the round), and goes once the save succeeds.
    @Test func externallyStoredFilesStayWhileASaveAcrossStoresFails() throws {
        let folder = TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let stores = try TwoStores(firstType: NSSQLiteStoreType, folder: folder, alphaPhoto: true)
        let doomed = stores.insert("Alpha", "Doomed")
        stores.insert("Beta", "Old")
        try stores.context.save()
        let name = UUID().uuidString
        let external = folder.file(".A_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: external.appendingPathComponent(name))
        try RawSQL.execute(folder.file("A.sqlite"), "UPDATE ZALPHA SET ZPHOTO = X'02\(Data(name.utf8).map { String(format: "%02X", $0) }.joined())00'")

        try stores.refuseBetas(true)
        stores.context.delete(doomed)
        stores.insert("Beta", "Globex")
        #expect(throws: (any Error).self) { try stores.context.save() }
        #expect(try stores.stored("Alpha") == ["Doomed"])
        #expect(FileManager.default.fileExists(atPath: external.appendingPathComponent(name).path))

        // The failed save's delete is given up: a later save of something else keeps the file, which the
        // row still refers to.
        stores.context.rollback()
        try stores.refuseBetas(false)
        stores.insert("Alpha", "Other")
        try stores.context.save()
        #expect(FileManager.default.fileExists(atPath: external.appendingPathComponent(name).path))

        stores.context.delete(doomed)
        try stores.context.save()
        #expect(try stores.stored("Alpha") == ["Other"])
        #expect(!FileManager.default.fileExists(atPath: external.appendingPathComponent(name).path))
    }

    /// Each store's results go back to its own objects (D30, by position): several updated objects in
    /// each of two stores keep their own versions and values through successive saves.
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func updatesInTwoStoresKeepTheirOwnRows(firstType: String) throws {
        let folder = TemporaryFolder()
        let stores = try TwoStores(firstType: firstType, folder: folder)
        let objects = (0..<4).flatMap { i in [stores.insert("Alpha", "a\(i)"), stores.insert("Beta", "b\(i)")] }
        try stores.context.save()
        for round in 1...3 {
            for (index, object) in objects.enumerated() where index % 3 != round % 3 {
                object.setValue("\(object.value(forKey: "name") as? String ?? "?")+", forKey: "name")
            }
            try stores.context.save()
            for object in objects {
                #expect(object.committedValues(forKeys: ["name"])["name"] as? String == object.value(forKey: "name") as? String)
                #expect(!object.hasChanges)
            }
        }
        // Another context changes one row; the first context's next save of it is a conflict, of that
        // object alone: the versions it expects are each object's own.
        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = stores.coordinator
        try withExtendedLifetime(other) {
            let target = try other.existingObject(with: objects[3].objectID)
            target.setValue("changed elsewhere", forKey: "name")
            try other.save()
        }
        for object in objects { object.setValue("last", forKey: "name") }
        let error = try #require(throws: NSError.self) { try stores.context.save() }
        let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] ?? []
        #expect(conflicts.map { $0.sourceObject.objectID } == [objects[3].objectID])
    }

    /// `assign(_:to:)` saves a new object to the store it names; others go to the entity's first store.
    @Test func assignChoosesTheStoreOfANewObject() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file("First.sqlite"))
        let secondURL = folder.file("Second.sqlite")
        let second = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: secondURL, options: nil)
        let acme = stack.insert("Company", ["name": "Acme"])
        let globex = stack.insert("Company", ["name": "Globex"])
        stack.context.assign(globex, to: second)
        try stack.context.save()
        #expect(acme.objectID.persistentStore === stack.store)
        #expect(globex.objectID.persistentStore === second)
        #expect(try RawSQL.rows(secondURL, "SELECT ZNAME FROM ZCOMPANY").compactMap { $0["ZNAME"] as? String } == ["Globex"])
        #expect(try RawSQL.rows(folder.file("First.sqlite"), "SELECT ZNAME FROM ZCOMPANY").compactMap { $0["ZNAME"] as? String } == ["Acme"])
        // Assignments are spent: the next new object goes to the first store again.
        let initech = stack.insert("Company", ["name": "Initech"])
        try stack.context.save()
        #expect(initech.objectID.persistentStore === stack.store)
    }

    /// A new object goes to the writable store when a read-only one that comes first also has its entity,
    /// as Apple's `assign(_:to:)` documents ("a single writable store"); it went to the read-only one, and
    /// the save failed.
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func aNewObjectGoesToTheWritableStore(readOnlyType: String) throws {
        let folder = TemporaryFolder()
        let model = TestModel.make()
        let readOnlyURL = folder.file("ReadOnly.sqlite")
        if readOnlyType == NSSQLiteStoreType {
            // A read-only SQLite store must exist: made once, empty.
            let maker = NSPersistentStoreCoordinator(managedObjectModel: model)
            _ = try maker.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: readOnlyURL, options: nil)
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let readOnly = try coordinator.addPersistentStore(ofType: readOnlyType, configurationName: nil,
                                                          at: readOnlyType == NSSQLiteStoreType ? readOnlyURL : nil,
                                                          options: [NSReadOnlyPersistentStoreOption: true])
        let writableURL = folder.file("Writable.sqlite")
        let writable = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: writableURL, options: nil)
        #expect(readOnly.isReadOnly && !writable.isReadOnly)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let acme = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
            acme.setValue("Acme", forKey: "name")
            try context.save()
            #expect(acme.objectID.persistentStore === writable)
        }
        #expect(try RawSQL.rows(writableURL, "SELECT ZNAME FROM ZCOMPANY").compactMap { $0["ZNAME"] as? String } == ["Acme"])
    }

    /// Prefetching a to-many of objects fetched from two stores loads each object's members from its own
    /// store. The coordinator used to ask the first object's store for all of them, and the others' came
    /// back empty, as if loaded (a review found it).
    /// R&D (Ann) in a first store, Sales (Bob, Cy) in a second, saved; and a context to read them in.
    private func staffInTwoStores(_ folder: TemporaryFolder) throws -> (SQLiteStack, NSManagedObjectContext) {
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file("First.sqlite"))
        let second = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.file("Second.sqlite"), options: nil)
        let rnd = stack.insert("Department", ["name": "R&D"])
        let sales = stack.insert("Department", ["name": "Sales"])
        stack.insert("Employee", ["name": "Ann", "department": rnd])
        let bob = stack.insert("Employee", ["name": "Bob", "department": sales])
        let cy = stack.insert("Employee", ["name": "Cy", "department": sales])
        for object in [sales, bob, cy] { stack.context.assign(object, to: second) }
        try stack.context.save()
        #expect(sales.objectID.persistentStore === second && rnd.objectID.persistentStore === stack.store)
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = stack.coordinator
        return (stack, reader)
    }

    @Test func prefetchingAcrossTwoStoresLoadsEachObjectsMembers() throws {
        let folder = TemporaryFolder()
        let (stack, reader) = try staffInTwoStores(folder)
        defer { withExtendedLifetime((stack, reader)) {} }
        for order in [true, false] {
            reader.reset()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.sortDescriptors = [OCDPredicate.NSSortDescriptor(key: "name", ascending: order)]
            request.relationshipKeyPathsForPrefetching = ["employees"]
            let departments = try reader.fetch(request)
            var members: [String: Set<String>] = [:]
            for department in departments {
                let employees = department.value(forKey: "employees") as? Set<NSManagedObject> ?? []
                members[department.value(forKey: "name") as? String ?? "?"] = Set(employees.compactMap { $0.value(forKey: "name") as? String })
            }
            #expect(members == ["R&D": ["Ann"], "Sales": ["Bob", "Cy"]], "sorted ascending: \(order)")
        }
    }

    /// Rows merged from several stores carry attributes and to-one IDs only: a sort through a relationship
    /// fails with a typed error (it failed on an ID, or ordered by a count every row lacked) while a sort
    /// by attributes merges the stores' rows in order.
    @Test func aFetchAcrossStoresSortedThroughARelationshipIsRefused() throws {
        let folder = TemporaryFolder()
        let (stack, reader) = try staffInTwoStores(folder)
        defer { withExtendedLifetime((stack, reader)) {} }
        for (entity, key) in [("Employee", "department.name"), ("Employee", "department"), ("Department", "employees.@count")] {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.sortDescriptors = [OCDPredicate.NSSortDescriptor(key: key, ascending: true)]
            #expect { try reader.fetch(request) } throws: { ($0 as NSError).code == 134060 }
        }
        let byName = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        byName.sortDescriptors = [OCDPredicate.NSSortDescriptor(key: "name", ascending: false)]
        #expect(try reader.fetch(byName).compactMap { $0.value(forKey: "name") as? String } == ["Cy", "Bob", "Ann"])
    }

    @Test func assigningToAStoreWithoutTheEntityStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            let stores = try TwoStores(firstType: NSSQLiteStoreType, folder: folder)
            let alpha = stores.insert("Alpha", "Acme")
            stores.context.assign(alpha, to: stores.second)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Can't assign an object to a store that does not contain the object's entity."))
    }

    /// Locks are taken in the order of the files' paths, whatever order a coordinator added its stores
    /// in: two coordinators (or processes) that added them differently still lock alike.
    @Test func storesAreLockedInTheOrderOfTheirPaths() throws {
        let folder = TemporaryFolder()
        let model = TestModel.make()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let later = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.file("B.sqlite"), options: nil)
        let earlier = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.file("A.sqlite"), options: nil)
        let memory = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        #expect(NSPersistentStoreCoordinator.lockOrder([later, memory, earlier]).map { ObjectIdentifier($0) } == [memory, earlier, later].map { ObjectIdentifier($0) })
        // Through a symbolic link, a file sorts by the path it points to.
        let link = folder.file("0-link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: folder.file("C.sqlite").path)
        let linked = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: link, options: nil)
        #expect(NSPersistentStoreCoordinator.lockOrder([linked, later, earlier]).map { ObjectIdentifier($0) } == [earlier, later, linked].map { ObjectIdentifier($0) })
    }

    /// Stores added with a configuration open again, in a new coordinator, with the same configuration:
    /// their metadata records the whole model's hashes, of which the configuration's must match.
    @Test func storesOfConfigurationsOpenAgain() throws {
        let folder = TemporaryFolder()
        let stores = try TwoStores(firstType: NSSQLiteStoreType, folder: folder)
        stores.insert("Alpha", "Acme")
        stores.insert("Beta", "Globex")
        try stores.context.save()
        let model = stores.coordinator.managedObjectModel
        let again = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try again.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "A", at: folder.file("A.sqlite"), options: nil)
        _ = try again.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "B", at: stores.secondURL, options: nil)
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = again
        let betas = try withExtendedLifetime(reader) {
            try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Beta")).map { $0.value(forKey: "name") as? String }
        }
        #expect(betas == ["Globex"])
        let metadata = try #require(again.persistentStores.first?.metadata)
        #expect(model.isConfiguration(withName: "A", compatibleWithStoreMetadata: metadata))
        // A recorded entity that is not this model's, or a changed hash of one, makes the store incompatible.
        var hashes = try #require(metadata["NSStoreModelVersionHashes"] as? [String: Any])
        hashes["Gamma"] = Data([1, 2, 3])
        #expect(!model.isConfiguration(withName: "A", compatibleWithStoreMetadata: ["NSStoreModelVersionHashes": hashes]))
        hashes["Gamma"] = nil
        hashes["Beta"] = Data([1, 2, 3])
        #expect(!model.isConfiguration(withName: "A", compatibleWithStoreMetadata: ["NSStoreModelVersionHashes": hashes]))
        hashes["Beta"] = nil
        #expect(model.isConfiguration(withName: "A", compatibleWithStoreMetadata: ["NSStoreModelVersionHashes": hashes]), "configuration entities only")
        #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: ["NSStoreModelVersionHashes": hashes]), "all entities")
    }

    /// A save touching both files locks both, in the coordinator's order, before either does any work:
    /// here the second store's keys would otherwise be taken (and its file locked) before the first
    /// store's update, and another coordinator doing the opposite would wait on this one.
    @Test func aSaveAcrossStoresLocksTheirFilesFirstAndInOrder() throws {
        let folder = TemporaryFolder()
        let stores = try TwoStores(firstType: NSSQLiteStoreType, folder: folder)
        let alpha = stores.insert("Alpha", "Acme")
        try stores.context.save()
        let log = SQLStatementLog()
        try #require(stores.first as? SQLiteStore).statementLog = log
        try #require(stores.second as? SQLiteStore).statementLog = log

        alpha.setValue("Acme 2", forKey: "name")
        stores.insert("Beta", "Globex")
        try stores.context.save()
        #expect(Array(log.statements.prefix(3)) == ["BEGIN IMMEDIATE", "BEGIN IMMEDIATE", "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?"])
        #expect(log.statements.filter { $0 == "COMMIT" }.count == 2)

        // One store touched: its transaction still begins at its first statement, and the other sees none.
        log.reset()
        alpha.setValue("Acme 3", forKey: "name")
        try stores.context.save()
        #expect(log.statements.first == "BEGIN IMMEDIATE")
        #expect(log.statements.filter { $0 == "BEGIN IMMEDIATE" }.count == 1)
    }
}
