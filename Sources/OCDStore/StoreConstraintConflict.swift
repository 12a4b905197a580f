import Foundation
import OCDModel

/// One violated uniqueness constraint, as a store reports it in ``StoreError/constraintConflicts(_:)``.
public struct StoreConstraintConflict: @unchecked Sendable {
    /// The entity that declares the constraint; it binds the rows of its subentities too.
    public var entity: NSEntityDescription
    /// The constrained property names, as the entity lists them.
    public var constraint: [String]
    /// The values the rows share, by property name (a to-one relationship as its destination's ID).
    public var values: [String: Any]
    /// The stored row that already holds the values and that the save does not change, or nil when the
    /// clash is between rows of the save.
    public var stored: StoreRow?
    /// The inserted or updated rows of the save that hold the values: one when `stored` is set, two or
    /// more otherwise.
    public var conflicting: [NSManagedObjectID]

    public init(entity: NSEntityDescription, constraint: [String], values: [String: Any], stored: StoreRow?, conflicting: [NSManagedObjectID]) {
        self.entity = entity
        self.constraint = constraint
        self.values = values
        self.stored = stored
        self.conflicting = conflicting
    }
}

extension StoreSaveRequest {
    /// The uniqueness-constraint violations this request would cause, for a store to throw as
    /// ``StoreError/constraintConflicts(_:)`` before it writes anything.
    ///
    /// Every inserted and updated row is checked against each constraint of its entity and its
    /// superentities (a constraint binds the declaring entity and all its subentities). A constrained value
    /// is an attribute's value or a to-one relationship's destination ID; a row with nil in any constrained
    /// property is not checked (several NULLs do not clash, as in an SQLite unique index).
    ///
    /// - Rows of the request holding the same values clash with each other: one conflict, `stored` nil.
    /// - Otherwise a single row clashes with a stored row holding the values, found by
    ///   `storedRowsMatching(entity, names, values)`: the store's rows of `entity` or its subentities whose
    ///   properties `names` equal `values`. Rows the request updates or deletes are ignored there (their
    ///   new values are the request's); the caller may return them, they are filtered out.
    ///
    /// The in-memory store answers `storedRowsMatching` by scanning its tables; an SQL store answers with
    /// one `SELECT … WHERE name1 = ? AND name2 = ?` over the entity's table.
    public func uniquenessConflicts(storedRowsMatching: (_ entity: NSEntityDescription, _ names: [String], _ values: [Any]) throws -> [StoreRow]) rethrows -> [StoreConstraintConflict] {
        guard hasUniquenessConstraints else { return [] }
        let rows = inserted + updated.map(\.row)
        guard !rows.isEmpty else { return [] }
        var changedIDs = Set(updated.map(\.row.objectID))
        changedIDs.formUnion(deleted.map(\.objectID))

        // Group the request's rows by (declaring entity, constraint, values), in request order.
        struct Key: Hashable {
            let entity: ObjectIdentifier
            let constraint: [String]
            let values: [AnyHashable]
        }
        var groups: [Key: (entity: NSEntityDescription, values: [Any], ids: [NSManagedObjectID])] = [:]
        var order: [Key] = []
        for row in rows {
            // Root first: a subentity that repeats an inherited constraint is bound by the ancestor's.
            var chain: [NSEntityDescription] = []
            var next: NSEntityDescription? = row.objectID.entity
            while let entity = next { chain.insert(entity, at: 0); next = entity.superentity }
            var seen = Set<Set<String>>()
            for entity in chain {
                for constraint in Self.constraints(of: entity) where seen.insert(Set(constraint)).inserted {
                    guard let values = Self.values(of: row, constraint) else { continue }
                    let key = Key(entity: ObjectIdentifier(entity), constraint: constraint, values: values.map(Self.hashable))
                    if groups[key] == nil {
                        groups[key] = (entity, values, [])
                        order.append(key)
                    }
                    groups[key]!.ids.append(row.objectID)
                }
            }
        }

        var conflicts: [StoreConstraintConflict] = []
        for key in order {
            let group = groups[key]!
            let values = Dictionary(uniqueKeysWithValues: zip(key.constraint, group.values))
            if group.ids.count > 1 {
                conflicts.append(StoreConstraintConflict(entity: group.entity, constraint: key.constraint, values: values, stored: nil, conflicting: group.ids))
                continue
            }
            let stored = try storedRowsMatching(group.entity, key.constraint, group.values)
                .first { !changedIDs.contains($0.objectID) && $0.objectID != group.ids[0] }
            if let stored {
                conflicts.append(StoreConstraintConflict(entity: group.entity, constraint: key.constraint, values: values, stored: stored, conflicting: group.ids))
            }
        }
        return conflicts
    }

    /// Whether an entity of an inserted or updated row, or one of its superentities, declares a
    /// uniqueness constraint: most models have none, and then nothing is checked per row. A model in use
    /// answers for all its entities at once; otherwise each run of rows of one entity asks once.
    public var hasUniquenessConstraints: Bool {
        var last: NSEntityDescription?
        func constrained(_ row: StoreRow) -> Bool {
            let entity = row.objectID.entity
            guard entity !== last else { return false }
            last = entity
            if entity.managedObjectModel?.declaresUniquenessConstraints == false { return false }
            var next: NSEntityDescription? = entity
            while let current = next {
                if !current.uniquenessConstraints.isEmpty { return true }
                next = current.superentity
            }
            return false
        }
        return inserted.contains(where: constrained) || updated.contains(where: { constrained($0.row) })
    }

    /// The uniqueness constraints `entity` itself declares, as property names.
    static func constraints(of entity: NSEntityDescription) -> [[String]] {
        entity.uniquenessConstraints.map { group in
            group.map { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name ?? "\($0)" }
        }.filter { !$0.isEmpty }
    }

    /// The row's values for `names`, or nil if one is nil (or the row has no such property).
    static func values(of row: StoreRow, _ names: [String]) -> [Any]? {
        var result: [Any] = []
        for name in names {
            guard let value = value(of: row, named: name) else { return nil }
            result.append(value)
        }
        return result
    }

    private struct NoValue: Hashable {}

    /// The value of the property `name` of `row`; a dotted name (`location.latitude`) is an element of a
    /// composite attribute, as Core Data names them in constraints.
    public static func value(of row: StoreRow, named name: String) -> Any? {
        if let slot = row.layout.slot(named: name) { return row.values[slot] }
        let parts = name.split(separator: ".").map(String.init)
        guard parts.count > 1, let slot = row.layout.slot(named: parts[0]) else { return nil }
        return CompositeValue.value(at: parts.dropFirst(), in: row.values[slot] as? [String: Any])
    }

    /// Constrained values are attribute values (NSNumber, String, Date, UUID, Data …) and object IDs, all
    /// hashable; a composite's dictionary by its elements in key order; anything else compares by its
    /// description.
    public static func hashable(_ value: Any) -> AnyHashable {
        // Not NSNull's own hash: swift-corelibs-foundation's instances hash by address.
        if value is NSNull { return AnyHashable(NoValue()) }
        if let dictionary = value as? [String: Any] {
            return AnyHashable(dictionary.keys.sorted().map { [AnyHashable($0), hashable(dictionary[$0]!)] })
        }
        return (value as? AnyHashable) ?? AnyHashable("\(value)")
    }
}
