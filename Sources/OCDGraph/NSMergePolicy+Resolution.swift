import Foundation
import OCDModel
import OCDStore

// What the built-in policy types do to the objects, following Apple's NSMergePolicy
// (Documentation/Graph.md, "Merge policies").

extension NSMergePolicy {
    // MARK: Errors

    /// `NSManagedObjectMergeError` with the conflicts under `NSPersistentStoreSaveConflictsErrorKey`.
    static func lockingError(_ list: [NSMergeConflict]) -> NSError {
        coreDataError(NSManagedObjectMergeError, [
            NSPersistentStoreSaveConflictsErrorKey: list,
            NSLocalizedDescriptionKey: "Could not merge changes.",
        ])
    }

    /// `NSManagedObjectConstraintMergeError` with the conflicts under `NSPersistentStoreSaveConflictsErrorKey`.
    static func constraintError(_ list: [NSConstraintConflict]) -> NSError {
        coreDataError(NSManagedObjectConstraintMergeError, [
            NSPersistentStoreSaveConflictsErrorKey: list,
            NSLocalizedDescriptionKey: "Constraint unique violation.",
        ])
    }

    // MARK: Optimistic locking

    /// Applies the policy to one object whose row changed or was deleted in the store. Afterwards the
    /// object's committed row is the store's current one, so the save's retry expects the current version.
    func resolveLocking(_ conflict: NSMergeConflict) {
        let object = conflict.sourceObject
        guard let context = object.managedObjectContext else { return }
        defer { object.sendSnapshotEvents(.mergePolicy) }
        guard let row = conflict.currentStoredRow(in: context) else {
            // Deleted in the store.
            if mergeType == .overwriteMergePolicyType && !object.isDeleted {
                // Apple's overwrite inserts the object again.
                context.forceInsertion(of: object)
            } else {
                // The other policies delete the object; a deletion has no row left to remove.
                if !object.isDeleted { context.delete(object) }
                object.status.insert(.inaccessible)
            }
            return
        }
        switch mergeType {
        case .errorMergePolicyType:
            return
        case .overwriteMergePolicyType:
            // The in-memory state is written as it is, over the current version.
            object.setRow(row)
        case .rollbackMergePolicyType:
            context.refresh(object, mergeChanges: false)
        case .mergeByPropertyObjectTrumpMergePolicyType:
            if object.isDeleted {
                object.setRow(row)
            } else {
                context.merge(row, into: object, keeping: nil)
            }
        case .mergeByPropertyStoreTrumpMergePolicyType:
            if object.isDeleted {
                // The store's update wins over the context's deletion (Apple undeletes the object).
                context.refresh(object, mergeChanges: false)
            } else {
                // To-many relationships merge member by member under either policy: from one ancestor the two
                // sides can only add or remove a member alike, so the store has nothing to trump there.
                let storeChanged = Self.changedKeys(from: object.rowSnapshot, to: row).filter { name in
                    object.layout.slot(named: name).map { object.layout.kinds[$0] != .toMany } ?? true
                }
                context.merge(row, into: object, keeping: Set(object.changedValues().keys).subtracting(storeChanged))
            }
        }
    }

    /// The persistent properties whose values differ between two rows of one object.
    static func changedKeys(from old: StoreRow?, to new: StoreRow) -> Set<String> {
        let layout = new.layout
        var result = Set<String>()
        for slot in layout.persistentSlots {
            let property = layout.properties[slot]
            guard let old else { result.insert(property.name); continue }
            if let relationship = property as? NSRelationshipDescription, relationship.isToMany {
                // nil means "not known to the row": not a change that can be seen.
                guard let a = old.values[slot] as? [NSManagedObjectID], let b = new.values[slot] as? [NSManagedObjectID] else { continue }
                if relationship.isOrdered ? a != b : Set(a) != Set(b) { result.insert(property.name) }
            } else if !NSManagedObject.valuesEqual(old.values[slot], new.values[slot]) {
                result.insert(property.name)
            }
        }
        return result
    }

    // MARK: Uniqueness constraints

