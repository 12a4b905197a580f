import Foundation
import OCDModel
import OCDPredicate
import OCDStore

/// Derived attributes in the in-memory store: recomputed from the stored rows once a save's rows are in,
/// as Core Data's SQLite store does with triggers (DerivationTriggers in the SQLite store), and kept
/// without a new version (a value another row's change moves is no edit of this row's).
extension InMemoryStore.Tables {
    /// Recomputes the derived attributes the save of `request` (whose rows are stored) may have moved;
    /// returns the new values. `remember` is called before a row changes (for a multi-store save's undo).
    mutating func derive(_ plan: DerivationPlan, model: NSManagedObjectModel, after request: StoreSaveRequest,
                         previous: [NSManagedObjectID: StoreRow], also owners: [NSManagedObjectID],
                         remember: (String, Int64) -> Void, primaryKey: (NSManagedObjectID) -> Int64?) -> [DerivedValue] {
        // The rows of the save, all of whose derived attributes are recomputed (cheap in memory; now()
        // moves on every insert and update, as Core Data's follows Z_OPT), and rows that read a changed
        // row through a relationship, whose relationship-based ones are (not now(): the row itself did
        // not change, as in SQL, where the triggers do not touch its Z_OPT).
        var targets: [(id: NSManagedObjectID, saved: Bool)] = []
        var seen = Set<NSManagedObjectID>()
        func target(_ id: NSManagedObjectID, saved: Bool) { if seen.insert(id).inserted { targets.append((id, saved)) } }
        for row in request.inserted { target(row.objectID, saved: true) }
        for (row, _) in request.updated { target(row.objectID, saved: true) }
        // Owners outside the save whose member lists the save's foreign keys changed.
        for owner in owners { target(owner, saved: false) }

        // Sources of relationship-based values that a changed, new or deleted row may move: found through
        // the relationship's inverse in the changed row (as it is now and as it was), or, without an
        // inverse, by a scan of the source entity's rows.
        var changedRows: [StoreRow] = []
        for row in request.inserted { changedRows.append(row) }
        for (row, _) in request.updated {
            if let key = primaryKey(row.objectID), let stored = rows[row.objectID.entity.name ?? ""]?[key] { changedRows.append(stored) }
            if let before = previous[row.objectID] { changedRows.append(before) }
        }
        for (id, _) in request.deleted { if let before = previous[id] { changedRows.append(before) } }
        let changed = Set(changedRows.map(\.objectID))
        let entities = model.entitiesByName
        for (entityName, derivedList) in plan.byEntity {
            guard let entity = entities[entityName] else { continue }
            let relationships = Set(derivedList.compactMap(\.derivation.relationship)).compactMap { entity.relationshipsByName[$0] }
            for relationship in relationships {
                guard let destination = relationship.destinationEntity else { continue }
                // A to-one is the truth of what a row reads through it (an owner's list of members may be
                // one a context sent stale): its readers are found by their to-one, as SQL's are by the
                // foreign key. Through a to-many, the changed member's inverse names its owners.
                if !relationship.isToMany, !changedRows.contains(where: { $0.objectID.entity.isKindOf(entity: destination) }) { continue }
                if relationship.isToMany, let inverse = relationship.inverseRelationship?.name {
                    for row in changedRows where row.objectID.entity.isKindOf(entity: destination) {
                        guard let slot = row.layout.slot(named: inverse) else { continue }
                        let value = row.values.stored(slot)
                        let sources = (value as? NSManagedObjectID).map { [$0] } ?? (value as? [NSManagedObjectID]) ?? []
                        for source in sources where source.entity.isKindOf(entity: entity) { target(source, saved: false) }
                    }
                } else if let rows = self.rows[entityName], let slot = EntityLayout.of(entity).slot(named: relationship.name) {
                    // The in-memory store has no index: a scan, only when a row of the destination changed.
                    for (_, row) in rows where !seen.contains(row.objectID) {
                        let value = row.values.stored(slot)
                        let points = (value as? NSManagedObjectID).map(changed.contains) ?? (value as? [NSManagedObjectID])?.contains(where: changed.contains) ?? false
                        if points { target(row.objectID, saved: false) }
                    }
                }
            }
        }

        var result: [DerivedValue] = []
        let now = Date()
        for (id, saved) in targets {
            guard let derivedList = plan.byEntity[id.entity.name ?? ""], let key = primaryKey(id),
                  let row = rows[id.entity.name ?? ""]?[key] else { continue }
            var values = row.values
            var moved = false
            for derived in derivedList where saved || derived.derivation.relationship != nil {
                guard let slot = row.layout.slot(named: derived.name), let attribute = row.layout.properties[slot] as? NSAttributeDescription else { continue }
                let value = Self.stored(value(of: derived.derivation, in: row, now: now, primaryKey: primaryKey), for: attribute)
                if Self.same(value, values.stored(slot)) { continue }
                values[slot] = value
                moved = true
                result.append(DerivedValue(objectID: id, slot: slot, value: value))
            }
            if moved {
                remember(id.entity.name ?? "", key)
                rows[id.entity.name ?? ""]![key] = StoreRow(objectID: id, version: row.version, values: values)
            }
        }
        return result
    }

