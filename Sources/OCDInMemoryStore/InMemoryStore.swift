import Foundation
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// `NSInMemoryStoreType`: rows kept in memory, predicates evaluated with the predicate layer's evaluator.
/// Nothing survives the store; it is the fast store for tests and caches.
///
/// Rows are immutable and the tables are value types, so a fetch works on a copy taken under the lock and
/// never blocks a save for longer than that copy.
public final class InMemoryStore: NSPersistentStore, @unchecked Sendable {
    struct Tables {
        /// Rows by concrete entity name, then primary key.
        var rows: [String: [Int64: StoreRow]] = [:]
        /// The last primary key used, by root entity name (subentities share their root's key space, as
        /// they share its table in an SQLite store).
        var lastPrimaryKey: [String: Int64] = [:]
    }

    private let lock = NSLock()
    private var tables = Tables()

    public override var type: String { NSInMemoryStoreType }

    public override func loadMetadata() throws {
        if metadata.isEmpty { metadata = freshMetadata() }
    }

    private func snapshot() -> Tables {
        lock.lock()
        defer { lock.unlock() }
        return tables
    }

    // MARK: Fetching

    public override func executeFetch(_ plan: StoreFetchPlan) throws -> [StoreRow] {
        let tables = snapshot()
        let context = EvaluationContext(tables: tables)
        var matches: [RowProxy] = []
        for entity in Self.entities(of: plan) {
            for row in (tables.rows[entity.name ?? ""] ?? [:]).values {
                let proxy = RowProxy(row: row, context: context)
                if let predicate = plan.predicate, try !predicate.evaluateThrowing(with: proxy) { continue }
                matches.append(proxy)
            }
        }
        // Rows come out of a dictionary: order them by primary key first, so that unsorted fetches and
        // ties are stable, as they are in an SQLite table.
        matches.sort { ($0.row.objectID.primaryKey ?? 0, $0.row.objectID.entity.name ?? "") < ($1.row.objectID.primaryKey ?? 0, $1.row.objectID.entity.name ?? "") }
        if !plan.sortDescriptors.isEmpty {
            matches = try matches.sortedThrowing(using: plan.sortDescriptors)
        }
        var rows = matches.map(\.row)
        if plan.fetchOffset > 0 { rows = Array(rows.dropFirst(plan.fetchOffset)) }
        if plan.fetchLimit > 0 { rows = Array(rows.prefix(plan.fetchLimit)) }
        return rows
    }

    private static func entities(of plan: StoreFetchPlan) -> [NSEntityDescription] {
        guard plan.includesSubentities else { return [plan.entity] }
        var result: [NSEntityDescription] = []
        var pending = [plan.entity]
        while let entity = pending.popLast() {
            result.append(entity)
            pending.append(contentsOf: entity.subentities)
        }
        return result
    }

