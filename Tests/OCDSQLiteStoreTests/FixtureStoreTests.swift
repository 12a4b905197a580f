import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
import OCDTestSupport
import Testing
import class OCDPredicate.NSPredicate

/// The SQLite stores Apple's Core Data wrote (../shared/fixtures/stores) open with their model, every
/// object reads back as raw SQL shows it, and a save keeps the file a valid Core Data store.
@Suite("Fixture stores: Apple-written SQLite files")
struct FixtureStoreTests {
    static let withModel = Fixtures.storesWithModels

    /// Stores whose model is not at hand (legacy binary model, model built in code, model version
    /// missing, merged model), with a model folder to try (no version of which matches) or nil.
    static let withoutModel: [(store: String, models: String?, entities: Int)] = [
        ("RestKit__RestKit__RKSeedDatabase.sqlite", nil, 2),
        ("alemar11__CoreDataPlus__SampleModel2_V1.sqlite", nil, 6),
        ("alemar11__CoreDataPlus__SampleModel2_V2.sqlite", nil, 6),
        ("duckduckgo__iOS__AppRatingPrompt_v1__Database.sqlite", "duckduckgo__iOS__AppRatingPrompt", 5),
        ("wireapp__wire-ios-data-model__store1-24.sqlite", "wireapp__wire-ios-data-model__zmessaging", 10),
    ]

    // MARK: Reading

