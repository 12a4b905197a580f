import Foundation
import OCDModel
import OCDStore

extension NSManagedObjectContext {
    /// `save()`'s work (the entry point is in the class, where a subclass can override it).
    func saveContext() throws {
        assertQueue()
        if isSaving {
            throw coreDataError(132001, [NSLocalizedDescriptionKey: "attempt to recursively call -save: on the context aborted"])
        }
        isSaving = true
        defer { isSaving = false }
        processPendingChanges()
        guard hasChanges else { return }
        guard let coordinator = persistentStoreCoordinator else {
            fatalError("save(): the context has no persistent store coordinator.")
        }
        NotificationCenter.default.post(name: .NSManagedObjectContextWillSave, object: self)

        try validateAndCallWillSave()

        // Conflicts found by the stores' checks go to the merge policy, and the save tries again with
        // the resolved objects: a conflict of each kind once, plus one more round for a row that changed
        // again meanwhile. Nothing is written until every store's check passes.
        var insertedNow: [NSManagedObject] = []
        var updatedNow: [NSManagedObject] = []
        var deletedNow: [NSManagedObject] = []
        var parts: [SavePart] = []
        var results: [StoreSaveResult] = []
        var round = 0
        while true {
            round += 1
            insertedNow = Self.inAddressOrder(inserted)
            updatedNow = Self.inAddressOrder(updated)
            deletedNow = Self.inAddressOrder(deleted)
            if coordinator.persistentStores.count > 1 { try checkRelationshipsWithinStores(insertedNow + updatedNow, coordinator) }
            let list: [Any]
            do {
                // One store transaction for the IDs and the writes, as Core Data's saves are.
                (parts, results) = try coordinator.performSaveTransaction {
                    try coordinator.beginSaveRound(inserted: insertedNow, changed: updatedNow + deletedNow, assigned: assignedStores)
                    try assignPermanentIDs(insertedNow, distinct: true)
                    let parts = try saveParts(inserted: insertedNow, updated: updatedNow, deleted: deletedNow)
                    return (parts, try coordinator.save(parts.map { ($0.store, $0.request) }))
                }
                break
            } catch let StoreError.conflicts(conflicts) {
                let conflicts = mergeConflicts(conflicts)
                if round >= Self.maximumSaveRounds { throw NSMergePolicy.lockingError(conflicts) }
                list = conflicts
            } catch let StoreError.constraintConflicts(conflicts) {
                let conflicts = constraintConflicts(conflicts)
                if round >= Self.maximumSaveRounds { throw NSMergePolicy.constraintError(conflicts) }
                list = conflicts
            } catch let error as StoreError {
                throw coreDataError(NSPersistentStoreSaveError, [NSLocalizedDescriptionKey: "\(error)", NSUnderlyingErrorKey: error])
            }
            guard let policy = mergePolicy as? NSMergePolicy else {
                fatalError("save(): mergePolicy \(type(of: mergePolicy)) is not an NSMergePolicy.")
            }
            try policy.resolve(mergeConflicts: list)
            processPendingChanges()
        }

        // The store has the changes: the context's state follows. A new row is stored as it was sent; an
        // updated one as the store reports it, or (a store that reports none) as sent, one version on.
        for (part, result) in zip(parts, results) {
            for (object, row) in zip(part.insertedObjects, part.request.inserted) { object.setRow(row) }
            for (index, object) in part.updatedObjects.enumerated() {
                // A store's row is taken only for the object it is of: a store that broke the contract
                // (skipped a row, reported inserts too) falls back to the rows sent, not to another's.
                if index < result.updated.count, result.updated[index].objectID == object.objectID {
                    object.setRow(result.updated[index])
                } else {
                    let (row, version) = part.request.updated[index]
                    object.rowValues = row.values
                    object.rowVersion = version &+ 1  // wrapping: a file's version at Int64's end must not trap
                }
            }
        }
        var derivedChanges: [(object: NSManagedObject, slot: Int, old: Any?)] = []
        for result in results where !result.derivedValues.isEmpty { derivedChanges += takeDerivedValues(result.derivedValues) }
        // Loop by loop rather than over `insertedNow + updatedNow`: no joined array made for each pass.
        func markSaved(_ object: NSManagedObject) {
            object.status.subtract([.inserted, .updated])
            for (slot, _) in object.layout.relationships { (object.slots[slot] as? ToManyStorage)?.markUnmodified() }
        }
        for object in insertedNow { markSaved(object) }
        for object in updatedNow { markSaved(object) }
        inserted = [:]
        updated = [:]
        deleted = [:]
        for change in derivedChanges { change.object.announceStoreComputedChange(slot: change.slot, old: change.old) }
        for object in insertedNow { object.didSave() }
        for object in updatedNow { object.didSave() }
        for object in deletedNow { object.didSave() }
        // Apple's state after the save: a deleted object is a fault outside any context, no longer deleted.
        for object in deletedNow {
            registry[object.objectID] = nil
            object.turnIntoFault()
            object.status.subtract([.deleted, .inserted, .updated, .inaccessible])
            object.managedObjectContext = nil
        }
        // didSave may change objects; those changes are the next save's.
        let savedObjects = UserInfoTemplate.savedObjects.filled(Set(insertedNow), Set(updatedNow), Set(deletedNow))
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: savedObjects)
        let savedIDs = UserInfoTemplate.savedObjectIDs.filled(Set(insertedNow.map(\.objectID)), Set(updatedNow.map(\.objectID)), Set(deletedNow.map(\.objectID)))
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSaveObjectIDs, object: self, userInfo: savedIDs)
    }

    /// The objects of one of the context's sets, by address. Each pass a save makes over its objects
    /// (validation, IDs, rows, the store's writes, notifications, and freeing what the save held last)
    /// then walks memory forwards, which the processor's prefetcher follows, instead of jumping across
    /// it in hash order: at 100,000 objects most of their memory is out of the cache. Objects made or
    /// fetched together lie together, so this is mostly their order of insertion or fetching too.
    static func inAddressOrder(_ objects: [ObjectIdentifier: NSManagedObject]) -> [NSManagedObject] {
        // The keys are the addresses: sorted as plain words, then turned back into the objects the
        // dictionary keeps alive.
        assert(objects.allSatisfy { $0.key == ObjectIdentifier($0.value) }, "a changed object listed under another key")
        // Nothing to sort (a small save changes one object): no array of addresses made and sorted.
        if objects.count < 2 { return objects.isEmpty ? [] : [objects.first!.value] }
        let addresses = RadixSort.sorted(objects.keys.map { UInt(bitPattern: $0) })
        return addresses.map { Unmanaged<NSManagedObject>.fromOpaque(UnsafeRawPointer(bitPattern: $0)!).takeUnretainedValue() }
    }

    /// How many times `save()` asks the stores to check its changes: the first try, one resolution of
    /// optimistic-locking conflicts, two of constraint conflicts (among the save's objects, then of the
    /// survivors with stored objects, which the stores find only once the first are gone), one of locking
    /// conflicts of a stored object a constraint resolution changed while the context held it stale, and
    /// one more for rows changed again. With four, a save under a merge policy that met each in turn
    /// threw, which such a policy is there to avoid.
    static let maximumSaveRounds = 6

    /// One store's part of a save: its request, and the objects of its inserted and updated rows in the
    /// same order, so that the store's results go back to them by position.
    struct SavePart {
        let store: NSPersistentStore
        var request = StoreSaveRequest()
        var insertedObjects: [NSManagedObject] = []
        var updatedObjects: [NSManagedObject] = []
    }

    /// The store `object` is in, or for a new object the one its save writes it to: the store
    /// `assign(_:to:)` chose, else the first that holds its entity.
    func targetStore(of object: NSManagedObject, _ coordinator: NSPersistentStoreCoordinator) -> NSPersistentStore? {
        object.objectID.persistentStore ?? assignedStores[ObjectIdentifier(object)] ?? (try? coordinator.store(for: object.entity))
    }

    /// Core Data keeps a relationship within one store ("Core Data does not let you create relationships
    /// that cross stores"): an object related to one that goes to another store fails the save with
    /// `NSManagedObjectExternalRelationshipError`, before anything is written. A store would otherwise
    /// drop the link (SQLite) or keep one side of it.
    private func checkRelationshipsWithinStores(_ objects: [NSManagedObject], _ coordinator: NSPersistentStoreCoordinator) throws {
        func store(of object: NSManagedObject) -> NSPersistentStore? { targetStore(of: object, coordinator) }
        for object in objects where !object.isFault {
            guard let home = store(of: object) else { continue }
            for (slot, relationship) in object.layout.relationships where !relationship.isTransient {
                guard let destinations = object.loadedDestinations(slot, isToMany: relationship.isToMany) else { continue }
                for destination in destinations where !destination.isDeleted {
                    guard let other = store(of: destination), other !== home else { continue }
                    throw coreDataError(NSManagedObjectExternalRelationshipError, [
                        NSLocalizedDescriptionKey: "The relationship \(relationship.name) of \(object.entity.name ?? "?") links objects of two stores (\(home.identifier ?? "?") and \(other.identifier ?? "?")); Core Data does not let relationships cross stores.",
                        NSValidationObjectErrorKey: object, NSValidationKeyErrorKey: relationship.name, NSValidationValueErrorKey: destination,
                    ])
                }
            }
        }
    }

    /// Each store's part of the save. Inserted rows carry version 1, the version they are stored with;
    /// updated and deleted objects expect the version of their committed row (the store's current one
    /// after a merge policy resolved a conflict); objects whose row is gone (`inaccessible`) are not sent.
    private func saveParts(inserted insertedNow: [NSManagedObject], updated updatedNow: [NSManagedObject], deleted deletedNow: [NSManagedObject])
        throws -> [SavePart] {
        var parts: [SavePart] = []
        // Almost always one store: its part is found without hashing.
        func part(of object: NSManagedObject) throws -> Int {
            guard let store = object.objectID.persistentStore else {
                throw coreDataError(NSPersistentStoreSaveError, [NSLocalizedDescriptionKey: "An object has no persistent store."])
            }
            if let index = parts.firstIndex(where: { $0.store === store }) { return index }
            parts.append(SavePart(store: store))
            return parts.count - 1
        }
        for object in insertedNow {
            let index = try part(of: object)
            // Mutated in place: a copy taken out of the array would copy its arrays on every append.
            parts[index].request.inserted.append(storeRow(of: object, version: 1))
            parts[index].insertedObjects.append(object)
        }
        for object in updatedNow {
            let changed = object.changedPersistentSlots
            if changed.isEmpty { continue }
            let version = object.knownRowVersion ?? storeRow(for: object.objectID)?.version ?? 0
            let index = try part(of: object)
            parts[index].request.updated.append((storeRow(of: object, version: version), version))
            // Without the row the object was read with, the store is told nothing and writes every column.
            parts[index].request.updatedSlots.append(object.rowValues == nil ? nil : changed)
            parts[index].updatedObjects.append(object)
        }
        for object in deletedNow where !object.objectID.isTemporaryID && !object.status.contains(.inaccessible) {
            let version = object.knownRowVersion ?? storeRow(for: object.objectID)?.version ?? 0
            parts[try part(of: object)].request.deleted.append((object.objectID, version))
        }
        return parts
    }

    /// Apple's order: per set (deleted, inserted, updated), validate, then `willSave()` if the set is
    /// valid; repeated for the objects those calls changed, until nothing changes.
    private func validateAndCallWillSave() throws {
        var round: [ObjectIdentifier: NSManagedObject]? = nil
        // The objects validated and given willSave() so far in this save, as deleted and as inserted.
        var handledAsDeleted: [[NSManagedObject]] = []
        var handledAsInserted: [[NSManagedObject]] = []
        // `listingsAdded` when the objects listed in `inserted` and `deleted` were last all known: set by
        // the first round, which takes every listed object, and by each search for new ones.
        var listingsSeen: Int?
        for _ in 0..<1000 {
            processPendingChanges()
            func pick(_ set: [ObjectIdentifier: NSManagedObject]) -> [NSManagedObject] {
                guard let round else { return Self.inAddressOrder(set) }
                return set.filter { round[$0.key] != nil }.map(\.value)
            }
            let deletedNow = pick(deleted).filter { !$0.status.contains(.inaccessible) }
            let insertedNow = pick(inserted)
            let updatedNow = pick(updated)
            if deletedNow.isEmpty && insertedNow.isEmpty && updatedNow.isEmpty { return }
            handledAsDeleted.append(deletedNow)
            handledAsInserted.append(insertedNow)
            if listingsSeen == nil { listingsSeen = listingsAdded }
            changedDuringWillSave = [:]
            Self.contextsCollectingWillSaveChanges.add(1, ordering: .relaxed)
            defer {
                changedDuringWillSave = nil
                Self.contextsCollectingWillSaveChanges.subtract(1, ordering: .relaxed)
            }
            var errors: [NSError] = []
            // A set at a time: validated, then given willSave() if it is valid.
            func handle(_ objects: [NSManagedObject], _ validate: (NSManagedObject) throws -> Void) {
                let before = errors.count
                for object in objects {
                    do { try validate(object) } catch let error as NSError { errors.append(error) }
                }
                if errors.count == before { for object in objects { object.willSave() } }
            }
            handle(deletedNow) { try $0.validateForDelete() }
            handle(insertedNow) { try $0.validateForInsert() }
            handle(updatedNow) { try $0.validateForUpdate() }
            if let error = NSManagedObject.combine(errors) { throw error }
            processPendingChanges()
            var next = changedDuringWillSave ?? [:]
            // Objects inserted or deleted since (by willSave(), the delete rules it set off, or an
            // observer of ObjectsDidChange) are validated and get willSave() too, as what they are now:
            // those no round has handled as such. Not the objects of earlier rounds, which would
            // otherwise come back every other round and never settle.
            if listingsAdded != listingsSeen {
                listingsSeen = listingsAdded
                let asDeleted = Set(handledAsDeleted.joined().lazy.map(ObjectIdentifier.init))
                let asInserted = Set(handledAsInserted.joined().lazy.map(ObjectIdentifier.init))
                for (key, object) in inserted where !asInserted.contains(key) { next[key] = object }
                for (key, object) in deleted where !asDeleted.contains(key) && !object.status.contains(.inaccessible) { next[key] = object }
            }
            if next.isEmpty { return }
            round = next
        }
        throw coreDataError(NSCoreDataError, [NSLocalizedDescriptionKey: "Failed to process pending changes before save. The context is still dirty after 1000 attempts. Typically this recursive dirtying is caused by a bad validation method, -willSave, or notification handler."])
    }

    /// The row a store keeps for `object`: persistent values by slot, relationships as object IDs.
    func storeRow(of object: NSManagedObject, version: Int64) -> StoreRow {
        let layout = object.layout
        // Only persistent attributes, read from the slots: the row shares the object's array (copied on
        // the object's next write) instead of copying every value out.
        if layout.hasOnlyPersistentAttributes && !object.hasPrimitiveAccessors {
            return StoreRow(objectID: object.objectID, version: version, values: object.slots)
        }
        var values = [Any?](repeating: nil, count: layout.properties.count)
        // By the layout's slot kinds: a cast of each property would cost more than the row's values.
        for slot in layout.persistentSlots {
            switch layout.kinds[slot] {
            case .toMany:
                // An unloaded relationship did not change: nil tells the store to keep what it has.
                values[slot] = (object.slots[slot] as? ToManyStorage)?.objects.map(\.objectID)
                    ?? object.rowValues?[slot] ?? nil
            case .toOne:
                values[slot] = (object.slots[slot] as? NSManagedObject)?.objectID
            default:
                values[slot] = object.storedAttributeValue(slot: slot)
            }
        }
        return StoreRow(objectID: object.objectID, version: version, values: SlotValues(values, plan: layout.slotPlan))
    }
}
