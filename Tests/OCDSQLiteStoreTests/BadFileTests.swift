import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import Testing

/// Bad files give Core Data errors (SQLite's code kept), never a crash, and are not changed.
@Suite struct BadFileTests {
    private func open(_ url: URL, options: [AnyHashable: Any]? = nil) -> NSError? {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        do {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
            return nil
        } catch {
            return error as NSError
        }
    }

    private func bytes(_ url: URL) -> Data? { FileManager.default.contents(atPath: url.path) }

    /// A valid store with a few objects, closed.
    func validStore(_ folder: TemporaryFolder, journal: String = "WAL") throws -> URL {
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url, options: ["NSSQLitePragmasOption": ["journal_mode": journal]])
        try withExtendedLifetime(stack.context) {
            for index in 0..<200 { stack.insert("Company", ["name": "Company \(index)"]) }
            try stack.context.save()
        }
        try stack.coordinator.remove(stack.store)
        return url
    }

    @Test func aFileThatIsNotSQLiteIsNotAValidFormat() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let text = Data(String(repeating: "not a database\n", count: 400).utf8)
        try text.write(to: url)
        let error = try #require(open(url))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == 259)
        #expect(error.userInfo["NSSQLiteErrorDomain"] as? Int == 26)
        #expect(error.userInfo[NSUnderlyingErrorKey] is SQLiteError)
        #expect(bytes(url) == text, "the file is left as it was")
        #expect(throws: NSError.self) { try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url) }
    }

    @Test func aTruncatedStoreIsReportedAndLeftAlone() throws {
        let folder = TemporaryFolder()
        let url = try validStore(folder, journal: "DELETE")
        var data = try #require(bytes(url))
        data = data.prefix(data.count / 2)
        // Cut into the middle of the database, and also damage the first page after the header.
        data.replaceSubrange(100..<400, with: Data(repeating: 0xA5, count: 300))
        try data.write(to: url)
        let error = try #require(open(url))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect([259, 134080].contains(error.code), "\(error)")
        #expect(error.userInfo["NSSQLiteErrorDomain"] != nil)
        #expect(bytes(url) == data)
    }

    @Test func anSQLiteDatabaseThatIsNotACoreDataStore() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        try RawSQL.executeCreating(url, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'x')")
        let before = bytes(url)
        let error = try #require(open(url))
        #expect(error.code == 134000)
        #expect(error.localizedDescription.contains("not a Core Data store"))
        #expect(bytes(url) == before)
    }

    /// Metadata whose binary property list holds a set (one flipped byte can make one): Linux Foundation's
    /// reader crashed on it; the store fails to open (134080), and is left as it was.
    @Test func metadataHoldingASetIsRefusedNotACrash() throws {
        let folder = TemporaryFolder()
        let url = try validStore(folder, journal: "DELETE")
        let set = Data([
            0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0xD1, 0x01, 0x02, 0x51, 0x6B, 0xC1, 0x03, 0x50,
            0x08, 0x0B, 0x0D, 0x0F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x10,
        ])
        try RawSQL.execute(url, "UPDATE Z_METADATA SET Z_PLIST = X'\(set.map { String(format: "%02X", $0) }.joined())'")
        let before = bytes(url)
        let error = try #require(open(url))
        #expect(error.code == 134080, "\(error)")
        #expect(error.localizedDescription.contains("not a property list dictionary"), "\(error)")
        #expect(throws: NSError.self) { try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url) }
        #expect(bytes(url) == before)
    }

    @Test func anUnwritableLocationIsAPermissionError() throws {
        let error = try #require(open(URL(fileURLWithPath: "/proc/ocd-cannot-write-here.sqlite")))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == 513, "\(error)")
        let missingFolder = try #require(open(URL(fileURLWithPath: "/tmp/ocd-no-such-folder-\(UUID().uuidString)/Store.sqlite")))
        #expect(missingFolder.code == 260)
    }

    @Test func aReadOnlyStoreThatDoesNotExistIsNotCreated() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let error = try #require(open(url, options: [NSReadOnlyPersistentStoreOption: true]))
        #expect(error.code == 260)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test func aLockedDatabaseTimesOutWithoutDamage() throws {
        let folder = TemporaryFolder()
        let url = try validStore(folder)
        let stack = try SQLiteStack(model: TestModel.make(), url: url, options: [NSPersistentStoreTimeoutOption: 0.2])
        try withExtendedLifetime(stack.context) {
            // Another connection holds the write lock.
            let locker = try RawSQL.Connection(url)
            try locker.execute("BEGIN EXCLUSIVE")
            stack.insert("Company", ["name": "blocked"])
            var saveError: NSError?
            do { try stack.context.save() } catch { saveError = error as NSError }
            let error = try #require(saveError)
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == 134090 || (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == 134090, "\(error)")
            try locker.execute("ROLLBACK")
            // Once the lock is gone the same save succeeds.
            try stack.context.save()
            #expect(try stack.fetch("Company", "name == 'blocked'").count == 1)
        }
    }

    @Test func aWALStoreCopiedWithoutItsLogIsRefused() throws {
        let folder = TemporaryFolder()
        let url = try validStore(folder)
        // Keep a connection open so the log is not checkpointed away, then copy the files without -wal.
        let holder = try RawSQL.Connection(url)
        try holder.execute("INSERT INTO ZCOMPANY (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (9999, 2, 1, 'in the log')")
        let copy = folder.file("Copy.sqlite")
        try FileManager.default.copyItem(at: url, to: copy)
        try FileManager.default.copyItem(atPath: url.path + "-shm", toPath: copy.path + "-shm")
        _ = holder
        let before = bytes(copy)
        let error = try #require(open(copy))
        #expect(error.code == 259)
        #expect(error.localizedDescription.contains("-wal file is missing"))
        #expect(bytes(copy) == before)
        #expect(!FileManager.default.fileExists(atPath: copy.path + "-wal"))
        // Reading its metadata first refuses it too, and leaves no empty -wal that would disarm the check.
        #expect(throws: NSError.self) { try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: copy) }
        #expect(!FileManager.default.fileExists(atPath: copy.path + "-wal"))
        #expect(open(copy)?.code == 259)
    }

    /// A creation cut short after its journal-mode pragma leaves a database of no tables: it is made into
    /// a store when next opened, not refused as "not a Core Data store".
    @Test func aCreationCutShortIsFinishedWhenTheStoreIsOpened() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        defer { withExtendedLifetime(folder) {} }
        try RawSQL.executeCreating(url, "PRAGMA page_size = 4096; PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL")
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
        }
        #expect(try RawSQL.rows(url, "SELECT ZNAME FROM ZCOMPANY").first?["ZNAME"] as? String == "Acme")
    }

    /// Two coordinators opening a new store at the same moment both open the one store the first makes.
    @Test func twoCoordinatorsOpeningANewStoreAtOnceBothSucceed() throws {
        let model = TestModel.make()
        final class Failures: @unchecked Sendable {
            let lock = NSLock()
            var errors: [Error] = []
        }
        for _ in 0..<10 {
            let folder = TemporaryFolder()
            let url = folder.file()
            defer { withExtendedLifetime(folder) {} }
            let failures = Failures()
            let coordinators = [NSPersistentStoreCoordinator(managedObjectModel: model), NSPersistentStoreCoordinator(managedObjectModel: model)]
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                do {
                    try coordinators[index].addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
                } catch {
                    failures.lock.lock(); failures.errors.append(error); failures.lock.unlock()
                }
            }
            #expect(failures.errors.isEmpty, "\(failures.errors)")
        }
    }

    /// `NSSQLitePragmasOption` reaches a file only once it is known to be a store of this model: a refused
    /// file keeps its journal mode.
    @Test func aRefusedOpenKeepsTheFilesJournalMode() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        defer { withExtendedLifetime(folder) {} }
        try RawSQL.executeCreating(url, "PRAGMA journal_mode = WAL; CREATE TABLE notes (id INTEGER PRIMARY KEY)")
        let error = try #require(open(url, options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"]]))
        #expect(error.code == 134000)
        #expect(try RawSQL.rows(url, "PRAGMA journal_mode").first?["journal_mode"] as? String == "wal")
        // The metadata class methods give the same error for such a file.
        let metadataError = try #require(throws: NSError.self) { try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url) }
        #expect(metadataError.code == 134000)
    }

    /// A path that exists but cannot be opened is not reported as "no such file" (apps read 260 as a
    /// first launch).
    @Test func aFolderAtTheStorePathIsNotMissing() throws {
        let folder = TemporaryFolder()
        let path = folder.file("Folder.sqlite")
        try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false)
        let error = try #require(open(path))
        #expect(error.code != 260, "\(error)")
        #expect(FileManager.default.fileExists(atPath: path.path))
    }

    /// Apple's option keys build and a compatible store opens with them; the description's migration
    /// properties are those options.
    @Test func applesStoreOptionKeysAreAccepted() throws {
        let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                                           NSSQLiteAnalyzeOption: true, NSSQLiteManualVacuumOption: true, NSPersistentHistoryTrackingKey: false]
        let folder = TemporaryFolder()
        let url = try validStore(folder)
        #expect(open(url, options: options) == nil)
        let description = NSPersistentStoreDescription()
        #expect(description.shouldMigrateStoreAutomatically)
        description.shouldInferMappingModelAutomatically = false
        #expect((description.options[NSInferMappingModelAutomaticallyOption] as? NSNumber)?.boolValue == false)
        #expect(!description.shouldInferMappingModelAutomatically)
    }
}