    /// A conflict between one object of the save and a stored object (Apple's database-level conflict).
    func resolveDatabaseConstraint(_ conflict: NSConstraintConflict) throws {
        guard let database = conflict.databaseObject, let object = conflict.conflictingObjects.last,
              let context = object.managedObjectContext else { return }
        // Resolved already, or no longer conflicting.
        if object.isDeleted || database.isDeleted || !Self.matches(object, conflict.constraintValues) { return }
        try Self.requireOneEntity([object, database], conflict)
        switch mergeType {
        case .errorMergePolicyType:
            return
        case .rollbackMergePolicyType:
            // The stored object stands; the new state is dropped.
            if object.isInserted {
                context.delete(object)
            } else {
                context.refresh(object, mergeChanges: false)
            }
        case .overwriteMergePolicyType:
            // The new object replaces the stored one, taking its to-many members.
            Self.moveToManyMembers(from: database, to: object)
            context.delete(database)
        case .mergeByPropertyStoreTrumpMergePolicyType:
            if !object.isInserted {
                // A stored object that only changed: the store's state wins, so its changes go, never
                // its row.
                context.refresh(object, mergeChanges: false)
                return
            }
            // The stored object keeps its values and gains the new object's to-many members.
            Self.moveToManyMembers(from: object, to: database)
            context.delete(object)
        case .mergeByPropertyObjectTrumpMergePolicyType:
            // The stored object takes what the new object set (everything, for an inserted one).
            Self.copyValues(from: object, to: database, all: object.isInserted, respectingChangesOfTarget: false)
            Self.moveToManyMembers(from: object, to: database)
            context.delete(object)
        }
    }

    /// A conflict between objects of the save (Apple's context-level conflict): one object survives.
    func resolveContextConstraint(_ conflict: NSConstraintConflict) throws {
        let objects = conflict.conflictingObjects.filter { !$0.isDeleted && Self.matches($0, conflict.constraintValues) }
        guard objects.count > 1, let context = objects[0].managedObjectContext else { return }
        try Self.requireOneEntity(objects, conflict)
        let survivor = Self.survivor(of: objects, conflict)
        for other in objects where other !== survivor {
            if !other.isInserted && (mergeType == .rollbackMergePolicyType || mergeType == .mergeByPropertyStoreTrumpMergePolicyType) {
                // A stored object that only changed: these policies discard in-memory changes, so its
                // changes go (it no longer clashes), never its row.
                context.refresh(other, mergeChanges: false)
                continue
            }
            switch mergeType {
            case .errorMergePolicyType:
                return
            case .overwriteMergePolicyType, .rollbackMergePolicyType:
                context.delete(other)
            case .mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType:
                // Apple merges both ways alike here: what the other object changed fills in what the
                // survivor did not change.
                Self.copyValues(from: other, to: survivor, all: false, respectingChangesOfTarget: true)
                Self.moveToManyMembers(from: other, to: survivor)
                context.delete(other)
            }
        }
    }

    /// Apple's choice: an object that already held the values when it was read; else the stored object
    /// with the smallest primary key; else the first inserted one.
    static func survivor(of objects: [NSManagedObject], _ conflict: NSConstraintConflict) -> NSManagedObject {
        if let holder = objects.first(where: { object in object.rowSnapshot.map { matches($0, conflict.constraintValues) } ?? false }) {
            return holder
        }
        let stored = objects.filter { !$0.isInserted }
        if let oldest = stored.min(by: { ($0.objectID.primaryKey ?? .max) < ($1.objectID.primaryKey ?? .max) }) { return oldest }
        return objects[0]
    }

    /// Apple refuses to merge objects of different entities.
    static func requireOneEntity(_ objects: [NSManagedObject], _ conflict: NSConstraintConflict) throws {
        if Set(objects.map { ObjectIdentifier($0.entity) }).count > 1 {
            throw coreDataError(NSManagedObjectMergeError, [
                NSPersistentStoreSaveConflictsErrorKey: [conflict],
                NSLocalizedDescriptionKey: "Cannot merge objects of different entities (\(Set(objects.compactMap(\.entity.name)).sorted().joined(separator: ", "))) in a constraint conflict.",
            ])
        }
    }

