import CSQLite
import Foundation

/// Access to `../shared/fixtures` (real Core Data models and stores from public repositories) for tests.
/// Tests skip, with a printed reason, when the folder is absent (a user's clone).
public enum Fixtures {
    /// `../shared/fixtures` beside the package root, or nil.
    public static let directory: URL? = {
        var url = URL(fileURLWithPath: #filePath)
        while url.pathComponents.count > 1 {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                let fixtures = url.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
                return FileManager.default.fileExists(atPath: fixtures.path) ? fixtures : nil
            }
        }
        return nil
    }()

    /// `fixtures/models`, or nil (printing why).
    public static var models: URL? {
        guard let directory else {
            print("note: ../shared/fixtures is absent; fixture model tests are skipped")
            return nil
        }
        return directory.appendingPathComponent("models")
    }

    /// The fixture stores whose model is at hand, with the folder under `fixtures/models` that holds its
    /// versions (the version is chosen by comparing version hashes with the store's metadata).
    public static let storesWithModels: [(store: String, models: String)] = [
        ("LoopKit__LoopKit__Model.sqlite.v1.original.sqlite", "LoopKit__LoopKit__Model"),
        ("alemar11__CoreDataPlus__SampleModel3_V1.sqlite", "alemar11__CoreDataPlus__SampleModel3"),
        ("alemar11__CoreDataPlus__SampleModel_V1.sqlite", "alemar11__CoreDataPlus__SampleModel"),
        ("alemar11__CoreDataPlus__SampleModel_V2.sqlite", "alemar11__CoreDataPlus__SampleModel"),
        ("bignerdranch__CoreDataStack__TestModel.sqlite", "bignerdranch__CoreDataStack__Sample"),
        ("wireapp__wire-ios-data-model__store2-21-1.sqlite", "wireapp__wire-ios-data-model__zmessaging"),
        ("wireapp__wire-ios-data-model__store2-3.sqlite", "wireapp__wire-ios-data-model__zmessaging"),
        ("wireapp__wire-ios-data-model__store2-54-0.sqlite", "wireapp__wire-ios-data-model__zmessaging"),
        ("wireapp__wire-ios-data-model__store2-80-0.sqlite", "wireapp__wire-ios-data-model__zmessaging"),
    ]

    /// `fixtures/stores`, or nil (printing why).
    public static var stores: URL? {
        guard let directory else {
            print("note: ../shared/fixtures is absent; fixture store tests are skipped")
            return nil
        }
        return directory.appendingPathComponent("stores")
    }

    /// Every `.xcdatamodel` folder under `fixtures/models`, sorted.
    public static func modelVersionFolders() -> [URL] {
        guard let models else { return [] }
        let enumerator = FileManager.default.enumerator(at: models, includingPropertiesForKeys: nil)
        var folders: [URL] = []
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "xcdatamodel" { folders.append(url) }
        }
        return folders.sorted { $0.path < $1.path }
    }

    /// A store's metadata (`Z_METADATA.Z_PLIST`, a binary property list), read from a copy of the file so
    /// the fixture is never touched (SQLite may checkpoint a WAL even when reading).
    public static func storeMetadata(_ store: URL) throws -> [String: Any] {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-\(UUID().uuidString)-\(store.lastPathComponent)")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy.path + suffix) }
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: copy.path + suffix)
        }
        var database: OpaquePointer?
        guard sqlite3_open_v2(copy.path, &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let database else {
            throw FixtureError("cannot open \(store.lastPathComponent)")
        }
        defer { sqlite3_close(database) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, "SELECT Z_PLIST FROM Z_METADATA", -1, &statement, nil) == SQLITE_OK, let statement else {
            throw FixtureError("\(store.lastPathComponent) has no Z_METADATA: \(String(cString: sqlite3_errmsg(database)))")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let bytes = sqlite3_column_blob(statement, 0) else {
            throw FixtureError("\(store.lastPathComponent) has an empty Z_METADATA")
        }
        let data = Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, 0)))
        guard let plist = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
            throw FixtureError("\(store.lastPathComponent): Z_PLIST is not a dictionary")
        }
        return plist
    }

    public struct FixtureError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
