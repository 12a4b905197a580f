import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
import Testing
import class OCDPredicate.NSPredicate

/// Optimistic locking with Z_OPT across coordinators (as across processes), metadata without opening,
/// and the version-hash check.
@Suite struct LockingAndMetadataTests {
    /// A store holding one Company, saved by the first of two coordinators opened on it.
    private func twoCoordinatorsOnOneCompany(_ folder: TemporaryFolder) throws -> (URL, SQLiteStack, SQLiteStack) {
        let url = folder.file()
        let model = TestModel.make()
        let first = try SQLiteStack(model: model, url: url)
        try withExtendedLifetime(first.context) {
            first.insert("Company", ["name": "Acme"])
            try first.context.save()
        }
        return (url, first, try SQLiteStack(model: model, url: url))
    }

    @Test func twoCoordinatorsChangingOneObjectConflictAndTheLoserWritesNothing() throws {
        let folder = TemporaryFolder()
        let (url, first, second) = try twoCoordinatorsOnOneCompany(folder)
        try withExtendedLifetime((first.context, second.context)) {
            let mine = try #require(try first.fetch("Company").first)
            let theirs = try #require(try second.fetch("Company").first)
            _ = mine.value(forKey: "name")
            _ = theirs.value(forKey: "name")
            #expect(try RawSQL.rows(url, "SELECT Z_OPT FROM ZCOMPANY").first?["Z_OPT"] as? Int64 == 1)

            theirs.setValue("Theirs", forKey: "name")
            try second.context.save()
            #expect(try RawSQL.rows(url, "SELECT Z_OPT FROM ZCOMPANY").first?["Z_OPT"] as? Int64 == 2)

            mine.setValue("Mine", forKey: "name")
            stack: do {
                try first.context.save()
                Issue.record("the stale save succeeded")
            } catch {
                let error = error as NSError
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == 133020)
                let conflicts = error.userInfo["conflictList"] as? [NSMergeConflict]
                #expect(conflicts?.count == 1)
                #expect(conflicts?.first?.sourceObject === mine)
                #expect(conflicts?.first?.oldVersionNumber == 1)
                #expect(conflicts?.first?.newVersionNumber == 2)
                #expect(conflicts?.first?.persistedSnapshot?["name"] as? String == "Theirs")
                break stack
            }
            let stored = try RawSQL.rows(url, "SELECT ZNAME, Z_OPT FROM ZCOMPANY")
            #expect(stored.first?["ZNAME"] as? String == "Theirs")
            #expect(stored.first?["Z_OPT"] as? Int64 == 2)
        }
    }

    /// As in Core Data's SQL log: one transaction takes the primary keys and writes the rows, so no other
    /// connection writes between the version check and the write.
    @Test func aSaveTakesKeysChecksAndWritesInOneTransaction() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let acme = stack.insert("Company", ["name": "Acme"])
        try stack.context.save()
        let log = SQLStatementLog()
        stack.sqliteStore.statementLog = log
        defer { stack.sqliteStore.statementLog = nil }

        acme.setValue("Acme Corp", forKey: "name")
        stack.insert("Company", ["name": "Globex"])
        stack.insert("Company", ["name": "Initech"])
        try stack.context.save()
        let statements = log.statements.map { $0.uppercased() }
        #expect(statements.first == "BEGIN IMMEDIATE")
        #expect(statements.last == "COMMIT")
        #expect(statements.filter { $0.hasPrefix("BEGIN") || $0 == "COMMIT" || $0 == "ROLLBACK" }.count == 2)
        let keys = try #require(statements.firstIndex { $0.hasPrefix("UPDATE Z_PRIMARYKEY") })
        let insert = try #require(statements.firstIndex { $0.hasPrefix("INSERT INTO ZCOMPANY") })
        let update = try #require(statements.firstIndex { $0.hasPrefix("UPDATE ZCOMPANY") })
        #expect(keys < update && update < insert)

        // A save with nothing for the store runs no statement at all.
        log.reset()
        let temporary = stack.insert("Company", ["name": "Gone"])
        stack.context.delete(temporary)
        try stack.context.save()
        #expect(log.statements.isEmpty)
    }

    /// Keys taken by a round that then fails stay taken: the objects keep those IDs, so a later save by
    /// anyone must not get them again. The rows of the failed round are not written.
    @Test func keysTakenByAFailedSaveStayTakenAndNothingElseIsWritten() throws {
        let folder = TemporaryFolder()
        let (url, first, second) = try twoCoordinatorsOnOneCompany(folder)
        try withExtendedLifetime((first.context, second.context)) {
            let mine = try #require(try first.fetch("Company").first)
            let theirs = try #require(try second.fetch("Company").first)
            _ = mine.value(forKey: "name")
            theirs.setValue("Theirs", forKey: "name")
            try second.context.save()

            mine.setValue("Mine", forKey: "name")
            let added = first.insert("Company", ["name": "Globex"])
            #expect(throws: (any Error).self) { try first.context.save() }
            #expect(!added.objectID.isTemporaryID)
            let key = try #require(first.store.primaryKey(of: added.objectID))
            let stored = try RawSQL.rows(url, "SELECT ZNAME FROM ZCOMPANY ORDER BY Z_PK").compactMap { $0["ZNAME"] as? String }
            #expect(stored == ["Theirs"])
            let maximum = try RawSQL.rows(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Company'").first?["Z_MAX"] as? Int64
            #expect((maximum ?? 0) >= key)

            // Another coordinator's new object gets another key.
            let other = second.insert("Company", ["name": "Initech"])
            try second.context.save()
            #expect(second.store.primaryKey(of: other.objectID) != key)
        }
    }

    @Test func aDeleteInAnotherCoordinatorMakesTheUpdateAConflict() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make()
        let first = try SQLiteStack(model: model, url: url)
        let second = try SQLiteStack(model: model, url: url)
        try withExtendedLifetime((first.context, second.context)) {
            first.insert("Project", ["title": "Apollo"])
            try first.context.save()
            let mine = try #require(try first.fetch("Project").first)
            _ = mine.value(forKey: "title")
            second.context.delete(try #require(try second.fetch("Project").first))
            try second.context.save()
            mine.setValue("Gemini", forKey: "title")
            #expect(throws: NSError.self) { try first.context.save() }
            #expect(try RawSQL.rows(url, "SELECT COUNT(*) AS n FROM ZPROJECT").first?["n"] as? Int64 == 0)
        }
    }

    /// One file is one store of a coordinator, whatever its URL's spelling: adding it again through `.`,
    /// `..` or a symbolic link fails as adding the same URL does (two stores on one file got past it).
    @Test func theSameFileCannotBeAddedTwiceUnderAnotherSpelling() throws {
        let folder = TemporaryFolder()
        let url = folder.file("Store.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let link = folder.file("Link.sqlite")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let spellings = [url, URL(fileURLWithPath: url.deletingLastPathComponent().path + "/./Store.sqlite"),
                         URL(fileURLWithPath: url.deletingLastPathComponent().path + "/sub/../Store.sqlite"), link]
        for spelling in spellings {
            let error = try #require(throws: NSError.self) {
                try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: spelling, options: nil)
            }
            #expect(error.code == NSPersistentStoreOperationError, "\(spelling.path)")
        }
        #expect(coordinator.persistentStores.count == 1)
    }

    /// Metadata set without the store's own keys keeps them: the file saved with it opens again.
    @Test func metadataSetWithoutTheVersionKeysKeepsThem() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make()
        do {
            let stack = try SQLiteStack(model: model, url: url)
            stack.coordinator.setMetadata(["com.example.token": "abc"], for: stack.store)
            #expect(stack.store.metadata[NSStoreModelVersionHashesKey] != nil)
            try withExtendedLifetime(stack.context) {
                stack.insert("Company", ["name": "Acme"])
                try stack.context.save()
            }
        }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(metadata["com.example.token"] as? String == "abc")
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let again = try SQLiteStack(model: model, url: url)
        #expect(try again.stored("Company") { $0.string("name") } == ["Acme"])
    }

    @Test func metadataIsReadAndWrittenWithoutOpeningTheStore() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make()
        var identifier: String?
        do {
            let stack = try SQLiteStack(model: model, url: url)
            identifier = stack.store.identifier
            var metadata = stack.coordinator.metadata(for: stack.store)
            metadata["com.example.token"] = "abc"
            stack.coordinator.setMetadata(metadata, for: stack.store)
            try withExtendedLifetime(stack.context) {
                stack.insert("Company", ["name": "Acme"])
                try stack.context.save()
            }
        }
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(metadata[NSStoreUUIDKey] as? String == identifier)
        #expect(metadata["com.example.token"] as? String == "abc")
        #expect(metadata[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))

        metadata["com.example.token"] = "def"
        metadata["com.example.count"] = 3
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        let again = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(again["com.example.token"] as? String == "def")
        #expect(again["com.example.count"] as? Int == 3)
        #expect(again[NSStoreUUIDKey] as? String == identifier, "the UUID survives")
        let stack = try SQLiteStack(model: model, url: url)
        #expect(stack.store.identifier == identifier)
        #expect(try stack.fetch("Company").count == 1)

        #expect(throws: NSError.self) {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: folder.file("Missing.sqlite"))
        }
    }

    /// A save writes the metadata when it was set since the last write, and only then: comparing it per
    /// save cost more than the save, so the store counts the settings instead.
    @Test func aSaveWritesTheMetadataOnlyAfterItWasSet() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        let log = SQLStatementLog()
        stack.sqliteStore.statementLog = log
        defer { stack.sqliteStore.statementLog = nil }
        func metadataWrites(_ body: () throws -> Void) rethrows -> Int {
            log.reset()
            try body()
            return log.statements.filter { $0.uppercased().contains("Z_METADATA") }.count
        }
        #expect(try metadataWrites {
            stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
        } == 0)

        var metadata = stack.coordinator.metadata(for: stack.store)
        metadata["com.example.token"] = "abc"
        stack.coordinator.setMetadata(metadata, for: stack.store)
        #expect(try metadataWrites {
            stack.insert("Company", ["name": "Globex"])
            try stack.context.save()
        } > 0)
        #expect(try metadataWrites {
            stack.insert("Company", ["name": "Initech"])
            try stack.context.save()
        } == 0)

        // Setting it again, even to the same values, is written once more; so is a change through the store.
        stack.coordinator.setMetadata(stack.coordinator.metadata(for: stack.store), for: stack.store)
        stack.store.metadata["com.example.count"] = 3
        #expect(try metadataWrites {
            stack.insert("Company", ["name": "Umbrella"])
            try stack.context.save()
        } > 0)
        let stored = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(stored["com.example.token"] as? String == "abc")
        #expect(stored["com.example.count"] as? Int == 3)
        #expect(stored[NSStoreUUIDKey] as? String == stack.store.identifier)
    }

    @Test func anIncompatibleModelIsRefusedWithAppleError() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        _ = try SQLiteStack(model: TestModel.make(), url: url)
        let changed = TestModel.make { entities, _ in
            let extra = NSAttributeDescription()
            extra.name = "founded"
            extra.attributeType = .dateAttributeType
            entities["Company"]!.properties.append(extra)
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: changed)
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == 134100
                && error.localizedDescription == "The model used to open the store is incompatible with the one used to create the store"
        }
        // A model that differs only in what version hashes ignore (a default value) is compatible.
        let compatible = TestModel.make { entities, _ in
            (entities["Company"]!.propertiesByName["name"] as! NSAttributeDescription).defaultValue = "Unnamed"
        }
        let stack = try SQLiteStack(model: compatible, url: url)
        #expect(stack.store.type == NSSQLiteStoreType)
    }
}