    /// The value of a constrained property as constraint values hold it (a to-one as its destination ID).
    static func constrainedValue(of object: NSManagedObject, _ name: String) -> Any? {
        guard let slot = object.layout.slot(named: name) else {
            // An element of a composite attribute (`location.latitude`).
            guard name.contains("."), object.layout.slot(named: String(name.prefix { $0 != "." })) != nil else { return nil }
            return object.value(forKeyPath: name)
        }
        object.fireFault()
        if object.layout.properties[slot] is NSRelationshipDescription {
            return (object.slots[slot] as? NSManagedObject)?.objectID
        }
        return object.attributeValue(slot: slot)
    }

    static func matches(_ object: NSManagedObject, _ values: [String: Any]) -> Bool {
        values.allSatisfy { name, value in
            NSManagedObject.valuesEqual(constrainedValue(of: object, name), value is NSNull ? nil : value)
        }
    }

    static func matches(_ row: StoreRow, _ values: [String: Any]) -> Bool {
        values.allSatisfy { name, value in
            NSManagedObject.valuesEqual(StoreSaveRequest.value(of: row, named: name), value is NSNull ? nil : value)
        }
    }

    /// Copies attributes and to-one relationships from `source` to `target`: those `source` changed since
    /// it was read (all of them with `all`), and with `respectingChangesOfTarget` only where `target` did
    /// not change them. A to-one destination moves (the source lets go of it); the target's old
    /// destination stays, as a delete rule applies only when its owner is deleted (it deleted a cascading
    /// one, whose row the save then removed though nobody had deleted it).
    static func copyValues(from source: NSManagedObject, to target: NSManagedObject, all: Bool, respectingChangesOfTarget: Bool) {
        guard target.managedObjectContext != nil else { return }
        source.fireFault()
        target.fireFault()
        let layout = source.layout
        for slot in layout.persistentSlots {
            let property = layout.properties[slot]
            let relationship = property as? NSRelationshipDescription
            if relationship?.isToMany == true { continue }
            guard let targetSlot = target.layout.slot(named: property.name) else { continue }
            let value = constrainedValue(of: source, property.name)
            if respectingChangesOfTarget {
                let current = constrainedValue(of: target, property.name)
                if let committed = target.rowValues {
                    if !NSManagedObject.valuesEqual(current, committed[targetSlot]) { continue }
                } else if current != nil {
                    // A new target set everything it holds: only what it left empty is filled in.
                    continue
                }
            }
            let sourceChanged = all || source.rowValues.map { !NSManagedObject.valuesEqual(value, $0[slot]) } ?? (value != nil)
            guard sourceChanged, !NSManagedObject.valuesEqual(value, constrainedValue(of: target, property.name)) else { continue }
            if relationship != nil {
                let destination = source.slots[slot] as? NSManagedObject
                source.kvcSetValue(nil, forKey: property.name)
                target.kvcSetValue(destination, forKey: property.name)
            } else {
                target.kvcSetValue(source.attributeValue(slot: slot), forKey: property.name)
            }
        }
    }

    /// Moves every member of `source`'s to-many relationships to the same relationship of `target`.
    static func moveToManyMembers(from source: NSManagedObject, to target: NSManagedObject) {
        for (slot, relationship) in source.layout.relationships where relationship.isToMany && !relationship.isTransient {
            guard target.layout.slot(named: relationship.name) != nil else { continue }
            let members = source.toMany(slot).objects
            guard !members.isEmpty else { continue }
            source.managedRemove(members, forKey: relationship.name)
            target.managedAdd(members, forKey: relationship.name)
        }
    }
}

