import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
@_exported import OCDTestSupport

/// A temporary folder for one test's store files, removed when the value is released.
final class TemporaryFolder {
    let url: URL
    init() {
        url = ScratchFiles.newFolder()
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func file(_ name: String = "Store.sqlite") -> URL { url.appendingPathComponent(name) }
}

/// A coordinator with an SQLite store at `url` and a private-queue context: the graph tests' stack.
typealias SQLiteStack = TestStack

extension TestStack {
    init(model: NSManagedObjectModel, url: URL, options: [AnyHashable: Any]? = nil) throws {
        try self.init(model: model, storeType: NSSQLiteStoreType, url: url, options: options)
    }

    var sqliteStore: SQLiteStore { store as! SQLiteStore }
}
