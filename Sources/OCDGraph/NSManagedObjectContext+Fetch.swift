import Foundation
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSSortDescriptor

extension NSManagedObjectID: NSFetchRequestResult {}

extension NSManagedObjectContext {
    /// `fetch(_:)`'s work (the entry point is in the class, where a subclass can override it).
    func fetchResults<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        assertQueue()
        let entity = resolveEntity(of: request)
        return try reportingEvaluationFailures {
            switch request.resultType {
            case .dictionaryResultType:
                return results(try dictionaryResults(request, entity: entity), as: T.self, entity: entity)
            case .countResultType:
                return [cast(NSNumber(value: try count(for: request)), to: T.self, entity: entity)]
            case .managedObjectIDResultType:
                return results(try fetchObjectIDs(request, entity: entity), as: T.self, entity: entity)
            default:
                return results(try fetchObjects(request, entity: entity), as: T.self, entity: entity)
            }
        }
    }

    /// A predicate or sort that fails while evaluated in memory (the in-memory store, the context's
    /// unsaved objects, a merge of several stores' rows) fails the fetch with `NSCoreDataError` (134060),
    /// the evaluation's reason as its description and the `PredicateEvaluationError` underneath, as the
    /// SQLite store reports what it cannot translate; Apple's stores raise the exception instead.
    private func reportingEvaluationFailures<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let failure as PredicateEvaluationError {
            throw coreDataError(NSCoreDataError, [
                NSLocalizedDescriptionKey: failure.message,
                NSUnderlyingErrorKey: failure,
                "NSExceptionName": failure.code == .unknownKey ? "NSUnknownKeyException" : "NSInvalidArgumentException",
            ])
        }
    }

    /// `values` as the request's result type. The array itself when `T` is its element type, or a class
    /// every element is an instance of exactly: a cast per element would box each into an `Any` and run
    /// a dynamic cast, about half of fetching object IDs. An array of class references has one
    /// representation whatever its element class, which Swift's own array casts rely on too.
    private func results<T, Element: AnyObject>(_ values: [Element], as type: T.Type, entity: NSEntityDescription) -> [T] {
        if T.self == Element.self { return unsafeBitCast(values, to: [T].self) }
        if let target = T.self as? AnyClass,
           values.allSatisfy({ ObjectIdentifier(Swift.type(of: $0)) == ObjectIdentifier(target) }) {
            return unsafeBitCast(values, to: [T].self)
        }
        return values.map { cast($0, to: T.self, entity: entity) }
    }

    /// `count(for:)`'s work (the entry point is in the class).
    func countResults<T>(for request: NSFetchRequest<T>) throws -> Int {
        assertQueue()
        let entity = resolveEntity(of: request)
        return try reportingEvaluationFailures {
            if request.resultType == .dictionaryResultType { return try dictionaryResults(request, entity: entity).count }
            if request.includesPendingChanges { processPendingChanges() }
            if !request.includesPendingChanges || !hasPendingChanges(for: entity, request.includesSubentities) {
                return try persistentStoreCoordinator?.countRows(plan(for: request, entity: entity, pushLimits: true)) ?? 0
            }
            return try fetchObjectIDs(request, entity: entity).count
        }
    }

    private func cast<T>(_ value: Any, to type: T.Type, entity: NSEntityDescription) -> T {
        if let result = value as? T { return result }
        fatalError("fetch(_:): a result of the entity \(entity.name ?? "?") is a \(Swift.type(of: value)), not the request's result type \(T.self). Set the entity's managedObjectClassName to the class (or register it with NSManagedObjectModel.registerManagedObjectClass(_:forName:)), or fetch NSManagedObject.")
    }

    private func resolveEntity<T>(of request: NSFetchRequest<T>) -> NSEntityDescription {
        guard let coordinator = persistentStoreCoordinator else {
            fatalError("fetch(_:): the context has no persistent store coordinator.")
        }
        if let entity = request.entity {
            guard let own = coordinator.managedObjectModel.entitiesByName[entity.name ?? ""] else {
                fatalError("fetch(_:): the entity \(entity.name ?? "?") is not in this context's model.")
            }
            return own
        }
        guard let name = request.entityName else {
            fatalError("executeFetchRequest:error: A fetch request must have an entity.")
        }
        guard let entity = coordinator.managedObjectModel.entitiesByName[name] else {
            fatalError("executeFetchRequest:error: could not locate an entity named '\(name)' in this model.")
        }
        // As Core Data resolves a request made by name against the context it runs in: `entity` is the
        // model's entity from then on. A model's own template is left alone (it cannot change).
        if request.isResolvableByName { request.entity = entity }
        return entity
    }

    private func plan<T>(for request: NSFetchRequest<T>, entity: NSEntityDescription, pushLimits: Bool) -> StoreFetchPlan {
        var plan = StoreFetchPlan(entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate,
                                  sortDescriptors: pushLimits ? request.sortDescriptors ?? [] : [],
                                  fetchLimit: pushLimits ? request.fetchLimit : 0, fetchOffset: pushLimits ? request.fetchOffset : 0)
        plan.affectedStores = request.affectedStores
        return plan
    }

    /// Whether an unsaved object belongs to one of `stores` (nil: every store), by ``targetStore(of:_:)``.
    private func belongs(_ object: NSManagedObject, to stores: [NSPersistentStore]?, _ coordinator: NSPersistentStoreCoordinator) -> Bool {
        guard let stores else { return true }
        return targetStore(of: object, coordinator).map { store in stores.contains { $0 === store } } ?? false
    }

    private func matchesEntity(_ object: NSManagedObject, _ entity: NSEntityDescription, _ includesSubentities: Bool) -> Bool {
        includesSubentities ? object.entity.isKindOf(entity: entity) : object.entity === entity
    }

    private func hasPendingChanges(for entity: NSEntityDescription, _ includesSubentities: Bool) -> Bool {
        for set in [inserted, updated, deleted] {
            if set.values.contains(where: { matchesEntity($0, entity, includesSubentities) }) { return true }
        }
        return false
    }

    private func fetchObjects<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> [NSManagedObject] {
        guard let coordinator = persistentStoreCoordinator else { return [] }
        if request.includesPendingChanges { processPendingChanges() }
        let pending = request.includesPendingChanges && hasPendingChanges(for: entity, request.includesSubentities)
        var objects: [NSManagedObject]
        // Refreshing refetched objects needs their rows now, so it does without batch faulting.
        let refreshes = request.shouldRefreshRefetchedObjects && request.includesPropertyValues
        // With a staleness interval of 0 no row read before a fault fires may fill it (Apple: no staleness
        // is acceptable): the faults read theirs, a batch per query, when they fire.
        if !pending && !refreshes && (request.fetchBatchSize > 0 || !request.includesPropertyValues || stalenessInterval == 0)
            && request.returnsObjectsAsFaults {
            // Batch faulting: IDs now, rows when a fault of a batch fires (one query per batch).
            let ids = try coordinator.executeFetchObjectIDs(plan(for: request, entity: entity, pushLimits: true))
            objects = faults(for: ids, batchSize: request.fetchBatchSize > 0 ? request.fetchBatchSize : FaultBatch.defaultSize, refetched: true)
        } else {
            var plan = plan(for: request, entity: entity, pushLimits: !pending)
            if !request.includesPropertyValues {
                // No row will be used: the objects become faults that read their rows when fired.
                plan.needsValues = { _ in false }
            } else if !registry.isEmpty && !refreshes {
                // A realized object keeps its values: its row need not be decoded.
                plan.needsValues = { [registry] id in registry[id]?.isFault ?? true }
            }
            let rows = try coordinator.executeFetch(plan)
            // Read once per fetch, not per row: the request's settings (class properties, each read with
            // the runtime's exclusivity check) and the class of each entity met (a lock per look).
            var materializing = Materializing(includesValues: request.includesPropertyValues,
                                              refreshesRefetched: request.shouldRefreshRefetchedObjects)
            objects = rows.map { materialize($0, &materializing) }
        }
        if pending {
            let predicate = request.predicate
            func matches(_ object: NSManagedObject) throws -> Bool {
                try predicate?.evaluateThrowing(with: object) ?? true
            }
            var seen = Set<ObjectIdentifier>()
            var merged: [NSManagedObject] = []
            for object in objects where !object.isDeleted {
                if object.isUpdated, try !matches(object) { continue }
                if seen.insert(ObjectIdentifier(object)).inserted { merged.append(object) }
            }
            let affected = request.affectedStores
            for object in Array(updated.values) + Array(inserted.values)
            where matchesEntity(object, entity, request.includesSubentities) && !object.isDeleted && !seen.contains(ObjectIdentifier(object))
                && belongs(object, to: affected, coordinator) {
                if try matches(object) {
                    seen.insert(ObjectIdentifier(object))
                    merged.append(object)
                }
            }
            if let sorts = request.sortDescriptors, !sorts.isEmpty {
                merged = try merged.sortedThrowing(using: sorts)
            }
            if request.fetchOffset > 0 { merged = Array(merged.dropFirst(request.fetchOffset)) }
            if request.fetchLimit > 0 { merged = Array(merged.prefix(request.fetchLimit)) }
            objects = merged
        } else if request.includesPendingChanges {
            objects.removeAll { $0.isDeleted }
        }
        if !request.returnsObjectsAsFaults { for object in objects { object.fireFault() } }
        if let paths = request.relationshipKeyPathsForPrefetching { prefetch(paths, of: objects) }
        return objects
    }

    private func fetchObjectIDs<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> [NSManagedObjectID] {
        guard let coordinator = persistentStoreCoordinator else { return [] }
        if request.includesPendingChanges { processPendingChanges() }
        if request.includesPendingChanges && hasPendingChanges(for: entity, request.includesSubentities) {
            return try fetchObjects(request, entity: entity).map(\.objectID)
        }
        return try coordinator.executeFetchObjectIDs(plan(for: request, entity: entity, pushLimits: true))
    }

    /// The registered object for a fetched row, or a new fault holding the row (so that firing it needs no
    /// store trip). A realized object keeps its values, unless the request `shouldRefreshRefetchedObjects`:
    /// then it takes the row as `refresh(_:mergeChanges: true)` takes the store's, its unsaved changes
    /// applied again on top.
    private func materialize(_ row: StoreRow, _ materializing: inout Materializing) -> NSManagedObject {
        let usable = materializing.includesValues && row.hasValues
        if let object = registry[row.objectID] {
            if object.isFault {
                // A fault takes the newest row it is offered.
                if usable && row.version > (object.knownRowVersion ?? -1) { object.setRow(row) }
            } else if usable && materializing.refreshesRefetched {
                refresh(object, mergeChanges: true, fetched: row)
            }
            return object
        }
        // A row without values (its object was realized when the store asked, and is gone since) makes a
        // fault that reads its row when fired.
        let entity = row.objectID.entity
        let classAndFlags: (NSManagedObject.Type, NSManagedObject.Status)
        if let last = materializing.lastClass, last.entity === entity {
            classAndFlags = last.classAndFlags
        } else {
            classAndFlags = NSManagedObject.faultClassAndFlags(of: entity)
            materializing.lastClass = (entity, classAndFlags)
        }
        let object = NSManagedObject.makeFault(for: row.objectID, row: usable ? row : nil, in: self, classAndFlags: classAndFlags)
        registry[row.objectID] = object
        return object
    }

    /// What `materialize` reads once per fetch.
    private struct Materializing {
        let includesValues: Bool
        let refreshesRefetched: Bool
        /// The entity of the last fault made, and its class with its key table's flags.
        var lastClass: (entity: NSEntityDescription, classAndFlags: (NSManagedObject.Type, NSManagedObject.Status))?
    }

    /// Loads the relationships on `paths` (dotted), so that walking them later needs no store trip: per
    /// step, one query for the rows of the objects reached and one per to-many relationship for their
    /// destinations, however many objects there are.
    private func prefetch(_ paths: [String], of objects: [NSManagedObject]) {
        for path in paths {
            var level = objects
            for key in path.split(separator: ".").map(String.init) {
                fillRows(of: level)
                var groups: [ObjectIdentifier: (NSRelationshipDescription, [NSManagedObject])] = [:]
                for object in level {
                    guard let slot = object.layout.slot(named: key),
                          let relationship = object.layout.properties[slot] as? NSRelationshipDescription else { continue }
                    object.fireFault()
                    groups[ObjectIdentifier(relationship), default: (relationship, [])].1.append(object)
                }
                var next: [NSManagedObject] = []
                // Each object once: a path back through a to-many (`department.employees`) reaches the
                // same objects from many, and the next step would multiply them.
                var reached = Set<ObjectIdentifier>()
                func reach(_ object: NSManagedObject) {
                    if reached.insert(ObjectIdentifier(object)).inserted { next.append(object) }
                }
                for (relationship, members) in groups.values {
                    if relationship.isToMany {
                        let unloaded = members.filter { !$0.objectID.isTemporaryID && !$0.isToManyLoaded(relationship.name) }
                        let destinations = unloaded.isEmpty ? [:] : persistentStoreCoordinator?.objectIDs(forRelationship: relationship, of: unloaded.map(\.objectID)) ?? [:]
                        for member in unloaded {
                            member.loadToMany(relationship.name, faults(for: destinations[member.objectID] ?? [], batched: false))
                        }
                        for member in members {
                            if let slot = member.layout.slot(named: relationship.name) { member.toMany(slot).objects.forEach(reach) }
                        }
                    } else {
                        for member in members {
                            if let slot = member.layout.slot(named: relationship.name), let destination = member.slots[slot] as? NSManagedObject {
                                reach(destination)
                            }
                        }
                    }
                }
                // Prefetched objects are realized, as Core Data's are: their rows are at hand.
                fillRows(of: next)
                for object in next { object.fireFault() }
                level = next
            }
        }
    }

    /// Gives the faults among `objects` their rows, in one query.
    private func fillRows(of objects: [NSManagedObject]) {
        let wanted = objects.filter { $0.isFault && $0.rowValues == nil && !$0.objectID.isTemporaryID }
        guard !wanted.isEmpty, let coordinator = persistentStoreCoordinator else { return }
        for row in coordinator.rows(for: wanted.map(\.objectID)) {
            guard let object = registry[row.objectID], object.isFault, object.rowValues == nil else { continue }
            object.setRow(row)
            object.faultBatch = nil
        }
    }

    // MARK: Dictionary results

    /// The store's rows as `NSDictionary`s built from objects directly: bridging a `[String: Any]` per row
    /// cost twice as much (issue 6's `fetch_dictionaries`). The class stays exactly `NSDictionary`, because
    /// swift-corelibs-foundation bridges a subclass to an empty `[String: Any]`.
    static func dictionaries(_ results: StoreDictionaryRows) -> [NSDictionary] {
        let keys: [NSObject] = results.keys.map { NSString(string: $0) }
        var rowKeys: [NSObject] = [], rowValues: [AnyObject] = []
        rowKeys.reserveCapacity(keys.count)
        rowValues.reserveCapacity(keys.count)
        return results.rows.map { row in
            rowKeys.removeAll(keepingCapacity: true)
            rowValues.removeAll(keepingCapacity: true)
            for (position, value) in row.enumerated() {
                guard let value else { continue }
                rowKeys.append(keys[position])
                // Values are mostly objects already (NSNumber, NSString, NSData): `as? NSObject` takes them
                // as they are, where `as AnyObject` goes through the general bridging path at three times the cost.
                rowValues.append((value as? NSObject) ?? (value as AnyObject))
            }
            // A key fetched twice keeps its last value, as NSDictionary's initializer does.
            return rowValues.withUnsafeBufferPointer { values in
                rowKeys.withUnsafeBufferPointer { keys in
                    NSDictionary(objects: values.baseAddress, forKeys: keys.baseAddress, count: values.count)
                }
            }
        }
    }

    /// Dictionary results, from the stores' rows only: `propertiesToFetch` (attributes, relationships as
    /// object IDs, expression descriptions), grouping with aggregate expressions, `havingPredicate`,
    /// distinct results, sorting, offset and limit.
    private func dictionaryResults<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> [NSDictionary] {
        guard let coordinator = persistentStoreCoordinator else { return [] }
        let grouping = request.propertiesToGroupBy ?? []
        try Self.checkGrouping(request, grouping: grouping, entity: entity)
        // A store that computes dictionary results itself (the SQLite store, in one SQL statement) answers.
        let storeRequest = StoreDictionaryRequest(plan: plan(for: request, entity: entity, pushLimits: true),
                                                  propertiesToFetch: request.propertiesToFetch, propertiesToGroupBy: grouping,
                                                  havingPredicate: request.havingPredicate, returnsDistinctResults: request.returnsDistinctResults)
        if let results = try coordinator.executeDictionaryFetch(storeRequest) {
            return Self.dictionaries(results)
        }
        let columns = try (request.propertiesToFetch ?? EntityLayout.of(entity).attributes.map { $0.attribute as Any }).map(DictionaryColumn.init)
        let groupColumns = try grouping.map(DictionaryColumn.init)
        let hasAggregate = columns.contains { $0.isAggregate }
        // Columns whose value is not the row's own key of that name (an expression named `salary` that
        // sums salaries): a sort or a having predicate naming one takes the result's value, as SQL's ORDER
        // BY and HAVING do; other keys (a grouped property not fetched, a key path) come from the row.
        let computed = Set(columns.filter { $0.expression.expressionType != .keyPath || $0.expression.keyPath != $0.name }.map(\.name))
        // A sort by a computed column is the results', which the store's rows do not hold.
        let sortsByComputed = (request.sortDescriptors ?? []).contains { sort in
            sort.key.map { computed.contains(String($0.prefix { $0 != "." })) } ?? false
        }
        let pushDown = grouping.isEmpty && !hasAggregate && !request.returnsDistinctResults && !sortsByComputed
        let rows = try coordinator.executeFetch(plan(for: request, entity: entity, pushLimits: pushDown))
        let readers = rows.map { RowReader(row: $0, context: self) }

        // Each result with a row it was made from: a sort may name a key the result does not hold (a
        // grouped property not fetched, a key path), as SQL's ORDER BY may.
        var results: [[String: Any]] = []
        var representatives: [RowReader?] = []
        if !grouping.isEmpty || hasAggregate {
            var groups: [[AnyHashable]: [RowReader]] = [:]
            var order: [[AnyHashable]] = []
            for reader in readers {
                let key = try groupColumns.map { try AnyHashable(DictionaryValue.hashable($0.value(for: reader, typed: false))) }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(reader)
            }
            if grouping.isEmpty && order.isEmpty { order = [[]]; groups[[]] = [] }
            for key in order {
                let members = groups[key]!
                var result: [String: Any] = [:]
                for column in columns {
                    let value = column.isAggregate ? try column.aggregate(over: members) : try members.first.flatMap { try column.value(for: $0) }
                    if let value, !isNSNull(value) { result[column.name] = value }
                }
                if let having = request.havingPredicate,
                   try !having.evaluateThrowing(with: SortableResult(result: NSDictionary(dictionary: result), representative: members.first, computed: computed)) { continue }
                results.append(result)
                representatives.append(members.first)
            }
        } else {
            for reader in readers {
                var result: [String: Any] = [:]
                for column in columns {
                    if let value = try column.value(for: reader), !isNSNull(value) { result[column.name] = value }
                }
                results.append(result)
                representatives.append(reader)
            }
        }
        var dictionaries = results.map { NSDictionary(dictionary: $0) }
        if request.returnsDistinctResults {
            var unique: [NSDictionary] = []
            var kept: [RowReader?] = []
            // By a key of each result's values in column order: no comparison of every pair.
            var seen = Set<[AnyHashable]>()
            for (index, dictionary) in dictionaries.enumerated() {
                let key = columns.map { DictionaryValue.hashable(results[index][$0.name]) }
                guard seen.insert(key).inserted else { continue }
                unique.append(dictionary)
                kept.append(representatives[index])
            }
            dictionaries = unique
            representatives = kept
        }
        if !pushDown {
            if let sorts = request.sortDescriptors, !sorts.isEmpty {
                let sortable = zip(dictionaries, representatives).map { SortableResult(result: $0, representative: $1, computed: computed) }
                dictionaries = try sortable.sortedThrowing(using: sorts).map(\.result)
            }
            if request.fetchOffset > 0 { dictionaries = Array(dictionaries.dropFirst(request.fetchOffset)) }
            if request.fetchLimit > 0 { dictionaries = Array(dictionaries.prefix(request.fetchLimit)) }
        }
        return dictionaries
    }
}

