import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

// What a fetch does to objects the context already has (NSFetchRequest.shouldRefreshRefetchedObjects):
// by default they keep their values; with the flag they take the store's, as
// `refresh(_:mergeChanges: true)` would, keeping unsaved changes and transient values.

@Suite("Fetching: refetched objects and shouldRefreshRefetchedObjects")
struct RefetchTests {
    /// Saves `values` onto the stored object `id` through another context.
    private func change(_ stack: TestStack, _ id: NSManagedObjectID, _ values: [String: Any]) throws {
        let other = stack.newContext()
        try withExtendedLifetime(other) {
            let object = other.object(with: id)
            for (key, value) in values { object.setValue(value, forKey: key) }
            try other.save()
        }
    }

    private func request(_ entityName: String, refresh: Bool) -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
        request.shouldRefreshRefetchedObjects = refresh
        return request
    }

    /// With a staleness interval of 0, a fetched fault reads its row from the store when it fires, not
    /// the row the fetch read ahead: another context's save is seen, and a change saved on top of it is no
    /// conflict. (The interval was kept and never read.) With the default, the cached row fills it.
    @Test(arguments: [0.0, -1.0])
    func aZeroStalenessIntervalFiresFaultsFromTheStore(interval: Double) throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "D0"])
        stack.context.stalenessInterval = interval
        let department = try #require(try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        #expect(department.isFault)
        try change(stack, id, ["name": "D1"])
        #expect(department.value(forKey: "name") as? String == (interval == 0 ? "D1" : "D0"))
        guard interval == 0 else { return }
        department.setValue("D2", forKey: "name")
        try stack.context.save()
        // A realized object refetched with shouldRefreshRefetchedObjects takes the store's values still.
        try change(stack, id, ["name": "D3"])
        #expect(try stack.context.fetch(request("Department", refresh: true)).first?.value(forKey: "name") as? String == "D3")
        // Faults of a batched fetch read their rows when one of them fires, one query per batch.
        _ = try stack.seed("Department", ["name": "E0"])
        stack.context.reset()
        let batched = try stack.context.fetch(request("Department", refresh: false))
        #expect(batched.count == 2 && batched.allSatisfy(\.isFault))
        try change(stack, id, ["name": "D4"])
        #expect(Set(batched.compactMap { $0.value(forKey: "name") as? String }) == ["D4", "E0"])
    }

    @Test func aRealizedObjectKeepsItsValuesUnlessTheRequestRefreshes() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "D0", "budget": 10])
        let department = try #require(try stack.context.fetch(request("Department", refresh: false)).first)
        #expect(department.string("name") == "D0")
        try change(stack, id, ["name": "D1", "budget": 11])

        // Apple: "By default when you fetch objects, they maintain their current property values".
        let again = try stack.context.fetch(request("Department", refresh: false))
        #expect(again.first === department)
        #expect(department.string("name") == "D0")

        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        let refreshed = try stack.context.fetch(request("Department", refresh: true))
        #expect(refreshed.first === department)
        #expect(department.string("name") == "D1")
        #expect(department.int("budget") == 11)
        #expect(!department.hasChanges)
        #expect(department.committedValues(forKeys: ["name"])["name"] as? String == "D1")
        stack.context.processPendingChanges()
        let listed = recorder.named(.NSManagedObjectContextObjectsDidChange).compactMap { $0.userInfo?[NSRefreshedObjectsKey] as? Set<NSManagedObject> }
        #expect(listed.contains { $0.contains(department) })

        // A later save is judged against the version the fetch brought: no merge conflict.
        department.setValue("D2", forKey: "name")
        try stack.context.save()
        #expect(try stack.stored("Department") { $0.string("name") } == ["D2"])
    }

    @Test func unsavedChangesAndTransientValuesSurviveTheRefresh() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann", "age": 40, "email": "ann@example.com"])
        let ann = try #require(try stack.context.fetch(request("Employee", refresh: false)).first as? HookedEmployee)
        #expect(ann.string("name") == "Ann")
        ann.setValue(41, forKey: "age")
        ann.setValue("ann@local", forKey: "email")
        ann.setValue("scratch", forKey: "cache")
        try change(stack, id, ["name": "Anna", "email": "anna@example.com"])

        _ = try stack.context.fetch(request("Employee", refresh: true))
        #expect(ann.string("name") == "Anna", "the store's value where nothing is changed here")
        #expect(ann.int("age") == 41, "an unsaved change stays")
        #expect(ann.string("email") == "ann@local", "an unsaved change wins over the store's value")
        #expect(ann.string("cache") == "scratch", "a transient value stays")
        #expect(ann.isUpdated)
        #expect(Set(ann.changedValues().keys) == ["age", "email"])
        #expect(ann.committedValues(forKeys: ["name", "email"])["email"] as? String == "anna@example.com")
        #expect(ann.snapshotEvents == [.refresh])

        try stack.context.save()
        let stored = try stack.stored("Employee") { [$0.string("name"), $0.int("age").map(String.init), $0.string("email")] }
        #expect(stored == [["Anna", "41", "ann@local"]])
    }

    @Test func faultsAndBatchedFetchesAreRefreshedToo() throws {
        let stack = try TestStack()
        let ids = try (0..<3).map { try stack.seed("Department", ["name": "D\($0)", "budget": $0]) }
        let realized = try stack.context.fetch(request("Department", refresh: false))
        for department in realized { _ = department.string("name") }
        for id in ids { try change(stack, id, ["budget": 100]) }

        let batched = request("Department", refresh: true)
        batched.fetchBatchSize = 2
        let objects = try stack.context.fetch(batched)
        #expect(objects.count == 3)
        #expect(objects.allSatisfy { object in realized.contains { $0 === object } })
        #expect(objects.map { $0.int("budget") } == [100, 100, 100])

        // A fault fetched again is not realized by the flag, and fires with the store's values.
        stack.context.refresh(objects[0], mergeChanges: false)
        try change(stack, ids[0], ["budget": 200])
        _ = try stack.context.fetch(request("Department", refresh: true))
        #expect(objects[0].isFault)
        #expect(objects[0].int("budget") == 200)
    }

    @Test func withoutPropertyValuesNothingIsRefreshedAndFaultsStayEmpty() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "D0", "budget": 1])
        let department = try #require(try stack.fetch("Department").first)
        _ = department.string("name")
        try change(stack, id, ["name": "D1"])
        let keysOnly = request("Department", refresh: true)
        keysOnly.includesPropertyValues = false
        keysOnly.returnsObjectsAsFaults = false
        #expect(try stack.context.fetch(keysOnly).first === department)
        #expect(department.string("name") == "D0", "no values were fetched to refresh it with")

        // An object new to the context, fetched without values and realized, reads its own row.
        let fresh = stack.newContext()
        try withExtendedLifetime(fresh) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.includesPropertyValues = false
            request.returnsObjectsAsFaults = false
            let objects = try fresh.fetch(request)
            #expect(objects.first?.isFault == false)
            #expect(objects.first?.string("name") == "D1")
        }
    }
}
