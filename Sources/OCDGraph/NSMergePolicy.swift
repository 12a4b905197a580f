import Foundation
import OCDModel
import OCDStore

/// The built-in ways to resolve save conflicts (Apple's `NSMergePolicyType`, same raw values).
public enum NSMergePolicyType: UInt, Sendable {
    /// The save fails: `NSManagedObjectMergeError` (optimistic locking) or
    /// `NSManagedObjectConstraintMergeError` (uniqueness constraints), with the conflicts under
    /// `NSPersistentStoreSaveConflictsErrorKey`. The default.
    case errorMergePolicyType = 0x00
    /// Merges property by property; where the store changed a property, the store's value wins.
    case mergeByPropertyStoreTrumpMergePolicyType = 0x01
    /// Merges property by property; where the context changed a property, the in-memory value wins.
    case mergeByPropertyObjectTrumpMergePolicyType = 0x02
    /// The whole in-memory object is written over the stored one.
    case overwriteMergePolicyType = 0x03
    /// The context's changes to the conflicting objects are discarded; the store's state is kept.
    case rollbackMergePolicyType = 0x04
}

/// How a context resolves conflicts when it saves (Apple's `NSMergePolicy`).
///
/// A save meets two kinds of conflict before anything is written:
/// - **optimistic locking**: an object's row changed (or was deleted) in the store since the context read
///   it, reported as ``NSMergeConflict``s;
/// - **uniqueness constraints**: inserted or updated objects would share the values of one of their
///   entity's `uniquenessConstraints`, with each other or with a stored row, reported as
///   ``NSConstraintConflict``s.
///
/// `save()` hands them to the context's ``NSManagedObjectContext/mergePolicy`` through
/// ``resolve(mergeConflicts:)``, which calls ``resolve(optimisticLockingConflicts:)`` and then
/// ``resolve(constraintConflicts:)``. Unless they throw, the save checks the store again with the resolved
/// objects and writes. Subclasses override the `resolve` methods and usually call `super` first, as Apple
/// advises.
///
/// What each type does (read from Apple's documentation and its implementation):
///
/// | type | optimistic locking: row changed | row deleted in the store | constraint conflict |
/// |---|---|---|---|
/// | error | throws `NSManagedObjectMergeError` | throws | throws `NSManagedObjectConstraintMergeError` |
/// | store trump | store-changed properties take the store's values, the others keep the context's changes | the object is deleted | the stored object is kept with its values; the new object's to-many members move to it; the new object is deleted |
/// | object trump | context-changed properties keep their values, the others take the store's | the object is deleted | the stored object takes the values the new object set, and its to-many members; the new object is deleted |
/// | overwrite | the object is written as it is in memory | the object is inserted again | the new object is kept (it takes the stored object's to-many members); the stored object is deleted |
/// | rollback | the object's changes are discarded | the object is deleted | the new object is deleted (an updated one loses its changes) |
open class NSMergePolicy: NSObject, @unchecked Sendable {
    /// The policy's type.
    public let mergeType: NSMergePolicyType

    /// A policy of type `ty`. A subclass passes the type closest to what it wants and customises what
    /// `super`'s `resolve` methods do.
    public init(merge ty: NSMergePolicyType) {
        self.mergeType = ty
        super.init()
    }

    /// The shared error policy, the default of every context.
    public class var error: NSMergePolicy { Shared.error }
    /// The shared property-by-property policy where the store's changes win.
    public class var mergeByPropertyStoreTrump: NSMergePolicy { Shared.storeTrump }
    /// The shared property-by-property policy where the context's changes win.
    public class var mergeByPropertyObjectTrump: NSMergePolicy { Shared.objectTrump }
    /// The shared policy that writes the whole in-memory object.
    public class var overwrite: NSMergePolicy { Shared.overwrite }
    /// The shared policy that discards the conflicting objects' changes.
    public class var rollback: NSMergePolicy { Shared.rollback }

    private enum Shared {
        static let error = NSMergePolicy(merge: .errorMergePolicyType)
        static let storeTrump = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
        static let objectTrump = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        static let overwrite = NSMergePolicy(merge: .overwriteMergePolicyType)
        static let rollback = NSMergePolicy(merge: .rollbackMergePolicyType)
    }

    /// Resolves a list holding ``NSMergeConflict``s and ``NSConstraintConflict``s: the optimistic-locking
    /// conflicts first, then the constraint conflicts. This is what `save()` calls.
    open func resolve(mergeConflicts list: [Any]) throws {
        let locking = list.compactMap { $0 as? NSMergeConflict }
        let constraints = list.compactMap { $0 as? NSConstraintConflict }
        if !locking.isEmpty { try resolve(optimisticLockingConflicts: locking) }
        if !constraints.isEmpty { try resolve(constraintConflicts: constraints) }
    }

    /// Resolves optimistic-locking conflicts by changing the conflicting objects (see the table on the
    /// class). The error policy throws `NSManagedObjectMergeError` with `list` under
    /// `NSPersistentStoreSaveConflictsErrorKey`. Every resolved object gets
    /// `awake(fromSnapshotEvents: .mergePolicy)`.
    open func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        guard !list.isEmpty else { return }
        if mergeType == .errorMergePolicyType { throw Self.lockingError(list) }
        for conflict in list { resolveLocking(conflict) }
    }

    /// Resolves uniqueness-constraint conflicts by merging and deleting objects (see the table on the
    /// class). The error policy throws `NSManagedObjectConstraintMergeError` with `list` under
    /// `NSPersistentStoreSaveConflictsErrorKey`. A conflict whose objects were deleted, or no longer share
    /// the values, by an earlier resolution is skipped.
    open func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        guard !list.isEmpty else { return }
        if mergeType == .errorMergePolicyType { throw Self.constraintError(list) }
        for conflict in list {
            if conflict.databaseObject != nil {
                try resolveDatabaseConstraint(conflict)
            } else {
                try resolveContextConstraint(conflict)
            }
        }
        for context in Set(list.flatMap(\.conflictingObjects).compactMap(\.managedObjectContext)) {
            context.processPendingChanges()
        }
    }

    open override var description: String {
        "<NSMergePolicy: \(mergeType)>"
    }
}

/// The default merge policy of every context (`NSMergePolicy.error`).
public var NSErrorMergePolicy: AnyObject { NSMergePolicy.error }
/// Property-by-property merging where the store's changes win (`NSMergePolicy.mergeByPropertyStoreTrump`).
public var NSMergeByPropertyStoreTrumpMergePolicy: AnyObject { NSMergePolicy.mergeByPropertyStoreTrump }
/// Property-by-property merging where the context's changes win (`NSMergePolicy.mergeByPropertyObjectTrump`).
public var NSMergeByPropertyObjectTrumpMergePolicy: AnyObject { NSMergePolicy.mergeByPropertyObjectTrump }
/// The whole in-memory object is written (`NSMergePolicy.overwrite`).
public var NSOverwriteMergePolicy: AnyObject { NSMergePolicy.overwrite }
/// The conflicting objects' changes are discarded (`NSMergePolicy.rollback`).
public var NSRollbackMergePolicy: AnyObject { NSMergePolicy.rollback }

extension CocoaError.Code {
    public static var managedObjectConstraintMerge: CocoaError.Code { .init(rawValue: NSManagedObjectConstraintMergeError) }
}
