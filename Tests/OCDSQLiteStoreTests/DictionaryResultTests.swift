import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
import Testing
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Dictionary results run in SQL on the SQLite store (one statement, aggregates and grouping included)
/// and agree with the in-memory store's.
@Suite struct DictionaryResultTests {
    private func fill(_ insert: (String, [String: Any]) -> NSManagedObject) {
        let departments = (0..<3).map { insert("Department", ["name": "D\($0)"]) }
        for index in 0..<30 {
            _ = insert("Employee", ["name": "E\(index)", "age": 20 + index % 5, "salary": Double(index * 100),
                                    "department": departments[index % 3]])
        }
    }

    private func aggregate(_ name: String, _ function: String, _ key: String, _ type: NSAttributeType) -> NSExpressionDescription {
        let description = NSExpressionDescription()
        description.name = name
        description.expression = NSExpression(forFunction: function, arguments: [NSExpression(forKeyPath: key)])
        description.expressionResultType = type
        return description
    }

    private func requests() -> [NSFetchRequest<NSDictionary>] {
        var all: [NSFetchRequest<NSDictionary>] = []
        let grouped = NSFetchRequest<NSDictionary>(entityName: "Employee")
        grouped.resultType = .dictionaryResultType
        grouped.propertiesToFetch = ["age", aggregate("total", "sum:", "salary", .doubleAttributeType),
                                     aggregate("people", "count:", "name", .integer64AttributeType),
                                     aggregate("youngest", "min:", "age", .integer64AttributeType),
                                     aggregate("mean", "average:", "salary", .doubleAttributeType)]
        grouped.propertiesToGroupBy = ["age"]
        grouped.sortDescriptors = [NSSortDescriptor(key: "age", ascending: false)]
        all.append(grouped)
        let having = grouped.copy() as! NSFetchRequest<NSDictionary>
        having.havingPredicate = NSPredicate(format: "total > 2800 AND age > 20")
        all.append(having)
        let plain = NSFetchRequest<NSDictionary>(entityName: "Employee")
        plain.resultType = .dictionaryResultType
        plain.propertiesToFetch = ["name", "department", "department.name"]
        plain.predicate = NSPredicate(format: "age == 21")
        plain.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        plain.fetchLimit = 4
        plain.fetchOffset = 1
        all.append(plain)
        let distinct = NSFetchRequest<NSDictionary>(entityName: "Employee")
        distinct.resultType = .dictionaryResultType
        distinct.propertiesToFetch = ["age"]
        distinct.returnsDistinctResults = true
        distinct.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
        all.append(distinct)
        let total = NSFetchRequest<NSDictionary>(entityName: "Employee")
        total.resultType = .dictionaryResultType
        total.propertiesToFetch = [aggregate("sum", "sum:", "salary", .doubleAttributeType), aggregate("n", "count:", "age", .integer64AttributeType)]
        total.predicate = NSPredicate(format: "department.name == 'D1'")
        all.append(total)
        return all
    }

    /// Values made comparable across stores: object IDs by entity (the stores number keys independently).
    private func normalized(_ results: [NSDictionary]) -> [String] {
        results.map { dictionary in
            (dictionary as! [String: Any]).sorted { $0.key < $1.key }.map { key, value in
                if let id = value as? NSManagedObjectID { return "\(key)=\(id.entity.name ?? "")" }
                return "\(key)=\(value)"
            }.joined(separator: ",")
        }
    }