    @Test("Every object reads as raw SQL shows it", arguments: withModel.map(\.store))
    func everyObjectMatchesRawSQL(_ storeName: String) throws {
        guard let fixture = try FixtureCopy(storeName) else { return }
        let model = try #require(try fixture.matchingModel(Self.withModel.first { $0.store == storeName }!.models), "\(storeName): no model version matches")
        // The digest and checksum Apple wrote (framework ≥ 1044 and ≥ 1338) are the model's.
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: fixture.url)
        if let digest = metadata["NSStoreModelVersionHashesDigest"] as? String { #expect(digest == model.versionHashesDigest) }
        if let checksum = metadata["NSStoreModelVersionChecksumKey"] as? String { #expect(checksum == model.versionChecksum) }
        let stack = try SQLiteStack(model: model, url: fixture.url)
        let numbers = try fixture.entityNumbers(model)
        var objects = 0
        try withExtendedLifetime(stack.context) {
            for entity in model.entities.sorted(by: { $0.name! < $1.name! }) {
                let name = entity.name!
                let number = try #require(numbers[name], "\(storeName): \(name) has no Z_PRIMARYKEY row")
                let table = "Z" + RawStore.root(of: entity).name!.uppercased()
                let request = NSFetchRequest<NSManagedObject>(entityName: name)
                request.includesSubentities = false
                let fetched = try stack.context.fetch(request)
                let rows = try RawSQL.rows(fixture.url, "SELECT * FROM \(table) WHERE Z_ENT = \(number)")
                #expect(fetched.count == rows.count, "\(storeName): \(name) has \(rows.count) rows, fetched \(fetched.count)")
                let byKey = Dictionary(uniqueKeysWithValues: rows.map { ($0["Z_PK"] as! Int64, $0) })
                for object in fetched {
                    let pk = RawStore.primaryKey(object.objectID)
                    let row = try #require(byKey[pk], "\(storeName): \(name) p\(pk) has no row")
                    try fixture.compare(object, row, entity: entity, numbers: numbers, context: "\(storeName) \(name)/p\(pk)")
                    objects += 1
                }
            }
        }
        print("\(storeName): \(objects) objects compared with raw SQL")
    }

    // MARK: Writing

    @Test("A change and an insert are saved the way Core Data saves them", arguments: withModel.map(\.store))
    func saveUpdatesTheFileAsCoreDataWould(_ storeName: String) throws {
        guard let fixture = try FixtureCopy(storeName) else { return }
        let model = try #require(try fixture.matchingModel(Self.withModel.first { $0.store == storeName }!.models))
        let numbers = try fixture.entityNumbers(model)
        let metadataBefore = try fixture.rawMetadata()
        let journalBefore = try RawSQL.rows(fixture.url, "PRAGMA journal_mode").first?["journal_mode"] as? String
        let maxBefore = Dictionary(uniqueKeysWithValues: try RawSQL.rows(fixture.url, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY").map { ($0["Z_NAME"] as! String, $0["Z_MAX"] as! Int64) })

        var largestBefore: [String: Int64] = [:]
        for entity in model.entities where entity.superentity == nil {
            largestBefore[entity.name!] = try RawSQL.rows(fixture.url, "SELECT MAX(Z_PK) AS m FROM Z\(entity.name!.uppercased())").first?["m"] as? Int64 ?? 0
        }
        // The change: a string (else integer) attribute of the first object that has one.
        var changed: (entity: NSEntityDescription, pk: Int64, key: String, value: Any, opt: Int64)?
        var inserted: (entity: NSEntityDescription, pk: Int64)?
        do {
            let stack = try SQLiteStack(model: model, url: fixture.url)
            try withExtendedLifetime(stack.context) {
                for entity in model.entities.sorted(by: { $0.name! < $1.name! }) where !entity.isAbstract && changed == nil {
                    let attribute = entity.attributesByName.values.sorted { $0.name < $1.name }.first { !$0.isTransient && $0.attributeType == .stringAttributeType && !RawStore.isUnique($0, in: entity) }
                        ?? entity.attributesByName.values.sorted { $0.name < $1.name }.first { !$0.isTransient && $0.attributeType == .integer64AttributeType && !RawStore.isUnique($0, in: entity) }
                    guard let attribute else { continue }
                    let request = NSFetchRequest<NSManagedObject>(entityName: entity.name!)
                    request.includesSubentities = false
                    guard let object = try stack.context.fetch(request).min(by: { RawStore.primaryKey($0.objectID) < RawStore.primaryKey($1.objectID) }) else { continue }
                    let pk = RawStore.primaryKey(object.objectID)
                    let table = "Z" + RawStore.root(of: entity).name!.uppercased()
                    let opt = try RawSQL.rows(fixture.url, "SELECT Z_OPT FROM \(table) WHERE Z_PK = \(pk)").first?["Z_OPT"] as! Int64
                    let value: Any = attribute.attributeType == .stringAttributeType ? "changed by OpenCoreData" : NSNumber(value: 424242)
                    object.setValue(value, forKey: attribute.name)
                    changed = (entity, pk, attribute.name, value, opt)
                }
                // The insert: an entity whose required values can be made up (no required relationship).
                let candidates = model.entities.filter { entity in
                    !entity.isAbstract && !entity.relationshipsByName.values.contains { !$0.isOptional && !$0.isTransient }
                }.sorted { $0.name! < $1.name! }
                let entity = try #require(candidates.first { $0 === changed?.entity } ?? candidates.first, "\(storeName): no entity to insert into")
                let object = NSEntityDescription.insertNewObject(forEntityName: entity.name!, into: stack.context)
                for attribute in entity.attributesByName.values where !attribute.isTransient && (!attribute.isOptional || RawStore.isUnique(attribute, in: entity)) {
                    if let value = RawStore.madeUpValue(attribute) { object.setValue(value, forKey: attribute.name) }
                }
                try stack.context.save()
                inserted = (entity, RawStore.primaryKey(object.objectID))
            }
        }

        // Reopened: the change and the new object are there.
        let stack = try SQLiteStack(model: model, url: fixture.url)
        try withExtendedLifetime(stack.context) {
            if let changed {
                let object = try #require(try stack.fetch(changed.entity.name!).first { RawStore.primaryKey($0.objectID) == changed.pk })
                #expect((object.value(forKey: changed.key) as? NSObject)?.isEqual(changed.value) == true, "\(storeName): \(changed.key)")
                let table = "Z" + RawStore.root(of: changed.entity).name!.uppercased()
                let opt = try RawSQL.rows(fixture.url, "SELECT Z_OPT FROM \(table) WHERE Z_PK = \(changed.pk)").first?["Z_OPT"] as? Int64
                #expect(opt == changed.opt + 1, "\(storeName): Z_OPT goes from \(changed.opt) to \(changed.opt + 1)")
            }
            let inserted = try #require(inserted)
            let root = RawStore.root(of: inserted.entity)
            let rows = try RawSQL.rows(fixture.url, "SELECT Z_ENT, Z_OPT FROM Z\(root.name!.uppercased()) WHERE Z_PK = \(inserted.pk)")
            #expect(rows.first?["Z_ENT"] as? Int64 == Int64(numbers[inserted.entity.name!]!), "\(storeName): the new row's Z_ENT")
            #expect(rows.first?["Z_OPT"] as? Int64 == 1)
            let maxAfter = try RawSQL.rows(fixture.url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(root.name!)'").first?["Z_MAX"] as? Int64
            let before = max(maxBefore[root.name!] ?? 0, largestBefore[root.name!] ?? 0)
            #expect(inserted.pk == before + 1, "\(storeName): the new key follows Z_MAX and the largest key (\(before))")
            #expect(maxAfter == inserted.pk, "\(storeName): Z_MAX of \(root.name!) is \(maxAfter ?? -1), the new key \(inserted.pk)")
            #expect(try stack.fetch(inserted.entity.name!).contains { RawStore.primaryKey($0.objectID) == inserted.pk })
        }

        // Metadata: every key that is not Core Data's own is kept with the same value.
        let metadataAfter = try fixture.rawMetadata()
        for (key, value) in metadataBefore.plist where !key.hasPrefix("NS") && !key.hasPrefix("_NS") {
            #expect((metadataAfter.plist[key] as? NSObject)?.isEqual(value) == true, "\(storeName): metadata key \(key) was not preserved")
            if let data = value as? Data { #expect(metadataAfter.plist[key] as? Data == data) }
        }
        #expect(metadataAfter.uuid == metadataBefore.uuid)
        #expect((metadataAfter.plist["NSStoreModelVersionHashes"] as? NSDictionary)?.isEqual(to: metadataBefore.plist["NSStoreModelVersionHashes"] as! [String: Any]) == true)
        // The file is still a sound SQLite database in the journal mode it had.
        #expect(try RawSQL.rows(fixture.url, "PRAGMA integrity_check").first?["integrity_check"] as? String == "ok")
        #expect(try RawSQL.rows(fixture.url, "PRAGMA journal_mode").first?["journal_mode"] as? String == journalBefore)
    }

    // MARK: Stores without their model

    @Test("Stores without their model give their metadata and refuse a wrong model", arguments: withoutModel.map(\.store))
    func storeWithoutModelOpensForInspection(_ storeName: String) throws {
        guard let fixture = try FixtureCopy(storeName) else { return }
        let entry = Self.withoutModel.first { $0.store == storeName }!
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: fixture.url)
        #expect((metadata["NSStoreModelVersionHashes"] as? [String: Data])?.count == entry.entities)
        #expect(metadata[NSStoreUUIDKey] as? String == (try fixture.rawMetadata().uuid))
        #expect(metadata[NSStoreTypeKey] as? String == NSSQLiteStoreType)

        var wrongModels: [NSManagedObjectModel] = [Self.unrelatedModel()]
        if let folder = entry.models, let models = Fixtures.models {
            for version in FixtureCopy.versionFolders(models.appendingPathComponent(folder)) {
                wrongModels.append(try NSManagedObjectModel(validatingContentsOf: version))
            }
        }
        for model in wrongModels {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            #expect {
                try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: fixture.url, options: nil)
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == 134100
                    && error.localizedDescription == "The model used to open the store is incompatible with the one used to create the store"
            }
        }
        // Nothing was written: the metadata is unchanged and the file is sound.
        #expect(try RawSQL.rows(fixture.url, "PRAGMA integrity_check").first?["integrity_check"] as? String == "ok")
    }

    /// A store made new from a fixture's model has the join tables Apple's Core Data made for it, by
    /// name and columns, so that Core Data finds its relationships in a file this project created.
    @Test("New stores name join tables and their columns as Apple's do", arguments: withModel.map(\.store))
    func newStoresMatchApplesJoinTables(_ storeName: String) throws {
        guard let fixture = try FixtureCopy(storeName) else { return }
        let model = try #require(try fixture.matchingModel(Self.withModel.first { $0.store == storeName }!.models))
        func joinTables(_ url: URL) throws -> [String: [String]] {
            let names = try RawSQL.rows(url, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')").compactMap { $0["name"] as? String }
            var tables: [String: [String]] = [:]
            for name in names {
                tables[name] = try RawSQL.rows(url, "PRAGMA table_info(\(name))").compactMap { $0["name"] as? String }.sorted()
            }
            return tables
        }
        // Core Data before framework 752 named a reflexive many-to-many's table after the earlier name
        // (store2-3, framework 641); new stores follow today's Core Data.
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: fixture.url)
        let framework = (metadata["NSPersistenceFrameworkVersion"] as? NSNumber)?.intValue ?? 0
        var apple = try joinTables(fixture.url)
        if framework < 752 {
            apple = apple.filter { name, columns in
                // Reflexive: both key columns hold keys of one entity (Z_<n>…, Z_<n>…).
                let prefixes = Set(columns.filter { !$0.hasPrefix("Z_FOK_") }.map { $0.prefix { $0 != "_" } + "_" + $0.dropFirst(2).prefix { $0.isNumber } })
                return prefixes.count > 1
            }
        }
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: model, url: folder.file("New.sqlite"))
        _ = stack.store
        let ours = try joinTables(folder.file("New.sqlite"))
        for (name, columns) in apple.sorted(by: { $0.key < $1.key }) {
            #expect(ours[name] == columns, "\(storeName): \(name) \(columns), new store: \(ours[name].map { "\($0)" } ?? "no such table")")
        }
        if framework >= 752 {
            #expect(Set(ours.keys) == Set(apple.keys), "\(storeName): only new \(Set(ours.keys).subtracting(apple.keys).sorted()), only Apple's \(Set(apple.keys).subtracting(ours.keys).sorted())")
        }
    }

    /// A store made new from a fixture's model has the indexes Apple's Core Data made for it (foreign
    /// keys, `Z_ENT`, indexed attributes, uniqueness constraints, compound and fetch indexes), with the
    /// same names and statements. Checked against files of framework 865 and later, which name indexes as
    /// today's Core Data does (older ones used `<TABLE>_Z<ATTR>_INDEX` and no collation). Two kinds of
    /// Apple's indexes are not expected: a stale one a migration left beside its renamed twin (same
    /// table and columns), and one of an attribute the matching model does not index (indexes are not
    /// in the version hashes, so the matching model can be another version than the one that made the
    /// file).
    @Test("New stores create the indexes Apple's do", arguments: withModel.map(\.store))
    func newStoresMatchApplesIndexes(_ storeName: String) throws {
        guard let fixture = try FixtureCopy(storeName) else { return }
        let model = try #require(try fixture.matchingModel(Self.withModel.first { $0.store == storeName }!.models))
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: fixture.url)
        guard ((metadata["NSPersistenceFrameworkVersion"] as? NSNumber)?.intValue ?? 0) >= 865 else { return }
        func indexes(_ url: URL) throws -> [String: String] {
            let rows = try RawSQL.rows(url, "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
            return Dictionary(uniqueKeysWithValues: rows.compactMap { row in
                (row["name"] as? String).map { ($0, (row["sql"] as? String ?? "").split(whereSeparator: \.isWhitespace).joined(separator: " ")) }
            })
        }
        /// "TABLE (COLUMN, …)" without collations and orders.
        func target(_ sql: String) -> String {
            let on = sql.components(separatedBy: " ON ").last ?? sql
            return on.replacingOccurrences(of: " COLLATE BINARY", with: "").replacingOccurrences(of: " ASC", with: "").replacingOccurrences(of: " DESC", with: "")
        }
        let apple = try indexes(fixture.url)
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: model, url: folder.file("New.sqlite"))
        _ = stack.store
        let ours = try indexes(folder.file("New.sqlite"))
        for (name, sql) in ours.sorted(by: { $0.key < $1.key }) {
            #expect(apple[name] == sql, "\(storeName): ours \(sql), Apple's \(apple[name] ?? "none")")
        }
        for (name, sql) in apple.sorted(by: { $0.key < $1.key }) where ours[name] == nil {
            let stale = apple.contains { $0.key != name && target($0.value) == target(sql) }
            let parts = name.split(separator: "_", maxSplits: 2).map(String.init)
            let unindexed = parts.count == 3 && parts[0] == "Z" && model.entitiesByName[parts[1]].map { entity in
                (entity.propertiesByName[parts[2]] as? NSAttributeDescription).map { !$0.isIndexed } ?? false
            } ?? false
            #expect(stale || unindexed, "\(storeName): Apple's \(sql) is missing from a new store")
        }
    }

