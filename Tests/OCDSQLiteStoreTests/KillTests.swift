import Foundation
import OCDGraph
import OCDSQLiteStore
import OCDStore
import OCDTestSupport
import Testing

/// Saving is one transaction: a process killed while it saves in a loop leaves a consistent store that
/// holds only whole saves (Tests/../Sources/ocd-kill-writer does the saving).
@Suite struct KillTests {
    /// The executable, built beside the test bundle by `swift build --build-tests` / `swift test`.
    static var writer: URL? { BuiltExecutables.url(named: "ocd-kill-writer") }

    @Test func aKilledWriterLeavesOnlyWholeSaves() throws {
        let writer = try #require(Self.writer, "ocd-kill-writer is built with the tests (swift build --build-tests)")
        let folder = TemporaryFolder()
        // Kept to the end: its deinit removes the files the writer process is still using.
        defer { withExtendedLifetime(folder) {} }
        let store = folder.file("Killed.sqlite")
        var totalSaves = 0
        // Several rounds on the same file: each run must open what the last one left behind.
        for round in 0..<4 {
            let process = Process()
            process.executableURL = writer
            process.arguments = [store.path, "40"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let reader = output.fileHandleForReading
            var text = ""
            // Wait until the writer has saved a few times, then kill it at an arbitrary point of a save.
            let wanted = 5 + round * 3
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let data = reader.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
                if text.components(separatedBy: "saved ").count - 1 >= wanted { break }
            }
            usleep(UInt32.random(in: 0...3_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal, "round \(round): the writer stopped by itself: \(text.suffix(200))")
            let reported = text.components(separatedBy: "saved ").count - 1
            #expect(reported >= wanted, "round \(round): the writer reported \(reported) saves")

            let integrity = try RawSQL.rows(store, "PRAGMA integrity_check").first?["integrity_check"] as? String
            #expect(integrity == "ok")
            let items = try RawSQL.rows(store, "SELECT COUNT(*) AS n FROM ZITEM").first?["n"] as? Int64 ?? -1
            let ledger = try RawSQL.rows(store, "SELECT ZTOTAL, ZSAVES FROM ZLEDGER")
            #expect(ledger.count == 1)
            let total = ledger.first?["ZTOTAL"] as? Int64 ?? -2
            let saves = ledger.first?["ZSAVES"] as? Int64 ?? -3
            #expect(items == total, "round \(round): \(items) items but the ledger says \(total)")
            #expect(total == saves * 40)
            // Every save that reported success is in the store; at most the one in flight is missing.
            #expect(saves >= Int64(totalSaves + reported))
            let partial = try RawSQL.rows(store, "SELECT ZBATCH, COUNT(*) AS n FROM ZITEM GROUP BY ZBATCH HAVING n != 40")
            #expect(partial.isEmpty, "batches with a part of a save: \(partial)")
            let batches = try RawSQL.rows(store, "SELECT COUNT(DISTINCT ZBATCH) AS n, MIN(ZBATCH) AS lo, MAX(ZBATCH) AS hi FROM ZITEM").first
            #expect(batches?["n"] as? Int64 == saves)
            #expect(batches?["hi"] as? Int64 == saves - 1)
            let maxKey = try RawSQL.rows(store, "SELECT MAX(Z_PK) AS pk FROM ZITEM").first?["pk"] as? Int64 ?? 0
            let zmax = try RawSQL.rows(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'").first?["Z_MAX"] as? Int64 ?? -1
            #expect(zmax >= maxKey, "Z_MAX never falls behind the keys in use")
            totalSaves = Int(saves)
        }
    }

    /// Runs the writer on `store` until it has reported `saves` saves, then kills it.
    private func runWriter(_ writer: URL, _ store: URL, saves: Int) throws -> String {
        let process = Process()
        process.executableURL = writer
        process.arguments = [store.path, "5"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            if text.components(separatedBy: "saved ").count - 1 >= saves { break }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return text
    }

    @Test func anObjectChangedByAnotherProcessIsAMergeConflict() throws {
        let writer = try #require(Self.writer, "ocd-kill-writer is built with the tests (swift build --build-tests)")
        let folder = TemporaryFolder()
        // Kept to the end: its deinit removes the files the writer process is still using.
        defer { withExtendedLifetime(folder) {} }
        let store = folder.file("Shared.sqlite")
        let model = LedgerModel.make()
        // This process creates the ledger and keeps it in a context.
        let stack = try SQLiteStack(model: model, url: store)
        try withExtendedLifetime(stack.context) {
            stack.insert("Ledger", ["total": 0, "saves": 0])
            try stack.context.save()
            let ledger = try #require(try stack.fetch("Ledger").first)
            #expect(ledger.value(forKey: "total") as? Int == 0)

            // Another process saves to the same ledger.
            let text = try runWriter(writer, store, saves: 2)
            #expect(text.contains("saved 2"), "\(text)")
            let storedTotal = try RawSQL.rows(store, "SELECT ZTOTAL, Z_OPT FROM ZLEDGER").first

            // Our change is now against a stale version: a merge conflict, and nothing written.
            ledger.setValue(1_000, forKey: "total")
            #expect {
                try stack.context.save()
            } throws: { error in
                let error = error as NSError
                let conflicts = error.userInfo["conflictList"] as? [NSMergeConflict]
                return error.code == 133020 && conflicts?.first?.sourceObject === ledger
                    && (conflicts?.first?.newVersionNumber ?? 0) > (conflicts?.first?.oldVersionNumber ?? 0)
            }
            let after = try RawSQL.rows(store, "SELECT ZTOTAL, Z_OPT FROM ZLEDGER").first
            #expect(after?["ZTOTAL"] as? Int64 == storedTotal?["ZTOTAL"] as? Int64)
            #expect(after?["Z_OPT"] as? Int64 == storedTotal?["Z_OPT"] as? Int64)

            // With the object-trump policy the same save goes through: our changed total wins over the other process's.
            stack.context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
            try stack.context.save()
            #expect(try RawSQL.rows(store, "SELECT ZTOTAL FROM ZLEDGER").first?["ZTOTAL"] as? Int64 == 1_000)
        }
    }
}
