import Foundation
import OCDModel
import OCDStore

/// An optimistic-locking conflict: an object whose row changed or was deleted in the store since the
/// context read it.
public final class NSMergeConflict: NSObject, @unchecked Sendable {
    /// The object that could not be saved.
    public let sourceObject: NSManagedObject
    /// The version in the store now (0 if the row was deleted).
    public let newVersionNumber: Int
    /// The version the context read.
    public let oldVersionNumber: Int
    /// The store's values now (nil if the row was deleted). Relationships are object IDs; to-many ones are
    /// arrays of them.
    public let persistedSnapshot: [String: Any]?
    /// The values the context read.
    public let cachedSnapshot: [String: Any]?
    /// The object's current values.
    public let objectSnapshot: [String: Any]?
    /// The row behind `persistedSnapshot`, when the conflict came from a store.
    let storedRow: StoreRow?
    private let storedRowKnown: Bool

    /// A conflict for `srcObject`, as Apple's designated initializer takes it. A policy that resolves it
    /// reads the store's current row again.
    public init(source srcObject: NSManagedObject, newVersion newvers: Int, oldVersion oldvers: Int,
                cachedSnapshot cachesnap: [String: Any]?, persistedSnapshot persnap: [String: Any]?) {
        self.sourceObject = srcObject
        self.newVersionNumber = newvers
        self.oldVersionNumber = oldvers
        self.persistedSnapshot = persnap
        self.cachedSnapshot = cachesnap
        self.objectSnapshot = Self.objectSnapshot(of: srcObject)
        self.storedRow = nil
        self.storedRowKnown = false
    }

    /// A conflict a store reported, with the row it holds now.
    init(source: NSManagedObject, expectedVersion: Int64, stored: StoreRow?) {
        self.sourceObject = source
        self.newVersionNumber = Int(stored?.version ?? 0)
        self.oldVersionNumber = Int(expectedVersion)
        self.persistedSnapshot = stored.map(Self.snapshot(of:))
        self.cachedSnapshot = source.rowSnapshot.map(Self.snapshot(of:))
        self.objectSnapshot = Self.objectSnapshot(of: source)
        self.storedRow = stored
        self.storedRowKnown = true
    }

    /// The store's row for the source object now (nil if deleted).
    func currentStoredRow(in context: NSManagedObjectContext) -> StoreRow? {
        storedRowKnown ? storedRow : context.storeRow(for: sourceObject.objectID)
    }

    /// The object's persistent attributes and to-one relationships, as Apple's snapshots hold them: a
    /// to-one relationship as its destination's ID, no to-many relationship (read from a store when
    /// needed), `NSNull` for nil. Nothing is fired: not the object (nil for a fault), nor a destination.
    private static func objectSnapshot(of object: NSManagedObject) -> [String: Any]? {
        if object.isFault { return nil }
        let layout = object.layout
        var result: [String: Any] = [:]
        for slot in layout.persistentSlots {
            let name = layout.properties[slot].name
            switch layout.kinds[slot] {
            case .toMany: continue
            case .toOne: result[name] = (object.slots[slot] as? NSManagedObject)?.objectID ?? NSNull()
            case .attribute, .transientAttribute: result[name] = object.value(forKey: name) ?? NSNull()
            }
        }
        return result
    }

    /// A row's persistent attributes and to-one relationships (as IDs) by property name, `NSNull` for
    /// nil; no to-many relationship, as in Apple's snapshots.
    static func snapshot(of row: StoreRow) -> [String: Any] {
        var result: [String: Any] = [:]
        let layout = row.layout
        for slot in layout.persistentSlots where layout.kinds[slot] != .toMany {
            result[layout.properties[slot].name] = row.values[slot] ?? NSNull()
        }
        return result
    }
}