    /// An ordered many-to-many in Apple's file: a conversation's participants are ordered by
    /// `Z_FOK_<participants column>` (distinct per conversation), a user's conversations by the other
    /// `Z_FOK_` column. Reordering and saving writes the column Apple reads.
    @Test func orderedManyToManyReadsAndWritesApplesOrderColumns() throws {
        guard let fixture = try FixtureCopy("wireapp__wire-ios-data-model__store2-80-0.sqlite") else { return }
        let model = try #require(try fixture.matchingModel("wireapp__wire-ios-data-model__zmessaging"))
        let numbers = try fixture.entityNumbers(model)
        let conversation = try #require(numbers["Conversation"]), user = try #require(numbers["User"])
        let table = "Z_\(conversation)LASTSERVERSYNCEDACTIVEPARTICIPANTS"
        let conversationColumn = "Z_\(conversation)LASTSERVERSYNCEDACTIVECONVERSATIONS"
        let userColumn = "Z_\(user)LASTSERVERSYNCEDACTIVEPARTICIPANTS"
        func rawParticipants(_ pk: Int64) throws -> [Int64] {
            try RawSQL.rows(fixture.url, "SELECT \(userColumn) AS u FROM \(table) WHERE \(conversationColumn) = \(pk) ORDER BY Z_FOK_\(userColumn.dropFirst(2))").map { $0["u"] as! Int64 }
        }
        let stack = try SQLiteStack(model: model, url: fixture.url)
        try withExtendedLifetime(stack.context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Conversation")
            request.includesSubentities = false
            let conversations = try stack.context.fetch(request)
            let p19 = try #require(conversations.first { RawStore.primaryKey($0.objectID) == 19 })
            let participants = try #require(p19.value(forKey: "lastServerSyncedActiveParticipants") as? NSOrderedSet)
            let keys = participants.array.map { RawStore.primaryKey(($0 as! NSManagedObject).objectID) }
            #expect(keys == [20, 3, 6, 21, 19])
            #expect(keys == (try rawParticipants(19)))
            let p3 = try #require(participants.array.first { RawStore.primaryKey(($0 as! NSManagedObject).objectID) == 3 } as? NSManagedObject)
            let theirs = try #require(p3.value(forKey: "lastServerSyncedActiveConversations") as? NSOrderedSet)
            #expect(theirs.array.map { RawStore.primaryKey(($0 as! NSManagedObject).objectID) } == [17, 19, 18, 10])

            // Reversed and saved: the participants' order column holds the new order.
            p19.setValue(NSOrderedSet(array: participants.array.reversed()), forKey: "lastServerSyncedActiveParticipants")
            try stack.context.save()
            #expect(try rawParticipants(19) == [19, 21, 6, 3, 20])
        }
    }