/// A dictionary result as a sort or a having predicate reads it: its own keys, else the key on a row it
/// was made from.
private final class SortableResult: NSObject, PredicateKeyValueCoding {
    let result: NSDictionary
    let representative: RowReader?
    /// The names of the result's computed columns (expressions), which come from the result.
    let computed: Set<String>
    init(result: NSDictionary, representative: RowReader?, computed: Set<String>) {
        self.result = result
        self.representative = representative
        self.computed = computed
    }
    func predicateValue(forKey key: String) throws -> Any? {
        // A key of the row (a fetched or grouped property, the start of a key path) from the row, where a
        // relationship is the row it points to rather than the result's object ID.
        if computed.contains(key) { return result[key] }
        guard let representative else { return result[key] }
        return try representative.predicateValue(forKey: key)
    }
}

/// One column of a dictionary result.
extension NSManagedObjectContext {
    /// Apple's rules for grouped dictionary fetches, checked before any store runs one, so that both stores
    /// refuse alike what SQL would refuse or answer with an arbitrary row's value: a `havingPredicate`
    /// needs `propertiesToGroupBy` ("Specifying a havingPredicate requires that propertiesToGroupBy also be
    /// specified"), and with grouping each fetched property must be grouped or aggregated.
    fileprivate static func checkGrouping<T>(_ request: NSFetchRequest<T>, grouping: [Any], entity: NSEntityDescription) throws {
        func refuse(_ reason: String) -> NSError {
            coreDataError(NSCoreDataError, [NSLocalizedDescriptionKey: reason, "NSExceptionName": "NSInvalidArgumentException"])
        }
        if request.havingPredicate != nil && grouping.isEmpty {
            throw refuse("A fetch request with a havingPredicate must also specify propertiesToGroupBy.")
        }
        guard !grouping.isEmpty else { return }
        let grouped = Set(try grouping.map(DictionaryColumn.init).map { $0.expression.expressionType == .keyPath ? $0.expression.keyPath : $0.name })
        let fetched = try (request.propertiesToFetch ?? EntityLayout.of(entity).attributes.map { $0.attribute as Any }).map(DictionaryColumn.init)
        for column in fetched where column.expression.expressionType == .keyPath && !grouped.contains(column.expression.keyPath) {
            throw refuse("SELECT clauses in queries with GROUP BY components can only contain properties named in the GROUP BY or aggregate functions (\(column.name) is neither).")
        }
    }
}

