import CSQLite
import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
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

/// Runs SQL on a store file with the C API, outside the store (what `sqlite3` would show).
enum RawSQL {
    static func rows(_ url: URL, _ sql: String) throws -> [[String: Any?]] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            throw RawError(message: "cannot open \(url.path)")
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw RawError(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        var rows: [[String: Any?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            var row: [String: Any?] = [:]
            for column in 0..<sqlite3_column_count(statement) {
                let name = String(cString: sqlite3_column_name(statement, column))
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row[name] = sqlite3_column_int64(statement, column)
                case SQLITE_FLOAT: row[name] = sqlite3_column_double(statement, column)
                case SQLITE_TEXT: row[name] = String(cString: sqlite3_column_text(statement, column))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    row[name] = count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, column), count: count)
                default: row[name] = .some(nil)
                }
            }
            rows.append(row)
        }
        return rows
    }

    static func execute(_ url: URL, _ sql: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw RawError(message: "cannot open \(url.path)")
        }
        defer { sqlite3_close(db) }
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw RawError(message: String(cString: sqlite3_errmsg(db))) }
    }

    struct RawError: Error { let message: String }

    /// A connection kept open (to hold a lock, or keep a WAL from being checkpointed).
    final class Connection {
        let db: OpaquePointer
        init(_ url: URL, create: Bool = false) throws {
            var db: OpaquePointer?
            let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
            guard sqlite3_open_v2(url.path, &db, flags, nil) == SQLITE_OK, let db else { throw RawError(message: "cannot open \(url.path)") }
            self.db = db
        }
        deinit { sqlite3_close(db) }
        func execute(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw RawError(message: String(cString: sqlite3_errmsg(db))) }
        }
    }
}
