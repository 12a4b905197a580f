import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import Testing

/// Saves and fetches of a few thousand objects take a bounded number of statements (no per-object
/// queries), so the store scales linearly. (Speed itself is the benchmark package's business.)
@Suite struct ScaleTests {
    @Test func savingAndFetchingManyObjectsUsesFewStatementsPerObject() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        try withExtendedLifetime(stack.context) {
            let log = SQLStatementLog()
            stack.sqliteStore.statementLog = log
            let department = stack.insert("Department", ["name": "Big"])
            for index in 0..<5_000 {
                stack.insert("Employee", ["name": "E\(index)", "age": index % 100, "department": department])
            }
            try stack.context.save()
            let saveStatements = log.statements.count
            // One INSERT per object, plus a handful for the transaction and the keys.
            #expect(saveStatements <= 5_001 + 20, "\(saveStatements) statements")
            log.reset()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            let employees = try stack.context.fetch(request)
            #expect(employees.count == 5_000)
            #expect(employees.reduce(0) { $0 + (($1.value(forKey: "age") as? Int) ?? 0) } == 5_000 / 100 * (0..<100).reduce(0, +))
            #expect(log.statements.count == 1)
            stack.sqliteStore.statementLog = nil
        }
    }
}
