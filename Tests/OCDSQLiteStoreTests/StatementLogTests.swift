import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import Testing
import class OCDPredicate.NSPredicate

/// The store's statement log: what tests count, and the time inside SQLite that the benchmark's split of a
/// workload ("OCD in SQLite", "rest vs C") reads.
@Suite struct StatementLogTests {
    /// Ten saves of one new object each, with `log` on the store; the wall time they took.
    private func tenSaves(logging log: SQLStatementLog) throws -> UInt64 {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        stack.sqliteStore.statementLog = log
        defer { stack.sqliteStore.statementLog = nil }
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<10 {
            stack.insert("Company", ["name": "Company \(index)"])
            try stack.context.save()
        }
        return DispatchTime.now().uptimeNanoseconds - start
    }

    @Test func aMeasuringLogAddsUpTheTimeSpentInsideSQLiteWithinTheTimeTheWorkTook() throws {
        let log = SQLStatementLog(measuringSQLiteTime: true)
        let elapsed = try tenSaves(logging: log)
        // Each save runs at least BEGIN, the INSERT and COMMIT.
        #expect(log.statements.count >= 30)
        #expect(log.sqliteNanoseconds > 0)
        #expect(log.sqliteNanoseconds <= elapsed)

        log.reset()
        #expect(log.statements.isEmpty)
        #expect(log.sqliteNanoseconds == 0)
    }

    /// The connection keeps up to 256 prepared statements, and a few recent ones beside them: statements
    /// whose text varies (IN lists of every length here) are finalized when the cache fills, and a recent
    /// one among them must then be forgotten too, while the statements in use stay usable.
    @Test func statementsOfVaryingTextComeAndGoWhileTheRecentOnesStayUsable() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        for index in 0..<5 { stack.insert("Company", ["name": "Company \(index)"]) }
        try stack.context.save()
        let log = SQLStatementLog()
        stack.sqliteStore.statementLog = log
        defer { stack.sqliteStore.statementLog = nil }
        let all = NSFetchRequest<NSManagedObject>(entityName: "Company")
        for size in 1...300 {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Company")
            let names = (0..<size - 1).map { "nobody \($0)" } + ["Company \(size % 5)"]
            request.predicate = NSPredicate(format: "name IN %@", names)
            #expect(try stack.context.count(for: request) == 1, "IN list of \(size)")
            #expect(try stack.context.count(for: all) == 5)
        }
        // Each IN list was a statement of its own text.
        #expect(Set(log.statements).count >= 300)
        stack.insert("Company", ["name": "Company 5"])
        try stack.context.save()
        #expect(try stack.context.count(for: all) == 6)
    }

    /// The connection's recent statements are told apart by their length first, then their text: two
    /// texts of one length (counts of ZCOMPANY and ZPROJECT) each keep their own statement.
    @Test func recentStatementsOfTheSameLengthAreToldApartByTheirText() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        for index in 0..<3 { stack.insert("Company", ["name": "Company \(index)"]) }
        stack.insert("Project", ["title": "Apollo"])
        try stack.context.save()
        let log = SQLStatementLog()
        stack.sqliteStore.statementLog = log
        defer { stack.sqliteStore.statementLog = nil }
        let companies = NSFetchRequest<NSManagedObject>(entityName: "Company")
        let projects = NSFetchRequest<NSManagedObject>(entityName: "Project")
        for _ in 0..<5 {
            #expect(try stack.context.count(for: companies) == 3)
            #expect(try stack.context.count(for: projects) == 1)
        }
        let texts = Set(log.statements)
        #expect(texts.count == 2)
        #expect(Set(texts.map(\.utf8.count)).count == 1, "the two counts' texts should be of one length: \(texts)")
    }

    @Test func aCountingLogRecordsStatementsAndMeasuresNoTime() throws {
        let log = SQLStatementLog()
        _ = try tenSaves(logging: log)
        #expect(!log.measuresSQLiteTime)
        #expect(log.statements.count >= 30)
        #expect(log.sqliteNanoseconds == 0)
    }
}
