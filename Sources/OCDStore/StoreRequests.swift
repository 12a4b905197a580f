import Foundation
import OCDModel
import OCDPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// What a store is asked to fetch. The object graph has already resolved the entity; managed objects in
/// the predicate compare equal to the store's rows for them through `PredicateObjectIdentity`. Pending
/// changes of a context are the graph's business.
public struct StoreFetchPlan: @unchecked Sendable {
    /// The entity whose rows are fetched.
    public var entity: NSEntityDescription
    /// Whether rows of the entity's subentities are fetched too.
    public var includesSubentities: Bool
    /// The rows to fetch; nil for all.
    public var predicate: NSPredicate?
    /// The order of the rows; empty for the store's own.
    public var sortDescriptors: [NSSortDescriptor]
    /// 0 means no limit.
    public var fetchLimit: Int
    /// Rows skipped before the first returned.
    public var fetchOffset: Int
    /// Asked per matching row, when set: whether the caller will use the row's values. A row it answers
    /// false for may come back without them (``StoreRow/hasValues`` false), identifying the object and
    /// its version only, so that a store need not decode values nobody reads (a context re-fetching
    /// objects it has realized keeps their values). Stores are free to ignore it; a coordinator with
    /// several stores drops it, since it sorts their rows by value.
    public var needsValues: ((NSManagedObjectID) -> Bool)?
    /// The stores asked (the request's `affectedStores`); nil for every store holding the entity.
    public var affectedStores: [NSPersistentStore]?

    /// A plan of `entity`'s rows.
    public init(entity: NSEntityDescription, includesSubentities: Bool = true, predicate: NSPredicate? = nil,
                sortDescriptors: [NSSortDescriptor] = [], fetchLimit: Int = 0, fetchOffset: Int = 0) {
        self.entity = entity
        self.includesSubentities = includesSubentities
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }
}

/// A dictionary-result fetch: the plan's rows reduced to `propertiesToFetch` (property names, property
/// descriptions, expression descriptions with aggregates), grouped by `propertiesToGroupBy`, distinct if
/// asked, groups filtered by `havingPredicate` (whose keys name result columns or grouped properties). The
/// plan's sorts, limit and offset apply to the results.
public struct StoreDictionaryRequest: @unchecked Sendable {
    /// The rows, their order, limit and offset.
    public var plan: StoreFetchPlan
    /// nil: every attribute.
    public var propertiesToFetch: [Any]?
    /// Property names or descriptions the results are grouped by; empty for no grouping.
    public var propertiesToGroupBy: [Any]
    /// Which groups are kept.
    public var havingPredicate: NSPredicate?
    /// Whether equal results are returned once.
    public var returnsDistinctResults: Bool

    /// A dictionary request over `plan`'s rows.
    public init(plan: StoreFetchPlan, propertiesToFetch: [Any]?, propertiesToGroupBy: [Any] = [],
                havingPredicate: NSPredicate? = nil, returnsDistinctResults: Bool = false) {
        self.plan = plan
        self.propertiesToFetch = propertiesToFetch
        self.propertiesToGroupBy = propertiesToGroupBy
        self.havingPredicate = havingPredicate
        self.returnsDistinctResults = returnsDistinctResults
    }
}

/// The changes of one save, for one store: full rows for inserted and updated objects, IDs for deleted
/// ones, and the version each changed object had when it was read (for optimistic locking). In an updated
/// row, a nil to-many slot means the relationship was not loaded and did not change: keep the stored one.
public struct StoreSaveRequest: @unchecked Sendable {
    /// New rows, each with version 1: the version a new row is stored with. The store keeps them as they
    /// are and reports nothing back for them, so that a save of N inserts makes no second row per object.
    public var inserted: [StoreRow]
    /// Each updated row with the version the context read; the row's own version is ignored.
    public var updated: [(row: StoreRow, expectedVersion: Int64)]
    /// Each deleted object's ID with the version the context read.
    public var deleted: [(objectID: NSManagedObjectID, expectedVersion: Int64)]
    /// For each row of `updated`, by index, the slots whose values changed since the context read it, when
    /// the context knows them; nil (or a missing entry) means any may have. A store may write only those,
    /// as Core Data's SQL updates only the changed columns.
    public var updatedSlots: [[Int]?] = []
    /// Set by the coordinator when this store is the only one the save writes to. A store that finds
    /// version conflicts while it writes, and then undoes its writes (the SQLite store), may leave them
    /// to the writes instead of reading every version in ``NSPersistentStore/checkSave(_:)``: with one
    /// store nothing else has been written yet. With several, each checks first, so that a conflict in one
    /// changes none.
    public var isOnlyStoreOfSave = false

