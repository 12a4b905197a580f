import Foundation
import OCDModel
import OCDStore

// Merging what another context saved (Core Data's `mergeChanges(fromContextDidSave:)`): updated objects
// are refreshed, inserted ones faulted in, deleted ones deleted. The objects' values come from the store,
// which already holds the saved changes; only the IDs travel.
extension NSManagedObjectContext {
    /// `mergeChanges(fromContextDidSave:)`'s work (the entry point is in the class).
    func mergeContextDidSave(_ notification: Notification) {
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
                let merging = changes
                context.perform {
                    context.mergeSavedChanges(inserted: merging.inserted, updated: merging.updated, deleted: merging.deleted)
                }
            }
        }
    }

    /// The object IDs under `key` (objects, IDs or URIs, in a set or an array), or under `idsKey`. An ID
    /// of another coordinator (a second one on the same file) is taken by its URI.
    func objectIDs(_ info: [AnyHashable: Any], _ key: String, _ idsKey: String) -> [NSManagedObjectID] {
        guard let value = info[key] ?? info[idsKey] else { return [] }
        let elements: [Any]
        if let set = value as? Set<NSManagedObject> { elements = Array(set) }
        else if let set = value as? Set<NSManagedObjectID> { elements = Array(set) }
        else if let set = value as? Set<URL> { elements = Array(set) }
        else if let array = value as? [Any] { elements = array }
        else if let set = value as? NSSet { elements = set.allObjects }
        else if let array = value as? NSArray { elements = array.map { $0 } }
        else { return [] }
        let coordinator = persistentStoreCoordinator
        let stores = coordinator?.persistentStores ?? []
        return elements.compactMap { element -> NSManagedObjectID? in
            var id: NSManagedObjectID?
            if let object = element as? NSManagedObject { id = object.objectID }
            else if let objectID = element as? NSManagedObjectID { id = objectID }
            else if let url = element as? URL { return coordinator?.managedObjectID(forURIRepresentation: url) }
            guard let id, !id.isTemporaryID else { return nil }
            if let store = id.persistentStore, stores.contains(where: { $0 === store }) { return id }
            return coordinator?.managedObjectID(forURIRepresentation: id.uriRepresentation())
        }
    }

    /// The merge itself, on the context's queue.
    ///
    /// The store already holds everything the other context saved, delete rules included: objects its
    /// cascades deleted are among `deletedIDs`, objects its nullifications changed among `updatedIDs`. So
    /// deleted objects do not run this context's delete rules against relationships that may be out of
    /// date (a cascade through them could delete an object the other context kept): they are detached
    /// from the objects that point to them, and only links this context made cascade (`detach`).
    func mergeSavedChanges(inserted insertedIDs: [NSManagedObjectID], updated updatedIDs: [NSManagedObjectID], deleted deletedIDs: [NSManagedObjectID]) {
        // This context's own pending changes are announced first, in their own notification.
        processPendingChanges()

        // Deletions: every registered object the store no longer has is deleted as it is (an object
        // deleted here already was announced then).
        var gone: [ObjectIdentifier: NSManagedObject] = [:]
        var newlyDeleted: [NSManagedObject] = []
        for id in deletedIDs {
            guard let object = registry[id], !object.isInserted else { continue }
            gone[ObjectIdentifier(object)] = object
            if !object.isDeleted {
                markDeleted(object)
                newlyDeleted.append(object)
            }
        }

        // Updates: a fault reads the new row when it fires; a realized object is refreshed now, keeping
        // this context's changes (a pending deletion included, which then expects the new version).
        var refreshedIDs: Set<NSManagedObjectID> = []
        for id in updatedIDs {
            guard let object = registry[id], !object.isInserted, gone[ObjectIdentifier(object)] == nil else { continue }
            if object.isFault {
                forgetFault(object)
            } else {
                refresh(object, mergeChanges: true)
                refreshedIDs.insert(id)
            }
        }

        // As `delete(_:)` would, a realized object hears of its deletion, once it is marked deleted and
        // the objects the other context updated have their new values.
        for object in newlyDeleted where !object.isFault { object.prepareForDeletion() }

        // Whatever still points to a deleted object lets go of it (or, linked to it here and cascading
        // from it, is deleted too).
        if !gone.isEmpty {
            let goneIDs = Set(gone.values.map(\.objectID))
            for object in Array(registry.values) where !object.isFault && gone[ObjectIdentifier(object)] == nil {
                detach(object, from: gone, ids: goneIDs)
            }
            runPendingDeleteRules()
            dropObjectsInsertedAndDeleted()
        }
        // They leave the context as a saved deletion leaves it: a fault outside any context.
        for object in gone.values {
            forgetFault(object)
            deleted[ObjectIdentifier(object)] = nil
            registry[object.objectID] = nil
            object.turnIntoFault()
            object.status.subtract([.deleted, .updated, .inaccessible])
            object.managedObjectContext = nil
        }


        // Insertions: faulted in, and announced (an object already registered is already known here).
        var faults: Set<NSManagedObject> = []
        for id in insertedIDs where registry[id] == nil {
            faults.insert(object(with: id))
        }
        postingObjectsDidChange { postObjectsDidChange(merged: faults) }
        // Apple's DidMergeChangesObjectIDs: what the merge took in, by ID.
        var merged: [AnyHashable: Any] = [:]
        if !insertedIDs.isEmpty { merged[NSInsertedObjectIDsKey] = Set(insertedIDs) }
        if !updatedIDs.isEmpty { merged[NSUpdatedObjectIDsKey] = Set(updatedIDs) }
        if !deletedIDs.isEmpty { merged[NSDeletedObjectIDsKey] = Set(deletedIDs) }
        if !refreshedIDs.isEmpty { merged[NSRefreshedObjectIDsKey] = refreshedIDs }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidMergeChangesObjectIDs, object: self, userInfo: merged)
    }

    /// Removes the deleted objects `gone` from `object`'s loaded relationships, with change notifications
    /// and no inverse maintenance (the other side is leaving). An object linked to a deleted one here (an
    /// inserted object, or a link this context made) whose inverse cascades is deleted with it, as
    /// `delete(_:)` of the deleted object would have done here. An object that had no changes keeps none:
    /// the link it lets go of was one the store no longer counts (a relationship with no inverse or a
    /// no-action rule), so its committed values let go of it too.
    private func detach(_ object: NSManagedObject, from gone: [ObjectIdentifier: NSManagedObject], ids goneIDs: Set<NSManagedObjectID>) {
        let wasClean = !object.hasChanges
        var changedSlots: [Int] = []
        for (slot, relationship) in object.layout.relationships where !relationship.isTransient {
            guard let members = object.loadedDestinations(slot, isToMany: relationship.isToMany) else { continue }
            let leaving = members.filter { gone[ObjectIdentifier($0)] != nil }
            guard !leaving.isEmpty else { continue }
            if relationship.inverseRelationship?.deleteRule == .cascadeDeleteRule, !object.isDeleted,
               object.isInserted || !isCommittedLink(of: object, slot: slot, to: leaving) {
                delete(object)
            }
            object.beginInverseUpdate()
            if relationship.isToMany {
                let staying = members.filter { gone[ObjectIdentifier($0)] == nil }
                let using = Set(leaving.map { AnyHashable($0) })
                object.willChangeValue(forKey: relationship.name, withSetMutation: .minus, using: using)
                object.kvcSetPrimitiveValue(staying, forKey: relationship.name)
                object.didChangeValue(forKey: relationship.name, withSetMutation: .minus, using: using)
            } else {
                object.noteWillChange(relationship.name)
                object.kvcSetPrimitiveValue(nil, forKey: relationship.name)
                object.noteDidChange(relationship.name)
            }
            object.endInverseUpdate()
            changedSlots.append(slot)
        }
        guard wasClean, !changedSlots.isEmpty, !object.isDeleted, var values = object.rowValues else { return }
        for slot in changedSlots {
            if let ids = values.stored(slot) as? [NSManagedObjectID] {
                values[slot] = ids.filter { !goneIDs.contains($0) }
            } else if let id = values.stored(slot) as? NSManagedObjectID, goneIDs.contains(id) {
                values[slot] = nil
            }
            (object.slots[slot] as? ToManyStorage)?.markUnmodified()
        }
        object.rowValues = values
        updated[ObjectIdentifier(object)] = nil
        object.status.remove(.updated)
    }

    /// Whether every object of `leaving` was linked to `object` through `slot` in its committed values
    /// (a to-many whose committed row does not list its members counts as committed).
    private func isCommittedLink(of object: NSManagedObject, slot: Int, to leaving: [NSManagedObject]) -> Bool {
        guard let committed = object.rowValues?.stored(slot) ?? nil else {
            return object.rowValues != nil && object.layout.kinds[slot] == .toMany
        }
        if let id = committed as? NSManagedObjectID { return leaving.allSatisfy { $0.objectID == id } }
        if let ids = committed as? [NSManagedObjectID] { return leaving.allSatisfy { ids.contains($0.objectID) } }
        return true
    }

    /// A fault drops the row it was fetched with, so that it reads the store's row when it fires. (A
    /// realized object keeps its row: it is the snapshot of its values.)
    private func forgetFault(_ object: NSManagedObject) {
        if object.isFault { object.setRow(nil) }
        object.faultBatch = nil
    }
}
