import ArgumentParser
import CSQLite
import Foundation
import Synchronization
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore

/// `cdtool store inspect|dump`: Core Data SQLite stores, read without ever writing the file given.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Inspect and dump Core Data SQLite stores (the file is never modified).",
        subcommands: [Inspect.self, Dump.self]
    )

    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a store's metadata, entities (with row counts) and tables as JSON; no model needed.",
            discussion: "Reads a temporary copy of the store (with its -wal/-shm), so that SQLite never checkpoints or touches the original.")

        @Argument(help: "The store file (.sqlite).")
        var store: String

        func run() throws {
            let copy = try StoreCopy(store)
            let database = try RawDatabase(copy.url, original: store)
            Console.current.print(JSONOutput.render(try database.inspection()))
        }
    }

    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every object of a store as JSON lines, read through the SQLite store with its model.",
            discussion: """
                One JSON object per line: {"entity", "uri", "attributes", "relationships"}. Entities in name order, \
                objects by primary key. Dates are ISO-8601 strings, binary data base64, decimals strings, UUIDs and \
                URIs strings; to-one relationships are object URIs (x-coredata://<store UUID>/<Entity>/p<pk>) or \
                null, to-many ones arrays of URIs (ordered relationships in their order, others by key). \
                MODEL is an .xcdatamodeld, .xcdatamodel or .momd; of several versions the one whose entity hashes \
                are the store's is used. The store is read from a temporary copy.
                """)

        @Argument(help: "The store file (.sqlite).")
        var store: String

        @Option(help: "The model: an .xcdatamodeld, .xcdatamodel or .momd (the version matching the store is chosen).")
        var model: String

        @Option(help: "Only objects of this entity (and not of its subentities).")
        var entity: String?

        func run() throws {
            let copy = try StoreCopy(store)
            _ = try RawDatabase(copy.url, original: store)   // clear errors for files that are not stores
            let metadata: [String: Any]
            do {
                metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: copy.url)
            } catch {
                throw fail("\(store): \((error as NSError).localizedDescription)")
            }
            let chosen = try ModelVersions.matching(model, metadata: metadata)
            if let entity, chosen.model.entitiesByName[entity] == nil {
                throw fail("the model has no entity named '\(entity)'")
            }
            try StoreDump.run(copy.url, model: chosen.model, configurations: chosen.configurations, entity: entity)
        }
    }
}

/// A temporary copy of a store file and its -wal/-shm or -journal, removed when released.
final class StoreCopy {
    let folder: URL
    let url: URL