extension NSManagedObjectContext {
    /// Makes `row` the object's committed row and its values the object's, except the properties
    /// `keep` (nil: every changed one), which keep their in-memory values; transient values stay. A
    /// refresh that merges changes, and the merge policies that take the stored row, both end here.
    ///
    /// A kept to-many relationship keeps its changes, not its whole value: the members added and removed
    /// since it was loaded or saved are applied again over the stored members, so that members another
    /// context added stay (and its removals hold) unless this one removed (or added) them too. An
    /// ordered relationship keeps its own order for the members it holds, the others after them.
    func merge(_ row: StoreRow, into object: NSManagedObject, keeping keep: Set<String>?) {
        let changes = keep?.isEmpty == true ? [:] : object.changedValues()
        var kept = keep.map { keep in changes.filter { keep.contains($0.key) } } ?? changes
        var toManyChanges: [(slot: Int, name: String, current: [NSManagedObject], added: Set<ObjectIdentifier>, removed: Set<ObjectIdentifier>, reordered: Bool)] = []
        // A deleted object's relationships were emptied by its delete rules: kept as they are.
        for name in kept.keys where !object.isDeleted {
            guard let slot = object.layout.slot(named: name), object.layout.kinds[slot] == .toMany,
                  let storage = object.slots[slot] as? ToManyStorage, let (added, removed) = storage.changesSinceBaseline else { continue }
            let addedIDs = Set(added.map(ObjectIdentifier.init)), removedIDs = Set(removed.map(ObjectIdentifier.init))
            // Whether this context changed the order of the members it kept (an ordered relationship).
            var reordered = false
            if (object.layout.properties[slot] as? NSRelationshipDescription)?.isOrdered == true, let baseline = storage.baseline {
                let keptNow = storage.objects.filter { !addedIDs.contains(ObjectIdentifier($0)) }
                let keptBefore = baseline.filter { !removedIDs.contains(ObjectIdentifier($0)) }
                reordered = !keptNow.elementsEqual(keptBefore, by: ===)
            }
            toManyChanges.append((slot, name, storage.objects, addedIDs, removedIDs, reordered))
        }
        for change in toManyChanges { kept[change.name] = nil }
        let transients = object.transientValues()
        object.notifyingWholesaleChange {
            object.fill(from: row, in: self)
            object.restoreTransientValues(transients)
            object.beginInverseUpdate()
            for (name, value) in kept { object.kvcSetPrimitiveValue(value is NSNull ? nil : value, forKey: name) }
            for change in toManyChanges {
                let stored = object.toMany(change.slot).objects
                let storedMembers = Set(stored.map(ObjectIdentifier.init))
                let current = Set(change.current.map(ObjectIdentifier.init))
                // The other context's newcomers, unless this context removed or deleted them.
                func isNewcomer(_ member: NSManagedObject) -> Bool {
                    let id = ObjectIdentifier(member)
                    return !current.contains(id) && !change.removed.contains(id) && !member.isDeleted
                }
                let merged: [NSManagedObject]
                if change.reordered {
                    // This context's order for the members it holds, the others after them.
                    merged = change.current.filter { storedMembers.contains(ObjectIdentifier($0)) || change.added.contains(ObjectIdentifier($0)) }
                        + stored.filter(isNewcomer)
                } else {
                    // In the stored order (an unordered relationship, or an ordered one whose kept members
                    // this context left in their order), each of this context's additions after the member
                    // it follows here (first if none): the same members as stored are the stored value.
                    var result = stored.filter { current.contains(ObjectIdentifier($0)) ? !change.removed.contains(ObjectIdentifier($0)) : isNewcomer($0) }
                    var placed = Set(result.map(ObjectIdentifier.init))
                    var previous: NSManagedObject?
                    for member in change.current {
                        defer { if placed.contains(ObjectIdentifier(member)) { previous = member } }
                        guard change.added.contains(ObjectIdentifier(member)), placed.insert(ObjectIdentifier(member)).inserted else { continue }
                        let at = previous.flatMap { previous in result.lastIndex(where: { $0 === previous }) }.map { $0 + 1 } ?? 0
                        result.insert(member, at: at)
                    }
                    merged = result
                }
                // Nothing of this context's left to apply: the relationship stays as stored, unchanged.
                if merged.count == stored.count && zip(merged, stored).allSatisfy({ $0 === $1 }) { continue }
                object.kvcSetPrimitiveValue(merged, forKey: change.name)
            }
            object.endInverseUpdate()
        }
    }

    /// Turns an updated object whose row was deleted in the store into an inserted one, so that the save
    /// writes it again under its ID (Apple's overwrite policy).
    func forceInsertion(of object: NSManagedObject) {
        let key = ObjectIdentifier(object)
        updated[key] = nil
        unprocessedUpdated.remove(object)
        object.status.remove(.updated)
        // Announced before (it was a fetched object): its later changes are still updates to observers.
        object.status.insert([.inserted, .insertionAnnounced])
        inserted[key] = object
        listingsAdded &+= 1
    }
}
