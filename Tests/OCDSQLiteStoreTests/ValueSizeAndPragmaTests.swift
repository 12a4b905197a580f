import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import Testing

/// A value larger than SQLite takes (its length limit, 10⁹ bytes by default) fails the save with a Core
/// Data error and leaves the store as it was. Over 2 GiB, binding it stopped the process in `Int32(_:)`.
@Suite struct OversizedValueTests {
    @Test func aValueOverTwoGibibytesFailsTheSaveInsteadOfStopping() throws {
        // `Data(count:)` maps zeroed pages that nothing here writes: the process does not use 2 GiB.
        let model = TestModel.make { entities, _ in
            let blob = NSAttributeDescription()
            blob.name = "blob"
            blob.attributeType = .binaryDataAttributeType
            entities["Badge"]!.properties.append(blob)
        }
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: model, url: url)
        try withExtendedLifetime(stack.context) {
            let badge = stack.insert("Badge", ["number": 1])
            badge.setValue(Data(count: Int(Int32.max) + 4096), forKey: "blob")
            #expect {
                try stack.context.save()
            } throws: { error in
                let error = error as NSError
                return error.domain == NSCocoaErrorDomain && error.code == 134030
            }
            badge.setValue(Data([1, 2, 3]), forKey: "blob")
            try stack.context.save()
        }
        #expect(try RawSQL.rows(url, "SELECT length(ZBLOB) AS n FROM ZBADGE").map { $0["n"] as? Int64 } == [3])
        withExtendedLifetime(folder) {}
    }
}

/// `NSSQLitePragmasOption` values for the pragmas a new file's creation sets (page size, auto-vacuum) are
/// kept: the creation's defaults overrode them.
@Suite struct CreationPragmaTests {
    @Test func aNewStoreKeepsThePageSizeAndAutoVacuumItWasGiven() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url,
                                    options: [NSSQLitePragmasOption: ["page_size": "8192", "auto_vacuum": "NONE"]])
        try withExtendedLifetime(stack.context) {
            stack.insert("Company", ["name": "A"])
            try stack.context.save()
            #expect(stack.sqliteStore.metadata["_NSAutoVacuumLevel"] as? String == "0")
        }
        #expect(try RawSQL.rows(url, "PRAGMA page_size").first?["page_size"] as? Int64 == 8192)
        #expect(try RawSQL.rows(url, "PRAGMA auto_vacuum").first?["auto_vacuum"] as? Int64 == 0)

        // With a journal mode given as well: switching an empty file to WAL writes its first page, after
        // which its page size is fixed, so the page size goes first.
        let wal = folder.file("WAL.sqlite")
        let walStack = try SQLiteStack(model: TestModel.make(), url: wal,
                                       options: [NSSQLitePragmasOption: ["journal_mode": "WAL", "page_size": "16384"]])
        try withExtendedLifetime(walStack.context) {
            walStack.insert("Company", ["name": "A"])
            try walStack.context.save()
        }
        #expect(try RawSQL.rows(wal, "PRAGMA page_size").first?["page_size"] as? Int64 == 16384)
        #expect(try RawSQL.rows(wal, "PRAGMA journal_mode").first?["journal_mode"] as? String == "wal")

        let defaults = folder.file("Defaults.sqlite")
        let plain = try SQLiteStack(model: TestModel.make(), url: defaults)
        withExtendedLifetime(plain.context) {
            #expect(plain.sqliteStore.metadata["_NSAutoVacuumLevel"] as? String == "2")
        }
        #expect(try RawSQL.rows(defaults, "PRAGMA page_size").first?["page_size"] as? Int64 == 4096)
        #expect(try RawSQL.rows(defaults, "PRAGMA auto_vacuum").first?["auto_vacuum"] as? Int64 == 2)
        withExtendedLifetime(folder) {}
    }
}