    init(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw fail("no such file: \(path)")
        }
        if isDirectory.boolValue { throw fail("\(path) is a folder, not an SQLite store file") }
        // The file a symbolic link points to, and its -wal and -shm beside it: copying the link would
        // copy the link, and making the copy writable would then change the original.
        let source = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        Self.removeCopiesOfEndedProcesses()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(Self.prefix)\(getpid())-\(UUID().uuidString)")
        self.folder = folder
        Self.live.withLock { _ = $0.insert(folder) }
        url = folder.appendingPathComponent(URL(fileURLWithPath: source).lastPathComponent)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // A rollback journal too: a hot one (its writer died mid-transaction) is what SQLite rolls the
            // file back with, and the file without it holds the transaction's half-written pages.
            for suffix in ["", "-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: source + suffix) {
                try FileManager.default.copyItem(atPath: source + suffix, toPath: url.path + suffix)
                // Copies of read-only files stay read-only; SQLite needs to write the -shm even to read.
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path + suffix)
            }
            // Externally stored values live in `.<name>_SUPPORT/_EXTERNAL_DATA` beside the store: the copy
            // reaches the original folder through a link (they are only read; removing the copy removes
            // the link, not what it points to).
            let support = "." + URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent + "_SUPPORT"
            let originalSupport = URL(fileURLWithPath: source).deletingLastPathComponent().appendingPathComponent(support)
            if FileManager.default.fileExists(atPath: originalSupport.path) {
                try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent(support), withDestinationURL: originalSupport)
            }
        } catch {
            Self.remove(folder)
            throw fail("cannot copy \(path) to a temporary folder: \(error.localizedDescription)")
        }
        // The commands read the copy read-only, and a read-only connection cannot roll a hot journal back:
        // a first read through a writable one does, on the copy.
        if FileManager.default.fileExists(atPath: url.path + "-journal") {
            var db: OpaquePointer?
            if sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK {
                sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nil, nil, nil)
            }
            sqlite3_close(db)
        }
    }

    deinit { Self.remove(folder) }

    private static let prefix = "cdtool-store-"
    /// The copies this process holds, for ``removeAll()`` when a signal ends it before they are released.
    private static let live = Mutex<Set<URL>>([])

    private static func remove(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
        live.withLock { _ = $0.remove(folder) }
    }

    /// Removes every copy this process holds: called when SIGINT, SIGTERM or SIGHUP ends the tool, or its
    /// output is closed.
    static func removeAll() {
        for folder in live.withLock({ $0 }) { remove(folder) }
    }

    /// Copies left by a cdtool that ended without removing them (killed, or stopped by a trap): their
    /// folder names the process, and a process that no longer exists holds nothing.
    private static func removeCopiesOfEndedProcesses() {
        let temporary = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }), pid != getpid(),
                  kill(pid, 0) == -1, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
        }
    }
}

/// A store file read with SQLite's C API, without a model: what `store inspect` shows.
final class RawDatabase {
    private let handle: OpaquePointer
    private let url: URL
    private let original: String