    public override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        guard let pk = primaryKey(of: objectID) else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return tables.rows[objectID.entity.name ?? ""]?[pk]
    }

    public override func newObjectIDs(for entity: NSEntityDescription, count: Int) throws -> [NSManagedObjectID] {
        var root = entity
        while let parent = root.superentity { root = parent }
        lock.lock()
        let first = (tables.lastPrimaryKey[root.name ?? ""] ?? 0) + 1
        tables.lastPrimaryKey[root.name ?? "", default: 0] += Int64(count)
        lock.unlock()
        return (0..<count).map { objectID(for: entity, primaryKey: first + Int64($0)) }
    }

    // MARK: Saving

    public override func checkSave(_ request: StoreSaveRequest) throws {
        lock.lock()
        defer { lock.unlock() }
        try check(request)
    }

    /// Everything that could make `request` fail, checked before anything is written.
    private func check(_ request: StoreSaveRequest) throws {
        if isReadOnly { throw StoreError.invalidStore("the store is read-only") }
        for row in request.inserted {
            guard let pk = primaryKey(of: row.objectID) else {
                throw StoreError.invalidRequest("\(row.objectID) is not an ID of this store")
            }
            if tables.rows[row.objectID.entity.name ?? ""]?[pk] != nil {
                throw StoreError.invalidRequest("\(row.objectID) is already stored")
            }
        }
        var conflicts: [(objectID: NSManagedObjectID, expectedVersion: Int64, stored: StoreRow?)] = []
        func check(_ objectID: NSManagedObjectID, _ expected: Int64) {
            let stored = primaryKey(of: objectID).flatMap { tables.rows[objectID.entity.name ?? ""]?[$0] }
            if stored?.version != expected { conflicts.append((objectID, expected, stored)) }
        }
        for (row, expected) in request.updated { check(row.objectID, expected) }
        for (objectID, expected) in request.deleted { check(objectID, expected) }
        if !conflicts.isEmpty { throw StoreError.conflicts(conflicts) }
        let violations = request.uniquenessConflicts(storedRowsMatching: storedRows(of:matching:values:))
        if !violations.isEmpty { throw StoreError.constraintConflicts(violations) }
    }

    /// Stored rows of `entity` and its subentities whose properties `names` equal `values` (a scan: the
    /// in-memory store has no indexes).
    private func storedRows(of entity: NSEntityDescription, matching names: [String], values: [Any]) -> [StoreRow] {
        let wanted = values.map(StoreSaveRequest.hashable)
        var result: [StoreRow] = []
        for candidate in Self.entities(of: StoreFetchPlan(entity: entity)) {
            let layout = EntityLayout.of(candidate)
            // A dotted name is an element of a composite: its root is the property.
            guard names.allSatisfy({ layout.slot(named: String($0.prefix { $0 != "." })) != nil }) else { continue }
            for row in (tables.rows[candidate.name ?? ""] ?? [:]).values {
                let matches = zip(names, wanted).allSatisfy { name, value in
                    guard let stored = StoreSaveRequest.value(of: row, named: name) else { return false }
                    return StoreSaveRequest.hashable(stored) == value
                }
                if matches { result.append(row) }
            }
        }
        return result.sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
    }

    /// The rows the running save round replaced, oldest first (nil outside a round): put back if the
    /// round fails after this store saved, so that a save across stores leaves no half of it here when
    /// another store fails. Keys handed out stay taken.
    private var roundUndo: [(entity: String, key: Int64, row: StoreRow?)]?

    public override func performSaveTransaction<T>(_ body: () throws -> T) throws -> T {
        lock.withLock { roundUndo = [] }
        do {
            let result = try body()
            lock.withLock { roundUndo = nil }
            return result
        } catch {
            lock.withLock {
                for entry in (roundUndo ?? []).reversed() { tables.rows[entry.entity, default: [:]][entry.key] = entry.row }
                roundUndo = nil
            }
            throw error
        }
    }

    public override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        lock.lock()
        defer { lock.unlock() }
        // Checked first, so that a failure leaves the store untouched.
        try check(request)
        // Only a store of several needs to undo its part when another fails.
        let remembers = roundUndo != nil && !request.isOnlyStoreOfSave
        func remember(_ entity: String, _ key: Int64) {
            if remembers { roundUndo?.append((entity, key, tables.rows[entity]?[key])) }
        }

        // The rows the save replaces or deletes, for what their to-ones pointed at before.
        var previous: [NSManagedObjectID: StoreRow] = [:]
        for (row, _) in request.updated { previous[row.objectID] = primaryKey(of: row.objectID).flatMap { tables.rows[row.objectID.entity.name ?? ""]?[$0] } }
        for (id, _) in request.deleted { previous[id] = primaryKey(of: id).flatMap { tables.rows[id.entity.name ?? ""]?[$0] } }

        var saved: [StoreRow] = []
        saved.reserveCapacity(request.updated.count)
        for row in request.inserted {
            remember(row.objectID.entity.name ?? "", primaryKey(of: row.objectID)!)
            tables.rows[row.objectID.entity.name ?? "", default: [:]][primaryKey(of: row.objectID)!] = row
        }
        // Inserted rows are in: a list naming one of them names a row.
        for row in request.inserted {
            guard let values = droppingMissingMembers(row.values, row.layout) else { continue }
            tables.rows[row.objectID.entity.name ?? ""]![primaryKey(of: row.objectID)!] = StoreRow(objectID: row.objectID, version: row.version, values: values)
        }
        for (row, expected) in request.updated {
            let pk = primaryKey(of: row.objectID)!
            let entityName = row.objectID.entity.name ?? ""
            // Only the lists the context sent: the stored ones hold no missing member.
            var values = droppingMissingMembers(row.values, row.layout) ?? row.values
            // A nil to-many slot was not loaded by the context: the stored members stand.
            if let old = tables.rows[entityName]?[pk] {
                for (slot, relationship) in row.layout.relationships where relationship.isToMany && values[slot] == nil {
                    values[slot] = old.values[slot]
                }
            }
            let stored = StoreRow(objectID: row.objectID, version: expected + 1, values: values)
            remember(entityName, pk)
            tables.rows[entityName]![pk] = stored
            saved.append(stored)
        }
        for (objectID, _) in request.deleted {
            remember(objectID.entity.name ?? "", primaryKey(of: objectID)!)
            tables.rows[objectID.entity.name ?? ""]![primaryKey(of: objectID)!] = nil
        }
        if !request.deleted.isEmpty { dropDeletedMembers(Set(request.deleted.map(\.0)), remember: remember) }
        let moved = followForeignKeys(request, previous: previous, remember: remember)
        // The updated rows as now stored (an owner's list may have been put right).
        saved = saved.map { row in primaryKey(of: row.objectID).flatMap { tables.rows[row.objectID.entity.name ?? ""]?[$0] } ?? row }
        // The coordinator refused models whose derivations no store can keep, so the plan is at hand.
        guard let plan = try? DerivationPlan.of(model), !plan.isEmpty else { return StoreSaveResult(updated: saved) }
        let derived = tables.derive(plan, model: model, after: request, previous: previous, also: moved, remember: remember,
                                    primaryKey: { self.primaryKey(of: $0) })
        return StoreSaveResult(updated: saved, derivedValues: derived)
    }
}

