import Foundation
import OCDGraph
import OCDSQLiteStore
import Testing

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

    @Test func aCountingLogRecordsStatementsAndMeasuresNoTime() throws {
        let log = SQLStatementLog()
        _ = try tenSaves(logging: log)
        #expect(!log.measuresSQLiteTime)
        #expect(log.statements.count >= 30)
        #expect(log.sqliteNanoseconds == 0)
    }
}
