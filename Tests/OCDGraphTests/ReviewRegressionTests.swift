import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate

// Regressions for the review of the object graph: each test failed (or crashed) before its fix.

@Suite struct ReviewRegressionTests {
    @Test func aRelationshipToAnObjectOutsideTheContextFailsValidationAsADanglingReference() throws {
        let stack = try TestStack()
        let loose = NSManagedObject(entity: stack.model.entitiesByName["Department"]!, insertInto: nil)
        let employee = stack.insert("Employee", ["name": "Ann"])
        employee.setValue(loose, forKey: "department")
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "department")
        #expect(error.localizedDescription == "Dangling reference to an invalid object.")
    }

    @Test func predicatesMatchManagedObjectsAgainstStoredRowsAndIDs() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department", ["name": "R&D"])
        let ann = stack.insert("Employee", ["name": "Ann", "department": dept])
        try stack.context.save()
        #expect(try stack.fetch("Department", "%@ IN employees", ann).count == 1)
        #expect(try stack.fetch("Employee", "department IN %@", [dept]).count == 1)
        #expect(try stack.fetch("Employee", "department == %@", dept.objectID).count == 1)
        ann.setValue("Anne", forKey: "name")
        // Now judged in memory (the object is updated): the ID still matches the object.
        #expect(try stack.fetch("Employee", "department == %@", dept.objectID).count == 1)
        #expect(try stack.fetch("Employee", "department == %@", dept).count == 1)
    }

    @Test func undeletingAnObjectSavesItsChangesIncludingBrokenRelationships() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department", ["name": "R&D"])
        let ann = stack.insert("Employee", ["name": "Ann", "department": dept])
        try stack.context.save()
        ann.setValue("Anne", forKey: "name")
        stack.context.delete(ann)
        stack.context.processPendingChanges()
        stack.context.insert(ann)
        try stack.context.save()
        let names = try stack.stored("Employee") { $0.string("name") }
        let departments = try stack.stored("Employee") { $0.object("department") == nil }
        #expect(names == ["Anne"])
        #expect(departments == [true], "the row agrees with memory: the nullify rule already ran")
        #expect(try stack.stored("Department") { $0.objects("employees").count } == [0])
    }

    @Test func saveInsideSaveFailsInsteadOfRecursing() throws {
        let stack = try TestStack()
        _ = stack.insert("Department", ["name": "R&D"])
        let inner = ErrorBox()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextWillSave, object: stack.context, queue: nil) { _ in
            inner.error = stack.context.saveError()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try stack.context.save()
        #expect(inner.error?.code == 132001)
    }

    @Test func countAndObjectIDFetchesRunDeleteRulesFirst() throws {
        let stack = try TestStack()
        let company = stack.insert("Company", ["name": "Acme"])
        for name in ["a", "b", "c"] { _ = stack.insert("Department", ["name": name, "company": company]) }
        try stack.context.save()
        stack.context.delete(company)
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Department")
        request.resultType = .managedObjectIDResultType
        #expect(try stack.context.count(for: request) == 0)
        #expect(try stack.context.fetch(request).isEmpty)
    }

    @Test func settingMetadataKeepsTheStoreUUID() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        let uuid = stack.store.identifier
        stack.coordinator.setMetadata(["appVersion": 2], for: stack.store)
        #expect(stack.store.identifier == uuid)
        #expect(stack.coordinator.metadata(for: stack.store)["appVersion"] as? Int == 2)
        #expect(try stack.context.existingObject(with: id).string("name") == "R&D")
        // IDs made before and after share the store's scope (D29): equal, hashed alike, found by key.
        let department = id.entity
        let pk = try #require(stack.store.primaryKey(of: id))
        let again = stack.store.objectID(for: department, primaryKey: pk)
        #expect(again == id && again.hash == id.hash && again.scope === id.scope)
        stack.coordinator.setMetadata([NSStoreUUIDKey: "another-store-uuid"], for: stack.store)
        let renamed = stack.store.objectID(for: department, primaryKey: pk)
        #expect(renamed != id && renamed.scope !== id.scope && renamed.storeIdentifier == "another-store-uuid")
        // The store knows its own IDs by its current identifier only, through every change of it.
        #expect(stack.store.primaryKey(of: renamed) == pk)
        #expect(stack.store.primaryKey(of: id) == nil)
        stack.coordinator.setMetadata([NSStoreUUIDKey: uuid as Any], for: stack.store)
        #expect(stack.store.primaryKey(of: id) == pk)
        #expect(stack.store.primaryKey(of: renamed) == nil)
    }

    @Test func refreshMergingChangesKeepsTransientValues() throws {
        let stack = try TestStack()
        let ann = stack.insert("Employee", ["name": "Ann"])
        try stack.context.save()
        ann.setValue("cached", forKey: "cache")
        ann.setValue(50, forKey: "age")
        stack.context.refresh(ann, mergeChanges: true)
        #expect(ann.string("cache") == "cached")
        #expect(ann.int("age") == 50)
    }

    @Test func unchangedObjectsAreHeldWeaklyUnlessTheContextRetainsThem() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        weak var released: NSManagedObject?
        do {
            let object = stack.context.object(with: id)
            released = object
            _ = object.string("name")
        }
        #expect(released == nil)
        #expect(stack.context.registeredObject(for: id) == nil)

        stack.context.retainsRegisteredObjects = true
        weak var kept: NSManagedObject?
        do { kept = stack.context.object(with: id) }
        #expect(kept != nil)
        #expect(stack.context.registeredObjects.count == 1)
    }

    @Test func rollbackDropsInsertedObjectsThatAlreadyHavePermanentIDs() throws {
        let stack = try TestStack()
        let hooks = stack.insert("Department", ["name": "new"])
        try stack.context.obtainPermanentIDs(for: [hooks])
        stack.context.delete(hooks)
        stack.context.rollback()
        #expect(hooks.managedObjectContext == nil)
        #expect(!hooks.isDeleted && !hooks.isInserted)
    }

    @Test func aFetchRefreshesTheRowOfAnUnfiredFault() throws {
        let stack = try TestStack()
        _ = try stack.seed("Department", ["name": "old"])
        let fault = try #require(try stack.fetch("Department").first)
        #expect(fault.isFault)
        let other = stack.newContext()
        let same = try #require(try stack.fetch("Department", in: other).first)
        same.setValue("new", forKey: "name")
        try other.save()
        _ = try stack.fetch("Department")
        #expect(fault.string("name") == "new")
        fault.setValue("newer", forKey: "name")
        try stack.context.save()
    }

    @Test func savingAnObjectDoesNotLoadItsUnloadedToManyRelationships() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department", ["name": "R&D"])
        for name in ["a", "b"] { _ = stack.insert("Employee", ["name": name, "department": dept]) }
        try stack.context.save()
        let reader = stack.newContext()
        let fetched = try #require(try stack.fetch("Department", in: reader).first)
        fetched.setValue("Research", forKey: "name")
        try reader.save()
        #expect(fetched.hasFault(forRelationshipNamed: "employees"))
        #expect(try stack.stored("Department") { $0.objects("employees").count } == [2])
    }

    @Test func reinsertingAForgottenNewObjectMakesItUsableAgain() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department", ["name": "R&D"])
        stack.context.reset()
        stack.context.insert(dept)
        dept.setValue("Sales", forKey: "name")
        #expect(dept.isInserted && !dept.isDeleted)
        try stack.context.save()
        #expect(try stack.stored("Department") { $0.string("name") } == ["Sales"])
    }

    @Test func insertingAnObjectAlreadyInAnOrderedRelationshipLeavesItInPlace() throws {
        let stack = try TestStack()
        let ann = stack.insert("Employee", ["name": "Ann"])
        let tasks = (1...3).map { stack.insert("Task", ["title": "t\($0)"]) }
        let ordered = ann.mutableOrderedSetValue(forKey: "tasks")
        for task in tasks { ordered.add(task) }
        ordered.insert(tasks[2], at: 0)
        #expect(ordered.array as? [NSManagedObject] == tasks)
    }

    /// A MATCHES pattern that is no regular expression (text from a user, or from a row) fails the fetch
    /// with an error in both stores; the SQLite store matched nothing instead.
    @Test func aPatternThatIsNoRegularExpressionFailsTheFetch() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack.context) {
            stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
            // The in-memory store hands the predicate's evaluation error on; the SQLite store, 134060.
            let error = #expect(throws: (any Error).self) { _ = try stack.fetch("Company", "name MATCHES %@", "(") }
            #expect("\(String(describing: error))".contains("regex"), "\(String(describing: error))")
            #expect(try stack.fetch("Company", "name MATCHES %@", "A.*").count == 1)
            // A pattern read from a row fails the fetch the same way.
            stack.insert("Company", ["name": "("])
            try stack.context.save()
            let fromRow = #expect(throws: (any Error).self) { _ = try stack.fetch("Company", "%@ MATCHES name", "x") }
            #expect("\(String(describing: fromRow))".contains("regex"), "\(String(describing: fromRow))")
        }
    }
}

@Suite struct MainQueueEventTests {
    @Test @MainActor func aMainQueueContextUsedOutsidePerformProcessesChangesAtTheEndOfTheTurn() async throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        let company = stack.insert("Company", ["name": "Acme"], into: context)
        let dept = stack.insert("Department", ["name": "R&D", "company": company], into: context)
        try context.save()
        context.delete(company)
        #expect(!dept.isDeleted, "delete rules wait for the end of the event")
        // A main-actor job enqueued now runs after the main-queue block the context scheduled.
        await MainActor.run {}
        try await Task.sleep(nanoseconds: 10_000_000)
        #expect(dept.isDeleted, "the cascade ran without an explicit processPendingChanges()")
        #expect(recorder.named(.NSManagedObjectContextObjectsDidChange).count >= 2)
    }
}

final class ErrorBox: @unchecked Sendable {
    var error: NSError?
}