extension InMemoryStore {
    /// `values` without the members of its store-kept lists (many-to-many relationships and to-many ones
    /// without an inverse) whose rows are gone, or nil when none is. A context holding a list from before
    /// another context deleted a member sends it back whole; SQLite's join table then names a row that is
    /// gone, which its reads (a join) never return, and a list here must not hand it out either.
    fileprivate func droppingMissingMembers(_ values: SlotValues, _ layout: EntityLayout) -> SlotValues? {
        var result: SlotValues?
        for (slot, relationship) in layout.relationships where relationship.isToMany && relationship.inverseRelationship?.isToMany != false {
            guard let members = values.stored(slot) as? [NSManagedObjectID] else { continue }
            let present = members.filter { id in primaryKey(of: id).flatMap { tables.rows[id.entity.name ?? ""]?[$0] } != nil }
            guard present.count != members.count else { continue }
            if result == nil { result = values }
            result![slot] = present
        }
        return result
    }

    /// Takes deleted rows out of the member lists no foreign key keeps (many-to-many relationships and
    /// to-many ones without an inverse), as deleting a row deletes its rows of an SQLite join table: a
    /// list that named them gave a fault of a row that is gone. The owners' versions stay, as in SQLite.
    fileprivate func dropDeletedMembers(_ gone: Set<NSManagedObjectID>, remember: (String, Int64) -> Void) {
        // Only lists that can name a deleted row: their destination is its entity or one it inherits from.
        var goneEntities = Set<String>()
        for id in gone {
            var entity: NSEntityDescription? = id.entity
            while let current = entity, goneEntities.insert(current.name ?? "").inserted { entity = current.superentity }
        }
        for (entityName, rows) in tables.rows {
            guard let layout = rows.first?.value.layout else { continue }
            let slots = layout.relationships.filter { _, relationship in
                relationship.isToMany && relationship.inverseRelationship?.isToMany != false
                    && goneEntities.contains(relationship.destinationEntity?.name ?? "")
            }.map(\.0)
            guard !slots.isEmpty else { continue }
            for (key, row) in rows {
                var values = row.values
                var changed = false
                for slot in slots {
                    guard let members = values.stored(slot) as? [NSManagedObjectID], members.contains(where: gone.contains) else { continue }
                    values[slot] = members.filter { !gone.contains($0) }
                    changed = true
                }
                guard changed else { continue }
                remember(entityName, key)
                tables.rows[entityName]![key] = StoreRow(objectID: row.objectID, version: row.version, values: values)
            }
        }
    }