    /// Attributes that allow external storage: Apple's files keep a marker byte before the value (1: the
    /// bytes follow; 2: the UUID of a file in `.<store>_SUPPORT/_EXTERNAL_DATA`). The value is read
    /// without it, a referenced file is read when present, and a saved value gets the marker.
    @Test func externallyStorableBinaryDataReadsAndWritesApplesMarker() throws {
        guard let fixture = try FixtureCopy("wireapp__wire-ios-data-model__store2-21-1.sqlite") else { return }
        let model = try #require(try fixture.matchingModel("wireapp__wire-ios-data-model__zmessaging"))
        #expect(model.entitiesByName["User"]?.attributesByName["imageSmallProfileData"]?.allowsExternalBinaryDataStorage == true)
        let raw = try #require(try RawSQL.rows(fixture.url, "SELECT ZIMAGESMALLPROFILEDATA AS s, ZIMAGEMEDIUMDATA AS m FROM ZUSER WHERE Z_PK = 1").first)
        let small = try #require(raw["s"] as? Data), medium = try #require(raw["m"] as? Data)
        #expect(small.first == 1 && medium.first == 2)
        // The referenced file, which the fixture does not have, put where Core Data keeps it.
        let name = String(decoding: medium.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
        #expect(name == "30084A1C-76CF-4976-8312-8E8EFCF6F510")
        let folder = fixture.url.deletingLastPathComponent().appendingPathComponent(".wireapp__wire-ios-data-model__store2-21-1_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: folder.appendingPathComponent(name))

        let stack = try SQLiteStack(model: model, url: fixture.url)
        try withExtendedLifetime(stack.context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "User")
            request.predicate = NSPredicate(format: "SELF == %@", stack.sqliteStore.objectID(for: model.entitiesByName["User"]!, primaryKey: 1))
            let user = try #require(try stack.context.fetch(request).first)
            let image = try #require(user.value(forKey: "imageSmallProfileData") as? Data)
            #expect(image.count == small.count - 1)
            #expect(Array(image.prefix(2)) == [0xFF, 0xD8], "a JPEG, without the marker")
            #expect(user.value(forKey: "imageMediumData") as? Data == Data([0x89, 0x50, 0x4E, 0x47]))

            // Bytes that begin like a marker are stored after one, so they read back as they were.
            user.setValue(Data([0x02, 0xAA]), forKey: "imageSmallProfileData")
            try stack.context.save()
            let written = try RawSQL.rows(fixture.url, "SELECT ZIMAGESMALLPROFILEDATA AS s, ZIMAGEMEDIUMDATA AS m FROM ZUSER WHERE Z_PK = 1").first
            #expect(written?["s"] as? Data == Data([0x01, 0x02, 0xAA]))
            #expect(written?["m"] as? Data == medium, "the unchanged file reference is left as it was")
            let reader = stack.newContext()
            let again = try withExtendedLifetime(reader) {
                try reader.fetch(request).first?.value(forKey: "imageSmallProfileData") as? Data
            }
            #expect(again == Data([0x02, 0xAA]))
        }
    }

    @Test func theWALStoreReadsItsRowsFromTheWAL() throws {
        guard let fixture = try FixtureCopy("duckduckgo__iOS__AppRatingPrompt_v1__Database.sqlite") else { return }
        // SCHEMAS.md: 30 rows of HTTPSExcludedDomain, most of them only in the -wal file.
        #expect(try RawSQL.rows(fixture.url, "SELECT COUNT(*) AS n FROM ZHTTPSEXCLUDEDDOMAIN").first?["n"] as? Int64 == 30)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: fixture.url)
        #expect(metadata["NSStoreModelVersionIdentifiers"] as? [String] == ["", "3"])
    }

    static func unrelatedModel() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Unrelated"
        let attribute = NSAttributeDescription()
        attribute.name = "name"
        attribute.attributeType = .stringAttributeType
        entity.properties = [attribute]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}

/// A fixture store copied with its -wal/-shm into a temporary folder (the originals are read-only and
/// SQLite may checkpoint a WAL on open).
final class FixtureCopy {
    let folder = TemporaryFolder()
    let url: URL

