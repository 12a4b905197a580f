import Foundation
import OCDGraph
import OCDModel
import OCDStore
import OCDTestSupport
import Testing

/// A store that hands out a new copy of its row each time it is asked for one, and records the versions
/// its saves expected.
final class RowHandingStore: NSPersistentStore, @unchecked Sendable {
    // Qualified by the module, as SilentStore's (test files may be compiled into two targets).
    static let typeName = String(reflecting: RowHandingStore.self)
    override var type: String { Self.typeName }
    var rows: [Int64: StoreRow] = [:]
    private(set) var handedOut = 0
    private(set) var expectedVersions: [Int64] = []
    private var nextKey: Int64 = 1

    override func newObjectIDs(for entity: NSEntityDescription, count: Int) throws -> [NSManagedObjectID] {
        defer { nextKey += Int64(count) }
        return (0..<count).map { objectID(for: entity, primaryKey: nextKey + Int64($0)) }
    }

    override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        guard let stored = primaryKey(of: objectID).flatMap({ rows[$0] }) else { return nil }
        handedOut += 1
        return StoreRow(objectID: stored.objectID, version: stored.version, values: stored.values)
    }

    override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        for (row, expected) in request.updated {
            expectedVersions.append(expected)
            rows[primaryKey(of: row.objectID)!] = StoreRow(objectID: row.objectID, version: expected + 1, values: row.values)
        }
        for row in request.inserted { rows[primaryKey(of: row.objectID)!] = row }
        return StoreSaveResult(updated: [])
    }
}

@Suite("An object keeps its row's values and version, not the store's row")
struct ObjectRowTests {
    private static func stack() throws -> (NSManagedObjectContext, RowHandingStore) {
        NSPersistentStoreCoordinator.registerStoreClass(RowHandingStore.self, forStoreType: RowHandingStore.typeName)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let store = try #require(try coordinator.addPersistentStore(ofType: RowHandingStore.typeName, configurationName: nil, at: nil) as? RowHandingStore)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (context, store)
    }

    /// A Company named Acme, saved, and its key in `store`.
    private static func savedCompany(in context: NSManagedObjectContext, _ store: RowHandingStore) throws -> (NSManagedObject, Int64) {
        let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
        company.setValue("Acme", forKey: "name")
        try context.save()
        return (company, try #require(store.primaryKey(of: company.objectID)))
    }

    /// A realized object keeps the values and version of the row it was read with (not the row itself):
    /// its committed values, and the version its next save expects.
    @Test func anObjectKeepsTheValuesAndVersionOfItsRow() throws {
        let (context, store) = try Self.stack()
        try context.performAndWait {
            let (company, key) = try Self.savedCompany(in: context, store)
            let id = company.objectID
            store.rows[key] = StoreRow(objectID: id, version: 7, values: store.rows[key]!.values)

            let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            reader.persistentStoreCoordinator = context.persistentStoreCoordinator
            try reader.performAndWait {
                let object = try reader.existingObject(with: id)
                #expect(!object.isFault)
                #expect(store.handedOut == 1, "the row read once, then kept")
                #expect(object.committedValues(forKeys: ["name"])["name"] as? String == "Acme")

                // The version taken from the row is the one the next save expects.
                object.setValue("Acme 2", forKey: "name")
                try reader.save()
                #expect(store.expectedVersions == [7])
                #expect(store.rows[key]?.version == 8)
                #expect(object.committedValues(forKeys: ["name"])["name"] as? String == "Acme 2")
                try reader.save()
                object.setValue("Acme 3", forKey: "name")
                try reader.save()
                #expect(store.expectedVersions == [7, 8], "the version after a save is the saved one")
            }
        }
    }

    /// A fault turned from a realized object drops the row it was read with along with its values: firing
    /// it reads the store's row, whose version the next save expects.
    @Test func aRefreshedObjectReadsTheStoresRowAndVersion() throws {
        let (context, store) = try Self.stack()
        try context.performAndWait {
            let (company, key) = try Self.savedCompany(in: context, store)
            context.refresh(company, mergeChanges: false)
            #expect(company.isFault)
            store.rows[key] = StoreRow(objectID: company.objectID, version: 5, values: SlotValues(store.rows[key]!.values.map { $0 as? String == "Acme" ? "Acme (elsewhere)" : $0 }, plan: store.rows[key]!.values.plan))
            #expect(company.value(forKey: "name") as? String == "Acme (elsewhere)")
            #expect(company.committedValues(forKeys: ["name"])["name"] as? String == "Acme (elsewhere)")
            #expect(store.handedOut == 1, "read once when the fault fired")
            company.setValue("Acme 2", forKey: "name")
            try context.save()
            #expect(store.expectedVersions == [5])
        }
    }

    /// `rollback()` restores the last committed state: for an object whose row was deleted behind the
    /// context after it was refreshed, there is none. It goes back to being a fault (which finds no row
    /// again when fired), not to the values it was read with before the refresh, which the store no
    /// longer has.
    @Test func rollbackOfAnInaccessibleObjectLeavesAFaultNotItsOldValues() throws {
        let (context, store) = try Self.stack()
        try context.performAndWait {
            let (company, key) = try Self.savedCompany(in: context, store)
            context.refresh(company, mergeChanges: false)
            store.rows[key] = nil
            #expect(company.value(forKey: "name") == nil, "an inaccessible fault fires to nil values")
            #expect(company.isDeleted)
            context.rollback()
            #expect(!company.isDeleted)
            #expect(company.isFault, "not restored from the values read before the refresh")
            #expect(company.committedValues(forKeys: nil).isEmpty)
        }
    }

    /// Memory per object (issue 6): a fault's row read ahead and its batch share one word, so that an
    /// object of a class with no stored properties of its own is a 112-byte allocation (usable 104).
    @Test func anObjectIsA112ByteAllocation() throws {
        let entity = try #require(TestModel.make().entitiesByName["Company"])
        // Exactly NSManagedObject: other tests give entities classes of their own.
        let object = NSManagedObject(entity: entity, insertInto: nil)
        #expect(type(of: object) == NSManagedObject.self)
        guard let size = allocationUsableSize(of: object) else { return }
        #expect(size <= 104, "an object takes \(size) usable bytes")
    }
}
