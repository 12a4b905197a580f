import CSQLite
import Foundation
import OCDModel
import OCDPredicate
import OCDStore

/// `NSSQLiteStoreType`: objects in an SQLite database laid out as Apple's Core Data lays it out, so that
/// a store written on an iPhone opens here and one written here opens there (decision D5,
/// ../shared/spec/sqlite-store-format.md).
///
/// The coordinator serializes every call, so the store keeps one connection and no lock of its own.
public final class SQLiteStore: NSPersistentStore, @unchecked Sendable {

    private var connection: SQLiteConnection?
    private(set) var schema: StoreSchema?
    /// What derived-attribute triggers report during a save.
    private let derivedReports = DerivedValueReports()
    /// The `metadataGeneration` of the metadata `Z_METADATA` holds; a save writes the metadata only when it moved on.
    private var writtenMetadataGeneration: Int?

    /// Records every SQL statement the store runs, when set: tests count statements with it.
    public var statementLog: SQLStatementLog? {
        didSet { connection?.log = statementLog }
    }

    public override var type: String { NSSQLiteStoreType }

    /// Where Core Data keeps the values of attributes stored outside the file (`ExternalStorage`).
    var externalDataFolder: URL? { url.map(ExternalStorage.folder(of:)) }

    /// The version of this project's layout a new store records (`OCDStoreFormat` in its metadata): 2
    /// since ordered many-to-many order columns and external-storage markers follow Core Data's files.
    static let storeFormat = 2
    static let storeFormatKey = "OCDStoreFormat"

    /// Whether the file was made by this project before store format 2 (its metadata says framework
    /// version 1, which no Core Data writes, and has no `OCDStoreFormat`): such a file keeps its order
    /// columns swapped and its externally storable values without a marker, and is read and written so.
    private(set) var legacyLayout = false

    static func isLegacyLayout(_ metadata: [String: Any]) -> Bool {
        (metadata[NSPersistenceFrameworkVersionKey] as? NSNumber)?.intValue == 1 && metadata[storeFormatKey] == nil
    }

    public required init(model: NSManagedObjectModel, configurationName: String?, at url: URL?, options: [AnyHashable: Any]?) {
        super.init(model: model, configurationName: configurationName, at: url, options: options)
    }

    // MARK: Opening

