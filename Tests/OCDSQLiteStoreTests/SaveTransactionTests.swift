import CSQLite
import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import Synchronization
import Testing

/// Commits SQLite turns into rollbacks while positive (a commit hook answering non-zero fails the COMMIT).
private let failingCommits = Atomic<Int>(0)

/// A save's round is one transaction per store it touches (Documentation/SQLiteStore.md, "Saving and
/// locking"): what happens when that transaction is lost, and what a store the save does not touch sees.
@Suite(.serialized) struct SaveTransactionTests {
    /// Installs a commit hook on the stack's connection that fails the next `failingCommits` COMMITs;
    /// returns the handle, whose hook the test removes.
    private func failCommits(of stack: SQLiteStack) throws -> OpaquePointer {
        let handle = try #require(stack.sqliteStore.sqliteHandleForTesting)
        sqlite3_commit_hook(handle, { _ in
            failingCommits.subtract(1, ordering: .relaxed).newValue >= 0 ? 1 : 0
        }, nil)
        return handle
    }

    /// BEGIN IMMEDIATE and COMMIT are prepared once per connection and run again from its statement
    /// cache: compiling them on every save (`sqlite3_exec`) was about a tenth of a small save.
    @Test func transactionStatementsArePreparedOnce() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let handle = try #require(stack.sqliteStore.sqliteHandleForTesting)
        func prepared() -> [String: [OpaquePointer]] {
            var byText: [String: [OpaquePointer]] = [:]
            var statement = sqlite3_next_stmt(handle, nil)
            while let current = statement {
                byText[String(cString: sqlite3_sql(current)), default: []].append(current)
                statement = sqlite3_next_stmt(handle, current)
            }
            return byText
        }
        stack.insert("Company", ["name": "Acme"])
        try stack.context.save()
        let first = prepared()
        #expect(first["BEGIN IMMEDIATE"]?.count == 1)
        #expect(first["COMMIT"]?.count == 1)
        for name in ["Globex", "Initech"] {
            stack.insert("Company", ["name": name])
            try stack.context.save()
        }
        let later = prepared()
        #expect(later["BEGIN IMMEDIATE"] == first["BEGIN IMMEDIATE"])
        #expect(later["COMMIT"] == first["COMMIT"])
        #expect(try stack.fetch("Company", sortedBy: "name").map { $0.value(forKey: "name") as? String } == ["Acme", "Globex", "Initech"])
    }

    /// The objects of a round whose COMMIT fails keep the permanent IDs they were given, so their keys are
    /// raised in Z_MAX again after the rollback: no later save, in this coordinator or another, gets them.
    @Test func keysOfARoundWhoseCommitFailsStayTaken() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make()
        let stack = try SQLiteStack(model: model, url: url)
        let handle = try failCommits(of: stack)
        defer { sqlite3_commit_hook(handle, nil, nil) }

        let acme = stack.insert("Company", ["name": "Acme"])
        let globex = stack.insert("Company", ["name": "Globex"])
        failingCommits.store(1, ordering: .relaxed)
        #expect(throws: (any Error).self) { try stack.context.save() }
        failingCommits.store(0, ordering: .relaxed)
        let keys = try [acme, globex].map { try #require(stack.store.primaryKey(of: $0.objectID)) }
        #expect(!acme.objectID.isTemporaryID && !globex.objectID.isTemporaryID)
        #expect(try RawSQL.rows(url, "SELECT Z_PK FROM ZCOMPANY").isEmpty)
        let maximum = try RawSQL.rows(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Company'").first?["Z_MAX"] as? Int64
        #expect((maximum ?? 0) >= keys.max()!)

        // Another coordinator's object gets a key of its own, and the first save goes through on retry.
        let other = try SQLiteStack(model: model, url: url)
        let initech = other.insert("Company", ["name": "Initech"])
        try other.context.save()
        #expect(!keys.contains(try #require(other.store.primaryKey(of: initech.objectID))))
        try stack.context.save()
        #expect(try companyNames(url) == ["Acme", "Globex", "Initech"])
        withExtendedLifetime(other) {}
    }

    /// A stack whose save of Acme and Globex lost its COMMIT and then its raising of `Z_MAX` again (two
    /// failed commits, after a seeded Company): the two objects hold keys above `Z_MAX`. `body` runs with
    /// the hook still installed (and failing nothing).
    private func withKeysHeldAboveTheMaximum(_ body: (SQLiteStack, URL, [NSManagedObject]) throws -> Void) throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        let handle = try failCommits(of: stack)
        defer { sqlite3_commit_hook(handle, nil, nil) }
        _ = stack.insert("Company", ["name": "Seed"])
        try stack.context.save()
        let held = [stack.insert("Company", ["name": "Acme"]), stack.insert("Company", ["name": "Globex"])]
        failingCommits.store(2, ordering: .relaxed)
        #expect(throws: (any Error).self) { try stack.context.save() }
        failingCommits.store(0, ordering: .relaxed)
        try body(stack, url, held)
    }

    private func companyNames(_ url: URL) throws -> [String] {
        try RawSQL.rows(url, "SELECT ZNAME FROM ZCOMPANY ORDER BY ZNAME").compactMap { $0["ZNAME"] as? String }
    }

    /// When a round's COMMIT fails and so does raising `Z_MAX` again, its objects hold keys above
    /// `Z_MAX`: once they are saved, a new object's key must still come above theirs, so the store reads
    /// the table's largest key again rather than trusting a check made before.
    @Test func keysHeldAboveTheMaximumAreNeverHandedOutAgain() throws {
        try withKeysHeldAboveTheMaximum { stack, url, objects in
            let held = try objects.map { try #require(stack.store.primaryKey(of: $0.objectID)) }
            let maximum = try RawSQL.rows(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Company'").first?["Z_MAX"] as? Int64
            #expect((maximum ?? 0) < held.max()!, "the second failed commit kept Z_MAX below the held keys")

            try stack.context.save()
            let initech = stack.insert("Company", ["name": "Initech"])
            try stack.context.save()
            #expect(try #require(stack.store.primaryKey(of: initech.objectID)) > held.max()!)
            #expect(try companyNames(url) == ["Acme", "Globex", "Initech", "Seed"])
        }
    }

    /// The same, but with a new object inserted before the held keys are saved: neither Z_MAX nor the
    /// table shows those keys then, and the store must still not hand one out again (two objects of one
    /// context would share an ID, and the save would fail on Z_PK's uniqueness for ever).
    @Test func keysHeldAboveTheMaximumAreNotHandedOutBeforeTheyAreSaved() throws {
        try withKeysHeldAboveTheMaximum { stack, url, held in
            let initech = stack.insert("Company", ["name": "Initech"])
            try stack.context.obtainPermanentIDs(for: [initech])
            let objects = held + [initech]
            let keys = try objects.map { try #require(stack.store.primaryKey(of: $0.objectID)) }
            #expect(Set(keys).count == 3, "keys \(keys)")
            for object in objects { #expect(stack.context.object(with: object.objectID) === object) }
            try stack.context.save()
            #expect(try companyNames(url) == ["Acme", "Globex", "Initech", "Seed"])
        }
    }

    /// The only store of a save finds version conflicts in its writes, as Core Data's SQL does, instead of
    /// reading every version first.
    /// With a uniqueness constraint in play the versions are read first, so that version conflicts are
    /// reported before uniqueness ones.
    @Test func theOnlyStoreOfASaveLeavesVersionConflictsToItsWrites() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make { entities, _ in entities["Project"]!.uniquenessConstraints = [["title"]] }
        let first = try SQLiteStack(model: model, url: url)
        let acme = first.insert("Company", ["name": "Acme"])
        let project = first.insert("Project", ["title": "Apollo"])
        try first.context.save()
        let log = SQLStatementLog()
        first.sqliteStore.statementLog = log
        defer { first.sqliteStore.statementLog = nil }

        acme.setValue("Acme Corp", forKey: "name")
        try first.context.save()
        #expect(!log.statements.contains { $0.uppercased().contains("SELECT Z_PK, Z_OPT") })
        #expect(log.statements.contains { $0.uppercased().hasPrefix("UPDATE ZCOMPANY") })

        log.reset()
        project.setValue("Gemini", forKey: "title")
        try first.context.save()
        #expect(log.statements.contains { $0.uppercased().contains("SELECT Z_PK, Z_OPT") })

        // What the writes then find, and that the keys of the undone round stay taken, is pinned by
        // LockingAndMetadataTests (twoCoordinatorsChangingOneObject…, keysTakenByAFailedSave…), which save
        // on this same path.
    }

    /// A small save of the only store runs Core Data's statements and no more: the transaction, `Z_MAX`
    /// read and raised, the insert. The table's largest key is read once, not per save, and no savepoint
    /// wraps the writes (a failed write rolls the whole round back instead).
    @Test func aSmallSaveOfTheOnlyStoreRunsFiveStatements() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let log = SQLStatementLog()
        stack.sqliteStore.statementLog = log
        _ = stack.insert("Company", ["name": "Acme"])
        try stack.context.save()
        #expect(log.statements.contains { $0.uppercased().contains("MAX(Z_PK)") })

        log.reset()
        _ = stack.insert("Company", ["name": "Globex"])
        try stack.context.save()
        let kinds = log.statements.map { String($0.uppercased().prefix(while: { $0 != " " })) }
        #expect(kinds == ["BEGIN", "SELECT", "UPDATE", "INSERT", "COMMIT"], "\(log.statements)")
        #expect(!log.statements.contains { $0.uppercased().contains("MAX(Z_PK)") || $0.uppercased().contains("SAVEPOINT") })
    }

    /// Rows another connection writes without raising `Z_MAX` are seen at the next save, which reads the
    /// largest key again after any commit that was not this store's own save.
    @Test func keysStayAboveRowsWrittenByOtherCode() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        _ = stack.insert("Company", ["name": "Acme"])
        try stack.context.save()
        let entity = try #require(RawSQL.rows(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Company'").first?["Z_ENT"] as? Int64)
        try RawSQL.execute(url, "INSERT INTO ZCOMPANY (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1000, \(entity), 1, 'Foreign')")

        let globex = stack.insert("Company", ["name": "Globex"])
        try stack.context.save()
        #expect(try #require(stack.store.primaryKey(of: globex.objectID)) == 1001)

        // The same through this store's own connection, outside a save.
        let handle = try #require(stack.sqliteStore.sqliteHandleForTesting)
        #expect(sqlite3_exec(handle, "INSERT INTO ZCOMPANY (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (2000, \(entity), 1, 'Own')", nil, nil, nil) == SQLITE_OK)
        let initech = stack.insert("Company", ["name": "Initech"])
        try stack.context.save()
        #expect(try #require(stack.store.primaryKey(of: initech.objectID)) == 2001)
        let count = try RawSQL.rows(url, "SELECT COUNT(*) AS n FROM ZCOMPANY").first?["n"] as? Int64
        #expect(count == 5)
    }

    /// An update writes the columns of the properties that changed, and the version, as Core Data's SQL
    /// does: the other columns keep what is stored, and one statement text serves each set of columns.
    @Test func anUpdateWritesOnlyTheChangedColumns() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        let acme = stack.insert("Company", ["name": "Acme"])
        let sales = stack.insert("Department", ["name": "Sales", "budget": 10, "company": acme])
        let support = stack.insert("Department", ["name": "Support", "budget": 20])
        try stack.context.save()
        let log = SQLStatementLog()
        stack.sqliteStore.statementLog = log

        sales.setValue(11, forKey: "budget")
        support.setValue(21, forKey: "budget")
        try stack.context.save()
        var updates = log.statements.filter { $0.hasPrefix("UPDATE ZDEPARTMENT") }
        #expect(updates.count == 2)
        #expect(Set(updates).count == 1, "one statement text for the same columns")
        #expect(updates.first == "UPDATE ZDEPARTMENT SET Z_OPT = Z_OPT + 1, ZBUDGET = ? WHERE Z_PK = ? AND Z_OPT = ?")

        log.reset()
        sales.setValue(nil, forKey: "company")
        sales.setValue("Sales EU", forKey: "name")
        try stack.context.save()
        updates = log.statements.filter { $0.hasPrefix("UPDATE ZDEPARTMENT") }
        #expect(updates.count == 1)
        let update = try #require(updates.first)
        #expect(update.contains("ZNAME = ?") && update.contains("ZCOMPANY = ?") && !update.contains("ZBUDGET"))

        let rows = try RawSQL.rows(url, "SELECT ZNAME, ZBUDGET, ZCOMPANY, Z_OPT FROM ZDEPARTMENT ORDER BY ZNAME")
        #expect(rows.map { $0["ZNAME"] as? String } == ["Sales EU", "Support"])
        #expect(rows.map { $0["ZBUDGET"] as? Int64 } == [11, 21])
        #expect(rows.first?["ZCOMPANY"] as? Int64 == nil)
        #expect(rows.map { $0["Z_OPT"] as? Int64 } == [3, 2])

        // A string in another Unicode form is a change, as `NSString.isEqual(_:)` sees it, and is written.
        let composed = "Caf\u{E9}", decomposed = "Cafe\u{301}"
        support.setValue(composed, forKey: "name")
        try stack.context.save()
        support.setValue(decomposed, forKey: "name")
        #expect(support.changedValues()["name"] as? String == decomposed)
        try stack.context.save()
        let stored = try RawSQL.rows(url, "SELECT ZNAME FROM ZDEPARTMENT WHERE ZBUDGET = 21").first?["ZNAME"] as? String
        #expect(stored.map { Array($0.utf8) } == Array(decomposed.utf8))
    }

    /// With two stores, a save that writes to one sends the other no statement, so it takes no lock there.
    @Test func aStoreTheSaveDoesNotTouchSeesNoStatement() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file("First.sqlite"))
        let second = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                                              at: folder.file("Second.sqlite"), options: nil)
        let log = SQLStatementLog()
        try #require(second as? SQLiteStore).statementLog = log
        let firstLog = SQLStatementLog()
        stack.sqliteStore.statementLog = firstLog

        let acme = stack.insert("Company", ["name": "Acme"])
        try stack.context.save()
        #expect(acme.objectID.persistentStore === stack.store)
        #expect(log.statements.isEmpty)
        #expect(firstLog.statements.first == "BEGIN IMMEDIATE")
        #expect(firstLog.statements.last == "COMMIT")
    }
}
