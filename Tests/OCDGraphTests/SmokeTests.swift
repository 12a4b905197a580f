import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate

@Suite struct SmokeTests {
    @Test func insertSaveFetchRoundTrip() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department", ["name": "R&D"])
        let alice = stack.insert("Employee", ["name": "Alice", "age": 40, "department": dept])
        #expect((dept.value(forKey: "employees") as? Set<NSManagedObject>)?.contains(alice) == true)
        try stack.context.save()
        #expect(!alice.objectID.isTemporaryID)
        let other = stack.newContext()
        let found = try stack.fetch("Employee", "department.name == %@ AND age > 30", "R&D", in: other)
        #expect(found.count == 1)
        #expect(found.first?.value(forKey: "name") as? String == "Alice")
        #expect(found.first !== alice)
    }
}

@Suite("Coordinator and model")
struct CoordinatorModelTests {
    /// Apple's documented rule: a model becomes immutable once a coordinator uses it.
    @Test func aCoordinatorMakesItsModelImmutable() {
        let model = TestModel.make()
        #expect(model.isEditable)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect(!model.isEditable)
        #expect(!coordinator.managedObjectModel.isEditable)
    }
}
