import Foundation
import OCDModel
import OCDStore

// Merging what another context saved (Core Data's `mergeChanges(fromContextDidSave:)`): updated objects
// are refreshed, inserted ones faulted in, deleted ones deleted. The objects' values come from the store,
// which already holds the saved changes; only the IDs travel.
extension NSManagedObjectContext {
    /// Merges the changes of another context's `NSManagedObjectContextDidSave` notification: registered
    /// objects the other context updated are refreshed, keeping this context's own changes over the stored
    /// values (`refresh(_:mergeChanges: true)`); objects it inserted are faulted in; registered objects it
    /// deleted are deleted here, with their delete rules, and leave the context as a saved deletion would.
    /// Call it on the context's queue (in `perform`). One `NSManagedObjectContextObjectsDidChange` reports
    /// the merge: inserted, refreshed and deleted objects (and objects a delete rule changed, as updated).
    public func mergeChanges(fromContextDidSave notification: Notification) {
        assertQueue()
        let info = notification.userInfo ?? [:]
        mergeSavedChanges(inserted: objectIDs(info, NSInsertedObjectsKey, NSInsertedObjectIDsKey),
                          updated: objectIDs(info, NSUpdatedObjectsKey, NSUpdatedObjectIDsKey),
                          deleted: objectIDs(info, NSDeletedObjectsKey, NSDeletedObjectIDsKey))
    }

    /// Merges saved changes described by object IDs or their URIs (`NSInsertedObjectsKey`,
    /// `NSUpdatedObjectsKey`, `NSDeletedObjectsKey`, each an array of `NSManagedObjectID`s or `URL`s),
    /// as `mergeChanges(fromContextDidSave:)` does, into each of `contexts` on its own queue.
    public class func mergeChanges(fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [NSManagedObjectContext]) {
        nonisolated(unsafe) let data = changeNotificationData
        for context in contexts {
            context.performAndWait {
                context.mergeSavedChanges(inserted: context.objectIDs(data, NSInsertedObjectsKey, NSInsertedObjectIDsKey),
                                          updated: context.objectIDs(data, NSUpdatedObjectsKey, NSUpdatedObjectIDsKey),
                                          deleted: context.objectIDs(data, NSDeletedObjectsKey, NSDeletedObjectIDsKey))
            }
        }
    }

    /// Whether the context merges the saves of the other contexts on its coordinator by itself, on its
    /// own queue, as `mergeChanges(fromContextDidSave:)` would (OpenCoreData has no child contexts, so the
    /// "parent" is always the coordinator).
    public var automaticallyMergesChangesFromParent: Bool {
        get { mergeObserver != nil }
        set {
            guard newValue != (mergeObserver != nil) else { return }
            if let mergeObserver {
                NotificationCenter.default.removeObserver(mergeObserver)
                self.mergeObserver = nil
                return
            }
            let reference = backreference
            mergeObserver = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: nil, queue: nil) { note in
                guard let saver = note.object as? NSManagedObjectContext,
                      let context = reference.load(as: NSManagedObjectContext.self), saver !== context,
                      let coordinator = context.persistentStoreCoordinator, saver.persistentStoreCoordinator === coordinator else { return }
                // The IDs are read here, on the saving context's thread, where its objects belong.
                let info = note.userInfo ?? [:]
                let changes = (inserted: context.objectIDs(info, NSInsertedObjectsKey, NSInsertedObjectIDsKey),
                               updated: context.objectIDs(info, NSUpdatedObjectsKey, NSUpdatedObjectIDsKey),
                               deleted: context.objectIDs(info, NSDeletedObjectsKey, NSDeletedObjectIDsKey))
                nonisolated(unsafe) let merging = changes
                context.perform {
                    context.mergeSavedChanges(inserted: merging.inserted, updated: merging.updated, deleted: merging.deleted)
                }
            }
        }
    }

    /// The object IDs under `key` (objects, IDs or URIs, in a set or an array), or under `idsKey`.
    func objectIDs(_ info: [AnyHashable: Any], _ key: String, _ idsKey: String) -> [NSManagedObjectID] {
        guard let value = info[key] ?? info[idsKey] else { return [] }
        let elements: [Any]
        if let set = value as? Set<NSManagedObject> { elements = Array(set) }
        else if let set = value as? Set<NSManagedObjectID> { elements = Array(set) }
        else if let array = value as? [Any] { elements = array }
        else if let set = value as? NSSet { elements = set.allObjects }
        else if let array = value as? NSArray { elements = array.map { $0 } }
        else { return [] }
        return elements.compactMap { element in
            if let object = element as? NSManagedObject { return object.objectID }
            if let id = element as? NSManagedObjectID { return id }
            if let url = element as? URL { return persistentStoreCoordinator?.managedObjectID(forURIRepresentation: url) }
            return nil
        }
    }

    /// The merge itself, on the context's queue.
    func mergeSavedChanges(inserted insertedIDs: [NSManagedObjectID], updated updatedIDs: [NSManagedObjectID], deleted deletedIDs: [NSManagedObjectID]) {
        // This context's own pending changes are announced first, in their own notification.
        processPendingChanges()
        let savedDeletions = Set(deletedIDs)

        // Deletions: a realized object as `delete(_:)` deletes it, delete rules included; a fault (whose
        // row is gone: nothing to fire) is marked deleted as it is.
        for id in deletedIDs {
            guard let object = registry[id], !object.isInserted, !object.isDeleted else { continue }
            if object.isFault {
                forgetFault(object)
                let key = ObjectIdentifier(object)
                object.status.insert(.deleted)
                deleted[key] = object
                unprocessedDeleted[key] = object
            } else {
                delete(object)
            }
        }
        runPendingDeleteRules()
        // What the delete rules changed: compared with the store again once refreshed, below.
        var touched = Array(unprocessedUpdated.values)
        // The objects the store no longer has leave the context as a saved deletion leaves it (a fault
        // outside any context, no longer deleted); objects a cascade deleted here alone stay pending.
        for object in Array(deleted.values) where savedDeletions.contains(object.objectID) {
            deleted[ObjectIdentifier(object)] = nil
            registry[object.objectID] = nil
            object.turnIntoFault()
            object.status.subtract([.deleted, .updated, .inaccessible])
            object.managedObjectContext = nil
        }

        // Updates: a fault reads the new row when it fires; a realized object is refreshed now.
        for id in updatedIDs {
            guard let object = registry[id], !object.isInserted, !object.isDeleted else { continue }
            if object.isFault {
                forgetFault(object)
            } else {
                refresh(object, mergeChanges: true)
                touched.append(object)
            }
        }
        // An object whose only changes are what the other context saved has nothing left to save.
        for object in touched where object.isUpdated && object.changedValues().isEmpty {
            updated[ObjectIdentifier(object)] = nil
            object.status.remove(.updated)
        }

        // Insertions: faulted in, and announced with the rest of the merge.
        var faults: Set<NSManagedObject> = []
        for id in insertedIDs {
            if let object = registry[id] {
                if !object.isInserted { faults.insert(object) }
            } else {
                faults.insert(object(with: id))
            }
        }
        postObjectsDidChange(merged: faults)
    }

    /// A fault drops the row it was fetched with, so that it reads the store's row when it fires.
    private func forgetFault(_ object: NSManagedObject) {
        object.cachedRow = nil
        object.faultBatch = nil
    }
}