    public override func loadMetadata() throws {
        guard let url else {
            throw Self.error(NSPersistentStoreOpenErrorCode, "An SQLite store needs a file URL.")
        }
        // `/dev/null` is Core Data's idiom for an SQLite store that lives in memory only (Xcode's app
        // template uses it for previews and tests): SQLite's `:memory:` database, never a file.
        let inMemory = url.standardizedFileURL.path == "/dev/null"
        let path = inMemory ? ":memory:" : url.path
        let exists = !inMemory && FileManager.default.fileExists(atPath: path) && ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > 0
        if !exists && isReadOnly {
            throw Self.error(NSFileReadNoSuchFileErrorCode, "The read-only store \(path) does not exist.", path: path)
        }
        if exists { try Self.checkWriteAheadLog(path) }
        // A new file's schema is made before the file: a model whose names SQL cannot take is refused
        // without leaving an empty database behind. (Deleting a file made by a failed open could delete
        // one another coordinator made meanwhile.)
        var newSchema: StoreSchema?
        if !exists {
            do {
                newSchema = try StoreSchema(entities: entities, numbers: StoreSchema.defaultEntityNumbers(entities))
            } catch let failure as StoreError {
                throw Self.error(NSPersistentStoreOpenErrorCode, "\(failure)", path: path, underlying: failure)
            }
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, readOnly: isReadOnly, create: !exists)
        } catch let failure as SQLiteError {
            if !exists, failure.code == SQLITE_CANTOPEN_CODE, FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path) {
                throw Self.error(NSFileWriteNoPermissionErrorCode, "The store file “\(path)” cannot be created: the folder is not writable (\(failure.message)).", path: path, underlying: failure)
            }
            throw Self.error(opening: failure, path: path)
        }
        if let timeout = options?[NSPersistentStoreTimeoutOption] as? NSNumber {
            connection.setBusyTimeout(seconds: timeout.doubleValue)
        }
        connection.log = statementLog
        Self.registerFunctions(connection, reports: derivedReports)
        do {
            func applyPragmas() throws {
                for (name, value) in try pragmas.sorted(by: { $0.key < $1.key }) {
                    try connection.execute("PRAGMA \(name) = \(value)")
                }
            }
            // A file holding no table at all is a store whose creation was cut short (a kill after its
            // first pragma): it is made now, as a new file would be.
            if newSchema == nil, !isReadOnly,
               try connection.query("SELECT count(*) FROM sqlite_master", [], { $0.int64(0) }).first == 0 {
                do {
                    newSchema = try StoreSchema(entities: entities, numbers: StoreSchema.defaultEntityNumbers(entities))
                } catch let failure as StoreError {
                    throw Self.error(NSPersistentStoreOpenErrorCode, "\(failure)", path: path, underlying: failure)
                }
            }
            if let newSchema {
                // The given pragmas too, in the order a new file needs (see `create`).
                try create(connection, newSchema)
            } else {
                // After the checks: a refused file (not a store, another model) keeps its journal mode.
                try openExisting(connection)
                try applyPragmas()
            }
            if !isReadOnly, Self.flag(options?[NSSQLiteManualVacuumOption]) { try connection.execute("VACUUM") }
            if !isReadOnly, Self.flag(options?[NSSQLiteAnalyzeOption]) { try connection.execute("ANALYZE") }
        } catch let failure as SQLiteError {
            throw Self.error(opening: failure, path: path)
        } catch let failure as StoreError {
            throw Self.error(NSPersistentStoreOpenErrorCode, "\(failure)", path: path, underlying: failure)
        }
        self.connection = connection
    }

    /// `NSSQLitePragmasOption`: pragma names and values applied when the store opens
    /// (`["journal_mode": "DELETE", "synchronous": "OFF"]`). Names and values are checked to be plain words
    /// or numbers, since a pragma cannot take a bound argument.
    private var pragmas: [String: String] {
        get throws {
            guard let given = options?[NSSQLitePragmasOption] as? [String: Any] else { return [:] }
            var result: [String: String] = [:]
            let word = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_-"))
            for (name, value) in given {
                let text = "\(value)"
                guard !name.isEmpty, name.unicodeScalars.allSatisfy(word.contains),
                      !text.isEmpty, text.unicodeScalars.allSatisfy(word.contains) else {
                    throw Self.error(NSPersistentStoreOpenErrorCode, "NSSQLitePragmasOption: \"\(name)\" = \"\(text)\" is not a pragma name and a plain value.")
                }
                result[name.lowercased()] = text
            }
            return result
        }
    }

    public override func willRemove(from coordinator: AnyObject?) {
        connection = nil
    }

    private func create(_ connection: SQLiteConnection, _ schema: StoreSchema) throws {
        // Page size and auto-vacuum (NSSQLitePragmasOption's or the defaults) before anything that writes
        // the file's first page: the first table, or a switch to WAL, after which the page size is fixed.
        // The journal mode once the tables are in.
        let given = try pragmas
        var first = ["PRAGMA page_size = \(given["page_size"] ?? "4096")", "PRAGMA auto_vacuum = \(given["auto_vacuum"] ?? "INCREMENTAL")"]
        for (name, value) in given.sorted(by: { $0.key < $1.key }) where !["page_size", "auto_vacuum", "journal_mode"].contains(name) {
            first.append("PRAGMA \(name) = \(value)")
        }
        try connection.execute(first.joined(separator: "; "))
        let journalMode = "PRAGMA journal_mode = \(given["journal_mode"] ?? "WAL")"
        let autoVacuum = try connection.query("PRAGMA auto_vacuum", [], { $0.int64(0) }).first ?? 2
        var metadata = freshMetadata()
        metadata["NSStoreModelVersionHashesDigest"] = model.versionHashesDigest
        metadata["NSStoreModelVersionChecksumKey"] = model.versionChecksum
        metadata["_NSAutoVacuumLevel"] = String(autoVacuum)
        metadata[Self.storeFormatKey] = Self.storeFormat
        let derivations = try Self.derivationTriggers(schema, model)
        // Decided under the write lock: another coordinator or process that opened the new file at the
        // same time may have made the store first, and then this one opens it.
        let made = try connection.transaction { () throws -> Bool in
            guard try connection.query("SELECT count(*) FROM sqlite_master", [], { $0.int64(0) }).first == 0 else { return false }
            for statement in schema.createStatements() { try connection.execute(statement) }
            for (_, triggers) in derivations {
                for trigger in triggers.triggers { try connection.execute(trigger.sql) }
            }
            for mapping in schema.mappings.values.sorted(by: { $0.number < $1.number }) {
                let parent = mapping.entity.superentity.flatMap { schema.mapping(for: $0)?.number } ?? 0
                try connection.run("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                                   [.integer(Int64(mapping.number)), .text(mapping.entity.name ?? ""), .integer(Int64(parent))])
            }
            try Self.writeMetadata(metadata, connection)
            return true
        }
        guard made else {
            try openExisting(connection)
            if given["journal_mode"] != nil { try connection.execute(journalMode) }
            return
        }
        // WAL (Core Data's default) once the schema is in: set before it, a kill in between left a file
        // of no tables.
        try connection.execute(journalMode)
        self.metadata = metadata
        writtenMetadataGeneration = metadataGeneration
        self.schema = schema
    }

    /// A database in WAL mode whose `-shm` is present but whose `-wal` is not was copied without its log:
    /// opening it would silently lose the transactions in the missing log, so refuse before SQLite touches it.
    private static func checkWriteAheadLog(_ path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 20)) ?? Data()
        let manager = FileManager.default
        if header.count == 20, header.starts(with: Array("SQLite format 3".utf8)), header[18] == 2,
           manager.fileExists(atPath: path + "-shm"), !manager.fileExists(atPath: path + "-wal") {
            throw error(NSFileReadCorruptFileErrorCode,
                        "The store “\((path as NSString).lastPathComponent)” is in WAL mode and its -shm file is present, but its -wal file is missing: it was probably copied without it, and opening it would lose the saves in the log. Copy the -wal file with the store (or remove the -shm file to open what the main file holds).",
                        path: path)
        }
    }

    /// Refuses an SQLite database without Core Data's tables, with the same error whichever API meets it.
    /// Returns the file's tables.
    @discardableResult
    private static func requireStoreTables(_ connection: SQLiteConnection) throws -> Set<String> {
        let tables = Set(try connection.query("SELECT name FROM sqlite_master WHERE type = 'table'", [], { $0.text(0) }))
        guard tables.contains("Z_METADATA"), tables.contains("Z_PRIMARYKEY") else {
            throw Self.error(NSPersistentStoreInvalidTypeErrorCode, "The file “\(connection.path)” is an SQLite database, but not a Core Data store (it has no Z_METADATA and Z_PRIMARYKEY tables).", path: connection.path)
        }
        return tables
    }

    private func openExisting(_ connection: SQLiteConnection) throws {
        let tables = try Self.requireStoreTables(connection)
        let metadata = try Self.readMetadata(connection)
        if let type = metadata[NSStoreTypeKey] as? String, type != NSSQLiteStoreType {
            throw Self.error(NSPersistentStoreTypeMismatchErrorCode, "The store at \(connection.path) is of type \(type), not SQLite.")
        }
        let configuration = configurationName == "PF_DEFAULT_CONFIGURATION_NAME" ? nil : configurationName
        if !model.isConfiguration(withName: configuration, compatibleWithStoreMetadata: metadata) {
            throw Self.error(NSPersistentStoreIncompatibleVersionHashErrorCode,
                             "The model used to open the store is incompatible with the one used to create the store",
                             path: connection.path, extra: ["metadata": metadata])
        }
        var numbers: [String: Int] = [:]
        for (number, name) in try connection.query("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY", [], { ($0.int64(0), $0.text(1)) }) {
            numbers[name] = Int(number)
        }
        // A renamed entity keeps its old Z_NAME after Core Data's lightweight migration (CoreDataPlus
        // SampleModel_V2: LuxuryCar, renaming identifier ExpensiveSportCar, is row 3 "ExpensiveSportCar").
        for entity in entities where numbers[entity.name ?? ""] == nil {
            if let old = entity.renamingIdentifier, let number = numbers[old] { numbers[entity.name ?? ""] = number }
        }
        var introspection: [String: [String]] = [:]
        for table in tables where table.hasPrefix("Z") {
            introspection[table.uppercased()] = try connection.query("PRAGMA table_info(\(Self.quoted(table)))", [], { $0.text(1).uppercased() })
        }
        legacyLayout = Self.isLegacyLayout(metadata)
        let schema = try StoreSchema(entities: entities, numbers: numbers, introspection: introspection, legacyOrderColumns: legacyLayout)
        self.schema = schema
        if !isReadOnly { try addMissingDerivationTriggers(connection, schema) }
        self.metadata = metadata
        writtenMetadataGeneration = metadataGeneration
    }

    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// SQL functions Core Data's schema expects: the derived-attribute triggers of Apple's stores call
    /// these, and a write to a table with such a trigger fails ("no such function") without them. The
    /// two that report a row's new value name the row to `reports` (the save reads its values back); the
    /// others compute what Apple's do.
    private static func registerFunctions(_ connection: SQLiteConnection, reports: DerivedValueReports) {
        for name in ["NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"] {
            connection.registerFunction(name, arity: -1, deterministic: false) { arguments in
                // (table, Z_ENT, Z_PK, attribute, value)
                if arguments.count == 5, case .integer(let entity) = arguments[1], case .integer(let key) = arguments[2] {
                    reports.add(entity: entity, primaryKey: key)
                }
                return .null
            }
        }
        let transforms: [(String, (String) -> String)] = [
            ("NSCoreDataCanonical", TextFolding.canonical), ("NSCoreDataToLower", { $0.lowercased() }), ("NSCoreDataToUpper", { $0.uppercased() }),
        ]
        for (name, transform) in transforms {
            connection.registerFunction(name, arity: 1) { arguments in
                guard case .text(let text) = arguments.first else { return arguments.first ?? .null }
                return .text(transform(text))
            }
        }
        // A date as Core Data stores one: seconds since 2001-01-01.
        connection.registerFunction("NSCoreDataNow", arity: 0, deterministic: false) { _ in .real(Date().timeIntervalSinceReferenceDate) }
        SQLFunctions.register(on: connection)
    }

    // MARK: Derived attributes

    /// The triggers of the model's derived attributes in `schema` (none for a model without any).
    private static func derivationTriggers(_ schema: StoreSchema, _ model: NSManagedObjectModel) throws -> [(attribute: String, triggers: DerivationTriggers)] {
        let plan: DerivationPlan
        do {
            plan = try DerivationPlan.of(model)
        } catch {
            throw StoreError.invalidStore("\(error)")
        }
        return plan.isEmpty ? [] : DerivationTriggers.all(schema, plan)
    }

    /// Adds the triggers of derived attributes that have none in an existing file (a store made before the
    /// attribute was, or by a writer that made none), and sets the values of the rows already stored, as
    /// Core Data does when it adds them. An attribute with triggers of any name is left to them: Apple's.
    private func addMissingDerivationTriggers(_ connection: SQLiteConnection, _ schema: StoreSchema) throws {
        let derivations = try Self.derivationTriggers(schema, model)
        if derivations.isEmpty { return }
        let existing = try connection.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'Z\\_DA\\_%' ESCAPE '\\'", [], { $0.text(0) })
        let missing = derivations.filter { attribute, triggers in
            let infix = "_" + attribute.replacingOccurrences(of: ".", with: "_") + "_"
            return !existing.contains { name in name.contains(infix) || triggers.triggers.contains { $0.name == name } }
        }
        if missing.isEmpty { return }
        try connection.transaction {
            for (_, triggers) in missing {
                for statement in triggers.backfill { try connection.execute(statement) }
                for trigger in triggers.triggers { try connection.execute(trigger.sql) }
            }
        }
    }

    // MARK: Metadata

    private static func readMetadata(_ connection: SQLiteConnection) throws -> [String: Any] {
        let rows = try connection.query("SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1", [], { ($0.text(0), $0.blob(1)) })
        guard let (uuid, plist) = rows.first else {
            throw StoreError.invalidStore("The file \(connection.path) is an SQLite database without Core Data metadata (Z_METADATA is empty).")
        }
        var metadata: [String: Any] = [:]
        if !plist.isEmpty {
            guard let dictionary = try? PropertyLists.propertyList(from: plist) as? [String: Any] else {
                throw StoreError.invalidStore("The metadata of \(connection.path) (Z_METADATA.Z_PLIST) is not a property list dictionary.")
            }
            metadata = dictionary
        }
        metadata[NSStoreUUIDKey] = uuid
        if metadata[NSStoreTypeKey] == nil { metadata[NSStoreTypeKey] = NSSQLiteStoreType }
        return metadata
    }

    private static func writeMetadata(_ metadata: [String: Any], _ connection: SQLiteConnection) throws {
        var plist = metadata
        let uuid = plist.removeValue(forKey: NSStoreUUIDKey) as? String ?? UUID().uuidString
        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        } catch {
            throw StoreError.invalidRequest("The store metadata cannot be written as a property list: \(error)")
        }
        try connection.run("INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)", [.text(uuid), .blob(data)])
    }

    public override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw error(NSFileReadNoSuchFileErrorCode, "The file \(url.lastPathComponent) couldn't be opened because there is no such file.", path: url.path)
        }
        // As when the store is added: a copy without its log is refused before SQLite makes an empty one.
        try checkWriteAheadLog(url.path)
        do {
            let connection = try SQLiteConnection(path: url.path, readOnly: true, create: false)
            try requireStoreTables(connection)
            return try readMetadata(connection)
        } catch let failure as SQLiteError {
            throw error(opening: failure, path: url.path)
        } catch let failure as StoreError {
            throw error(NSPersistentStoreInvalidTypeErrorCode, "\(failure)", path: url.path, underlying: failure)
        }
    }

    /// The database, its `-wal`, `-shm` and `-journal` files and its support folder (external data).
    /// Only regular files are deleted: `/dev/null` (a store in memory) and a folder named by mistake stay.
    public override class func destroyStore(at url: URL) throws {
        guard url.standardizedFileURL.path != "/dev/null" else { return }
        let files = FileManager.default
        for path in [url.path, url.path + "-wal", url.path + "-shm", url.path + "-journal"]
        where (try? files.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular {
            try files.removeItem(atPath: path)
        }
        // `.<name>_SUPPORT`, which holds `_EXTERNAL_DATA`.
        let folder = ExternalStorage.folder(of: url).deletingLastPathComponent()
        if files.fileExists(atPath: folder.path) { try files.removeItem(at: folder) }
    }

    /// Replaces the metadata of the store file at `url` without opening it as a store (the coordinator's
    /// `setMetadata(_:forPersistentStoreOfType:at:options:)`). The UUID is kept when `metadata` lacks it.
    public override class func setMetadata(_ metadata: [String: Any], forPersistentStoreAt url: URL) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw error(NSFileReadNoSuchFileErrorCode, "The file \(url.lastPathComponent) couldn't be opened because there is no such file.", path: url.path)
        }
        try checkWriteAheadLog(url.path)
        do {
            let connection = try SQLiteConnection(path: url.path, readOnly: false, create: false)
            try requireStoreTables(connection)
            let current = try readMetadata(connection)
            var updated = metadata
            // As the store's own setter: what the store records itself stays when left out.
            for key in NSPersistentStore.keptMetadataKeys where updated[key] == nil { updated[key] = current[key] }
            if updated[NSStoreTypeKey] == nil { updated[NSStoreTypeKey] = NSSQLiteStoreType }
            try connection.transaction { try writeMetadata(updated, connection) }
        } catch let failure as SQLiteError {
            throw error(opening: failure, path: url.path)
        } catch let failure as StoreError {
            throw error(NSPersistentStoreInvalidTypeErrorCode, "\(failure)", path: url.path, underlying: failure)
        }
    }

    // MARK: Reading

    private func ready() throws -> (SQLiteConnection, StoreSchema) {
        guard let connection, let schema else { throw StoreError.invalidStore("The SQLite store \(url?.path ?? "") is not open.") }
        return (connection, schema)
    }

    private func mapping(_ entity: NSEntityDescription) throws -> EntityMapping {
        guard let mapping = try ready().1.mapping(for: entity) else {
            throw StoreError.invalidRequest("The SQLite store has no table for the entity \(entity.name ?? "?").")
        }
        return mapping
    }

    /// The SELECT list of a row read from `table`: Z_PK, Z_ENT, Z_OPT, then every declared column.
    private func rowColumns(_ table: RootTable) -> (list: String, index: [String: Int32]) {
        var names = ["Z_PK", "Z_ENT", "Z_OPT"]
        var index: [String: Int32] = [:]
        for column in table.columns where table.existingColumns.isEmpty || table.existingColumns.contains(column.name) {
            index[column.name] = Int32(names.count)
            names.append(column.name)
        }
        return (names.map { "t0." + $0 }.joined(separator: ", "), index)
    }

    /// Each table's read plan. Holds the table, so that its address is not reused while cached.
    private var readPlans: [ObjectIdentifier: (table: RootTable, list: String, index: [String: Int32])] = [:]

    private func readPlan(_ table: RootTable) -> (list: String, index: [String: Int32]) {
        if let plan = readPlans[ObjectIdentifier(table)] { return (plan.list, plan.index) }
        let plan = rowColumns(table)
        readPlans[ObjectIdentifier(table)] = (table, plan.list, plan.index)
        return plan
    }

    /// How one slot of an entity is read from a row selected with its table's read plan.
    private enum ReadStep {
        /// An integer attribute the plan holds in a word (at `offset`): read without its description (no
        /// retain per value), an INTEGER column value straight into its word.
        case integer(slot: Int, position: Int32, offset: Int)
        /// A double attribute, likewise.
        case double(slot: Int, position: Int32, offset: Int)
        case attribute(slot: Int, position: Int32, attribute: NSAttributeDescription)
        case toOne(slot: Int, position: Int32, entityPosition: Int32?, relationship: NSRelationshipDescription)
        /// A composite attribute: its elements' columns into one dictionary (nil when all are NULL, as
        /// Core Data reads it).
        case composite(slot: Int, elements: [(path: [String], position: Int32, attribute: NSAttributeDescription)])
    }

    /// The steps of `mapping`'s entity, with the column positions resolved once (by name, in `index`)
    /// rather than per row. Holds the mapping, so an entry never outlives it.
    private var readSteps: [ObjectIdentifier: (mapping: EntityMapping, steps: [ReadStep])] = [:]

    private func steps(for mapping: EntityMapping, _ index: [String: Int32]) -> [ReadStep] {
        if let cached = readSteps[ObjectIdentifier(mapping)] { return cached.steps }
        var steps: [ReadStep] = []
        for slot in mapping.selectedSlots {
            switch mapping.storage[slot] {
            case .attribute(let column, let attribute):
                guard let position = index[column] else { continue }
                let offset = mapping.layout.slotPlan.wordOffset(ofNumberSlot: slot)
                switch (attribute.attributeType, offset) {
                case (.integer16AttributeType, let offset?), (.integer32AttributeType, let offset?), (.integer64AttributeType, let offset?):
                    steps.append(.integer(slot: slot, position: position, offset: offset))
                case (.doubleAttributeType, let offset?):
                    steps.append(.double(slot: slot, position: position, offset: offset))
                default:
                    steps.append(.attribute(slot: slot, position: position, attribute: attribute))
                }
            case .toOne(let column, let entityColumn, let relationship):
                guard let position = index[column] else { continue }
                steps.append(.toOne(slot: slot, position: position, entityPosition: entityColumn.flatMap { index[$0] }, relationship: relationship))
            case .composite(let elements):
                let read = elements.compactMap { element in index[element.column].map { (element.path, $0, element.attribute) } }
                if !read.isEmpty { steps.append(.composite(slot: slot, elements: read)) }
            default:
                break
            }
        }
        readSteps[ObjectIdentifier(mapping)] = (mapping, steps)
        return steps
    }

    /// Reads the rows of one query (selected with `readPlan`): the entity's steps are looked up when
    /// Z_ENT changes from one row to the next, not per row.
    private struct RowReader {
        let store: SQLiteStore
        let table: RootTable
        let index: [String: Int32]
        let schema: StoreSchema
        /// The plan's question whether a row's values will be used (``StoreFetchPlan/needsValues``).
        var needsValues: ((NSManagedObjectID) -> Bool)?
        private var entityNumber: Int64 = -1
        private var current: (mapping: EntityMapping, steps: [ReadStep], ids: NSPersistentStore.ObjectIDMaker)?

        init(_ store: SQLiteStore, _ table: RootTable, _ index: [String: Int32], _ schema: StoreSchema) {
            self.store = store
            self.table = table
            self.index = index
            self.schema = schema
        }

        mutating func read(_ statement: Statement) -> StoreRow? {
            let number = statement.int64(1)
            if number != entityNumber {
                entityNumber = number
                // A Z_ENT of an entity stored in another table (a damaged file) reads as no row: the
                // steps are cached per entity, for the positions of its own table.
                current = schema.byNumber[Int(number)].flatMap {
                    $0.table === table ? ($0, store.steps(for: $0, index), store.objectIDMaker(for: $0.entity)) : nil
                }
            }
            guard let (mapping, steps, ids) = current else { return nil }
            let id = ids.objectID(primaryKey: statement.int64(0))
            if let needsValues, !needsValues(id) {
                return StoreRow(objectID: id, version: statement.int64(2), values: mapping.layout.nilValues, hasValues: false)
            }
            // Written in place into a buffer laid out by the entity's plan: integers and doubles go
            // straight into their words, with no existential made.
            var values = SlotValues(plan: mapping.layout.slotPlan)
            let numbers = values.freshNumbers()
            for step in steps {
                switch step {
                case .integer(let slot, let position, let offset):
                    // One type test: the common INTEGER, else NULL, else what `decodeStored` makes of it.
                    let column = statement.column(position)
                    switch column.type {
                    case SQLITE_INTEGER: numbers.set(UInt64(bitPattern: column.int64), slot: slot, offset: offset)
                    case SQLITE_NULL: continue
                    default: numbers.set(UInt64(bitPattern: ValueCoding.numeric(column)), slot: slot, offset: offset)
                    }
                case .double(let slot, let position, let offset):
                    let column = statement.column(position)
                    if column.isNull { continue }
                    numbers.set(column.double.bitPattern, slot: slot, offset: offset)
                case .attribute(let slot, let position, let attribute):
                    let column = statement.column(position)
                    if column.isNull { continue }
                    values[slot] = ValueCoding.decodeStored(column, attribute, store: store)
                case .toOne(let slot, let position, let entityPosition, let relationship):
                    let key = statement.column(position)
                    guard !key.isNull else { continue }
                    var destination = relationship.destinationEntity
                    if let entityPosition {
                        let number = statement.column(entityPosition)
                        if !number.isNull, let exact = schema.byNumber[Int(number.int64)] { destination = exact.entity }
                    }
                    if let destination {
                        values[slot] = store.objectID(for: destination, primaryKey: key.int64)
                    }
                case .composite(let slot, let elements):
                    var dictionary: [String: Any]?
                    for (path, position, attribute) in elements {
                        let column = statement.column(position)
                        if column.isNull { continue }
                        let value = ValueCoding.decode(column, attribute, store: store)
                        dictionary = CompositeValue.setting(value, at: path[...], in: dictionary ?? [:])
                    }
                    if let dictionary { values[slot] = dictionary }
                }
            }
            return StoreRow(objectID: id, version: statement.int64(2), values: values)
        }
    }

    /// The rows `sql` selects from `table` with its read plan's column list.
    private func readRows(_ connection: SQLiteConnection, _ sql: String, _ arguments: [SQLValue],
                          _ table: RootTable, _ schema: StoreSchema,
                          needsValues: ((NSManagedObjectID) -> Bool)? = nil) throws -> [StoreRow] {
        var reader = RowReader(self, table, readPlan(table).index, schema)
        reader.needsValues = needsValues
        return try wrap { try connection.queryCompacting(sql, arguments) { reader.read($0) } }
    }

    public override func executeFetch(_ plan: StoreFetchPlan) throws -> [StoreRow] {
        let (connection, schema) = try ready()
        let mapping = try self.mapping(plan.entity)
        let read = readPlan(mapping.table)
        let query = try PredicateSQL(schema: schema, store: self).select(read.list, plan: plan, mapping: mapping)
        return try readRows(connection, query.sql, query.arguments, mapping.table, schema, needsValues: plan.needsValues)
    }

    public override func executeFetchObjectIDs(_ plan: StoreFetchPlan) throws -> [NSManagedObjectID] {
        let (connection, schema) = try ready()
        let mapping = try self.mapping(plan.entity)
        let numbers = mapping.numbers(includingSubentities: plan.includesSubentities)
        if numbers.count == 1, let only = schema.byNumber[numbers[0]] {
            // Every row is of one entity (the WHERE clause tests Z_ENT, or the table holds no other): its
            // number is not read, as in Core Data's `SELECT 0, t0.Z_PK`, so SQLite decodes no record.
            let query = try PredicateSQL(schema: schema, store: self).select("t0.Z_PK", plan: plan, mapping: mapping)
            let ids = objectIDMaker(for: only.entity)
            return try wrap {
                try connection.query(query.sql, query.arguments) { ids.objectID(primaryKey: $0.int64(0)) }
            }
        }
        let query = try PredicateSQL(schema: schema, store: self).select("t0.Z_PK, t0.Z_ENT", plan: plan, mapping: mapping)
        // The entity's ID maker is looked up when Z_ENT changes from one row to the next, not per row.
        var last: (number: Int64, ids: ObjectIDMaker?) = (-1, nil)
        return try wrap {
            try connection.queryCompacting(query.sql, query.arguments) { statement -> NSManagedObjectID? in
                let number = statement.int64(1)
                if number != last.number {
                    last = (number, schema.byNumber[Int(number)].map { self.objectIDMaker(for: $0.entity) })
                }
                return last.ids?.objectID(primaryKey: statement.int64(0))
            }
        }
    }

    public override func executeDictionaryFetch(_ request: StoreDictionaryRequest) throws -> StoreDictionaryRows? {
        let (connection, schema) = try ready()
        let mapping = try self.mapping(request.plan.entity)
        return try wrap {
            let (query, columns, entityColumns) = try DictionarySQL.query(request, mapping: mapping, schema: schema, store: self)
            let rows = try connection.query(query.sql, query.arguments) { DictionarySQL.read($0, columns, entityColumns, schema: schema, store: self) }
            return StoreDictionaryRows(keys: columns.map(\.name), rows: rows)
        }
    }

    public override func countRows(_ plan: StoreFetchPlan) throws -> Int {
        let (connection, schema) = try ready()
        let mapping = try self.mapping(plan.entity)
        let query = try PredicateSQL(schema: schema, store: self).count(plan: plan, mapping: mapping)
        return try wrap { try connection.query(query.sql, query.arguments) { Int($0.int64(0)) }.first ?? 0 }
    }

    public override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        try rows(for: [objectID]).first
    }

    private struct RowsQueryKey: Hashable {
        let table: ObjectIdentifier
        let keyCount: Int
    }
    /// The SQL of reading rows by key, by table and number of keys: a fault firing alone, or its batch,
    /// would otherwise build the same string each time. Holds the table, so that its address is not
    /// reused while cached. Used under the coordinator's lock, as ``readPlans`` is.
    private var rowsQueries: [RowsQueryKey: (table: RootTable, sql: String)] = [:]

    /// The rows of `objectIDs` that exist, in one query per table (chunks of 500 keys).
    public override func rows(for objectIDs: [NSManagedObjectID]) throws -> [StoreRow] {
        let (connection, schema) = try ready()
        var byTable: [ObjectIdentifier: (RootTable, [Int64])] = [:]
        // IDs come in runs of one entity: its mapping is looked up (by name) once per run.
        var keys = PrimaryKeyReader()
        var last: (entity: NSEntityDescription, mapping: EntityMapping)?
        for id in objectIDs {
            guard let pk = keys.primaryKey(of: id, in: self) else { continue }
            let mapping: EntityMapping
            if let last, last.entity === id.entity {
                mapping = last.mapping
            } else {
                guard let found = schema.mapping(for: id.entity) else { continue }
                mapping = found
                last = (id.entity, found)
            }
            byTable[ObjectIdentifier(mapping.table), default: (mapping.table, [])].1.append(pk)
        }
        var rows: [StoreRow] = []
        for (table, keys) in byTable.values {
            let read = readPlan(table)
            for chunk in stride(from: 0, to: keys.count, by: 500).map({ Array(keys[$0..<min($0 + 500, keys.count)]) }) {
                let key = RowsQueryKey(table: ObjectIdentifier(table), keyCount: chunk.count)
                let sql: String
                if let cached = rowsQueries[key]?.sql {
                    sql = cached
                } else {
                    sql = "SELECT \(read.list) FROM \(table.name) t0 WHERE t0.Z_PK \(placeholders(chunk.count))"
                    if rowsQueries.count < Self.cachedQueryLimit { rowsQueries[key] = (table, sql) }
                }
                rows += try readRows(connection, sql, chunk.map { .integer($0) }, table, schema)
            }
        }
        return rows
    }

    public override func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID) throws -> [NSManagedObjectID] {
        try objectIDs(forRelationship: relationship, of: [objectID])[objectID] ?? []
    }

    /// The destinations of a to-many relationship for several objects, in one query per 500 of them.
    /// Collected by the owner's primary key, and each owner's ID hashed once at the end: prefetching a
    /// relationship of thousands of objects otherwise hashed every owner's ID for every destination row.
    public override func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectIDs: [NSManagedObjectID]) throws -> [NSManagedObjectID: [NSManagedObjectID]] {
        let (connection, schema) = try ready()
        guard let first = objectIDs.first else { return [:] }
        let mapping = try self.mapping(first.entity)
        guard let slot = mapping.layout.slot(named: relationship.name) else { return [:] }
        var byKey: [Int64: NSManagedObjectID] = [:]
        var keys = PrimaryKeyReader()
        for id in objectIDs { if let pk = keys.primaryKey(of: id, in: self) { byKey[pk] = id } }
        guard !byKey.isEmpty else { return [:] }
        var loaded: [Int64: [NSManagedObjectID]] = [:]
        // Chunks of 500 keys: SQLite limits the variables of one statement.
        let allKeys = Array(byKey.keys)
        for start in stride(from: 0, to: allKeys.count, by: 500) {
            let keys = Array(allKeys[start..<min(start + 500, allKeys.count)])
            try loadRelationship(mapping, slot, keys, schema, connection, into: &loaded)
        }
        var result: [NSManagedObjectID: [NSManagedObjectID]] = [:]
        result.reserveCapacity(byKey.count)
        for (pk, id) in byKey { result[id] = loaded[pk] ?? [] }
        return result
    }

    /// `= ?` for one key, `IN (?, …)` for several: the placeholders of a chunk of keys. Made only when a
    /// query's SQL is (the queries that use it are cached whole).
    private func placeholders(_ count: Int) -> String {
        count == 1 ? "= ?" : "IN (" + Array(repeating: "?", count: count).joined(separator: ",") + ")"
    }
    /// How many strings each cache of SQL keeps: the counts of keys vary with batch, fetch and prefetch
    /// sizes, and a long-running process would otherwise keep one string per count ever used.
    private static let cachedQueryLimit = 128

    private struct RelationshipQueryKey: Hashable {
        let mapping: ObjectIdentifier
        let slot: Int
        let keyCount: Int
    }
    /// The SQL of loading a to-many, by entity mapping, slot and number of owners: firing a to-many fault
    /// would otherwise build the same string again each time. Holds the mapping, so that its address is
    /// not reused by another while cached. Used under the coordinator's lock, as ``readPlans`` is.
    private var relationshipQueries: [RelationshipQueryKey: (mapping: EntityMapping, sql: String)] = [:]

    private func loadRelationship(_ mapping: EntityMapping, _ slot: Int, _ keys: [Int64],
                                  _ schema: StoreSchema, _ connection: SQLiteConnection,
                                  into loaded: inout [Int64: [NSManagedObjectID]]) throws {
        let key = RelationshipQueryKey(mapping: ObjectIdentifier(mapping), slot: slot, keyCount: keys.count)
        let sql: String
        if let cached = relationshipQueries[key]?.sql {
            sql = cached
        } else if let made = relationshipQuery(mapping, slot, keys.count, schema) {
            sql = made
            if relationshipQueries.count < Self.cachedQueryLimit { relationshipQueries[key] = (mapping, made) }
        } else {
            return
        }
        // The entity's ID maker is looked up when Z_ENT changes from one row to the next, not per row.
        var last: (number: Int64, ids: ObjectIDMaker?) = (-1, nil)
        try wrap {
            _ = try connection.query(sql, keys.map { .integer($0) }) { statement -> Void in
                let number = statement.int64(2)
                if number != last.number {
                    last = (number, schema.byNumber[Int(number)].map { self.objectIDMaker(for: $0.entity) })
                }
                guard let ids = last.ids else { return }
                loaded[statement.int64(0), default: []].append(ids.objectID(primaryKey: statement.int64(1)))
            }
        }
    }

    /// The SQL that reads the destinations of `slot` for `keyCount` owners: owner key, destination key and
    /// entity number, in the relationship's order; nil for a slot that is not a to-many.
    private func relationshipQuery(_ mapping: EntityMapping, _ slot: Int, _ keyCount: Int, _ schema: StoreSchema) -> String? {
        let placeholders = placeholders(keyCount)
        switch mapping.storage[slot] {
        case .toManyByInverse(let relationship, let inverseColumn, let orderColumn):
            guard let destination = relationship.destinationEntity.flatMap(schema.mapping(for:)) else { return nil }
            let order = orderColumn.map { "t0.\($0), t0.Z_PK" } ?? "t0.Z_PK"
            return "SELECT t0.\(inverseColumn), t0.Z_PK, t0.Z_ENT FROM \(destination.table.name) t0 WHERE t0.\(inverseColumn) \(placeholders) AND t0.Z_ENT IN (\(destination.numbersWithSubentities.map(String.init).joined(separator: ","))) ORDER BY \(order)"
        case .toManyByJoin(let relationship, let table, let forward):
            guard let destination = relationship.destinationEntity.flatMap(schema.mapping(for:)) else { return nil }
            let mine = forward ? table.sourceColumn : table.destinationColumn
            let theirs = forward ? table.destinationColumn : table.sourceColumn
            let orderColumn = forward ? table.sourceOrderColumn : table.destinationOrderColumn
            let order = (relationship.isOrdered ? orderColumn.map { "j.\($0), " } ?? "" : "") + "d.Z_PK"
            return "SELECT j.\(mine), d.Z_PK, d.Z_ENT FROM \(table.name) j JOIN \(destination.table.name) d ON d.Z_PK = j.\(theirs) WHERE j.\(mine) \(placeholders) ORDER BY \(order)"
        default:
            return nil
        }
    }

    public override func newObjectIDs(for entity: NSEntityDescription, count: Int) throws -> [NSManagedObjectID] {
        let (connection, schema) = try ready()
        if isReadOnly { throw StoreError.invalidRequest("The store is read-only.") }
        let mapping = try self.mapping(entity)
        guard let root = schema.mapping(for: mapping.table.entity) else { return [] }
        let first: Int64 = try wrap(writing: true) {
            // Nothing to undo if it throws (the write is last): inside a save's transaction, no savepoint.
            try connection.transaction(savepoint: false) {
                let current = try connection.query("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(root.number))]) { $0.int64(0) }.first
                // Never below the table's largest key: a store written by other code may not keep Z_MAX.
                // Checked again only after a commit this connection's save rounds did not make.
                // Never below a key objects hold from a round whose Z_MAX could not be kept in the file.
                var start = max(current ?? 0, heldKeyFloor[root.number] ?? 0)
                if !connection.keyMaximumIsChecked(root: root.number) {
                    let largest = try connection.query("SELECT MAX(Z_PK) FROM \(mapping.table.name)") { $0.int64(0) }.first ?? 0
                    start = max(start, largest)
                    connection.noteKeyMaximumChecked(root: root.number)
                }
                // A key maximum at Int64's end (a file written by other code) cannot make new keys.
                let (last, overflow) = start.addingReportingOverflow(Int64(count))
                if overflow {
                    throw StoreError.invalidStore("The table \(mapping.table.name) of \(connection.path) has no primary keys left: its largest key is \(start).")
                }
                try Self.writeKeyMaximum(last, of: root, replacing: current, connection)
                roundKeys?[root.number] = (root, last)
                return start + 1
            }
        }
        let ids = objectIDMaker(for: entity)
        return (0..<Int64(count)).map { ids.objectID(primaryKey: first + $0) }
    }

    // MARK: Saving

    /// The open connection's SQLite handle, for tests that need SQLite's own hooks (nil when not open).
    package var sqliteHandleForTesting: OpaquePointer? { connection?.handle }

    /// The last key handed out per root entity in the running save round (nil outside one).
    private var roundKeys: [Int: (root: EntityMapping, last: Int64)]?
    /// Per root entity, the last key handed out in a lost round whose `Z_MAX` could not be raised again:
    /// objects hold keys up to it that neither `Z_MAX` nor the table shows, so no key at or below it is
    /// handed out again by this store.
    private var heldKeyFloor: [Int: Int64] = [:]

    /// One transaction for a save's round: taking primary keys, checking versions and writing commit
    /// together, as Core Data's do, and no other connection writes between the check and the write. It
    /// begins at the round's first statement for this store, so a store the save does not touch is not
    /// locked.
    public override func performSaveTransaction<T>(_ body: () throws -> T) throws -> T {
        guard !isReadOnly, let (connection, _) = try? ready() else { return try body() }
        let metadataGeneration = writtenMetadataGeneration
        roundKeys = [:]
        defer { roundKeys = nil }
        var lost = false
        do {
            let result = try wrap(writing: true) { try connection.saveTransaction(body, ended: { lost = $0 == .lost }) }
            removeUnreferencedExternalFiles()
            return result
        } catch {
            // The round's writes did not all stay: the files may still be referred to.
            externalFilesToRemove = []
            // A lost transaction loses the metadata the save wrote too: the next save writes it again.
            writtenMetadataGeneration = metadataGeneration
            if lost, let keys = roundKeys, !keys.isEmpty {
                // The objects keep the permanent IDs they were given: their keys stay taken in a
                // transaction of their own. If that fails too, a later insert of the same key fails on
                // Z_PK's uniqueness rather than overwriting a row.
                do {
                    try connection.transaction {
                        for (root, last) in keys.values {
                            let current = try connection.query("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(root.number))]) { $0.int64(0) }.first
                            if let current, current >= last { continue }
                            try Self.writeKeyMaximum(last, of: root, replacing: current, connection)
                        }
                    }
                } catch {
                    // Objects now hold keys above Z_MAX: from here on every taking of keys reads MAX(Z_PK)
                    // (another writer's rows) and starts above the keys those objects hold.
                    connection.keyChecksDisabled = true
                    for (root, last) in keys.values { heldKeyFloor[root.number] = max(heldKeyFloor[root.number] ?? 0, last) }
                }
            }
            throw error
        }
    }

    public override func beginSaveRound() throws {
        guard !isReadOnly, let (connection, _) = try? ready(), connection.isInSaveRound else { return }
        try wrap(writing: true) { try connection.beginSaveRoundIfNeeded() }
    }

    /// Sets `Z_MAX` of `root` to `value`, adding its `Z_PRIMARYKEY` row where there was none (`current`).
    private static func writeKeyMaximum(_ value: Int64, of root: EntityMapping, replacing current: Int64?, _ connection: SQLiteConnection) throws {
        if current == nil {
            try connection.run("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, ?)",
                               [.integer(Int64(root.number)), .text(root.entity.name ?? ""), .integer(value)])
        } else {
            try connection.run("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", [.integer(value), .integer(Int64(root.number))])
        }
    }

    public override func checkSave(_ request: StoreSaveRequest) throws {
        if isReadOnly {
            throw StoreError.invalidRequest("The store \(url?.lastPathComponent ?? "") was opened read-only.")
        }
        let (connection, _) = try ready()
        // Inside a save round, the versions are read in the transaction that writes.
        try wrap(writing: true) { try connection.beginSaveRoundIfNeeded() }
        let constrained = request.hasUniquenessConstraints
        // The only store of the save finds version conflicts in its writes (`WHERE Z_OPT = ?`, no row
        // changed) and undoes its writes, with the same conflicts as this check reports, as
        // Core Data's SQL does. Reading every version first is needed when another store's writes could
        // be done already, and to report version conflicts before uniqueness ones.
        guard !request.isOnlyStoreOfSave || constrained else { return }
        var expected: [NSManagedObjectID: Int64] = [:]
        for (row, version) in request.updated { expected[row.objectID] = version }
        for (id, version) in request.deleted { expected[id] = version }
        if !expected.isEmpty {
            let versions = try storedVersions(Array(expected.keys), connection)
            var conflicts: [(objectID: NSManagedObjectID, expectedVersion: Int64, stored: StoreRow?)] = []
            for (id, version) in expected where versions[id] != version {
                conflicts.append((id, version, nil))
            }
            if !conflicts.isEmpty { throw StoreError.conflicts(try withStoredRows(conflicts)) }
        }
        guard constrained else { return }
        let violations = try request.uniquenessConflicts(storedRowsMatching: storedRows(of:matching:values:))
        if !violations.isEmpty { throw StoreError.constraintConflicts(violations) }
    }

    /// Stored rows of `entity` and its subentities whose properties `names` equal `values`: one indexed
    /// query (Core Data creates a UNIQUE index per uniqueness constraint).
    private func storedRows(of entity: NSEntityDescription, matching names: [String], values: [Any]) throws -> [StoreRow] {
        let (connection, schema) = try ready()
        let mapping = try self.mapping(entity)
        var terms: [String] = []
        var arguments: [SQLValue] = []
        for (name, value) in zip(names, values) {
            if let element = schema.element(named: name, in: mapping) {
                terms.append("t0.\(element.column) = ?")
                arguments.append(try wrap { try ValueCoding.encode(value, element.attribute, marksExternalStorage: !legacyLayout) })
                continue
            }
            guard let slot = mapping.layout.slot(named: name) else { return [] }
            switch mapping.storage[slot] {
            case .composite(let elements):
                // The whole composite: every element alike, a missing one NULL.
                for element in elements {
                    terms.append("t0.\(element.column) IS ?")
                    let part = CompositeValue.value(at: element.path[...], in: value as? [String: Any])
                    arguments.append(try wrap { try ValueCoding.encode(part, element.attribute, marksExternalStorage: !legacyLayout) })
                }
            case .attribute(let column, let attribute):
                terms.append("t0.\(column) = ?")
                arguments.append(try wrap { try ValueCoding.encode(value, attribute, marksExternalStorage: !legacyLayout) })
            case .toOne(let column, _, _):
                guard let id = value as? NSManagedObjectID, let pk = primaryKey(of: id) else { return [] }
                terms.append("t0.\(column) = ?")
                arguments.append(.integer(pk))
            default:
                return []
            }
        }
        let read = readPlan(mapping.table)
        let sql = "SELECT \(read.list) FROM \(mapping.table.name) t0 WHERE t0.Z_ENT IN (\(mapping.numbersWithSubentities.map(String.init).joined(separator: ", "))) AND \(terms.joined(separator: " AND ")) ORDER BY t0.Z_PK"
        return try readRows(connection, sql, arguments, mapping.table, schema)
    }

    private func storedVersions(_ ids: [NSManagedObjectID], _ connection: SQLiteConnection) throws -> [NSManagedObjectID: Int64] {
        let schema = try ready().1
        var byTable: [String: [Int64: NSManagedObjectID]] = [:]
        var keys = PrimaryKeyReader()
        for id in ids {
            guard let pk = keys.primaryKey(of: id, in: self), let mapping = schema.mapping(for: id.entity) else { continue }
            byTable[mapping.table.name, default: [:]][pk] = id
        }
        var versions: [NSManagedObjectID: Int64] = [:]
        for (table, keys) in byTable {
            let all = Array(keys.keys)
            for start in stride(from: 0, to: all.count, by: 500) {
                let chunk = Array(all[start..<min(start + 500, all.count)])
                let sql = "SELECT Z_PK, Z_OPT FROM \(table) WHERE Z_PK \(placeholders(chunk.count))"
                try wrap {
                    _ = try connection.query(sql, chunk.map { .integer($0) }) { statement -> Void in
                        if let id = keys[statement.int64(0)] { versions[id] = statement.int64(1) }
                    }
                }
            }
        }
        return versions
    }

    private func withStoredRows(_ conflicts: [(objectID: NSManagedObjectID, expectedVersion: Int64, stored: StoreRow?)]) throws -> [(objectID: NSManagedObjectID, expectedVersion: Int64, stored: StoreRow?)] {
        let rows = try self.rows(for: conflicts.map(\.objectID))
        var byID: [NSManagedObjectID: StoreRow] = [:]
        for row in rows { byID[row.objectID] = row }
        return conflicts.map { ($0.objectID, $0.expectedVersion, byID[$0.objectID]) }
    }

    public override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        if isReadOnly {
            throw StoreError.invalidRequest("The store \(url?.lastPathComponent ?? "") was opened read-only.")
        }
        let (connection, schema) = try ready()
        var result: [StoreRow] = []
        result.reserveCapacity(request.updated.count)
        // Only a model with derived attributes has triggers to report.
        let collectsDerivedValues = !schema.derivedAttributesAreAbsent
        if collectsDerivedValues { derivedReports.start() }
        defer { if collectsDerivedValues { _ = derivedReports.finish() } }
        var derived: [DerivedValue] = []
        let (currentMetadata, generation) = metadataWithGeneration
        var writtenGeneration: Int?
        var unreferencedFiles: [String] = []
        // The only store of a save that only inserts undoes a failed write by rolling its whole round back
        // (the round's keys are then taken again by `performSaveTransaction`): no savepoint, two statements
        // fewer per save. Such a write fails on SQLite errors (most of which lose the transaction anyway),
        // on a value it cannot encode, or on an invalid request, all of them rare; a save with updates or
        // deletes, where a version conflict is an ordinary event, keeps its savepoint, so that its raised
        // Z_MAX commits with the round.
        let rollsBackRound = request.isOnlyStoreOfSave && connection.isInSaveRound
            && request.updated.isEmpty && request.deleted.isEmpty && !request.hasUniquenessConstraints
        do {
            try wrap(writing: true) {
                // One store of several: its writes wait for the round's end, which undoes them if
                // another store fails afterwards.
                if !request.isOnlyStoreOfSave { try connection.holdRoundWrites() }
                try connection.transaction(savepoint: !rollsBackRound) {
                    // Conflicts by position in the request, so that they are reported in its order.
                    var conflicts: [(position: Int, objectID: NSManagedObjectID, expectedVersion: Int64)] = []
                    var writer = RowWriter()
                    let deleted = request.deleted
                    let deleteOrder = keyOrder(deleted.count, &writer.keys) { deleted[$0].objectID }
                    for index in deleted.indices {
                        let position = deleteOrder?[index] ?? index
                        let (id, version) = deleted[position]
                        guard let pk = writer.keys.primaryKey(of: id, in: self), let mapping = writer.mapping(for: id.entity, in: schema) else { continue }
                        let files = try referencedFiles(of: pk, mapping, columns: mapping.externalStorageColumns, connection)
                        let statement = try connection.statement(mapping.deleteSQL)
                        try statement.bind(integer: pk, at: 1)
                        try statement.bind(integer: version, at: 2)
                        while try statement.step() {}
                        if connection.changes == 0 { conflicts.append((position, id, version)); continue }
                        writer.unreferencedFiles += files
                        try deleteJoinRows(of: pk, mapping, connection)
                    }
                    // Updates before inserts: a unique value an update frees can be taken by an insert.
                    let updated = request.updated
                    let updateOrder = keyOrder(updated.count, &writer.keys) { updated[$0].row.objectID }
                    for index in updated.indices {
                        let position = updateOrder?[index] ?? index
                        let (row, version) = updated[position]
                        let changed = position < request.updatedSlots.count ? request.updatedSlots[position] : nil
                        if try !update(row, expectedVersion: version, changedSlots: changed, connection, schema, &writer) {
                            // After every delete's, as the deletes are written first.
                            conflicts.append((deleted.count + position, row.objectID, version))
                        }
                    }
                    let inserted = request.inserted
                    let insertOrder = keyOrder(inserted.count, &writer.keys) { inserted[$0].objectID }
                    for index in inserted.indices {
                        try insert(inserted[insertOrder?[index] ?? index], connection, schema, &writer)
                    }
                    if !conflicts.isEmpty {
                        throw StoreError.conflicts(conflicts.sorted { $0.position < $1.position }.map { ($0.objectID, $0.expectedVersion, nil) })
                    }
                    // Every update was written (a conflict throws): the result is the request's rows, one
                    // version on (wrapping, as the write does at Int64's end).
                    for (row, version) in updated { result.append(StoreRow(objectID: row.objectID, version: version &+ 1, values: row.values)) }
                    for row in request.inserted { try writeToMany(row, inserted: true, connection, schema, &writer) }
                    for (row, _) in request.updated { try writeToMany(row, inserted: false, connection, schema, &writer) }
                    if collectsDerivedValues {
                        // The rows written (no trigger reports a row whose source is NULL, nor a value the
                        // object set, which is not written) and those the triggers changed.
                        let reported = derivedReports.finish().compactMap { row in
                            schema.byNumber[Int(row.entity)].map { objectIDMaker(for: $0.entity).objectID(primaryKey: row.primaryKey) }
                        }
                        derived = try derivedValues(of: request.inserted.map(\.objectID) + request.updated.map(\.row.objectID) + reported, connection, schema)
                    }
                    if writtenMetadataGeneration != generation {
                        try Self.writeMetadata(currentMetadata, connection)
                        writtenGeneration = generation
                    }
                    unreferencedFiles = writer.unreferencedFiles
                }
            }
            if let writtenGeneration { writtenMetadataGeneration = writtenGeneration }
            externalFilesToRemove += unreferencedFiles
            // Outside a save round the transaction has committed; in one, the round's end decides.
            if !connection.isInSaveRound { removeUnreferencedExternalFiles() }
        } catch {
            if rollsBackRound { connection.abandonSaveRound(error) }
            // A row changed since it was read (found by the write when `checkSave` left it to the write):
            // the writes are undone; the conflicts go to the merge policy with the stored rows.
            if case StoreError.conflicts(let conflicts) = error { throw StoreError.conflicts(try withStoredRows(conflicts)) }
            throw error
        }
        return StoreSaveResult(updated: result, derivedValues: derived)
    }

    /// The derived attributes of the rows of `ids` as the store now holds them: one query per table and
    /// entity for its rows' keys (in chunks), not one per row.
    private func derivedValues(of ids: [NSManagedObjectID], _ connection: SQLiteConnection, _ schema: StoreSchema) throws -> [DerivedValue] {
        var byMapping: [ObjectIdentifier: (mapping: EntityMapping, keys: [Int64: NSManagedObjectID])] = [:]
        var keys = PrimaryKeyReader()
        for id in ids {
            guard let mapping = schema.mapping(for: id.entity), !mapping.derivedColumns.isEmpty,
                  let pk = keys.primaryKey(of: id, in: self) else { continue }
            byMapping[ObjectIdentifier(mapping), default: (mapping, [:])].keys[pk] = id
        }
        var values: [DerivedValue] = []
        for (mapping, rows) in byMapping.values {
            let columns = mapping.derivedColumns
            let all = Array(rows.keys)
            for start in stride(from: 0, to: all.count, by: 500) {
                let chunk = all[start..<min(start + 500, all.count)]
                let sql = "SELECT Z_PK, \(columns.map(\.column).joined(separator: ", ")) FROM \(mapping.table.name) WHERE Z_PK \(placeholders(chunk.count))"
                let statement = try connection.statement(sql)
                for (index, pk) in chunk.enumerated() { try statement.bind(integer: pk, at: Int32(index + 1)) }
                while try statement.step() {
                    guard let id = rows[statement.int64(0)] else { continue }
                    for (position, derived) in columns.enumerated() {
                        values.append(DerivedValue(objectID: id, slot: derived.slot, value: ValueCoding.decodeStored(statement.column(Int32(position + 1)), derived.attribute, store: self)))
                    }
                }
            }
        }
        return values
    }

    /// What a save's loops of deletes, updates and inserts keep from row to row: the rows mostly come
    /// entity by entity, so the entity's mapping (found by hashing its name), its columns and its SQL are
    /// looked up once per run of rows, and one array of arguments serves every row.
    private struct RowWriter {
        var entity: NSEntityDescription?
        var mapping: EntityMapping?
        var columns: [EntityMapping.WrittenColumn] = []
        var insertSQL = ""
        /// The columns of the last update and its SQL (a bulk update mostly changes the same ones).
        var updateColumns: EntityMapping.ColumnSet?
        var updateSQL = ""
        var keys = PrimaryKeyReader()
        /// Files in `_EXTERNAL_DATA` that deleted rows or replaced values referred to.
        var unreferencedFiles: [String] = []

        mutating func mapping(for entity: NSEntityDescription, in schema: StoreSchema) -> EntityMapping? {
            if entity === self.entity, let mapping { return mapping }
            let mapping = schema.mapping(for: entity)
            self.entity = entity
            self.mapping = mapping
            columns = mapping?.writtenColumns ?? []
            insertSQL = mapping?.insertSQL ?? ""
            updateColumns = nil
            return mapping
        }
    }

    private func insert(_ row: StoreRow, _ connection: SQLiteConnection, _ schema: StoreSchema, _ writer: inout RowWriter) throws {
        guard let pk = writer.keys.primaryKey(of: row.objectID, in: self), let mapping = writer.mapping(for: row.objectID.entity, in: schema) else {
            throw StoreError.invalidRequest("The object \(row.objectID) does not belong to this store.")
        }
        let statement = try connection.statement(writer.insertSQL)
        try statement.bind(integer: pk, at: 1)
        try statement.bind(integer: Int64(mapping.number), at: 2)
        _ = try bindColumnValues(row, writer.columns, to: statement, from: 3)
        while try statement.step() {}
    }

    /// The positions `0..<count` grouped by entity (in the order each first appears) and, within each
    /// entity, in the primary-key order of their IDs (`id(position)`); equal or unknown keys keep their
    /// given order. Nil when the positions are in that order already. Rows written in key order find their
    /// B-tree pages where the previous write left them: out of it, a write can miss SQLite's page cache
    /// every time once the table outgrows it (an UPDATE of each of 100,000 rows in a shuffled order costs
    /// the benchmark's C twin three times as much). Grouped by entity, as each entity numbers its keys from
    /// 1: interleaving two tables' rows would lose the locality, and the writer's per-entity caches.
    private func keyOrder(_ count: Int, _ keys: inout PrimaryKeyReader, _ id: (Int) -> NSManagedObjectID) -> [Int]? {
        guard count > 1 else { return nil }
        let keyBits: UInt = 48, lastKey: UInt = (1 << 48) - 1
        var ranks: [ObjectIdentifier: UInt] = [:]
        var entity: ObjectIdentifier?
        var rank: UInt = 0
        return RadixSort.order(of: (0..<count).map { position in
            let objectID = id(position)
            let current = ObjectIdentifier(objectID.entity)
            if current != entity {
                entity = current
                if let known = ranks[current] {
                    rank = known
                } else {
                    rank = UInt(ranks.count)
                    ranks[current] = rank
                }
            }
            // A key beyond 48 bits (or negative: a file written by other code) goes after its entity's
            // others, in its given order: only locality is lost.
            guard let key = keys.primaryKey(of: objectID, in: self), key >= 0, UInt(key) < lastKey else { return rank << keyBits | lastKey }
            return rank << keyBits | UInt(key)
        })
    }

    /// Writes an updated row, only its changed columns when `changedSlots` says which (as Core Data's
    /// SQL does), all of them otherwise; false when the row's version is not `expectedVersion`.
    private func update(_ row: StoreRow, expectedVersion: Int64, changedSlots: [Int]?, _ connection: SQLiteConnection, _ schema: StoreSchema,
                        _ writer: inout RowWriter) throws -> Bool {
        guard let pk = writer.keys.primaryKey(of: row.objectID, in: self), let mapping = writer.mapping(for: row.objectID.entity, in: schema) else {
            throw StoreError.invalidRequest("The object \(row.objectID) does not belong to this store.")
        }
        var columns = EntityMapping.ColumnSet.all
        if let changedSlots, let changed = mapping.writtenColumnSet(forSlots: changedSlots) { columns = changed }
        if columns != writer.updateColumns {
            writer.updateColumns = columns
            writer.updateSQL = mapping.updateSQL(columns)
        }
        // A version at Int64's end (a file written by other code) wraps to Int64's start, as the saved
        // object's version does in memory: SQLite's `Z_OPT + 1` would turn it into a REAL that no later
        // `WHERE Z_OPT = ?` matches, and the row could never be saved again.
        let sql = expectedVersion == .max
            ? writer.updateSQL.replacingOccurrences(of: "SET Z_OPT = Z_OPT + 1", with: "SET Z_OPT = -9223372036854775807 - 1")
            : writer.updateSQL
        // The files the externally storable columns about to be written refer to: written, they hold the
        // new value (in the column), and nothing refers to the old files any more.
        let files = mapping.externalStorageColumns.isEmpty ? []
            : try referencedFiles(of: pk, mapping, columns: mapping.externalStorageColumns.filter(columns.contains), connection)
        let statement = try connection.statement(sql)
        let next = try bindColumnValues(row, writer.columns, columns, to: statement, from: 1)
        try statement.bind(integer: pk, at: next)
        try statement.bind(integer: expectedVersion, at: next + 1)
        while try statement.step() {}
        guard connection.changes == 1 else { return false }
        writer.unreferencedFiles += files
        return true
    }

    // MARK: Externally stored files

    /// Files in `_EXTERNAL_DATA` that committed saves no longer refer to, removed once their save is known
    /// to be in the file (a save rolled back still refers to them).
    private var externalFilesToRemove: [String] = []

    /// The names of the files the row `pk`'s `columns` (positions in the mapping's written columns) refer
    /// to. A file made before store format 2 has no markers: nothing there refers to a file.
    private func referencedFiles(of pk: Int64, _ mapping: EntityMapping, columns: [Int], _ connection: SQLiteConnection) throws -> [String] {
        guard !columns.isEmpty, !legacyLayout else { return [] }
        let names = columns.map { mapping.writtenColumns[$0].column }
        let sql = "SELECT \(names.joined(separator: ", ")) FROM \(mapping.table.name) WHERE Z_PK = ?"
        return try connection.query(sql, [.integer(pk)]) { row in
            (0..<names.count).compactMap { ExternalStorage.fileName(of: row.value(Int32($0))) }
        }.first ?? []
    }

    private func removeUnreferencedExternalFiles() {
        guard !externalFilesToRemove.isEmpty else { return }
        defer { externalFilesToRemove = [] }
        guard let folder = externalDataFolder else { return }
        for name in externalFilesToRemove { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
    }

    /// Binds the values of a row's written columns (``EntityMapping/writtenColumns``, those in `set`), in
    /// their order, to `statement`'s parameters from `first`; returns the next parameter's index. Bound
    /// one by one rather than gathered in a `[SQLValue]` first: making, switching over and destroying
    /// that array's enums cost as many instructions per inserted row as SQLite's own step.
    private func bindColumnValues(_ row: StoreRow, _ columns: [EntityMapping.WrittenColumn], _ set: EntityMapping.ColumnSet = .all,
                                  to statement: Statement, from first: Int32) throws -> Int32 {
        var index = first
        let rowValues = row.values
        // Fields read in place: a copy of a column (two strings, two references) was about twenty
        // retains and releases per value.
        try columns.withUnsafeBufferPointer { columns in
            for position in columns.indices where set.contains(position) {
                defer { index += 1 }
                let slot = columns[position].slot
                // A number held in its word is encoded from its bits: no existential made.
                switch columns[position].numberColumn {
                case .integer:
                    let words = rowValues.words(at: slot)
                    if words.type == SlotValues.int64Type {
                        try statement.bind(integer: Int64(bitPattern: words.value), at: index)
                        continue
                    }
                case .double:
                    let words = rowValues.words(at: slot)
                    if words.type == SlotValues.doubleType {
                        try statement.bind(real: Double(bitPattern: words.value), at: index)
                        continue
                    }
                case .none:
                    break
                }
                if let path = columns[position].elementPath, let attribute = columns[position].attribute {
                    let value = CompositeValue.value(at: path[...], in: rowValues.stored(slot) as? [String: Any])
                    try statement.bind(ValueCoding.encode(value, attribute, marksExternalStorage: !legacyLayout), at: index)
                    continue
                }
                if let attribute = columns[position].attribute {
                    try statement.bind(ValueCoding.encode(rowValues.stored(slot), attribute, marksExternalStorage: !legacyLayout), at: index)
                    continue
                }
                let destination = rowValues.stored(slot) as? NSManagedObjectID
                try statement.bind(destination.flatMap { primaryKey(of: $0) }.map { .integer($0) } ?? .null, at: index)
                if columns[position].entityColumn != nil {
                    index += 1
                    let number = destination.flatMap { try? self.mapping($0.entity).number }
                    try statement.bind(number.map { .integer(Int64($0)) } ?? .null, at: index)
                }
            }
        }
        return index
    }

    /// Writes order keys of ordered one-to-many relationships and the join-table rows of many-to-many
    /// ones, for the to-many slots the row holds (nil slots were not loaded and keep what is stored).
    private func writeToMany(_ row: StoreRow, inserted: Bool, _ connection: SQLiteConnection, _ schema: StoreSchema,
                             _ writer: inout RowWriter) throws {
        // An entity without relationships (most rows of a bulk save) looks up no key. Its mapping is the
        // writer's, kept from row to row: the schema's lookup hashes the entity's name.
        guard let mapping = writer.mapping(for: row.objectID.entity, in: schema), !mapping.layout.relationships.isEmpty,
              let pk = primaryKey(of: row.objectID) else { return }
        for (slot, _) in mapping.layout.relationships {
            guard let destinations = row.values[slot] as? [NSManagedObjectID] else { continue }
            switch mapping.storage[slot] {
            case .toManyByInverse(let relationship, _, let orderColumn):
                guard let orderColumn, let destination = relationship.destinationEntity.flatMap(schema.mapping(for:)) else { continue }
                for (position, id) in destinations.enumerated() {
                    guard let key = primaryKey(of: id) else { continue }
                    try connection.run("UPDATE \(destination.table.name) SET \(orderColumn) = ? WHERE Z_PK = ?", [.integer(Int64(position + 1) * 1024), .integer(key)])
                }
            case .toManyByJoin(let relationship, let table, let forward):
                let mine = forward ? table.sourceColumn : table.destinationColumn
                let theirs = forward ? table.destinationColumn : table.sourceColumn
                let orderColumn = relationship.isOrdered ? (forward ? table.sourceOrderColumn : table.destinationOrderColumn) : nil
                let wanted = destinations.compactMap { primaryKey(of: $0) }
                var stored: Set<Int64> = []
                if !inserted {
                    stored = Set(try connection.query("SELECT \(theirs) FROM \(table.name) WHERE \(mine) = ?", [.integer(pk)]) { $0.int64(0) })
                }
                let wantedSet = Set(wanted)
                for key in stored.subtracting(wantedSet) {
                    try connection.run("DELETE FROM \(table.name) WHERE \(mine) = ? AND \(theirs) = ?", [.integer(pk), .integer(key)])
                }
                for (position, key) in wanted.enumerated() {
                    // The conflict target named (the join table's primary key): SQLite before 3.35
                    // refuses an upsert's DO UPDATE without one.
                    if let orderColumn {
                        try connection.run("INSERT INTO \(table.name) (\(mine), \(theirs), \(orderColumn)) VALUES (?, ?, ?) ON CONFLICT (\(mine), \(theirs)) DO UPDATE SET \(orderColumn) = excluded.\(orderColumn)",
                                           [.integer(pk), .integer(key), .integer(Int64(position + 1) * 1024)])
                    } else if !stored.contains(key) {
                        try connection.run("INSERT OR IGNORE INTO \(table.name) (\(mine), \(theirs)) VALUES (?, ?)", [.integer(pk), .integer(key)])
                    }
                }
            default:
                break
            }
        }
    }

    /// Removes a deleted object's rows from the join tables of its entity's relationships.
    private func deleteJoinRows(of pk: Int64, _ mapping: EntityMapping, _ connection: SQLiteConnection) throws {
        for (table, forward) in mapping.joinTables {
            try connection.run("DELETE FROM \(table.name) WHERE \(forward ? table.sourceColumn : table.destinationColumn) = ?", [.integer(pk)])
        }
    }

    // MARK: Errors

    /// Runs `body`, turning SQLite errors into Core Data errors: a failed write is a save error (134030),
    /// a failed read a Core Data error (134060), unless the cause has a code of its own.
    private func wrap<T>(writing: Bool = false, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as SQLiteError {
            throw Self.error(failure, writing: writing)
        } catch let failure as SQLiteStoreError {
            switch failure {
            case .unsupportedPredicate(let text):
                // As `PredicateSQL` reports it for fetches and counts: Apple raises this exception.
                throw Self.error(NSCoreDataErrorCode, text, underlying: failure, extra: ["NSExceptionName": "NSInvalidArgumentException"])
            case .unencodable(let text): throw Self.error(NSValidationErrorCode, text, underlying: failure)
            }
        }
    }
}