    /// Opens `url` read-only; fails with a clear message when it is not an SQLite file or not a Core Data store.
    init(_ url: URL, original: String) throws {
        self.url = url
        self.original = original
        let header = (try? FileHandle(forReadingFrom: url).readData(ofLength: 100)) ?? Data()
        guard header.count >= 100, header.prefix(16) == Data("SQLite format 3\0".utf8) else {
            throw fail("\(original) is not an SQLite database")
        }
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close(db) }
            throw fail("\(original) cannot be opened: \(message)")
        }
        handle = db
        guard (try? rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'Z_METADATA'").isEmpty) == false else {
            throw fail("\(original) is an SQLite database but not a Core Data store (no Z_METADATA table)")
        }
    }

    deinit { sqlite3_close(handle) }

    enum Cell {
        case null, integer(Int64), real(Double), text(String), blob(Data)
        var int: Int64? { if case .integer(let v) = self { return v }; return nil }
        var string: String? { if case .text(let v) = self { return v }; return nil }
    }

    func rows(_ sql: String) throws -> [[Cell]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw fail("\(original): \(String(cString: sqlite3_errmsg(handle))) [\(sql)]")
        }
        defer { sqlite3_finalize(statement) }
        var result: [[Cell]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw fail("\(original): \(String(cString: sqlite3_errmsg(handle))) [\(sql)]") }
            var row: [Cell] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    row.append(.blob(count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, column), count: count)))
                default: row.append(.null)
                }
            }
            result.append(row)
        }
        return result
    }

    private static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The JSON `store inspect` prints.
    func inspection() throws -> JSONOutput.Value {
        let metadataRows = try rows("SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1")
        guard let metadataRow = metadataRows.first else {
            throw fail("\(original) is not a Core Data store: Z_METADATA is empty")
        }
        var metadata: [String: Any] = [:]
        if case .blob(let data) = metadataRow[1], !data.isEmpty {
            guard let plist = try? PropertyLists.propertyList(from: data) as? [String: Any] else {
                throw fail("\(original): Z_METADATA.Z_PLIST is not a property list dictionary")
            }
            metadata = plist
        }
        let header = try FileHandle(forReadingFrom: url).readData(ofLength: 100)
        // Header bytes 18/19 (file format write/read versions): 2 in WAL mode, 1 with a rollback journal.
        let journal = header[18] == 2 ? "wal" : "rollback"
        let pageSize = Int(header[16]) << 8 | Int(header[17])

        let tableNames = try rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0.first?.string }
        var tables: [JSONOutput.Value] = []
        var upperTables: [String: String] = [:]
        for name in tableNames {
            upperTables[name.uppercased()] = name
            let count = try rows("SELECT COUNT(*) FROM \(Self.quoted(name))").first?.first?.int ?? 0
            tables.append(.object([("name", .string(name)), ("rows", .integer(count))]))
        }

        var entities: [JSONOutput.Value] = []
        if upperTables["Z_PRIMARYKEY"] != nil {
            let keys = try rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
            var names: [Int64: String] = [:]
            var supers: [Int64: Int64] = [:]
            for row in keys {
                guard let number = row[0].int else { continue }
                names[number] = row[1].string ?? ""
                supers[number] = row[2].int ?? 0
            }
            for row in keys {
                guard let number = row[0].int else { continue }
                var root = number
                var depth = 0
                while let parent = supers[root], parent != 0, names[parent] != nil, depth < 100 { root = parent; depth += 1 }
                let rootName = (names[root] ?? "").uppercased()
                // Model entities live in Z<ROOT>; persistent-history entities (numbers 16001…) in A<NAME>,
                // told apart by number: an app's own Transaction entity has a ZTRANSACTION table too.
                let table = number > 16000 ? upperTables["A" + rootName] : upperTables["Z" + rootName]
                var count: JSONOutput.Value = .null
                if let table {
                    count = .integer(try rows("SELECT COUNT(*) FROM \(Self.quoted(table)) WHERE Z_ENT = \(number)").first?.first?.int ?? 0)
                }
                let parent = supers[number] ?? 0
                entities.append(.object([
                    ("name", .string(names[number] ?? "")),
                    ("number", .integer(number)),
                    ("super", parent == 0 ? .null : .string(names[parent] ?? String(parent))),
                    ("superNumber", .integer(parent)),
                    ("max", row[3].int.map(JSONOutput.Value.integer) ?? .null),
                    ("table", table.map(JSONOutput.Value.string) ?? .null),
                    ("rows", count),
                ]))
            }
        }
        return .object([
            ("store", .string(original)),
            ("uuid", metadataRow[0].string.map(JSONOutput.Value.string) ?? .null),
            ("journalMode", .string(journal)),
            ("pageSize", .integer(Int64(pageSize == 1 ? 65536 : pageSize))),
            ("metadata", PlistJSON.value(metadata)),
            ("entities", .array(entities)),
            ("tables", .array(tables)),
        ])
    }
}

/// Property-list values as JSON: data as base64, dates as ISO-8601, dictionaries with sorted keys.
enum PlistJSON {
    static func value(_ value: Any) -> JSONOutput.Value {
        switch value {
        case let string as String: return .string(string)
        case let bool as Bool where !(value is NSNumber): return .bool(bool)
        case let data as Data: return .string(data.base64EncodedString())
        case let date as Date: return .string(iso8601(date))
        case let number as NSNumber:
            let kind = String(cString: number.objCType)
            // Property-list booleans are NSNumbers of type "c" (BOOL) on Linux and Apple platforms.
            if kind == "c" || kind == "B" { return .bool(number.boolValue) }
            if kind == "d" || kind == "f" { return number.doubleValue.isFinite ? .number(number.doubleValue) : .string("\(number.doubleValue)") }
            return .integer(number.int64Value)
        case let array as [Any]: return .array(array.map(self.value))
        case let dictionary as [String: Any]:
            return .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, self.value($0.value)) })
        default: return .string("\(value)")
        }
    }

    /// UTC, with the fraction of a second to the microsecond (trailing zeros dropped): stores keep
    /// microseconds, and ISO8601DateFormatter would round them to milliseconds.
    static func iso8601(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "\(seconds)" }
        let whole = seconds.rounded(.down)
        var micros = Int(((seconds - whole) * 1_000_000).rounded())
        var wholeDate = Date(timeIntervalSinceReferenceDate: whole)
        if micros == 1_000_000 { micros = 0; wholeDate += 1 }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var text = formatter.string(from: wholeDate)
        if micros > 0 {
            var fraction = String(format: "%06d", micros)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text.insert(contentsOf: "." + fraction, at: text.index(before: text.endIndex))
        }
        return text
    }
}

