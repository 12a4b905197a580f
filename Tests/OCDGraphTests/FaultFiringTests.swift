import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDStore
import Testing

/// A reading whose class records `awakeFromFetch`, and can set a value there.
final class AwakeRecordingReading: NSManagedObject, @unchecked Sendable {
    // Module-qualified: this file is compiled into two test modules sharing one class registry.
    static let className = String(reflecting: AwakeRecordingReading.self)
    private(set) var awakenings = 0
    private(set) var faultWhileAwaking: Bool?
    /// Set by a test: a note to write while awaking.
    var noteToSetWhileAwaking: String?

    override func awakeFromFetch() {
        super.awakeFromFetch()
        awakenings += 1
        faultWhileAwaking = isFault
        if let note = noteToSetWhileAwaking { setValue(note, forKey: "note") }
    }
}

/// Runs its action when it goes away: a value whose release runs code.
final class Tripwire: NSObject, @unchecked Sendable {
    private let action: () -> Void
    init(_ action: @escaping () -> Void) { self.action = action }
    deinit { action() }
}

/// Faults fetched with their rows read ahead, of an entity with attributes only, fire from that row
/// without asking their context (the fast path of `fireFault`): what firing promises still holds there.
@Suite("Fault firing from a row read ahead")
struct FaultFiringTests {
    private static func stack() throws -> TestStack {
        NSManagedObjectModel.registerManagedObjectClass(AwakeRecordingReading.self, forName: AwakeRecordingReading.className)
        let reading = TestModel.entity("Reading", [TestModel.attribute("value", .integer64AttributeType),
                                                   TestModel.attribute("note", .stringAttributeType),
                                                   TestModel.attribute("blob", .transformableAttributeType)])
        reading.managedObjectClassName = AwakeRecordingReading.className
        let model = NSManagedObjectModel()
        model.entities = [reading]
        let stack = try TestStack(model: model)
        for value in 1...3 {
            let object = NSEntityDescription.insertNewObject(forEntityName: "Reading", into: stack.context)
            object.setValue(Int64(value), forKey: "value")
            object.setValue("n\(value)", forKey: "note")
        }
        try stack.context.save()
        return stack
    }

    private static func faults(in context: NSManagedObjectContext) throws -> [AwakeRecordingReading] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Reading")
        request.sortDescriptors = [OCDPredicate.NSSortDescriptor(key: "value", ascending: true)]
        return try context.fetch(request).map { try #require($0 as? AwakeRecordingReading) }
    }

    @Test func aFaultFiresFromItsRowOnceAndAwakesAsARealizedObject() throws {
        let stack = try Self.stack()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let readings = try Self.faults(in: context)
        #expect(readings.allSatisfy { $0.isFault && $0.awakenings == 0 })
        #expect(readings.map { $0.value(forKey: "value") as? Int64 } == [1, 2, 3])
        #expect(readings.map { $0.value(forKey: "note") as? String } == ["n1", "n2", "n3"])
        #expect(readings.allSatisfy { !$0.isFault && $0.awakenings == 1 && $0.faultWhileAwaking == false })
        #expect(!context.hasChanges)
        #expect(readings.allSatisfy { $0.changedValues().isEmpty && $0.committedValues(forKeys: nil)["value"] != nil })
    }

    @Test func aValueSetWhileAwakingFromTheRowLeavesNoChange() throws {
        let stack = try Self.stack()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let reading = try #require(try Self.faults(in: context).first)
        reading.noteToSetWhileAwaking = "warm"
        #expect(reading.value(forKey: "value") as? Int64 == 1)
        #expect(reading.value(forKey: "note") as? String == "warm")
        context.processPendingChanges()
        #expect(!reading.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        #expect(reading.changedValuesForCurrentEvent().isEmpty)
    }

    @Test func aFaultThatOutlivesItsContextFiresEmpty() throws {
        let stack = try Self.stack()
        var context: NSManagedObjectContext? = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context?.persistentStoreCoordinator = stack.coordinator
        let reading = try #require(try context.map { try Self.faults(in: $0) }?.first)
        #expect(reading.isFault)
        context = nil
        #expect(reading.managedObjectContext == nil)
        #expect(reading.value(forKey: "value") == nil, "the context took its row with it")
        #expect(!reading.isFault)
        #expect(reading.awakenings == 0)
    }

    /// A fault fetched again before it fires takes the newer row the fetch read, and a save of a change
    /// after it expects that row's version (no conflict).
    @Test func aFaultFetchedAgainFiresFromTheNewerRowAndSavesAgainstItsVersion() throws {
        let stack = try Self.stack()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let reading = try #require(try Self.faults(in: context).first)
        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = stack.coordinator
        let elsewhere = try other.existingObject(with: reading.objectID)
        elsewhere.setValue(Int64(10), forKey: "value")
        try other.save()
        #expect(reading.isFault)
        _ = try Self.faults(in: context)
        #expect(reading.isFault)
        #expect(reading.value(forKey: "value") as? Int64 == 10)
        #expect(reading.awakenings == 1)
        reading.setValue("edited", forKey: "note")
        try context.save()
        let check = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        check.persistentStoreCoordinator = stack.coordinator
        let saved = try check.existingObject(with: reading.objectID)
        #expect(saved.value(forKey: "value") as? Int64 == 10 && saved.value(forKey: "note") as? String == "edited")
    }

    /// A context going away releases its objects' values one object at a time; a value's deinit that
    /// fires a fault the loop has not reached yet finds no context, as after the loop.
    @Test func aFaultFiredWhileItsContextGoesAwayFiresEmpty() throws {
        let stack = try Self.stack()
        var context: NSManagedObjectContext? = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context?.persistentStoreCoordinator = stack.coordinator
        let reading = try #require(try context.map { try Self.faults(in: $0) }?.first)
        nonisolated(unsafe) var seen: (value: Any?, awakenings: Int, hasContext: Bool)?
        try context.map { context in
            // An unsaved object whose value fires the fault when released: its values go first, as
            // the registry lists temporary IDs before runs of permanent ones.
            let holder = NSEntityDescription.insertNewObject(forEntityName: "Reading", into: context)
            holder.setValue(Tripwire { seen = (reading.value(forKey: "value"), reading.awakenings, reading.managedObjectContext != nil) },
                            forKey: "blob")
            _ = try #require(holder as? AwakeRecordingReading)
        }
        #expect(reading.isFault)
        context = nil
        let fired = try #require(seen)
        #expect(fired.value == nil, "filled from its row: \(fired.value ?? "nil")")
        #expect(fired.awakenings == 0)
        #expect(!fired.hasContext)
    }
}
