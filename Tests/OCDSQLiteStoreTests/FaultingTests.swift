import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
import Testing
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Faulting and uniquing on the SQLite store, with the number of SQL statements each operation runs:
/// no per-object query where one query can serve a batch.
@Suite struct FaultingTests {
    /// A store with 3 departments of 50 employees each (each with 2 tasks), saved, and a fresh stack on it.
    private func populated(_ folder: TemporaryFolder) throws -> SQLiteStack {
        let url = folder.file()
        let model = TestModel.make()
        do {
            let stack = try SQLiteStack(model: model, url: url)
            try withExtendedLifetime(stack.context) {
                for d in 0..<3 {
                    let department = stack.insert("Department", ["name": "D\(d)"])
                    for e in 0..<50 {
                        let employee = stack.insert("Employee", ["name": "E\(d)-\(e)", "age": e, "department": department])
                        employee.setValue(NSOrderedSet(array: [stack.insert("Task", ["title": "a\(e)"]), stack.insert("Task", ["title": "b\(e)"])]), forKey: "tasks")
                    }
                }
                try stack.context.save()
            }
        }
        return try SQLiteStack(model: model, url: url)
    }

    private func counting(_ stack: SQLiteStack, _ body: () throws -> Void) rethrows -> [String] {
        let log = SQLStatementLog()
        stack.sqliteStore.statementLog = log
        defer { stack.sqliteStore.statementLog = nil }
        try body()
        return log.statements
    }

    @Test func fetchedObjectsAreFaultsFilledFromTheRowCache() throws {
        let folder = TemporaryFolder()
        let stack = try populated(folder)
        try withExtendedLifetime(stack.context) {
            var employees: [NSManagedObject] = []
            let fetch = try counting(stack) { employees = try stack.fetch("Employee", sortedBy: "name") }
            #expect(fetch.count == 1)
            #expect(employees.count == 150)
            #expect(employees.allSatisfy { $0.isFault })
            let reads = counting(stack) {
                for employee in employees { _ = employee.value(forKey: "name") }
            }
            #expect(reads.isEmpty, "firing a fetched fault reads the row cache, not the store")
            #expect(employees.allSatisfy { !$0.isFault })
        }
    }

    @Test func toOneRelationshipsAreFaultsUntilTouched() throws {
        let folder = TemporaryFolder()
        let stack = try populated(folder)
        try withExtendedLifetime(stack.context) {
            let employees = try stack.fetch("Employee", sortedBy: "name")
            var department: NSManagedObject?
            let statements = counting(stack) {
                department = employees[0].value(forKey: "department") as? NSManagedObject
            }
            #expect(statements.isEmpty)
            #expect(department?.isFault == true)
            #expect(employees[1].value(forKey: "department") as? NSManagedObject === department, "uniquing: one object per ID")
            let fire = counting(stack) { _ = department?.value(forKey: "name") }
            #expect(fire.count == 1)
        }
    }

    @Test func aToManyFaultFiresWithOneQueryAndItsObjectsInOneMore() throws {
        let folder = TemporaryFolder()
        let stack = try populated(folder)
        try withExtendedLifetime(stack.context) {
            let department = try stack.fetch("Department", "name == 'D1'").first!
            var employees: Set<NSManagedObject> = []
            let fire = counting(stack) { employees = department.value(forKey: "employees") as? Set<NSManagedObject> ?? [] }
            #expect(fire.count == 1)
            #expect(employees.count == 50)
            let read = counting(stack) { for employee in employees { _ = employee.value(forKey: "name") } }
            #expect(read.count == 1, "the relationship's objects fire as one batch: \(read)")
        }
    }

    @Test func fetchBatchSizeReadsOneBatchPerQuery() throws {
        let folder = TemporaryFolder()
        let stack = try populated(folder)
        try withExtendedLifetime(stack.context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            request.fetchBatchSize = 20
            var employees: [NSManagedObject] = []
            let fetch = try counting(stack) { employees = try stack.context.fetch(request) }
            #expect(fetch.count == 1)
            #expect(fetch[0].contains("Z_PK, t0.Z_ENT FROM"), "a batched fetch reads IDs only: \(fetch[0])")
            #expect(employees.count == 150)
            var names: [String] = []
            let reads = counting(stack) { names = employees.map { $0.value(forKey: "name") as? String ?? "" } }
            #expect(reads.count == 8, "150 objects in batches of 20")
            #expect(names == names.sorted())
            #expect(names.first == "E0-0")
        }
    }

    @Test func prefetchingRunsOneQueryPerKeyPathStep() throws {
        let folder = TemporaryFolder()
        let stack = try populated(folder)
        try withExtendedLifetime(stack.context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.relationshipKeyPathsForPrefetching = ["employees.tasks"]
            var departments: [NSManagedObject] = []
            let fetch = try counting(stack) { departments = try stack.context.fetch(request) }
            // The fetch, the employees' IDs, their rows, the tasks' IDs, their rows.
            #expect(fetch.count == 5, "\(fetch)")
            var titles = 0
            let walk = counting(stack) {
                for department in departments {
                    for employee in department.value(forKey: "employees") as? Set<NSManagedObject> ?? [] {
                        for case let task as NSManagedObject in (employee.value(forKey: "tasks") as? NSOrderedSet)?.array ?? [] where task.value(forKey: "title") != nil {
                            titles += 1
                        }
                    }
                }
            }
            #expect(walk.isEmpty, "walking prefetched relationships needs no query: \(walk.prefix(3))")
            #expect(titles == 300)
        }
    }