/// Choosing the model version that matches a store (spec §9: by entity version hashes).
enum ModelVersions {
    /// The candidate versions of the model at `path`: each `.xcdatamodel` of an `.xcdatamodeld`, each
    /// `.mom` or `.ocdmodel` (what `cdtool compile` writes) of a `.momd`, or the model itself.
    static func candidates(_ path: String) throws -> [(name: String, load: () throws -> NSManagedObjectModel)] {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: path) else { throw fail("no such model: \(path)") }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
        var versions: [(name: String, load: () throws -> NSManagedObjectModel)] = []
        // A folder of versions: an .xcdatamodeld (or a copy of one under another name), or a .momd.
        let compiled: Set<String> = ["mom", "ocdmodel"]
        if url.pathExtension != "xcdatamodel", names.contains(where: { $0.hasSuffix(".xcdatamodel") || compiled.contains(($0 as NSString).pathExtension) }) {
            let wanted = names.contains { $0.hasSuffix(".xcdatamodel") } ? ["xcdatamodel"] : compiled
            for name in names where wanted.contains((name as NSString).pathExtension) {
                let version = url.appendingPathComponent(name)
                versions.append(((name as NSString).deletingPathExtension, { try NSManagedObjectModel(validatingContentsOf: version) }))
            }
        }
        if versions.isEmpty {
            versions.append((url.deletingPathExtension().lastPathComponent, { try NSManagedObjectModel(validatingContentsOf: url) }))
        }
        return versions
    }

    /// The version of the model at `path` that the store with `metadata` was made with, and the
    /// configurations it may have been made for (nil, the whole model, first), each compatible with it.
    static func matching(_ path: String, metadata: [String: Any]) throws -> (model: NSManagedObjectModel, configurations: [String?]) {
        var tried: [String] = []
        for candidate in try candidates(path) {
            let model: NSManagedObjectModel
            do {
                model = try candidate.load()
            } catch {
                tried.append("\(candidate.name) (unreadable: \(error))")
                continue
            }
            let configurations = ([nil] + model.configurations.map { Optional($0) }).filter {
                model.isConfiguration(withName: $0, compatibleWithStoreMetadata: metadata)
            }
            if !configurations.isEmpty { return (model, configurations) }
            tried.append(candidate.name)
        }
        let count = (metadata["NSStoreModelVersionHashes"] as? [String: Any])?.count ?? 0
        throw fail("no version of \(path) matches the store's entity version hashes (\(count) entities); tried: \(tried.joined(separator: ", "))")
    }
}