struct DictionaryColumn {
    let name: String
    let expression: NSExpression
    let isAggregate: Bool
    /// An expression description's `expressionResultType` (nil for undefined or a property), which the
    /// value is read as, as the SQLite store reads its column.
    var resultType: NSAttributeType?

    static let aggregateFunctions: Set<String> = ["sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:"]

    init(_ property: Any) throws {
        switch property {
        case let name as String:
            self.name = name
            expression = NSExpression(forKeyPath: name)
            isAggregate = false
        case let description as NSExpressionDescription:
            guard let expression = description.expression else {
                throw coreDataError(NSCoreDataError, [NSLocalizedDescriptionKey: "The expression description \(description.name) has no expression."])
            }
            name = description.name
            self.expression = expression
            isAggregate = expression.expressionType == .function && Self.aggregateFunctions.contains(expression.function)
            resultType = description.expressionResultType == .undefinedAttributeType ? nil : description.expressionResultType
        case let description as NSPropertyDescription:
            name = description.name
            expression = NSExpression(forKeyPath: description.name)
            isAggregate = false
        default:
            throw coreDataError(NSCoreDataError, [NSLocalizedDescriptionKey: "propertiesToFetch holds \(property), which is not a property name or description."])
        }
    }

    /// The column's value for one row, as its result type says (`typed: false`: as computed, which is
    /// what grouping compares, as SQL groups the column before reading it).
    func value(for reader: RowReader, typed applyingType: Bool = true) throws -> Any? {
        // propertiesToFetch holds attributes, to-one relationships and expressions (Apple's documentation);
        // a key path through a to-many is an error, as in the SQLite store, not a set of internal row
        // readers or of values (whose bridging Linux Foundation may not survive: a set of decimals).
        if isToManyKeyPath(reader) {
            throw coreDataError(NSCoreDataError, [NSLocalizedDescriptionKey: "to-many key not allowed here: propertiesToFetch holds '\(name)', a to-many relationship"])
        }
        let value = try expression.expressionValueThrowing(with: reader)
        // A to-many reached where the model walk could not see it (a relationship only a sub-entity has).
        if let set = value as? Set<AnyHashable>, set.contains(where: { $0.base is RowReader }) {
            throw coreDataError(NSCoreDataError, [NSLocalizedDescriptionKey: "to-many key not allowed here: propertiesToFetch holds '\(name)', a to-many relationship"])
        }
        let result = value.map(RowReader.publicValue)
        return applyingType ? result.map(typed) : result
    }

