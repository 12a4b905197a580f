import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate
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

/// What the SQL of a count looks like: SQLite answers `SELECT COUNT(*) FROM T` without a WHERE clause
/// from the table's b-tree pages, without stepping through rows, so a count of an entity that has its
/// table to itself carries no `Z_ENT` test and no `WHERE 1`.
@Suite struct CountSQLTests {
    @Test func aCountOfAnEntityAloneInItsTableHasNoWhereClause() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        try withExtendedLifetime(stack.context) {
            for name in ["A", "B", "C"] { stack.insert("Department", ["name": name]) }
            stack.insert("Employee", ["name": "Ann"])
            stack.insert("Manager", ["name": "Meg"])
            try stack.context.save()
            let log = SQLStatementLog()
            stack.sqliteStore.statementLog = log
            defer { stack.sqliteStore.statementLog = nil }

            #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 3)
            let plain = try #require(log.statements.last)
            #expect(plain.hasPrefix("SELECT COUNT(*) FROM ZDEPARTMENT"))
            #expect(!plain.contains("WHERE"), "\(plain)")

            let named = NSFetchRequest<NSManagedObject>(entityName: "Department")
            named.predicate = NSPredicate(format: "name == %@", "B")
            #expect(try stack.context.count(for: named) == 1)
            #expect(log.statements.last?.contains("WHERE") == true)

            // Employee shares its table with Manager: counting Employees alone needs the entity column.
            let employees = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            employees.includesSubentities = false
            #expect(try stack.context.count(for: employees) == 1)
            #expect(log.statements.last?.contains("Z_ENT") == true)
            #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 2)
        }
    }
}

/// Temporary IDs come from one random UUID per process with a counter folded in (not a `UUID()` each):
/// they must still be distinct, temporary, and distinct in their URIs.
@Suite struct TemporaryIDTests {
    @Test func temporaryIDsAreDistinct() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        withExtendedLifetime(stack.context) {
            let objects = (0..<10_000).map { stack.insert("Department", ["name": "D\($0)"]) }
            #expect(objects.allSatisfy { $0.objectID.isTemporaryID })
            #expect(Set(objects.map(\.objectID)).count == 10_000)
            #expect(Set(objects.map { $0.objectID.uriRepresentation() }).count == 10_000)
        }
    }
}