/// `store dump`: every object through the SQLite store, as JSON lines.
enum StoreDump {
    /// Dumps the store at `url`, opened for the first of `configurations` it opens with: a store made for
    /// one configuration numbers only that configuration's entities, so the whole model cannot open it.
    static func run(_ url: URL, model: NSManagedObjectModel, configurations: [String?] = [nil], entity only: String?) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        var opened: NSPersistentStore?
        var firstError: Error?
        for configuration in configurations where opened == nil {
            do {
                opened = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: configuration, at: url,
                                                            options: [NSReadOnlyPersistentStoreOption: true])
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        guard let store = opened else {
            throw fail("the store cannot be opened: \(firstError.map { ($0 as NSError).localizedDescription } ?? "no configuration of the model matches it")")
        }
        let stored = Set(store.entities.compactMap(\.name))
        if let only, !stored.contains(only) {
            throw fail("the store holds no entity named '\(only)' (it was made for the model's configuration \(store.configurationName))")
        }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) where stored.contains(entity.name ?? "") && (only == nil || entity.name == only) {
                let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
                request.includesSubentities = false
                let objects: [NSManagedObject]
                do {
                    objects = try context.fetch(request)
                } catch {
                    throw fail("fetching \(entity.name ?? "?") failed: \((error as NSError).localizedDescription)")
                }
                for object in objects.sorted(by: { key($0.objectID) < key($1.objectID) }) {
                    Console.current.print(JSONOutput.compact(json(object)))
                }
                context.reset()
            }
        }
    }

    private static func key(_ id: NSManagedObjectID) -> Int64 {
        Int64(id.uriRepresentation().lastPathComponent.dropFirst()) ?? 0
    }

    static func json(_ object: NSManagedObject) -> JSONOutput.Value {
        var attributes: [(String, JSONOutput.Value)] = []
        var relationships: [(String, JSONOutput.Value)] = []
        for property in object.entity.properties.sorted(by: { $0.name < $1.name }) where !property.isTransient {
            if let attribute = property as? NSAttributeDescription {
                attributes.append((attribute.name, attributeValue(object.value(forKey: attribute.name), attribute)))
            } else if let relationship = property as? NSRelationshipDescription {
                let value = object.value(forKey: relationship.name)
                if relationship.isToMany {
                    var members: [NSManagedObject] = []
                    if let ordered = value as? NSOrderedSet {
                        members = ordered.array.compactMap { $0 as? NSManagedObject }
                    } else if let set = value as? Set<NSManagedObject> {
                        members = set.sorted { key($0.objectID) < key($1.objectID) }
                    } else if let set = value as? NSSet {
                        members = set.allObjects.compactMap { $0 as? NSManagedObject }.sorted { key($0.objectID) < key($1.objectID) }
                    }
                    relationships.append((relationship.name, .array(members.map { .string($0.objectID.uriRepresentation().absoluteString) })))
                } else {
                    let destination = value as? NSManagedObject
                    relationships.append((relationship.name, destination.map { .string($0.objectID.uriRepresentation().absoluteString) } ?? .null))
                }
            }
        }
        return .object([
            ("entity", .string(object.entity.name ?? "")),
            ("uri", .string(object.objectID.uriRepresentation().absoluteString)),
            ("attributes", .object(attributes)),
            ("relationships", .object(relationships)),
        ])
    }

    static func attributeValue(_ value: Any?, _ attribute: NSAttributeDescription) -> JSONOutput.Value {
        guard let value, !(value is NSNull) else { return .null }
        switch attribute.attributeType {
        case .booleanAttributeType:
            return .bool((value as? NSNumber)?.boolValue ?? false)
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            return (value as? NSNumber).map { .integer($0.int64Value) } ?? .string("\(value)")
        case .doubleAttributeType, .floatAttributeType:
            guard let number = value as? NSNumber else { return .string("\(value)") }
            let double = attribute.attributeType == .floatAttributeType ? Double("\(number.floatValue)") ?? number.doubleValue : number.doubleValue
            return double.isFinite ? .number(double) : .string("\(double)")
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return .string(decimal.description) }
            if let number = value as? NSDecimalNumber { return .string(number.stringValue) }
            return .string("\(value)")
        case .dateAttributeType:
            return (value as? Date).map { .string(PlistJSON.iso8601($0)) } ?? .string("\(value)")
        case .UUIDAttributeType:
            return (value as? UUID).map { .string($0.uuidString) } ?? .string("\(value)")
        case .URIAttributeType:
            return (value as? URL).map { .string($0.absoluteString) } ?? .string("\(value)")
        default:
            // Binary data, and transformable values (the archived data, or what it decoded to).
            return PlistJSON.value(value)
        }
    }
}