    /// `value` as `resultType` says, as the SQLite store reads a column of that type: a number (or a
    /// numeric string) made an integer (truncated, clamped to `Int64`), a double, a float, a decimal or
    /// a Boolean (truncated, then non-zero), a date from seconds since 2001, a string from a number; as it
    /// is otherwise.
    func typed(_ value: Any) -> Any {
        guard let resultType, !(value is NSNull) else { return value }
        let number: NSNumber? = (value as? NSNumber) ?? ManagedValueCoercion.number(from: value)
            ?? (value as? String).flatMap { text in Int64(text).map { NSNumber(value: $0) } ?? Double(text).map { NSNumber(value: $0) } }
        /// The number as an integer, as SQLite's conversion of a REAL makes one.
        func integer(_ number: NSNumber) -> Int64 {
            let type = number.objCType.pointee
            guard type == 0x64 || type == 0x66 else { return number.int64Value }  // "d", "f"
            let double = number.doubleValue
            if double.isNaN { return 0 }
            if double >= 9.2e18 { return .max }
            if double <= -9.2e18 { return .min }
            return Int64(double)
        }
        switch resultType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            if let number { return NSNumber(value: integer(number)) }
        case .doubleAttributeType:
            if let number { return NSNumber(value: number.doubleValue) }
        case .floatAttributeType:
            if let number { return NSNumber(value: number.floatValue) }
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return decimal }
            if let number { return number.finiteDecimalValue }
        case .booleanAttributeType:
            if let number { return NSNumber(value: integer(number) != 0) }
        case .dateAttributeType:
            // Not a number of seconds (NaN, an infinity): no value, as the stores read such a column (NSNull,
            // which results leave out: a nil here would be an `Any` holding an empty optional).
            if let number { return number.doubleValue.isFinite ? Date(timeIntervalSinceReferenceDate: number.doubleValue) : NSNull() }
        case .stringAttributeType:
            if value is String { return value }
            if let number { return number.stringValue }
        default:
            break
        }
        return value
    }

    /// Whether the column is a key path that goes through a to-many relationship (`employees`,
    /// `employees.salary`), answered once per entity of the rows read.
    private func isToManyKeyPath(_ reader: RowReader) -> Bool {
        guard expression.expressionType == .keyPath else { return false }
        let rowEntity = reader.row.layout.entity
        if let known = toManyMemo.answers[ObjectIdentifier(rowEntity)] { return known }
        var entity: NSEntityDescription? = rowEntity
        var answer = false
        let components = expression.keyPath.split(separator: ".")
        for (index, component) in components.enumerated() {
            guard let relationship = entity?.propertiesByName[String(component)] as? NSRelationshipDescription else { break }
            if relationship.isToMany {
                // `employees.@count`, `employees.@sum.salary`: an aggregate of the members, one value.
                answer = !(index + 1 < components.count && components[index + 1].hasPrefix("@"))
                break
            }
            entity = relationship.destinationEntity
        }
        toManyMemo.answers[ObjectIdentifier(rowEntity)] = answer
        return answer
    }

    /// ``isToManyKeyPath(_:)``'s answers by entity, shared by the column's copies.
    private final class ToManyMemo {
        var answers: [ObjectIdentifier: Bool] = [:]
    }
    private let toManyMemo = ToManyMemo()

    func aggregate(over members: [RowReader]) throws -> Any? {
        let argument = expression.arguments?.first ?? NSExpression(forConstantValue: nil)
        let values: [Any] = try members.map { try argument.expressionValueThrowing(with: $0).map(RowReader.publicValue) ?? NSNull() }
        let present = values.filter { !($0 is NSNull) }
        if expression.function == "count:" { return typed(NSNumber(value: present.count)) }
        // Over no value, SQL's SUM, AVG, MIN and MAX are NULL, and the SQLite store's result leaves the
        // key out: the same here (the expression functions would answer 0 for a sum).
        if present.isEmpty { return nil }
        return try NSExpression(forFunction: expression.function, arguments: [NSExpression(forConstantValue: present)])
            .expressionValueThrowing(with: nil).map(typed)
    }
}

