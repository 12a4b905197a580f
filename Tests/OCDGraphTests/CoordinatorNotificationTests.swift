import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

// The coordinator's and the merge's notifications, the coordinator's queue, destroying a store, and
// derived values observed when a save hands them back.

@Suite("Coordinator: notifications, queue and store files")
struct CoordinatorNotificationTests {
    /// Apple: StoresWillChange and StoresDidChange about the coordinator, with the stores under
    /// `NSAddedPersistentStoresKey` / `NSRemovedPersistentStoresKey`; WillRemoveStore before a removal.
    @Test func addingAndRemovingAStoreIsAnnounced() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let recorder = NotificationRecorder([.NSPersistentStoreCoordinatorStoresWillChange, .NSPersistentStoreCoordinatorStoresDidChange,
                                             .NSPersistentStoreCoordinatorWillRemoveStore], object: coordinator)
        let store = try coordinator.addPersistentStore(ofType: TestStack.storeType, configurationName: nil, at: TestStack.newStoreURL())
        #expect(recorder.notifications.map(\.name) == [.NSPersistentStoreCoordinatorStoresWillChange, .NSPersistentStoreCoordinatorStoresDidChange])
        let added = try #require(recorder.notifications.last)
        #expect((added.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore])?.first === store)
        #expect(added.userInfo?[NSRemovedPersistentStoresKey] == nil)
        try coordinator.remove(store)
        #expect(recorder.notifications.map(\.name).suffix(3) == [.NSPersistentStoreCoordinatorWillRemoveStore, .NSPersistentStoreCoordinatorStoresWillChange,
                                                                 .NSPersistentStoreCoordinatorStoresDidChange])
        #expect((recorder.notifications.last?.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore])?.first === store)
        #expect(recorder.named(.NSPersistentStoreCoordinatorWillRemoveStore).first?.userInfo == nil)
    }

    /// Apple's `perform(_:)` runs blocks on the coordinator's queue: one at a time, in submission order.
    @Test func performRunsBlocksInTheOrderSubmitted() throws {
        let stack = try TestStack()
        final class Order: @unchecked Sendable {
            let lock = NSLock()
            var values: [Int] = []
        }
        let order = Order()
        let group = DispatchGroup()
        stack.coordinator.performAndWait {
            for index in 0..<200 {
                group.enter()
                stack.coordinator.perform {
                    order.lock.lock()
                    order.values.append(index)
                    order.lock.unlock()
                    group.leave()
                }
            }
            // The blocks queue up behind this one meanwhile.
            Thread.sleep(forTimeInterval: 0.05)
        }
        group.wait()
        #expect(order.values == Array(0..<200))
    }

    /// A store class's own error reaches the caller as a Core Data error.
    @Test func metadataOfAStoreTypeWithoutFilesIsACocoaError() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).store")
        do {
            _ = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSInMemoryStoreType, at: url)
            Issue.record("no error")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreOperationError, "\(error)")
        }
    }

    /// `destroyPersistentStore(at:ofType:options:)`: the coordinator lets go of its store at that file,
    /// and the file goes with its companions; a store added there again starts empty.
    @Test func destroyingAStoreRemovesItAndItsFiles() throws {
        let stack = try TestStack()
        try stack.seed("Company", ["name": "Acme"])
        guard TestStack.storeType == NSSQLiteStoreType, let url = stack.store.url else {
            try stack.coordinator.destroyPersistentStore(at: URL(fileURLWithPath: "/nonexistent/x"), ofType: NSInMemoryStoreType)
            return
        }
        #expect(FileManager.default.fileExists(atPath: url.path))
        // The support folder Core Data keeps external data in, and a companion file left by a crash.
        let support = url.deletingLastPathComponent().appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: support, withIntermediateDirectories: true)
        try Data([1]).write(to: support.appendingPathComponent("blob"))
        try Data().write(to: URL(fileURLWithPath: url.path + "-journal"))
        try stack.coordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType)
        #expect(stack.coordinator.persistentStores.isEmpty)
        for suffix in ["", "-wal", "-shm", "-journal"] { #expect(!FileManager.default.fileExists(atPath: url.path + suffix), "\(suffix)") }
        #expect(!FileManager.default.fileExists(atPath: support.deletingLastPathComponent().path))
        // A store in memory (`/dev/null`) has no file to delete, and the device stays.
        try stack.coordinator.destroyPersistentStore(at: URL(fileURLWithPath: "/dev/null"), ofType: NSSQLiteStoreType)
        #expect(FileManager.default.fileExists(atPath: "/dev/null"))
        try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
        #expect(try stack.fetch("Company", in: stack.newContext()).isEmpty)
        try stack.coordinator.destroyPersistentStore(at: url.appendingPathExtension("missing"), ofType: NSSQLiteStoreType)
    }

    /// Apple's DidMergeChangesObjectIDs, after a merge: the IDs of what it took in.
    @Test func aMergePostsTheObjectIDsItMerged() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let gone = try stack.seed("Employee", ["name": "Gone"])
        let ann = try stack.context.existingObject(with: annID)
        _ = ann.value(forKey: "age")
        let other = stack.newContext()
        try other.existingObject(with: annID).setValue(31, forKey: "age")
        other.delete(try other.existingObject(with: gone))
        let newcomer = stack.insert("Employee", ["name": "New"], into: other)
        let saved = NotificationRecorder([.NSManagedObjectContextDidSave], object: other)
        try other.save()
        let merged = NotificationRecorder([NSManagedObjectContext.didMergeChangesObjectIDsNotification], object: stack.context)
        stack.context.mergeChanges(fromContextDidSave: try #require(saved.notifications.first))
        let note = try #require(merged.notifications.first)
        #expect(merged.notifications.count == 1)
        #expect(note.userInfo?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID> == [newcomer.objectID])
        #expect(note.userInfo?[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID> == [annID])
        #expect(note.userInfo?[NSDeletedObjectIDsKey] as? Set<NSManagedObjectID> == [gone])
        #expect(note.userInfo?[NSRefreshedObjectIDsKey] as? Set<NSManagedObjectID> == [annID])
        #expect(ann.value(forKey: "age") as? Int == 31)
    }

    /// A derived value a save hands back changes what the object shows: key-value observers of it hear.
    @Test func aDerivedValueTakenAtSaveIsObserved() throws {
        let stack = try TestStack(model: DerivedAttributeTests.model())
        let book = stack.insert("Book", ["title": "A"])
        try stack.context.save()
        final class Reports: @unchecked Sendable { var new: [Any?] = [] }
        let reports = Reports()
        let token = book.observeValue(forKey: "pageCount", options: [.new]) { book, _, _, new, _, _ in
            reports.new.append(new)
            book.setValue("A, \((new as? NSNumber)?.intValue ?? -1) pages", forKey: "title")
        }
        stack.insert("Page", ["words": 10, "book": book])
        try stack.context.save()
        #expect((book.value(forKey: "pageCount") as? NSNumber)?.intValue == 1)
        #expect(reports.new.count == 1)
        #expect((reports.new.first as? NSNumber)?.intValue == 1)
        // What the observer changed is the next save's, not lost in this one's bookkeeping.
        #expect(stack.context.hasChanges && book.isUpdated)
        try stack.context.save()
        let fresh = stack.newContext()
        #expect(try stack.fetch("Book", in: fresh).first?.value(forKey: "title") as? String == "A, 1 pages")
        #expect(reports.new.count == 1, "an unchanged derived value is not announced")
        token.invalidate()
    }
}