    /// A request of these changes.
    public init(inserted: [StoreRow] = [], updated: [(row: StoreRow, expectedVersion: Int64)] = [],
                deleted: [(objectID: NSManagedObjectID, expectedVersion: Int64)] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// Whether the request changes nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// What a store reports after a save: for each row of the request's `updated`, by index, the row as now
/// stored, with its new version. By position rather than by object ID, so that the object graph matches
/// them to its objects without hashing an ID per row. A store that reports fewer rows leaves the object
/// graph to assume the rest were written as sent, one version on.
public struct StoreSaveResult: @unchecked Sendable {
    /// The updated rows as stored, by position in the request's `updated`.
    public var updated: [StoreRow]
    /// Derived attributes (`NSDerivedAttributeDescription`) the save recomputed, of rows in the save or of
    /// rows that read them: the store keeps them, as Core Data's triggers do, without a new version, and
    /// the object graph gives them to the objects it holds.
    public var derivedValues: [DerivedValue] = []
    /// A result of these rows and derived values.
    public init(updated: [StoreRow] = [], derivedValues: [DerivedValue] = []) {
        self.updated = updated
        self.derivedValues = derivedValues
    }
}

/// A derived attribute's value as a save left it in the store (numbers as their row holds them).
public struct DerivedValue: @unchecked Sendable {
    /// The object whose attribute it is.
    public let objectID: NSManagedObjectID
    /// The attribute's slot in the entity's ``EntityLayout``.
    public let slot: Int
    /// The stored value; nil for NULL.
    public let value: Any?
    /// A derived value of `objectID`'s `slot`.
    public init(objectID: NSManagedObjectID, slot: Int, value: Any?) {
        self.objectID = objectID
        self.slot = slot
        self.value = value
    }
}

/// Errors stores report to the object graph, which turns them into Core Data's `NSError`s (decision D6).
public enum StoreError: Error, @unchecked Sendable {
    /// Rows changed or deleted by someone else since the context read them. `stored` is the row now in
    /// the store (nil if it was deleted).
    case conflicts([(objectID: NSManagedObjectID, expectedVersion: Int64, stored: StoreRow?)])
    /// Rows of the save that would break a uniqueness constraint (found by
    /// ``StoreSaveRequest/uniquenessConflicts(storedRowsMatching:)``, after the version check passed). A
    /// conflict with `stored` nil is between rows of the save (`conflicting` has two or more IDs); one with
    /// a `stored` row is between one saved row and that row, which the save does not change.
    case constraintConflicts([StoreConstraintConflict])
    /// The store cannot be used: a reason for the user.
    case invalidStore(String)
    /// The request names something the store does not hold.
    case invalidRequest(String)
}

/// Dictionary results as a store computes them: the keys once, and each row's values in key order (nil
/// where the row has no entry), so that the object graph can answer them without a dictionary per row.
public struct StoreDictionaryRows: @unchecked Sendable {
    public let keys: [String]
    public let rows: [[Any?]]

    public init(keys: [String], rows: [[Any?]]) {
        self.keys = keys
        self.rows = rows
    }
}

extension NSPersistentStoreRequest {
    /// The stores the request goes to: a fetch asks only these (those of them that hold its entity), and
    /// sees only the unsaved objects that belong, or will be saved, to one of them. Nil (the default)
    /// for every store of the coordinator.
    public var affectedStores: [NSPersistentStore]? {
        get { affectedStoreObjects?.compactMap { $0 as? NSPersistentStore } }
        set { affectedStoreObjects = newValue }
    }
}