    /// Nil (printing why) when ../shared/fixtures is absent.
    init?(_ name: String) throws {
        guard let stores = Fixtures.stores else { return nil }
        url = folder.file(name)
        let source = stores.appendingPathComponent(name)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: url.path + suffix)
            // The copies must be writable (the fixtures are read-only files).
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path + suffix)
        }
    }

    static func versionFolders(_ folder: URL) -> [URL] {
        if folder.pathExtension == "xcdatamodel" { return [folder] }
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        var found: [URL] = []
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "xcdatamodel", FileManager.default.fileExists(atPath: url.appendingPathComponent("contents").path) {
                found.append(url)
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The model version whose entity hashes are the store's (spec §9), or nil.
    func matchingModel(_ modelsFolder: String) throws -> NSManagedObjectModel? {
        guard let models = Fixtures.models else { return nil }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        for version in Self.versionFolders(models.appendingPathComponent(modelsFolder)) {
            let model = try NSManagedObjectModel(validatingContentsOf: version)
            if model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return model }
        }
        return nil
    }

    /// Z_PRIMARYKEY's entity numbers by name; a renamed entity's row keeps the old name (its renaming identifier).
    func entityNumbers(_ model: NSManagedObjectModel) throws -> [String: Int] {
        var numbers = Dictionary(uniqueKeysWithValues: try RawSQL.rows(url, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY").map { ($0["Z_NAME"] as! String, Int($0["Z_ENT"] as! Int64)) })
        for entity in model.entities where numbers[entity.name!] == nil {
            if let old = entity.renamingIdentifier { numbers[entity.name!] = numbers[old] }
        }
        return numbers
    }

    func rawMetadata() throws -> (uuid: String, plist: [String: Any]) {
        let row = try #require(try RawSQL.rows(url, "SELECT Z_UUID, Z_PLIST FROM Z_METADATA").first)
        let plist = try PropertyListSerialization.propertyList(from: row["Z_PLIST"] as! Data, format: nil) as! [String: Any]
        return (row["Z_UUID"] as! String, plist)
    }

    private var tableColumns: [String: [String]] = [:]

    func columns(_ table: String) throws -> [String] {
        if let known = tableColumns[table] { return known }
        let names = try RawSQL.rows(url, "PRAGMA table_info(\(table))").map { ($0["name"] as! String).uppercased() }
        tableColumns[table] = names
        return names
    }

    private var tableNames: [String]?

    func tables() throws -> [String] {
        if let tableNames { return tableNames }
        let names = try RawSQL.rows(url, "SELECT name FROM sqlite_master WHERE type = 'table'").map { ($0["name"] as! String).uppercased() }
        tableNames = names
        return names
    }

    /// Checks an object's attributes, to-ones (key and entity) and to-many counts against its raw row.
    func compare(_ object: NSManagedObject, _ row: [String: Any?], entity: NSEntityDescription, numbers: [String: Int], context: String) throws {
        let table = "Z" + RawStore.root(of: entity).name!.uppercased()
        let columns = try columns(table)
        let pk = row["Z_PK"] as! Int64
        for property in entity.properties where !property.isTransient {
            // Z<NAME> or, for a name two entities of the hierarchy declare, Z<NAME><digits>: the one that
            // is set in this row (the other entity's column is NULL here).
            let candidates = RawStore.columns(base: "Z" + property.name.uppercased(), in: columns)
            let value = object.value(forKey: property.name)
            if let attribute = property as? NSAttributeDescription {
                if attribute.attributeType == .undefinedAttributeType || attribute.attributeType == .objectIDAttributeType { continue }
                #expect(!candidates.isEmpty, "\(context): no column for \(attribute.name)")
                let raws = candidates.compactMap { row[$0] ?? nil }
                if raws.isEmpty {
                    #expect(value == nil || value is NSNull, "\(context).\(attribute.name): NULL in SQL, \(String(describing: value)) fetched")
                } else {
                    #expect(raws.contains { RawStore.equal(raw: $0, value, attribute) }, "\(context).\(attribute.name): SQL \(raws), fetched \(String(describing: value))")
                }
            } else if let relationship = property as? NSRelationshipDescription {
                if !relationship.isToMany {
                    let raws = candidates.compactMap { row[$0] ?? nil }.compactMap { $0 as? Int64 }
                    let destination = value as? NSManagedObject
                    if raws.isEmpty {
                        #expect(destination == nil, "\(context).\(relationship.name): NULL in SQL, fetched \(String(describing: destination?.objectID))")
                    } else {
                        let key = destination.map { RawStore.primaryKey($0.objectID) }
                        #expect(key.map { raws.contains($0) } == true, "\(context).\(relationship.name): SQL \(raws), fetched \(String(describing: key))")
                        // Z<d>_<NAME>: the destination's entity number, when the destination has subentities.
                        let entityColumns = columns.filter { $0.hasPrefix("Z") && $0.hasSuffix("_" + relationship.name.uppercased()) && $0.dropFirst().dropLast(relationship.name.count + 1).allSatisfy(\.isNumber) && $0.count > relationship.name.count + 2 }
                        if let entityColumn = entityColumns.first(where: { (row[$0] ?? nil) != nil }), let destination {
                            #expect(row[entityColumn] as? Int64 == Int64(numbers[destination.entity.name!]!), "\(context).\(relationship.name): \(entityColumn)")
                        }
                    }
                } else {
                    let count = (value as? NSSet)?.count ?? (value as? NSOrderedSet)?.count ?? (value as? Set<NSManagedObject>)?.count ?? -1
                    let expected = try toManyCount(relationship, of: pk, entity: entity, numbers: numbers)
                    #expect(expected.contains(count), "\(context).\(relationship.name): SQL counts \(expected), fetched \(count)")
                }
            }
        }
    }

    /// The size of a to-many as SQL counts it: rows holding the inverse's foreign key, or join-table
    /// rows. Several candidates when the schema leaves the column ambiguous (self-inverse relationships).
    func toManyCount(_ relationship: NSRelationshipDescription, of pk: Int64, entity: NSEntityDescription, numbers: [String: Int]) throws -> Set<Int> {
        let destination = relationship.destinationEntity!
        let declaring = relationship.entity ?? entity
        if let inverse = relationship.inverseRelationship, !inverse.isToMany {
            let table = "Z" + RawStore.root(of: destination).name!.uppercased()
            var counts: Set<Int> = []
            for column in RawStore.columns(base: "Z" + inverse.name.uppercased(), in: try columns(table)) {
                counts.insert(Int(try RawSQL.rows(url, "SELECT COUNT(*) AS n FROM \(table) WHERE \(column) = \(pk)").first?["n"] as! Int64))
            }
            return counts
        }
        let mine = numbers[declaring.name!]!
        var names = ["Z_\(mine)\(relationship.name.uppercased())"]
        if let inverse = relationship.inverseRelationship { names.append("Z_\(numbers[inverse.entity!.name!]!)\(inverse.name.uppercased())") }
        guard let table = names.first(where: { try! tables().contains($0) }) else {
            Issue.record("no join table for \(declaring.name!).\(relationship.name) among \(names)")
            return []
        }
        let inverseName = relationship.inverseRelationship?.name ?? declaring.name!
        var counts: Set<Int> = []
        for column in RawStore.columns(base: "Z_\(mine)\(inverseName.uppercased())", in: try columns(table)) {
            counts.insert(Int(try RawSQL.rows(url, "SELECT COUNT(*) AS n FROM \(table) WHERE \(column) = \(pk)").first?["n"] as! Int64))
        }
        return counts
    }
}

/// Independent helpers: what the tests expect, computed without the store's schema code.
enum RawStore {
    static func root(of entity: NSEntityDescription) -> NSEntityDescription {
        var current = entity
        while let parent = current.superentity { current = parent }
        return current
    }

    static func primaryKey(_ id: NSManagedObjectID) -> Int64 {
        Int64(id.uriRepresentation().lastPathComponent.dropFirst())!
    }

    /// `base` and `base<digits>` among `columns`.
    static func columns(base: String, in columns: [String]) -> [String] {
        columns.filter { $0 == base || ($0.hasPrefix(base) && $0.dropFirst(base.count).allSatisfy(\.isNumber)) }
    }

    static func isUnique(_ attribute: NSAttributeDescription, in entity: NSEntityDescription) -> Bool {
        entity.uniquenessConstraints.contains { constraint in
            constraint.contains { ($0 as? String) == attribute.name || ($0 as? NSPropertyDescription)?.name == attribute.name }
        }
    }

    static func madeUpValue(_ attribute: NSAttributeDescription) -> Any? {
        switch attribute.attributeType {
        case .stringAttributeType: return "new-" + UUID().uuidString
        case .integer16AttributeType: return NSNumber(value: Int16.random(in: 1000...30000))
        case .integer32AttributeType, .integer64AttributeType: return NSNumber(value: Int32.random(in: 100_000...1_000_000_000))
        case .booleanAttributeType: return NSNumber(value: false)
        case .doubleAttributeType, .floatAttributeType: return NSNumber(value: 1.5)
        case .decimalAttributeType: return Decimal(string: "12.5")!
        case .dateAttributeType: return Date(timeIntervalSinceReferenceDate: 700_000_000)
        case .binaryDataAttributeType: return Data(UUID().uuidString.utf8)
        case .UUIDAttributeType: return UUID()
        case .URIAttributeType: return URL(string: "https://example.com/\(UUID().uuidString)")!
        default: return nil
        }
    }

    /// Whether a fetched value is what the raw SQL value encodes (spec §3).
    static func equal(raw: Any, _ value: Any?, _ attribute: NSAttributeDescription) -> Bool {
        var raw = raw
        // Core Data's marker before a value that may be stored externally: 1 = the bytes follow, 2 = a
        // file of the store's support folder, which the fixtures do not include (the value reads as nil).
        if attribute.allowsExternalBinaryDataStorage, let data = raw as? Data, let marker = data.first {
            if marker == 2 { return value == nil }
            if marker == 1 { raw = Data(data.dropFirst()) }
        }
        guard let value, !(value is NSNull) else { return false }
        func double(_ raw: Any) -> Double? {
            switch raw {
            case let v as Int64: return Double(v)
            case let v as Double: return v
            case let v as String: return Double(v)
            default: return nil
            }
        }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let number = value as? NSNumber else { return false }
            if let raw = raw as? Int64 { return number.int64Value == raw }
            return double(raw).map { Double(number.int64Value) == $0.rounded(.towardZero) } ?? false
        case .booleanAttributeType:
            guard let number = value as? NSNumber, let raw = double(raw) else { return false }
            return number.boolValue == (raw != 0)
        case .doubleAttributeType:
            guard let number = value as? NSNumber, let raw = double(raw) else { return false }
            return number.doubleValue == raw
        case .floatAttributeType:
            guard let number = value as? NSNumber, let raw = double(raw) else { return false }
            return number.floatValue == Float(raw)
        case .decimalAttributeType:
            let decimal = (value as? Decimal) ?? (value as? NSDecimalNumber)?.decimalValue
            guard let decimal else { return false }
            if let text = raw as? String, text == "NaN" { return decimal.isNaN }
            guard let raw = double(raw) else { return false }
            return abs(NSDecimalNumber(decimal: decimal).doubleValue - raw) <= abs(raw) * 1e-12
        case .stringAttributeType:
            return value as? String == (raw as? String ?? "\(raw)")
        case .dateAttributeType:
            guard let date = value as? Date, let raw = double(raw) else { return false }
            return date.timeIntervalSinceReferenceDate == raw
        case .binaryDataAttributeType:
            return value as? Data == raw as? Data
        case .UUIDAttributeType:
            guard let uuid = value as? UUID, let data = raw as? Data else { return false }
            return withUnsafeBytes(of: uuid.uuid) { Data($0) } == data
        case .URIAttributeType:
            return (value as? URL)?.absoluteString == raw as? String
        case .transformableAttributeType:
            // The transformer's data, or what it decodes to (then only its presence is comparable).
            if let data = value as? Data { return data == raw as? Data }
            return raw is Data
        default:
            return false
        }
    }
}
