import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSSortDescriptor

/// An Employee class for fetches typed by a subclass.
class ResultEmployee: NSManagedObject, @unchecked Sendable {
    /// Module-qualified: the class registry is shared by every test module in the process.
    static let className = String(reflecting: ResultEmployee.self)
}

/// A Manager class, a subclass of the Employee class as Manager is a subentity of Employee.
final class ResultManager: ResultEmployee, @unchecked Sendable {
    static let managerClassName = String(reflecting: ResultManager.self)
}

/// `fetch(_:)` hands results back as the request's result type: the managed object class, a class of the
/// entity, `NSFetchRequestResult`, object IDs or dictionaries, whichever `NSFetchRequest<T>` names. The
/// store's array is handed over as it is where its elements already are `T`s; the rest are cast one by one.
@Suite struct FetchResultTypeTests {
    private func stack() throws -> TestStack {
        NSManagedObjectModel.registerManagedObjectClass(ResultEmployee.self, forName: ResultEmployee.className)
        let model = TestModel.make { entities, _ in
            entities["Employee"]!.managedObjectClassName = ResultEmployee.className
        }
        let stack = try TestStack(model: model)
        for (name, age) in [("Ann", 30), ("Bob", 40)] { _ = stack.insert("Employee", ["name": name, "age": age]) }
        _ = stack.insert("Manager", ["name": "Cy", "age": 50])
        try stack.context.save()
        return stack
    }

    private func sortedByName<T>(_ entityName: String, _ type: T.Type) -> NSFetchRequest<T> {
        let request = NSFetchRequest<T>(entityName: entityName)
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return request
    }

    @Test func objectsAsManagedObjectsAsTheEntityClassAndAsFetchRequestResults() throws {
        let stack = try stack()
        let context = stack.context
        let objects = try context.fetch(sortedByName("Employee", NSManagedObject.self))
        #expect(objects.map { $0.value(forKey: "name") as? String } == ["Ann", "Bob", "Cy"])

        // Without subentities every result is exactly of the requested class.
        let typed = sortedByName("Employee", ResultEmployee.self)
        typed.includesSubentities = false
        let employees = try context.fetch(typed)
        #expect(employees.map { $0.value(forKey: "name") as? String } == ["Ann", "Bob"])
        #expect(employees.allSatisfy { Swift.type(of: $0) == ResultEmployee.self })
        #expect(employees.first === objects.first)

        let results = try context.fetch(sortedByName("Employee", NSFetchRequestResult.self))
        #expect(results.count == 3)
        #expect((results.first as? NSManagedObject) === objects.first)
    }

    /// Results of several classes: each is cast on its own, and keeps its class.
    @Test func resultsOfSeveralClassesAreCastOneByOne() throws {
        NSManagedObjectModel.registerManagedObjectClass(ResultEmployee.self, forName: ResultEmployee.className)
        NSManagedObjectModel.registerManagedObjectClass(ResultManager.self, forName: ResultManager.managerClassName)
        let model = TestModel.make { entities, _ in
            entities["Employee"]!.managedObjectClassName = ResultEmployee.className
            entities["Manager"]!.managedObjectClassName = ResultManager.managerClassName
        }
        let stack = try TestStack(model: model)
        _ = stack.insert("Employee", ["name": "Ann", "age": 30])
        _ = stack.insert("Manager", ["name": "Cy", "age": 50])
        try stack.context.save()
        // Two classes in one result: none is a ResultEmployee for all, so each is cast to NSManagedObject.
        let objects = try stack.context.fetch(sortedByName("Employee", NSManagedObject.self))
        #expect(objects.map { String(describing: Swift.type(of: $0)) } == ["ResultEmployee", "ResultManager"])
        let results = try stack.context.fetch(sortedByName("Employee", NSFetchRequestResult.self))
        #expect(results.map { String(describing: Swift.type(of: $0)) } == ["ResultEmployee", "ResultManager"])
    }

    @Test func objectIDsAndDictionaries() throws {
        let stack = try stack()
        let context = stack.context
        let objects = try context.fetch(sortedByName("Employee", NSManagedObject.self))

        let idRequest = sortedByName("Employee", NSManagedObjectID.self)
        idRequest.resultType = .managedObjectIDResultType
        #expect(try context.fetch(idRequest) == objects.map(\.objectID))
        let anyIDRequest = sortedByName("Employee", NSFetchRequestResult.self)
        anyIDRequest.resultType = .managedObjectIDResultType
        #expect(try context.fetch(anyIDRequest).compactMap { $0 as? NSManagedObjectID } == objects.map(\.objectID))

        let dictionaryRequest = sortedByName("Employee", NSDictionary.self)
        dictionaryRequest.resultType = .dictionaryResultType
        dictionaryRequest.propertiesToFetch = ["name", "age"]
        let rows = try context.fetch(dictionaryRequest)
        #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob", "Cy"])
        #expect(rows.map { ($0["age"] as? NSNumber)?.intValue } == [30, 40, 50])
    }
}

/// Apple's rules for grouped dictionary fetches, refused alike by both stores (SQLite refused a having
/// predicate without grouping while the in-memory store ignored it; a property neither grouped nor
/// aggregated took one row's value, a different row in each store).
@Suite struct GroupedDictionaryRuleTests {
    private func stack() throws -> TestStack {
        let stack = try TestStack()
        let d = stack.insert("Department", ["name": "D"])
        stack.insert("Employee", ["name": "Ann", "salary": 100.0, "department": d])
        stack.insert("Employee", ["name": "Bob", "salary": 300.0, "department": d])
        try stack.context.save()
        return stack
    }

    private func refused(_ request: NSFetchRequest<NSDictionary>, in stack: TestStack, _ reason: String) {
        #expect {
            try stack.context.fetch(request)
        } throws: { error in
            let error = error as NSError
            return error.code == 134060 && error.localizedDescription.contains(reason)
                && error.userInfo["NSExceptionName"] as? String == "NSInvalidArgumentException"
        }
    }

    @Test func aHavingPredicateNeedsGrouping() throws {
        let stack = try stack()
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name"]
        request.havingPredicate = NSPredicate(format: "name == 'Ann'")
        refused(request, in: stack, "propertiesToGroupBy")
    }

    @Test func aGroupedFetchTakesOnlyGroupedPropertiesAndAggregates() throws {
        let stack = try stack()
        let top = NSExpressionDescription()
        top.name = "top"
        top.expression = NSExpression(forFunction: "max:", arguments: [NSExpression(forKeyPath: "salary")])
        top.expressionResultType = .doubleAttributeType
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToGroupBy = ["department"]
        request.propertiesToFetch = ["name", top]
        refused(request, in: stack, "GROUP BY")
        // Grouped and aggregated only: answered.
        request.propertiesToFetch = ["department", top]
        let results = try stack.context.fetch(request)
        #expect(results.count == 1)
        #expect(results.first?["top"] as? Double == 300)
    }
}