    /// Keeps the member lists of one-to-many relationships as the members' to-ones say, as SQL's foreign
    /// keys do: a row of the save whose to-one moved leaves its old owner's list and joins its new one's
    /// (at the end), a deleted row leaves its owner's, and an owner of the save lists none whose to-one
    /// points elsewhere. A context that merged another's move of a member while moving it elsewhere
    /// itself holds the owner it merged, still listing the member, and may send that list later.
    /// Returns the owners outside the save whose lists changed (their derived values may move).
    fileprivate func followForeignKeys(_ request: StoreSaveRequest, previous: [NSManagedObjectID: StoreRow],
                                       remember: (String, Int64) -> Void) -> [NSManagedObjectID] {
        struct Target: Hashable {
            let owner: NSManagedObjectID
            let relationship: String
        }
        // Gathered first, applied once per owner list: a bulk save moves many members into one owner.
        var removals: [Target: Set<NSManagedObjectID>] = [:]
        var additions: [Target: [NSManagedObjectID]] = [:]
        var order: [Target] = []
        func note(_ target: Target) { if removals[target] == nil && additions[target] == nil { order.append(target) } }
        func follow(_ id: NSManagedObjectID, layout: EntityLayout, now: StoreRow?, before: StoreRow?) {
            for (slot, relationship) in layout.relationships where !relationship.isToMany {
                guard let inverse = relationship.inverseRelationship, inverse.isToMany else { continue }
                let old = before?.values.stored(slot) as? NSManagedObjectID
                let new = now?.values.stored(slot) as? NSManagedObjectID
                if old == new { continue }
                if let old {
                    let target = Target(owner: old, relationship: inverse.name)
                    note(target)
                    removals[target, default: []].insert(id)
                }
                if let new {
                    let target = Target(owner: new, relationship: inverse.name)
                    note(target)
                    additions[target, default: []].append(id)
                }
            }
        }
        for row in request.inserted { follow(row.objectID, layout: row.layout, now: row, before: nil) }
        for (row, _) in request.updated { follow(row.objectID, layout: row.layout, now: row, before: previous[row.objectID]) }
        for (id, _) in request.deleted { if let before = previous[id] { follow(id, layout: before.layout, now: nil, before: before) } }
        // The owners of the save whose one-to-many lists they sent differ from the stored ones: checked
        // against the members' to-ones, both ways (a member listed that points elsewhere is dropped, one
        // left out that still points here is kept).
        var saved = Set<NSManagedObjectID>()
        var restored: [Target: [NSManagedObjectID]] = [:]
        func checkLists(of row: StoreRow, before: StoreRow?) {
            saved.insert(row.objectID)
            for (slot, relationship) in row.layout.relationships where relationship.isToMany && relationship.inverseRelationship?.isToMany == false {
                let sent = row.values.stored(slot) as? [NSManagedObjectID]
                let stored = before?.values.stored(slot) as? [NSManagedObjectID]
                guard let sent, sent != stored else { continue }
                let target = Target(owner: row.objectID, relationship: relationship.name)
                note(target)
                if let stored {
                    let kept = Set(sent)
                    restored[target] = stored.filter { !kept.contains($0) }
                }
            }
        }
        for row in request.inserted { checkLists(of: row, before: nil) }
        for (row, _) in request.updated { checkLists(of: row, before: previous[row.objectID]) }

        var edited: [NSManagedObjectID] = []
        for target in order {
            let owner = target.owner
            guard let key = primaryKey(of: owner), let row = tables.rows[owner.entity.name ?? ""]?[key],
                  let slot = row.layout.slot(named: target.relationship), let members = row.values.stored(slot) as? [NSManagedObjectID],
                  let inverse = (row.layout.properties[slot] as? NSRelationshipDescription)?.inverseRelationship?.name else { continue }
            let removed = removals[target] ?? []
            // A listed member stays if it is stored and its to-one points back here.
            let kept = members.filter { member in
                guard !removed.contains(member), let memberKey = primaryKey(of: member),
                      let memberRow = tables.rows[member.entity.name ?? ""]?[memberKey] else { return false }
                return StoreSaveRequest.value(of: memberRow, named: inverse) as? NSManagedObjectID == owner
            }
            var present = Set(kept)
            var result = kept
            // Members the owner's list left out whose to-one still points here (a context that wrote its
            // stale list over another's move).
            for member in restored[target] ?? [] where !removed.contains(member) {
                guard let memberKey = primaryKey(of: member), let memberRow = tables.rows[member.entity.name ?? ""]?[memberKey],
                      StoreSaveRequest.value(of: memberRow, named: inverse) as? NSManagedObjectID == owner,
                      present.insert(member).inserted else { continue }
                result.append(member)
            }
            for member in additions[target] ?? [] where present.insert(member).inserted { result.append(member) }
            if result == members { continue }
            var values = row.values
            values[slot] = result
            remember(owner.entity.name ?? "", key)
            tables.rows[owner.entity.name ?? ""]![key] = StoreRow(objectID: owner, version: row.version, values: values)
            if !saved.contains(owner) { edited.append(owner) }
        }
        return edited
    }
}