enum DictionaryValue {
    /// A result value as a grouping or distinct key: as a uniqueness constraint compares values (a
    /// composite's dictionary by its elements; no value as one stable key, not `NSNull()`'s hash, which
    /// is by address in swift-corelibs-foundation).
    static func hashable(_ value: Any?) -> AnyHashable {
        StoreSaveRequest.hashable(value ?? NSNull())
    }
}

/// A stored row as key-value coding sees it, for dictionary results: attributes by key, relationships as
/// the rows they point to (their object ID in the result).
final class RowReader: NSObject, PredicateKeyValueCoding, StoreObjectReference {
    let row: StoreRow
    unowned let context: NSManagedObjectContext

    init(row: StoreRow, context: NSManagedObjectContext) {
        self.row = row
        self.context = context
    }

    var referencedObjectID: NSManagedObjectID { row.objectID }

    static func publicValue(_ value: Any) -> Any {
        // Only a class instance can be a reader: casting a Swift collection to a class bridges it, and
        // Linux Foundation's bridging never finishes hashing a decimal number it holds.
        guard type(of: value) is AnyClass, let reader = value as? RowReader else { return value }
        return reader.row.objectID
    }

    func predicateValue(forKey key: String) throws -> Any? {
        guard let slot = row.layout.slot(named: key) else {
            if key == "objectID" || key == "self" { return row.objectID }
            throw PredicateEvaluationError.unknownKey(key, in: self)
        }
        guard let relationship = row.layout.properties[slot] as? NSRelationshipDescription else { return row.values[slot] }
        if relationship.isToMany {
            let ids = row.values[slot] as? [NSManagedObjectID] ?? context.storeObjectIDs(forRelationship: relationship, of: row.objectID)
            return Set(ids.compactMap { context.storeRow(for: $0).map { AnyHashable(RowReader(row: $0, context: context)) } })
        }
        guard let id = row.values[slot] as? NSManagedObjectID, let destination = context.storeRow(for: id) else { return nil }
        return RowReader(row: destination, context: context)
    }

    override func isEqual(_ object: Any?) -> Bool {
        (object as? StoreObjectReference)?.referencedObjectID == row.objectID
    }

    override var hash: Int { row.objectID.hash }
}

extension NSFetchRequest {
    /// Executes the request in the context whose `perform` block is running.
    public func execute() throws -> [ResultType] {
        guard let context = NSManagedObjectContext.current else {
            fatalError("NSFetchRequest.execute(): no context is performing on this thread. Call execute() inside a context's perform(_:) or performAndWait(_:) block.")
        }
        return try context.fetch(self)
    }
}