/// A uniqueness-constraint conflict: objects of a save that would share the values of one of their
/// entity's `uniquenessConstraints`, with each other (`databaseObject` nil, two or more
/// `conflictingObjects`) or with a stored object the save does not change (`databaseObject` set, one
/// conflicting object).
public final class NSConstraintConflict: NSObject, @unchecked Sendable {
    /// The constrained property names.
    public let constraint: [String]
    /// The values the conflicting objects had when the conflict was created (a to-one relationship as its
    /// destination's object ID).
    public let constraintValues: [String: Any]
    /// The object whose stored row already uses the values; nil for a conflict between objects of the
    /// save.
    public let databaseObject: NSManagedObject?
    /// The stored row's values; nil for a conflict between objects of the save.
    public let databaseSnapshot: [String: Any]?
    /// The objects of the save that violate the constraint.
    public let conflictingObjects: [NSManagedObject]
    /// Each conflicting object's values when it was fetched or last saved; empty for an inserted object
    /// (Apple's Objective-C puts `NSNull` there).
    public let conflictingSnapshots: [[AnyHashable: Any]]

    /// A conflict on `contraint` (Apple's spelling of the label's parameter). `snapshots` holds one
    /// dictionary per conflicting object (anything else counts as no snapshot).
    public init(constraint contraint: [String], database databaseObject: NSManagedObject?, databaseSnapshot: [AnyHashable: Any]?,
                conflicting conflictingObjects: [NSManagedObject], conflictingSnapshots snapshots: [Any]) {
        self.constraint = contraint
        self.databaseObject = databaseObject
        self.databaseSnapshot = databaseSnapshot.map { snapshot in
            Dictionary(snapshot.compactMap { key, value in (key.base as? String).map { ($0, value) } }, uniquingKeysWith: { a, _ in a })
        }
        self.conflictingObjects = conflictingObjects
        self.conflictingSnapshots = snapshots.map { ($0 as? [AnyHashable: Any]) ?? ($0 as? [String: Any]).map { Dictionary(uniqueKeysWithValues: $0.map { (AnyHashable($0.key), $0.value) }) } ?? [:] }
        var values: [String: Any] = [:]
        if let first = conflictingObjects.first {
            for name in contraint { values[name] = NSMergePolicy.constrainedValue(of: first, name) ?? NSNull() }
        }
        self.constraintValues = values
    }

    public override var description: String {
        "<NSConstraintConflict: constraint \(constraint), values \(constraintValues), databaseObject \(databaseObject?.objectID.description ?? "nil"), \(conflictingObjects.count) conflicting object(s)>"
    }
}

extension NSManagedObjectContext {
    /// The merge conflicts for a store's optimistic-locking report.
    func mergeConflicts(_ conflicts: [(objectID: NSManagedObjectID, expectedVersion: Int64, stored: StoreRow?)]) -> [NSMergeConflict] {
        conflicts.map { conflict in
            NSMergeConflict(source: registry[conflict.objectID] ?? object(with: conflict.objectID),
                            expectedVersion: conflict.expectedVersion, stored: conflict.stored)
        }
    }

    /// The constraint conflicts for a store's uniqueness report. The stored row's object is registered
    /// (as a fault holding the row) so that a policy can merge into it.
    func constraintConflicts(_ conflicts: [StoreConstraintConflict]) -> [NSConstraintConflict] {
        conflicts.map { conflict in
            let objects = conflict.conflicting.map { registry[$0] ?? object(with: $0) }
            let database = conflict.stored.map { row -> NSManagedObject in
                let object = object(with: row.objectID)
                if object.isFault && object.rowValues == nil { object.setRow(row) }
                return object
            }
            let snapshots: [Any] = objects.map { object -> Any in
                object.rowSnapshot.map { NSMergeConflict.snapshot(of: $0) as Any } ?? NSNull()
            }
            return NSConstraintConflict(constraint: conflict.constraint, database: database,
                                        databaseSnapshot: conflict.stored.map { row in
                                            Dictionary(uniqueKeysWithValues: NSMergeConflict.snapshot(of: row).map { (AnyHashable($0.key), $0.value) })
                                        },
                                        conflicting: objects, conflictingSnapshots: snapshots)
        }
    }
}
