import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
@_exported import OCDTestSupport
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// A temporary folder for one test's store files, removed when the value is released.
final class TemporaryFolder {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-sqlite-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func file(_ name: String = "Store.sqlite") -> URL { url.appendingPathComponent(name) }
}

/// A coordinator with an SQLite store at `url` and a private-queue context.
struct SQLiteStack {
    let coordinator: NSPersistentStoreCoordinator
    let store: NSPersistentStore
    let context: NSManagedObjectContext

    init(model: NSManagedObjectModel, url: URL, options: [AnyHashable: Any]? = nil) throws {
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    func newContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @discardableResult
    func insert(_ entityName: String, _ values: [String: Any] = [:], into context: NSManagedObjectContext? = nil) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entityName, into: context ?? self.context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    func fetch(_ entityName: String, _ format: String? = nil, _ args: Any?..., sortedBy key: String? = nil,
               in context: NSManagedObjectContext? = nil) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
        if let format { request.predicate = NSPredicate(format: format, argumentArray: args.map { $0 as Any }) }
        if let key { request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)] }
        return try (context ?? self.context).fetch(request)
    }

    var sqliteStore: SQLiteStore { store as! SQLiteStore }
}