    private func value(of derivation: Derivation, in row: StoreRow, now: Date, primaryKey: (NSManagedObjectID) -> Int64?) -> Any? {
        func read(_ key: String, of row: StoreRow) -> Any? {
            row.layout.slot(named: key).flatMap { SlotValues.boxed(row.values.stored($0)) }
        }
        func apply(_ function: Derivation.TextFunction?, _ value: Any?) -> Any? {
            guard let function, let string = value as? String else { return value }
            switch function {
            case .canonical: return TextFolding.canonical(string)
            case .lowercase: return string.lowercased()
            case .uppercase: return string.uppercased()
            }
        }
        /// The rows `relationship` lists that are still stored (a deleted one no longer counts, as a
        /// deleted row no longer holds its key in SQL).
        func members(_ relationship: String) -> [StoreRow] {
            guard let slot = row.layout.slot(named: relationship), let ids = row.values.stored(slot) as? [NSManagedObjectID] else { return [] }
            return ids.compactMap { id in lookup(id) }
        }
        func lookup(_ id: NSManagedObjectID) -> StoreRow? {
            primaryKey(id).flatMap { rows[id.entity.name ?? ""]?[$0] }
        }
        switch derivation {
        case .attribute(let key, let function):
            return apply(function, read(key, of: row))
        case .toOne(let relationship, let key, let function):
            guard let slot = row.layout.slot(named: relationship), let id = row.values.stored(slot) as? NSManagedObjectID,
                  let destination = lookup(id) else { return nil }
            return apply(function, read(key, of: destination))
        case .count(let relationship):
            return Int64(members(relationship).count)
        case .sum(let relationship, let key):
            var integer: Int64 = 0, double = 0.0, decimal = Decimal(0), kind = 0
            for member in members(relationship) {
                switch read(key, of: member) {
                case let value as Decimal:
                    kind = 2
                    decimal += value
                case let number as NSNumber:
                    let type = number.objCType.pointee
                    if type == 0x64 || type == 0x66 { kind = max(kind, 1); double += number.doubleValue } else { integer &+= number.int64Value }
                default:
                    continue
                }
            }
            switch kind {
            case 0: return integer
            case 1: return double + Double(integer)
            default: return decimal + (double.isFinite ? Decimal(double) : .nan) + Decimal(integer)  // Decimal(infinity) traps
            }
        case .now:
            return now
        }
    }

    /// `value` in the form a row holds for `attribute` (numbers unboxed where the slot holds them so).
    private static func stored(_ value: Any?, for attribute: NSAttributeDescription) -> Any? {
        guard let value else { return nil }
        let number = value as? NSNumber ?? (value as? Int64).map { NSNumber(value: $0) } ?? (value as? Double).map { NSNumber(value: $0) }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            return number.map { $0.int64Value } ?? (value as? Decimal).map { NSDecimalNumber(decimal: $0).int64Value }
        case .doubleAttributeType:
            return number.map { $0.doubleValue } ?? (value as? Decimal).map { NSDecimalNumber(decimal: $0).doubleValue }
        case .floatAttributeType:
            return (number?.floatValue ?? (value as? Decimal).map { NSDecimalNumber(decimal: $0).floatValue }).map { NSNumber(value: $0) }
        case .decimalAttributeType:
            return (value as? Decimal) ?? number.map { $0.finiteDecimalValue }
        default:
            return value
        }
    }

    private static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case let (x?, y?):
            if let x = SlotValues.boxed(x) as? NSObject, let y = SlotValues.boxed(y) as? NSObject { return x.isEqual(y) }
            return false
        }
    }
}