    @Test func resultsAgreeWithTheInMemoryStoreAndRunAsOneStatement() throws {
        let folder = TemporaryFolder()
        let sqlite = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let memory = try TestStack()
        try withExtendedLifetime((sqlite.context, memory.context)) {
            fill { sqlite.insert($0, $1) }
            fill { memory.insert($0, $1) }
            try sqlite.context.save()
            try memory.context.save()
            for request in requests() {
                let log = SQLStatementLog()
                sqlite.sqliteStore.statementLog = log
                let fromSQL = try sqlite.context.fetch(request)
                sqlite.sqliteStore.statementLog = nil
                let fromMemory = try memory.context.fetch(request)
                #expect(normalized(fromSQL) == normalized(fromMemory), "\(request.propertiesToFetch ?? [])")
                #expect(!fromSQL.isEmpty)
                #expect(log.statements.count == 1, "\(log.statements)")
                if request.propertiesToGroupBy != nil { #expect(log.statements.first?.contains("GROUP BY") == true) }
                if request.havingPredicate != nil { #expect(log.statements.first?.contains(" HAVING ") == true) }
            }
            let grouped = try sqlite.context.fetch(requests()[0])
            #expect(grouped.count == 5)
            #expect(grouped.first?["age"] as? Int == 24)
            #expect(grouped.first?["people"] as? Int == 6)
            #expect(grouped.first?["total"] as? Double == Double([4, 9, 14, 19, 24, 29].map { $0 * 100 }.reduce(0, +)))
        }
    }

    /// The store's rows become dictionaries without a Swift dictionary per row: they must still behave as
    /// `NSDictionary` in every way a caller uses one, bridging to `[String: Any]` included.
    @Test func resultsBehaveAsDictionaries() throws {
        let folder = TemporaryFolder()
        let sqlite = try SQLiteStack(model: TestModel.make(), url: folder.file())
        try withExtendedLifetime(sqlite.context) {
            sqlite.insert("Employee", ["name": "Ann", "age": 30])
            sqlite.insert("Employee", ["name": "Bob", "age": 40, "email": "bob@example.com"])
            try sqlite.context.save()
            let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["name", "age", "email"]
            request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
            let rows = try sqlite.context.fetch(request)
            #expect(rows.count == 2)
            let ann = rows[0], bob = rows[1]
            // Subscript and object(forKey:) by String and NSString; nil values have no entry.
            #expect(ann["name"] as? String == "Ann")
            #expect(ann.object(forKey: NSString(string: "age")) as? Int == 30)
            #expect(ann["email"] == nil)
            #expect(ann["unknown"] == nil)
            #expect(ann.count == 2)
            #expect(bob.count == 3)
            #expect(bob["email"] as? String == "bob@example.com")
            // Keys, bridging, equality with an ordinary NSDictionary, copying.
            #expect(Set(ann.allKeys.compactMap { $0 as? String }) == ["name", "age"])
            let bridged = try #require(ann as? [String: Any])
            #expect(bridged.count == 2 && bridged["name"] as? String == "Ann" && bridged["age"] as? Int == 30)
            let plain = NSDictionary(dictionary: ["name": "Ann", "age": 30])
            #expect(ann.isEqual(plain))
            #expect(plain.isEqual(ann))
            #expect(!ann.isEqual(bob))
            #expect(type(of: ann) == NSDictionary.self)
            #expect((ann.copy() as? NSDictionary)?.isEqual(plain) == true)
            var enumerated: [String] = []
            for case let key as String in ann.keyEnumerator() { enumerated.append(key) }
            #expect(enumerated.sorted() == ["age", "name"])
        }
    }

    /// A to-one whose destination has subentities is read with its row's entity number column: the
    /// related object's ID, in a dictionary as in an object, names the exact entity (a Manager, not the
    /// Employee the relationship declares), and a NULL key leaves no entry (dictionary) or nil (object).
    @Test func toOneKeysNameTheExactEntityOfTheirDestination() throws {
        let folder = TemporaryFolder()
        let sqlite = try SQLiteStack(model: TestModel.make(), url: folder.file())
        try withExtendedLifetime(sqlite.context) {
            let employee = sqlite.insert("Employee", ["name": "Ann"])
            let manager = sqlite.insert("Manager", ["name": "Cy"])
            sqlite.insert("Task", ["title": "a", "owner": employee])
            sqlite.insert("Task", ["title": "b", "owner": manager])
            sqlite.insert("Task", ["title": "c"])
            try sqlite.context.save()
            let ids = (employee: employee.objectID, manager: manager.objectID)
            sqlite.context.reset()

            let request = NSFetchRequest<NSDictionary>(entityName: "Task")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["title", "owner"]
            request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
            let rows = try sqlite.context.fetch(request)
            #expect(rows.map { $0["title"] as? String } == ["a", "b", "c"])
            #expect((rows[0]["owner"] as? NSManagedObjectID) == ids.employee)
            #expect((rows[1]["owner"] as? NSManagedObjectID) == ids.manager)
            #expect((rows[1]["owner"] as? NSManagedObjectID)?.entity.name == "Manager")
            #expect(rows[2]["owner"] == nil && rows[2].count == 1)

            let objects = NSFetchRequest<NSManagedObject>(entityName: "Task")
            objects.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
            let tasks = try sqlite.context.fetch(objects)
            let owners = tasks.map { $0.value(forKey: "owner") as? NSManagedObject }
            #expect(owners.map { $0?.objectID } == [ids.employee, ids.manager, nil])
            #expect(owners.map { $0?.entity.name } == ["Employee", "Manager", nil])
        }
    }
}
