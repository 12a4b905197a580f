import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

// What observers of ObjectsDidChange see: the event's values inside the post, and the notifications of
// rollback(), reset() and refresh(_:mergeChanges:).

@Suite("Context: what ObjectsDidChange observers see")
struct ObjectsDidChangeObserverTests {
    final class Seen: @unchecked Sendable {
        var values: [[String: Any]] = []
        var objects: [NSManagedObject] = []
    }

    /// Apple: `changedValuesForCurrentEvent()` holds the changes "since the last posting of
    /// NSManagedObjectContextObjectsDidChange", so the observer of that posting reads this event's.
    @Test func anObserverReadsTheEventsChangedValues() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann", "age": 30]))
        let seen = Seen()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: stack.context, queue: nil) { note in
            for object in note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? [] {
                seen.values.append(object.changedValuesForCurrentEvent())
            }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        ann.setValue("Anna", forKey: "name")
        stack.context.processPendingChanges()
        #expect(seen.values.count == 1)
        #expect(seen.values.first?["name"] as? String == "Ann")
        #expect(ann.changedValuesForCurrentEvent().isEmpty, "the event ends once its observers have run")
        ann.setValue(31, forKey: "age")
        stack.context.processPendingChanges()
        #expect(seen.values.count == 2)
        #expect(seen.values.last.map { Set($0.keys) } == ["age"])
    }

    /// A change an observer makes during the post belongs to the next event, whose observers read it.
    @Test func aChangeMadeByAnObserverIsReadInTheNextEvent() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann", "age": 30]))
        let seen = Seen()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: stack.context, queue: nil) { note in
            guard let object = (note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject>)?.first else { return }
            seen.values.append(object.changedValuesForCurrentEvent())
            if object.value(forKey: "age") as? Int == 30 { object.setValue(40, forKey: "age") }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        ann.setValue("Anna", forKey: "name")
        stack.context.processPendingChanges()
        stack.context.processPendingChanges()
        #expect(seen.values.count == 2)
        #expect(seen.values.last?["age"] as? Int == 30, "the observer's change reached the next event: \(seen.values)")
    }

    /// Apple's `refresh(_:mergeChanges:)`: a fault has no values to reload; it stays a fault, and firing
    /// it later wakes it as any fault (`awakeFromFetch()`, transient defaults).
    @Test func refreshingAFaultWithMergeLeavesAFault() throws {
        let (stack, _) = try TestStack.hooked { entities, _ in
            entities["Employee"]!.properties.append(TestModel.attribute("mood", .stringAttributeType, defaultValue: "calm", transient: true))
        }
        let id = try stack.seed("Employee", ["name": "Ann"])
        let ann = try #require(stack.context.object(with: id) as? HookedEmployee)
        #expect(ann.isFault)
        stack.context.refresh(ann, mergeChanges: true)
        #expect(ann.isFault)
        #expect(ann.string("name") == "Ann")
        #expect(ann.count("awakeFromFetch") == 1)
        #expect(ann.string("mood") == "calm")
    }

    /// Rollback undoes what observers were told of: an announced insertion is announced deleted, an
    /// announced deletion inserted again, an updated object refreshed; unannounced changes go unheard.
    @Test func rollbackAnnouncesWhatItUndoes() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann"]))
        let bob = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Bob"]))
        let cid = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Cid"]))
        let eve = stack.insert("Employee", ["name": "Eve"])
        ann.setValue("Anna", forKey: "name")
        stack.context.delete(bob)
        stack.context.processPendingChanges()
        let quiet = stack.insert("Employee", ["name": "Quiet"])
        stack.context.delete(cid)
        let dan = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Dan"]))
        dan.setValue("Daniel", forKey: "name")  // never announced: its restored values are announced all the same
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        stack.context.rollback()
        let note = try #require(recorder.notifications.first)
        #expect(recorder.notifications.count == 1)
        #expect(note.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> == [eve])
        #expect(note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> == [bob])
        #expect(note.userInfo?[NSRefreshedObjectsKey] as? Set<NSManagedObject> == [ann, cid, dan])
        #expect(quiet.managedObjectContext == nil && !cid.isDeleted && dan.string("name") == "Dan")
        stack.context.rollback()
        #expect(recorder.notifications.count == 1, "nothing left to undo, nothing posted")
    }

    /// Apple's `NSInvalidatedAllObjectsKey`: the objects "have been" invalidated. An observer that fetches
    /// again gets objects of the context, not the ones leaving it.
    @Test func resetAnnouncesOnceTheObjectsAreGone() throws {
        let stack = try TestStack()
        try stack.seed("Employee", ["name": "Ann"])
        let before = try stack.fetch("Employee")
        #expect(before.first?.string("name") == "Ann")
        let seen = Seen()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: stack.context, queue: nil) { note in
            if note.userInfo?[NSInvalidatedAllObjectsKey] != nil { seen.objects = (try? stack.fetch("Employee")) ?? [] }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        stack.context.reset()
        let after = try #require(seen.objects.first)
        #expect(after !== before.first)
        #expect(after.managedObjectContext === stack.context)
        #expect(after.string("name") == "Ann")
    }
}

@Suite struct MainQueueRefreshTests {
    /// A refresh is a change of the event, like a set: a main-queue context used outside `perform`
    /// announces it at the end of the main queue's turn.
    @Test @MainActor func aRefreshOnAMainQueueContextIsAnnouncedAtTheEndOfTheTurn() async throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let ann = try context.existingObject(with: try stack.seed("Employee", ["name": "Ann"]))
        _ = ann.value(forKey: "name")
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        context.refresh(ann, mergeChanges: false)
        // The main queue's next turns, until the post or a second.
        for _ in 0..<100 where recorder.named(.NSManagedObjectContextObjectsDidChange).isEmpty {
            await MainActor.run {}
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let note = try #require(recorder.named(.NSManagedObjectContextObjectsDidChange).first)
        #expect(note.userInfo?[NSRefreshedObjectsKey] as? Set<NSManagedObject> == [ann])
    }
}