extension BadFileTests {
    @Test func aReadThatSQLiteRefusesIsACoreDataErrorNotASaveError() throws {
        let folder = TemporaryFolder()
        let url = try validStore(folder)
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            // Another program damages the schema under the open store.
            try RawSQL.Connection(url).execute("DROP TABLE ZPROJECT")
            #expect {
                _ = try stack.fetch("Project")
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == 134060 && error.userInfo["NSSQLiteErrorDomain"] as? Int == 1
            }
        }
    }
}

extension BadFileTests {
    /// A row whose Z_ENT names an entity kept in another table cannot be read with that entity's columns:
    /// it reads as no row, and reading it first does not spoil how that entity's own rows are read.
    @Test func aRowWhoseEntityNumberNamesAnotherTablesEntityIsSkipped() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make()
        let globex: URL
        do {
            let stack = try SQLiteStack(model: model, url: url)
            globex = try withExtendedLifetime(stack.context) {
                stack.insert("Company", ["name": "Acme"])
                let company = stack.insert("Company", ["name": "Globex"])
                stack.insert("Project", ["title": "Apollo"])
                try stack.context.save()
                return company.objectID.uriRepresentation()
            }
        }
        let projectNumber = try #require(try RawSQL.rows(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Project'").first?["Z_ENT"] as? Int64)
        try RawSQL.execute(url, "UPDATE ZCOMPANY SET Z_ENT = \(projectNumber) WHERE ZNAME = 'Globex'")
        let stack = try SQLiteStack(model: model, url: url)
        try withExtendedLifetime(stack.context) {
            // Read by primary key from ZCOMPANY first: the damaged row is met before any Project row.
            let id = try #require(stack.coordinator.managedObjectID(forURIRepresentation: globex))
            #expect(throws: NSError.self) { _ = try stack.context.existingObject(with: id) }
            #expect(try stack.fetch("Project").map { $0.string("title") } == ["Apollo"])
            #expect(try stack.fetch("Company").map { $0.string("name") } == ["Acme"])
        }
    }
}

extension RawSQL {
    static func executeCreating(_ url: URL, _ sql: String) throws {
        let connection = try Connection(url, create: true)
        try connection.execute(sql)
    }
}
