import CDToolKit
import CSQLite
import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import OCDTestSupport
import Testing

/// Raw SQL on a copy of a fixture store (never on the original).
private func sql(_ store: URL, _ query: String) throws -> [[String: Any]] {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cdtool-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let copy = folder.appendingPathComponent(store.lastPathComponent)
    for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
        try FileManager.default.copyItem(atPath: store.path + suffix, toPath: copy.path + suffix)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path + suffix)
    }
    return try RawSQL.rows(copy, query).map { $0.compactMapValues { $0 } }
}


private func fileBytes(_ store: URL) -> [Data?] {
    ["", "-wal", "-shm"].map { FileManager.default.contents(atPath: store.path + $0) }
}

private func json(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8))
}

@Suite("cdtool store")
struct StoreCommandTests {
    static let allStores: [String] = {
        guard let stores = Fixtures.directory?.appendingPathComponent("stores") else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: stores.path)) ?? []).filter { $0.hasSuffix(".sqlite") }.sorted()
    }()

    static let withModel = Fixtures.storesWithModels

    @Test("inspect: metadata, entities with SQL row counts, tables; the file is untouched", arguments: allStores)
    func inspect(_ name: String) throws {
        guard let stores = Fixtures.stores else { return }
        let store = stores.appendingPathComponent(name)
        let before = fileBytes(store)
        let run = CDTool.run(["store", "inspect", store.path])
        #expect(run.status == 0, "\(run.error)")
        #expect(fileBytes(store) == before, "\(name) was modified")
        let object = try #require(try json(run.output) as? [String: Any])
        #expect(object["uuid"] as? String == (try sql(store, "SELECT Z_UUID FROM Z_METADATA")).first?["Z_UUID"] as? String)
        let header = try #require(FileManager.default.contents(atPath: store.path))
        #expect(object["journalMode"] as? String == (header[18] == 2 ? "wal" : "rollback"))
        let metadata = try #require(object["metadata"] as? [String: Any])
        let stored = try Fixtures.storeMetadata(store)
        #expect(metadata["NSStoreType"] as? String == "SQLite")
        let hashes = try #require(metadata["NSStoreModelVersionHashes"] as? [String: String])
        #expect(hashes == (stored["NSStoreModelVersionHashes"] as? [String: Data])?.mapValues { $0.base64EncodedString() })
        let entities = try #require(object["entities"] as? [[String: Any]])
        let keys = try sql(store, "SELECT Z_ENT, Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(entities.map { $0["name"] as? String } == keys.map { $0["Z_NAME"] as? String })
        for (entity, key) in zip(entities, keys) {
            #expect((entity["max"] as? NSNumber)?.int64Value == key["Z_MAX"] as? Int64)
            guard let table = entity["table"] as? String else {
                Issue.record("\(name): \(entity["name"] ?? "?") has no table")
                continue
            }
            let count = try sql(store, "SELECT COUNT(*) AS n FROM \(table) WHERE Z_ENT = \(key["Z_ENT"] as! Int64)").first?["n"] as? Int64
            #expect((entity["rows"] as? NSNumber)?.int64Value == count, "\(name): \(table) rows of \(entity["name"] ?? "?")")
        }
        let tables = try #require(object["tables"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        #expect(tables == (try sql(store, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")).compactMap { $0["name"] as? String })
    }

    /// A store given through a symbolic link (absolute or relative) is read from a copy of the file it
    /// points to: the original keeps its mode and gets no -wal or -shm.
    @Test func aSymlinkedStoreIsReadNotTouched() throws {
        guard let stores = Fixtures.stores else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cdtool-link-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let real = folder.appendingPathComponent("real.sqlite")
        try FileManager.default.copyItem(at: stores.appendingPathComponent("alemar11__CoreDataPlus__SampleModel2_V1.sqlite"), to: real)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: real.path)
        let absolute = folder.appendingPathComponent("abs.sqlite")
        try FileManager.default.createSymbolicLink(atPath: absolute.path, withDestinationPath: real.path)
        let relative = folder.appendingPathComponent("sub/rel.sqlite")
        try FileManager.default.createSymbolicLink(atPath: relative.path, withDestinationPath: "../real.sqlite")
        for link in [absolute, relative] {
            let run = CDTool.run(["store", "inspect", link.path])
            #expect(run.status == 0, "\(link.lastPathComponent): \(run.error)")
        }
        let mode = try FileManager.default.attributesOfItem(atPath: real.path)[.posixPermissions] as? Int
        #expect(mode == 0o644)
        #expect(!FileManager.default.fileExists(atPath: real.path + "-shm"))
        #expect(!FileManager.default.fileExists(atPath: real.path + "-wal"))
    }

    @Test func inspectShowsKnownValues() throws {
        guard let stores = Fixtures.stores else { return }
        let run = CDTool.run(["store", "inspect", stores.appendingPathComponent("alemar11__CoreDataPlus__SampleModel2_V1.sqlite").path])
        let object = try #require(try json(run.output) as? [String: Any])
        #expect(object["uuid"] as? String == "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A")
        #expect(object["journalMode"] as? String == "wal")
        let entities = try #require(object["entities"] as? [[String: Any]])
        let page = try #require(entities.first { $0["name"] as? String == "Page" })
        #expect(page["number"] as? Int == 4 && page["rows"] as? Int == 4970 && page["max"] as? Int == 4970 && page["table"] as? String == "ZPAGE")
        let author = try #require(entities.first { $0["name"] as? String == "Author" })
        #expect(author["super"] as? String == "Writer")
        let change = try #require(entities.first { $0["name"] as? String == "CHANGE" })
        #expect(change["table"] as? String == "ACHANGE" && change["rows"] as? Int == 5468)
        let metadata = try #require(object["metadata"] as? [String: Any])
        #expect(metadata["NSPersistenceFrameworkVersion"] as? Int == 1344)
        #expect(metadata["NSStoreModelVersionIdentifiers"] as? [String] == [])
    }

    @Test("dump: one JSON line per object, as many as SQL rows", arguments: withModel.map(\.store))
    func dump(_ name: String) throws {
        guard let stores = Fixtures.stores, let models = Fixtures.models else { return }
        let store = stores.appendingPathComponent(name)
        let model = models.appendingPathComponent(Self.withModel.first { $0.store == name }!.models)
        let before = fileBytes(store)
        let run = CDTool.run(["store", "dump", store.path, "--model", model.path])
        #expect(run.status == 0, "\(run.error)")
        #expect(fileBytes(store) == before, "\(name) was modified")
        let lines = run.output.split(separator: "\n").map(String.init)
        let objects = try lines.map { try #require(try json($0) as? [String: Any]) }
        // Every object of every entity of the model: the rows of all its tables, less history entities.
        let keys = try sql(store, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000")
        var expected: Int64 = 0
        for key in keys {
            var root = key
            while let parent = keys.first(where: { $0["Z_ENT"] as? Int64 == root["Z_SUPER"] as? Int64 }) { root = parent }
            expected += (try sql(store, "SELECT COUNT(*) AS n FROM Z\((root["Z_NAME"] as! String).uppercased()) WHERE Z_ENT = \(key["Z_ENT"] as! Int64)")).first?["n"] as? Int64 ?? 0
        }
        #expect(Int64(objects.count) == expected, "\(name)")
        let uuid = try sql(store, "SELECT Z_UUID FROM Z_METADATA").first?["Z_UUID"] as! String
        for object in objects {
            let uri = try #require(object["uri"] as? String)
            #expect(uri.hasPrefix("x-coredata://\(uuid)/\(object["entity"] as? String ?? "?")/p"))
            #expect(object["attributes"] is [String: Any] && object["relationships"] is [String: Any])
        }
    }

    /// Externally stored values are read from `.<name>_SUPPORT/_EXTERNAL_DATA` beside the original store
    /// (the temporary copy left it behind, so they printed as null), and the folder is left as it was.
    @Test func dumpReadsExternallyStoredValues() throws {
        guard let stores = Fixtures.stores, let models = Fixtures.models else { return }
        let folder = ScratchFiles.newFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = folder.appendingPathComponent("W.sqlite")
        try FileManager.default.copyItem(at: stores.appendingPathComponent("wireapp__wire-ios-data-model__store2-21-1.sqlite"), to: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.path)
        let marker = try #require(try RawSQL.rows(store, "SELECT ZIMAGEMEDIUMDATA AS m FROM ZUSER WHERE Z_PK = 1").first?["m"] as? Data)
        #expect(marker.first == 2)
        let name = String(decoding: marker.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
        let external = folder.appendingPathComponent(".W_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: external.appendingPathComponent(name))
        let run = CDTool.run(["store", "dump", store.path, "--model",
                              models.appendingPathComponent("wireapp__wire-ios-data-model__zmessaging").path, "--entity", "User"])
        #expect(run.status == 0, "\(run.error)")
        let user = try #require(try run.output.split(separator: "\n").compactMap { try json(String($0)) as? [String: Any] }
            .first { ($0["uri"] as? String)?.hasSuffix("/User/p1") == true })
        #expect((user["attributes"] as? [String: Any])?["imageMediumData"] as? String == "iVBORw==")
        #expect(FileManager.default.fileExists(atPath: external.appendingPathComponent(name).path))
    }

    /// Persistent-history entities (numbers 16001…) live in `A…` tables even when a model entity has the
    /// same name: with an entity Transaction, history's TRANSACTION was shown in ZTRANSACTION with 0 rows.
    @Test func historyEntitiesKeepTheirTablesBesideAModelEntityOfTheSameName() throws {
        let model = NSManagedObjectModel()
        let entity = NSEntityDescription()
        entity.name = "Transaction"
        let amount = NSAttributeDescription()
        amount.name = "amount"
        amount.attributeType = .doubleAttributeType
        entity.properties = [amount]
        model.entities = [entity]
        let folder = ScratchFiles.newFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = folder.appendingPathComponent("S.sqlite")
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let added = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: store, options: nil)
            try coordinator.remove(added)
        }
        try RawSQL.execute(store, """
            CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTIMESTAMP FLOAT);
            INSERT INTO ATRANSACTION VALUES (1, 16002, 1, 0);
            INSERT INTO Z_PRIMARYKEY VALUES (16002, 'TRANSACTION', 0, 1);
            """)
        let run = CDTool.run(["store", "inspect", store.path])
        #expect(run.status == 0, "\(run.error)")
        let object = try #require(try json(run.output) as? [String: Any])
        let entities = try #require(object["entities"] as? [[String: Any]])
        let history = try #require(entities.first { $0["number"] as? Int == 16002 })
        #expect(history["table"] as? String == "ATRANSACTION")
        #expect(history["rows"] as? Int == 1)
        let own = try #require(entities.first { $0["name"] as? String == "Transaction" })
        #expect(own["table"] as? String == "ZTRANSACTION")
    }

    @Test func dumpShowsKnownValues() throws {
        guard let stores = Fixtures.stores, let models = Fixtures.models else { return }
        let store = stores.appendingPathComponent("alemar11__CoreDataPlus__SampleModel_V1.sqlite").path
        let run = CDTool.run(["store", "dump", store, "--model", models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel").path, "--entity", "Person"])
        #expect(run.status == 0, "\(run.error)")
        let objects = try run.output.split(separator: "\n").map { try #require(try json(String($0)) as? [String: Any]) }
        #expect(objects.count == 20)
        #expect(Set(objects.compactMap { $0["entity"] as? String }) == ["Person"])
        let first = try #require(objects.first)
        let base = "x-coredata://753753D3-A961-4901-AB05-8CC48B1D3853"
        #expect(first["uri"] as? String == "\(base)/Person/p1")
        let attributes = try #require(first["attributes"] as? [String: Any])
        #expect(attributes["firstName"] as? String == "Victoria")
        #expect(attributes["lastName"] as? String == "Coster")
        #expect(attributes["updatedAt"] as? String == "2021-04-07T15:52:49.638733Z")
        #expect(attributes["id"] as? String == "FEFE4176-912D-429F-9C83-662FFF641115")
        // Car p1 and p2 belong to Person p17.
        let cars = CDTool.run(["store", "dump", store, "--model", models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel").path, "--entity", "Car"])
        let car = try #require(try json(String(cars.output.split(separator: "\n")[0])) as? [String: Any])
        #expect(car["uri"] as? String == "\(base)/Car/p1")
        #expect((car["relationships"] as? [String: Any])?["owner"] as? String == "\(base)/Person/p17")
        #expect((car["attributes"] as? [String: Any])?["numberPlate"] as? String == "170")
        let owner = try #require(objects.first { $0["uri"] as? String == "\(base)/Person/p17" })
        let ownedCars = try #require((owner["relationships"] as? [String: Any])?["cars"] as? [String])
        #expect(ownedCars.contains("\(base)/Car/p1") && ownedCars.contains("\(base)/Car/p2"))
        let count = try sql(URL(fileURLWithPath: store), "SELECT COUNT(*) AS n FROM ZCAR WHERE ZOWNER = 17").first?["n"] as? Int64
        #expect(Int64(ownedCars.count) == count)
    }

    /// A `.momd` that `cdtool compile` made offers each of its versions, as the `.xcdatamodeld` does: it
    /// offered only its current one, so a store of an older version could not be dumped.
    @Test func dumpWithACompiledMomdFindsTheStoresVersion() throws {
        guard let stores = Fixtures.stores, let models = Fixtures.models else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cdtool-momd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel").path
        let momd = folder.appendingPathComponent("SampleModel.momd").path
        #expect(CDTool.run(["compile", bundle, "-o", momd]).status == 0)
        var dumped = 0
        for name in ["SampleModel_V1", "SampleModel_V2", "SampleModel2_V1", "SampleModel2_V2"] {
            let store = stores.appendingPathComponent("alemar11__CoreDataPlus__\(name).sqlite").path
            let fromSource = CDTool.run(["store", "dump", store, "--model", bundle])
            guard fromSource.status == 0 else { continue }
            let fromMomd = CDTool.run(["store", "dump", store, "--model", momd])
            #expect(fromMomd.status == 0, "\(name): \(fromMomd.error)")
            #expect(fromMomd.output == fromSource.output, "\(name)")
            dumped += 1
        }
        #expect(dumped >= 2)
    }

    /// A store whose writer died mid-transaction in rollback-journal mode is read as SQLite would read it:
    /// rolled back by its hot journal, which the temporary copy now includes (without it, the copy held
    /// the transaction's half-written pages).
    @Test func dumpRollsBackAHotJournal() throws {
        guard let stores = Fixtures.stores, let models = Fixtures.models else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cdtool-journal-\(UUID().uuidString)")
        let crashed = folder.appendingPathComponent("crashed")
        try FileManager.default.createDirectory(at: crashed, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let live = folder.appendingPathComponent("Store.sqlite")
        try FileManager.default.copyItem(at: stores.appendingPathComponent("alemar11__CoreDataPlus__SampleModel_V1.sqlite"), to: live)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: stores.path + "/alemar11__CoreDataPlus__SampleModel_V1.sqlite" + suffix) {
            try FileManager.default.copyItem(atPath: stores.path + "/alemar11__CoreDataPlus__SampleModel_V1.sqlite" + suffix, toPath: live.path + suffix)
        }
        var db: OpaquePointer?
        #expect(sqlite3_open(live.path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        #expect(sqlite3_exec(db, "PRAGMA journal_mode = DELETE", nil, nil, nil) == SQLITE_OK)
        // A transaction that spills its changed pages into the file (a one-page cache) and never commits:
        // the file and its journal, copied while it is open, are what a crash leaves.
        let transaction = """
            PRAGMA cache_size = 1; BEGIN;
            UPDATE ZPERSON SET ZFIRSTNAME = ZFIRSTNAME || ' uncommitted';
            CREATE TABLE spill (x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO spill SELECT randomblob(500) FROM n;
            """
        #expect(sqlite3_exec(db, transaction, nil, nil, nil) == SQLITE_OK)
        let journal = live.path + "-journal"
        #expect(FileManager.default.fileExists(atPath: journal))
        let copy = crashed.appendingPathComponent("Store.sqlite")
        try FileManager.default.copyItem(atPath: live.path, toPath: copy.path)
        try FileManager.default.copyItem(atPath: journal, toPath: copy.path + "-journal")
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)

        let run = CDTool.run(["store", "dump", copy.path, "--model", models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel").path, "--entity", "Person"])
        #expect(run.status == 0, "\(run.error)")
        let first = try #require(try json(String(run.output.split(separator: "\n").first ?? "")) as? [String: Any])
        #expect((first["attributes"] as? [String: Any])?["firstName"] as? String == "Victoria")
        #expect(!run.output.contains("uncommitted"))
    }

    /// A store made for one configuration of its model (its `Z_PRIMARYKEY` numbers only that
    /// configuration's entities) is dumped with that configuration: opened with the whole model, it failed.
    @Test func dumpOpensAStoreMadeForAConfiguration() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cdtool-configuration-\(UUID().uuidString)")
        let modelFolder = folder.appendingPathComponent("Model.xcdatamodel")
        try FileManager.default.createDirectory(at: modelFolder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="A" representedClassName="A" syncable="YES"><attribute name="x" optional="YES" attributeType="String"/></entity>
            <entity name="B" representedClassName="B" syncable="YES"><attribute name="y" optional="YES" attributeType="String"/></entity>
            <configuration name="Local"><memberEntity name="A"/></configuration>
            </model>
            """.utf8).write(to: modelFolder.appendingPathComponent("contents"))
        let store = folder.appendingPathComponent("Local.sqlite")
        do {
            let model = try NSManagedObjectModel(validatingContentsOf: modelFolder)
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Local", at: store, options: nil)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                NSEntityDescription.insertNewObject(forEntityName: "A", into: context).setValue("kept", forKey: "x")
                try context.save()
            }
        }
        let run = CDTool.run(["store", "dump", store.path, "--model", modelFolder.path])
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.split(separator: "\n")
        #expect(lines.count == 1)
        let object = try #require(try json(String(lines.first ?? "")) as? [String: Any])
        #expect(object["entity"] as? String == "A")
        #expect((object["attributes"] as? [String: Any])?["x"] as? String == "kept")

        let other = CDTool.run(["store", "dump", store.path, "--model", modelFolder.path, "--entity", "B"])
        #expect(other.status == 1)
        #expect(other.error.contains("the store holds no entity named 'B'"), "\(other.error)")
    }

    // MARK: Errors

    @Test func errorsAreClearWithAFailingStatus() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cdtool-errors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let missing = CDTool.run(["store", "inspect", folder.appendingPathComponent("nope.sqlite").path])
        #expect(missing.status == 1)
        #expect(missing.error.contains("no such file"))

        let text = folder.appendingPathComponent("text.sqlite")
        try Data("hello, this is not a database".utf8).write(to: text)
        let notSQLite = CDTool.run(["store", "inspect", text.path])
        #expect(notSQLite.status == 1)
        #expect(notSQLite.error.contains("is not an SQLite database"))

        let plain = folder.appendingPathComponent("plain.sqlite")
        var db: OpaquePointer?
        #expect(sqlite3_open(plain.path, &db) == SQLITE_OK)
        sqlite3_exec(db, "CREATE TABLE t (a); INSERT INTO t VALUES (1)", nil, nil, nil)
        sqlite3_close(db)
        for command in [["store", "inspect", plain.path], ["store", "dump", plain.path, "--model", "/nonexistent"]] {
            let notCoreData = CDTool.run(command)
            #expect(notCoreData.status == 1)
            #expect(notCoreData.error.contains("not a Core Data store"), "\(notCoreData.error)")
        }

        guard let stores = Fixtures.stores, let models = Fixtures.models else { return }
        let loopKit = stores.appendingPathComponent("LoopKit__LoopKit__Model.sqlite.v1.original.sqlite").path
        let noVersion = CDTool.run(["store", "dump", loopKit, "--model", models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel").path])
        #expect(noVersion.status == 1)
        #expect(noVersion.error.contains("no version of") && noVersion.error.contains("SampleModel2"), "\(noVersion.error)")
        let noModel = CDTool.run(["store", "dump", loopKit, "--model", folder.appendingPathComponent("Missing.xcdatamodeld").path])
        #expect(noModel.status == 1)
        #expect(noModel.error.contains("no such model"))
        let noEntity = CDTool.run(["store", "dump", loopKit, "--model", models.appendingPathComponent("LoopKit__LoopKit__Model").path, "--entity", "Nope"])
        #expect(noEntity.status == 1)
        #expect(noEntity.error.contains("no entity named 'Nope'"))
    }
}

/// `cdtool store` reads a temporary copy of the store; it is removed however the tool ends.
@Suite("cdtool store removes its temporary copy")
struct StoreCopyCleanupTests {
    /// The executable, built beside the test bundle by `swift build --build-tests` / `swift test`.
    static var tool: URL? { BuiltExecutables.url(named: "cdtool") }

    private func storeWithManyRows() throws -> (store: URL, model: URL) {
        let folder = ScratchFiles.newFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let modelFolder = folder.appendingPathComponent("Notes.xcdatamodel")
        try FileManager.default.createDirectory(at: modelFolder, withIntermediateDirectories: true)
        try Data(#"<?xml version="1.0"?><model><entity name="Note" representedClassName="NSManagedObject"><attribute name="text" attributeType="String" optional="YES"/></entity></model>"#.utf8)
            .write(to: modelFolder.appendingPathComponent("contents"))
        let store = folder.appendingPathComponent("Notes.sqlite")
        let model = try NSManagedObjectModel(validatingContentsOf: modelFolder)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let added = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: store, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for i in 0..<3_000 {
                NSEntityDescription.insertNewObject(forEntityName: "Note", into: context).setValue(String(repeating: "n\(i) ", count: 20), forKey: "text")
            }
            try context.save()
        }
        try coordinator.remove(added)
        return (store, modelFolder)
    }

    /// `cdtool store dump … | head`: the closed pipe ended the tool by SIGPIPE, leaving the copy of the
    /// store in the temporary folder for good.
    @Test func aClosedOutputPipeLeavesNoCopy() throws {
        let tool = try #require(Self.tool, "cdtool is built with the tests (swift build --build-tests)")
        let (store, model) = try storeWithManyRows()
        let temporary = ScratchFiles.newFolder()
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "'\(tool.path)' store dump '\(store.path)' --model '\(model.path)' | head -c 1 > /dev/null"]
        shell.environment = ["TMPDIR": temporary.path, "PATH": "/usr/bin:/bin"]
        try shell.run()
        shell.waitUntilExit()
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0.hasPrefix("cdtool-store-") }
        #expect(left.isEmpty, "\(left)")
    }

    /// An error written to a closed stderr ends the tool as a closed stdout does (status 141): with SIGPIPE
    /// ignored, `FileHandle.write(_:)` trapped on the failed write.
    @Test func anErrorWrittenToAClosedPipeEndsTheToolQuietly() throws {
        let tool = try #require(Self.tool, "cdtool is built with the tests (swift build --build-tests)")
        let process = Process()
        process.executableURL = tool
        process.arguments = ["store", "dump", "/nonexistent/store.sqlite"]
        // A pipe whose reading end is closed before the tool starts: its first write fails, every time.
        let pipe = Pipe()
        process.standardError = pipe.fileHandleForWriting
        try pipe.fileHandleForReading.close()
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 141)
    }

    /// A copy whose process no longer exists (killed, or stopped by a trap) is removed by the next run.
    @Test func copiesOfEndedProcessesAreRemoved() throws {
        guard let stores = Fixtures.stores else { return }
        let stale = FileManager.default.temporaryDirectory.appendingPathComponent("cdtool-store-2147483600-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: stale, withIntermediateDirectories: true)
        try Data("copy".utf8).write(to: stale.appendingPathComponent("Store.sqlite"))
        let mine = FileManager.default.temporaryDirectory.appendingPathComponent("cdtool-store-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: mine) }
        let run = CDTool.run(["store", "inspect", stores.appendingPathComponent("alemar11__CoreDataPlus__SampleModel_V1.sqlite").path])
        #expect(run.status == 0, "\(run.error)")
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(FileManager.default.fileExists(atPath: mine.path))
    }
}