/// The rows a predicate walks: one copy of the tables, shared by every proxy of one fetch.
final class EvaluationContext {
    let tables: InMemoryStore.Tables
    init(tables: InMemoryStore.Tables) { self.tables = tables }

    func proxy(for objectID: NSManagedObjectID) -> RowProxy? {
        guard let pk = objectID.primaryKey,
              let row = tables.rows[objectID.entity.name ?? ""]?[pk] else { return nil }
        return RowProxy(row: row, context: self)
    }
}

/// A row as the predicate evaluator sees it: attributes by key, relationships as the rows they point to.
final class RowProxy: NSObject, PredicateKeyValueCoding, StoreObjectReference {
    let row: StoreRow
    let context: EvaluationContext

    init(row: StoreRow, context: EvaluationContext) {
        self.row = row
        self.context = context
    }

    var referencedObjectID: NSManagedObjectID { row.objectID }

    func predicateValue(forKey key: String) throws -> Any? {
        let layout = row.layout
        guard let slot = layout.slot(named: key) else {
            if key == "self" { return self }
            if key == "objectID" { return row.objectID }
            throw PredicateEvaluationError.unknownKey(key, in: self)
        }
        let value = row.values[slot]
        guard let relationship = layout.properties[slot] as? NSRelationshipDescription else { return value }
        if relationship.isToMany {
            let ids = value as? [NSManagedObjectID] ?? []
            let proxies = ids.compactMap { context.proxy(for: $0) }
            if relationship.isOrdered { return proxies }
            return Set(proxies.map { AnyHashable($0) })
        }
        guard let destination = value as? NSManagedObjectID else { return nil }
        return context.proxy(for: destination)
    }

    override func isEqual(_ object: Any?) -> Bool {
        if let other = object as? StoreObjectReference { return other.referencedObjectID == row.objectID }
        if let other = object as? NSManagedObjectID { return other == row.objectID }
        return false
    }

    override var hash: Int { row.objectID.hash }

    override var description: String { "<row \(row.objectID)>" }
}