    /// A plan's `needsValues` lets the store skip decoding a row: the row then identifies its object and
    /// version only. Rows it is not asked about, or answers true for, are whole.
    @Test func rowsNobodyNeedsComeBackWithoutValues() throws {
        let folder = TemporaryFolder()
        let stack = try populated(folder)
        let entity = try #require(stack.coordinator.managedObjectModel.entitiesByName["Department"])
        var plan = StoreFetchPlan(entity: entity, sortDescriptors: [NSSortDescriptor(key: "name", ascending: true)])
        let whole = try stack.store.executeFetch(plan)
        #expect(whole.count == 3 && whole.allSatisfy(\.hasValues))
        let second = whole[1].objectID
        var asked: [NSManagedObjectID] = []
        plan.needsValues = { id in asked.append(id); return id == second }
        let rows = try stack.store.executeFetch(plan)
        #expect(asked == whole.map(\.objectID))
        #expect(rows.map(\.objectID) == whole.map(\.objectID))
        #expect(rows.map(\.version) == whole.map(\.version))
        #expect(rows.map(\.hasValues) == [false, true, false])
        #expect(rows[0].value(named: "name") == nil && rows[2].value(named: "name") == nil)
        #expect(rows[1].value(named: "name") as? String == "D1")
    }

    /// Fetching again what a context holds: realized objects keep their values (their rows are not even
    /// decoded), faults take the newer rows, and an object refreshed into a fault afterwards reads the
    /// store's values.
    @Test func aRefetchKeepsRealizedValuesAndRefreshesFaults() throws {
        let folder = TemporaryFolder()
        let stack = try populated(folder)
        let departments = try stack.fetch("Department", sortedBy: "name")
        #expect(departments[0].value(forKey: "name") as? String == "D0")   // realized
        #expect(departments[1].isFault && departments[2].isFault)
        let other = try SQLiteStack(model: stack.coordinator.managedObjectModel, url: folder.file())
        for department in try other.fetch("Department") {
            department.setValue("\(department.value(forKey: "name") as! String)-new", forKey: "name")
        }
        try other.context.save()

        let again = try stack.fetch("Department", sortedBy: "name")
        #expect(again.map(ObjectIdentifier.init) == departments.map(ObjectIdentifier.init))
        #expect(again[0].value(forKey: "name") as? String == "D0", "a realized object keeps its values")
        #expect(again[1].value(forKey: "name") as? String == "D1-new", "a fault fires with the newer row")
        stack.context.refresh(again[0], mergeChanges: false)
        #expect(again[0].value(forKey: "name") as? String == "D0-new")
        withExtendedLifetime(other) {}
    }

    /// An ID fetch whose rows are all of one entity (a subentity, or an entity without subentities or
    /// fetched without them) reads the keys alone, as Core Data's `SELECT 0, t0.Z_PK`; one that may
    /// meet several entities reads each row's `Z_ENT` too, and each ID is of its row's entity.
    @Test func objectIDResultsReadEntityNumbersOnlyWhenRowsMayDiffer() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        try withExtendedLifetime(stack.context) {
            for name in ["Ann", "Bea"] { stack.insert("Employee", ["name": name]) }
            for name in ["Cy", "Di", "Ed"] { stack.insert("Manager", ["name": name]) }
            try stack.context.save()
            func ids(_ entity: String, subentities: Bool = true) throws -> (ids: [NSManagedObjectID], sql: [String]) {
                let request = NSFetchRequest<NSManagedObjectID>(entityName: entity)
                request.resultType = .managedObjectIDResultType
                request.includesSubentities = subentities
                var ids: [NSManagedObjectID] = []
                let sql = try counting(stack) { ids = try stack.context.fetch(request) }
                return (ids, sql)
            }
            let managers = try ids("Manager")
            #expect(managers.sql.count == 1)
            #expect(managers.sql.first?.hasPrefix("SELECT t0.Z_PK FROM ZEMPLOYEE t0 WHERE t0.Z_ENT = ") == true)
            #expect(managers.ids.map { $0.entity.name } == ["Manager", "Manager", "Manager"])
            let managerNames = try managers.ids.map { try stack.context.existingObject(with: $0).value(forKey: "name") as? String ?? "" }
            #expect(managerNames.sorted() == ["Cy", "Di", "Ed"])

            let onlyEmployees = try ids("Employee", subentities: false)
            #expect(onlyEmployees.sql.first?.hasPrefix("SELECT t0.Z_PK FROM") == true)
            #expect(onlyEmployees.ids.map { $0.entity.name } == ["Employee", "Employee"])

            let everyone = try ids("Employee")
            #expect(everyone.sql.first?.hasPrefix("SELECT t0.Z_PK, t0.Z_ENT FROM") == true)
            #expect(everyone.ids.map { $0.entity.name ?? "" }.sorted() == ["Employee", "Employee", "Manager", "Manager", "Manager"])
            let names = try everyone.ids.map { try stack.context.existingObject(with: $0).value(forKey: "name") as? String ?? "" }
            #expect(names.sorted() == ["Ann", "Bea", "Cy", "Di", "Ed"])
        }
    }

    @Test func objectIDResultsReadOnlyKeys() throws {
        let folder = TemporaryFolder()
        let stack = try populated(folder)
        try withExtendedLifetime(stack.context) {
            let request = NSFetchRequest<NSManagedObjectID>(entityName: "Employee")
            request.resultType = .managedObjectIDResultType
            request.predicate = NSPredicate(format: "age < 10")
            var ids: [NSManagedObjectID] = []
            let statements = try counting(stack) { ids = try stack.context.fetch(request) }
            #expect(ids.count == 30)
            #expect(statements.count == 1)
            #expect(!statements[0].contains("ZNAME"))
            #expect(try stack.context.count(for: request) == 30)
        }
    }
}
