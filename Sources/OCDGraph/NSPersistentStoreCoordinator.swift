import Foundation
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSSortDescriptor

/// Connects contexts to stores: it owns the model (frozen from now on) and the stores, routes each entity
/// to the store of its configuration, and serializes store access.
open class NSPersistentStoreCoordinator: NSObject, @unchecked Sendable {
    /// The model of every store the coordinator adds.
    public let managedObjectModel: NSManagedObjectModel
    /// A name for debugging.
    public var name: String?
    /// The stores added so far, in order.
    public var persistentStores: [NSPersistentStore] {
        lock.lock()
        defer { lock.unlock() }
        return stores
    }

    private var stores: [NSPersistentStore] = []
    private let lock = NSRecursiveLock()
    /// The coordinator's queue: `perform(_:)` blocks run on it one at a time, in the order submitted.
    private let queue = DispatchQueue(label: "OpenCoreData.NSPersistentStoreCoordinator")

    /// A coordinator for `model`. The model can no longer be edited afterwards.
    public init(managedObjectModel model: NSManagedObjectModel) {
        self.managedObjectModel = model
        model.markInUse()
        ModelsInUse.add(model)
        super.init()
    }

    // MARK: Store types

    /// Makes a store class available under `storeType` (nil removes it). A class that is not an
    /// `NSPersistentStore` subclass stops, as Apple raises.
    public class func registerStoreClass(_ storeClass: AnyClass?, forStoreType storeType: String) {
        if let storeClass, !(storeClass is NSPersistentStore.Type) {
            fatalError("registerStoreClass(_:forStoreType:): \(storeClass) is not a subclass of NSPersistentStore.")
        }
        PersistentStoreTypes.register(storeClass as? NSPersistentStore.Type, for: storeType)
    }

    /// The spelling of ``registerStoreClass(_:forStoreType:)`` earlier versions of this project had.
    @available(*, deprecated, renamed: "registerStoreClass(_:forStoreType:)")
    public class func registerStoreClass(_ storeClass: AnyClass?, type storeType: String) {
        registerStoreClass(storeClass, forStoreType: storeType)
    }

    /// Where `store` is: its URL (nil for a store without a file, such as an in-memory store; Apple's
    /// declaration is not optional, so the result is implicitly unwrapped).
    public func url(for store: NSPersistentStore) -> URL! {
        store.url
    }

    /// The registered store classes by type name (the built-in ones included).
    public class var registeredStoreTypes: [String: AnyClass] {
        PersistentStoreTypes.all.mapValues { $0 as AnyClass }
    }

    // MARK: Adding and removing stores

    /// Adds a store of `storeType` for the entities of `configuration` (all entities for nil). Throws
    /// `NSPersistentStoreInvalidTypeError` for an unknown type and the store's error when it cannot open.
    @discardableResult
    public func addPersistentStore(ofType storeType: String, configurationName configuration: String?,
                                   at storeURL: URL?, options: [AnyHashable: Any]? = nil) throws -> NSPersistentStore {
        guard let storeClass = PersistentStoreTypes.storeClass(for: storeType) else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, [
                NSLocalizedDescriptionKey: "Unsupported store type \"\(storeType)\". Registered types: \(PersistentStoreTypes.all.keys.sorted().joined(separator: ", ")).",
            ])
        }
        if let configuration, configuration != "PF_DEFAULT_CONFIGURATION_NAME",
           managedObjectModel.entities(forConfigurationName: configuration) == nil {
            throw coreDataError(NSCoreDataError, [
                NSLocalizedDescriptionKey: "The model has no configuration named \"\(configuration)\".",
            ])
        }
        try checkDerivations()
        let store = try addLocked(storeClass, configuration: configuration, at: storeURL, options: options, storeType: storeType)
        // Outside the lock: an observer that waits on another thread (the main queue) which is waiting
        // for the coordinator would wait forever.
        postStoresChange(.NSPersistentStoreCoordinatorStoresDidChange, added: [store])
        return store
    }

    private func addLocked(_ storeClass: NSPersistentStore.Type, configuration: String?, at storeURL: URL?,
                           options: [AnyHashable: Any]?, storeType: String) throws -> NSPersistentStore {
        lock.lock()
        defer { lock.unlock() }
        // By the file, not the URL's spelling: the same file added again through `.`, `..` or a symbolic
        // link would be two stores on one file.
        if let storeURL, storeType != NSInMemoryStoreType,
           stores.contains(where: { $0.url.map(Self.filePath) == Self.filePath(storeURL) }) {
            throw coreDataError(NSPersistentStoreOperationError, [
                NSLocalizedDescriptionKey: "Can't add the same store twice (\(storeURL.path)).",
            ])
        }
        // A copy of an added store's file is refused before it is opened, which would already apply its
        // options (pragmas, VACUUM) to it; a store whose file says nothing is checked once open, below.
        if let storeURL, !stores.isEmpty,
           let identifier = (try? storeClass.metadataForPersistentStore(with: storeURL))?[NSStoreUUIDKey] as? String,
           stores.contains(where: { $0.identifier == identifier }) {
            throw Self.sameStoreTwice(identifier, storeURL)
        }
        let store = storeClass.init(model: managedObjectModel, configurationName: configuration, at: storeURL, options: options)
        do {
            try store.loadMetadata()
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw error
        } catch {
            throw coreDataError(NSPersistentStoreOpenError, [NSLocalizedDescriptionKey: "\(error)", NSUnderlyingErrorKey: error])
        }
        // A copy of an added store's file has its identifier: the two stores' object IDs would be equal
        // for different rows (an ID is its store identifier, entity and key), and one store's object
        // would stand for the other's row.
        if let identifier = store.identifier, stores.contains(where: { $0.identifier == identifier }) {
            throw Self.sameStoreTwice(identifier, storeURL)
        }
        postStoresChange(.NSPersistentStoreCoordinatorStoresWillChange, added: [store])
        store.coordinatorReference = self
        stores.append(store)
        store.didAdd(to: self)
        return store
    }

    private static func sameStoreTwice(_ identifier: String, _ url: URL?) -> NSError {
        coreDataError(NSPersistentStoreOperationError, [
            NSLocalizedDescriptionKey: "Can't add the same store twice (a store with the identifier \(identifier) is already added; \(url?.path ?? "no URL")).",
        ])
    }

    /// Apple's StoresWillChange or StoresDidChange, about this coordinator, with the stores under
    /// `NSAddedPersistentStoresKey` and `NSRemovedPersistentStoresKey`.
    private func postStoresChange(_ name: Notification.Name, added: [NSPersistentStore] = [], removed: [NSPersistentStore] = []) {
        var userInfo: [AnyHashable: Any] = [:]
        if !added.isEmpty { userInfo[NSAddedPersistentStoresKey] = added }
        if !removed.isEmpty { userInfo[NSRemovedPersistentStoresKey] = removed }
        NotificationCenter.default.post(name: name, object: self, userInfo: userInfo)
    }

    /// Adds the store `description` describes and reports the outcome to `block` (synchronously unless
    /// the description asks for asynchronous adding).
    public func addPersistentStore(with description: NSPersistentStoreDescription,
                                   completionHandler block: @escaping (NSPersistentStoreDescription, Error?) -> Void) {
        let work = {
            do {
                _ = try self.addPersistentStore(ofType: description.type, configurationName: description.configuration,
                                                at: description.url, options: description.storeOptions)
                block(description, nil)
            } catch {
                block(description, error)
            }
        }
        if description.shouldAddStoreAsynchronously {
            nonisolated(unsafe) let work = work
            DispatchQueue.global().async { work() }
        } else {
            work()
        }
    }

    /// Removes `store`; its objects can no longer be fetched or saved.
    public func remove(_ store: NSPersistentStore) throws {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw coreDataError(NSPersistentStoreOperationError, [NSLocalizedDescriptionKey: "The store is not one of this coordinator's."])
        }
        // The notifications outside the lock (see addPersistentStore); the store is looked up again
        // under it, as an observer or another thread may have removed it meanwhile.
        NotificationCenter.default.post(name: .NSPersistentStoreCoordinatorWillRemoveStore, object: self)
        postStoresChange(.NSPersistentStoreCoordinatorStoresWillChange, removed: [store])
        lock.lock()
        if let index = stores.firstIndex(where: { $0 === store }) {
            store.willRemove(from: self)
            stores.remove(at: index)
            store.coordinatorReference = nil
        }
        lock.unlock()
        postStoresChange(.NSPersistentStoreCoordinatorStoresDidChange, removed: [store])
    }

    /// The store at `url`, if added.
    public func persistentStore(for url: URL) -> NSPersistentStore? {
        persistentStores.first { $0.url == url }
    }

    /// The store's metadata.
    public func metadata(for store: NSPersistentStore) -> [String: Any] {
        store.metadata ?? [:]
    }

    /// Replaces the store's metadata (saved with the store's next save).
    public func setMetadata(_ metadata: [String: Any]?, for store: NSPersistentStore) {
        store.metadata = metadata ?? [:]
    }

    /// The metadata of the store file at `url`, without adding it.
    public class func metadataForPersistentStore(ofType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        let storeClass = try Self.fileStoreClass(storeType)
        return try Self.asCoreDataError { try storeClass.metadataForPersistentStore(with: url) }
    }

    /// The store class registered for `storeType`, for the file-level class methods.
    private static func fileStoreClass(_ storeType: String) throws -> NSPersistentStore.Type {
        guard let storeClass = PersistentStoreTypes.storeClass(for: storeType) else {
            throw coreDataError(NSPersistentStoreInvalidTypeError, [NSLocalizedDescriptionKey: "Unsupported store type \"\(storeType)\"."])
        }
        return storeClass
    }

    /// `body`'s error as Core Data's: a store class's own error becomes `NSPersistentStoreOperationError`
    /// with it underneath, as the other coordinator methods report.
    private static func asCoreDataError<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw error
        } catch {
            throw coreDataError(NSPersistentStoreOperationError, [NSLocalizedDescriptionKey: "\(error)", NSUnderlyingErrorKey: error])
        }
    }

    /// Replaces the metadata of the store file at `url` without adding it.
    public class func setMetadata(_ metadata: [String: Any], forPersistentStoreOfType storeType: String, at url: URL,
                                  options: [AnyHashable: Any]? = nil) throws {
        let storeClass = try Self.fileStoreClass(storeType)
        try Self.asCoreDataError { try storeClass.setMetadata(metadata, forPersistentStoreAt: url) }
    }

    /// Deletes the store file at `url` and the files that go with it (for SQLite: its `-wal`, `-shm`
    /// and `-journal` files and its external data folder). A store of this coordinator at that file is
    /// removed from it first. Missing files are no error.
    public func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws {
        let storeClass = try Self.fileStoreClass(storeType)
        let path = Self.filePath(url)
        for store in persistentStores where store.url.map(Self.filePath) == path {
            try? remove(store)  // another thread may have removed it first
        }
        // Under the lock: no store of this coordinator opens the file while it goes.
        lock.lock()
        defer { lock.unlock() }
        try Self.asCoreDataError { try storeClass.destroyStore(at: url) }
    }

    /// The object ID an `x-coredata:` URI names, if its store is one of the coordinator's and it names an
    /// entity of the model.
    public func managedObjectID(forURIRepresentation url: URL) -> NSManagedObjectID? {
        // The parts as `uriRepresentation()` encodes them, decoded.
        guard url.scheme == "x-coredata", let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let host = components.percentEncodedHost?.removingPercentEncoding, !host.isEmpty else { return nil }
        let parts = components.percentEncodedPath.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        guard parts.count == 2, parts[1].hasPrefix("p"), let pk = Int64(parts[1].dropFirst()),
              let store = persistentStores.first(where: { $0.identifier == host }),
              let entity = managedObjectModel.entitiesByName[parts[0]] else { return nil }
        return store.objectID(for: entity, primaryKey: pk)
    }

    /// Runs `block` with the coordinator's stores to itself, asynchronously.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async {
            self.lock.lock()
            defer { self.lock.unlock() }
            block()
        }
    }

    /// Runs `block` with the coordinator's stores to itself, and waits.
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try block()
    }

    // MARK: For contexts

    /// The store new objects of `entity` go to: the first writable one whose configuration has the entity,
    /// as Apple's `assign(_:to:)` documents for a single writable store (a read-only one only when no
    /// other has the entity; saving to it then fails as read-only).
    func store(for entity: NSEntityDescription) throws -> NSPersistentStore {
        let name = entity.name
        // Two scans rather than a filtered array: a save with several stores asks for each new object.
        let holds = { (store: NSPersistentStore) in store.entities.contains { $0.name == name } }
        guard let store = persistentStores.first(where: { !$0.isReadOnly && holds($0) }) ?? persistentStores.first(where: holds) else {
            throw coreDataError(NSPersistentStoreSaveError, [
                NSLocalizedDescriptionKey: "No persistent store holds the entity \(name ?? "?") (the coordinator has \(persistentStores.count) store(s)).",
            ])
        }
        return store
    }

    /// New permanent IDs from `store` (an `assign(_:to:)` choice), else from the one `store(for:)` chooses.
    func newObjectIDs(for entity: NSEntityDescription, count: Int, in store: NSPersistentStore? = nil) throws -> [NSManagedObjectID] {
        lock.lock()
        defer { lock.unlock() }
        return try (store ?? self.store(for: entity)).newObjectIDs(for: entity, count: count)
    }

    func row(for objectID: NSManagedObjectID) -> StoreRow? {
        guard let store = objectID.persistentStore else { return nil }
        lock.lock()
        defer { lock.unlock() }
        do {
            return try store.row(for: objectID)
        } catch {
            // A store error is not a missing row: treating it as one would delete the object in memory.
            fatalError("CoreData could not fulfill a fault for '\(objectID)': \(error)")
        }
    }

    /// The rows of `objectIDs`, one query per store.
    func rows(for objectIDs: [NSManagedObjectID]) -> [StoreRow] {
        lock.lock()
        defer { lock.unlock() }
        var rows: [StoreRow] = []
        for (store, ids) in Self.byStore(objectIDs) {
            do {
                rows += try store.rows(for: ids)
            } catch {
                fatalError("CoreData could not fulfill faults for \(ids.count) objects of '\(store.url?.path ?? store.type)': \(error)")
            }
        }
        return rows
    }

    /// `objectIDs` by their store, in the order the stores first appear (IDs of no store are left out).
    /// Stores are few: a linear search, not a hash per ID.
    private static func byStore(_ objectIDs: [NSManagedObjectID]) -> [(store: NSPersistentStore, ids: [NSManagedObjectID])] {
        var groups: [(store: NSPersistentStore, ids: [NSManagedObjectID])] = []
        for id in objectIDs {
            guard let store = id.persistentStore else { continue }
            if let index = groups.firstIndex(where: { $0.store === store }) {
                groups[index].ids.append(id)
            } else {
                groups.append((store, [id]))
            }
        }
        return groups
    }

    /// The destinations of a to-many relationship for several objects, one query per store: each store
    /// answers for its own objects only (the objects of a fetch across stores come from several).
    func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectIDs: [NSManagedObjectID]) -> [NSManagedObjectID: [NSManagedObjectID]] {
        lock.lock()
        defer { lock.unlock() }
        var result: [NSManagedObjectID: [NSManagedObjectID]] = [:]
        for (store, ids) in Self.byStore(objectIDs) {
            do {
                let found = try store.objectIDs(forRelationship: relationship, of: ids)
                // One store (the usual case) hands its dictionary over as it is.
                if result.isEmpty { result = found } else { result.merge(found) { _, new in new } }
            } catch {
                fatalError("CoreData could not fulfill the relationship faults '\(relationship.name)' of \(ids.count) objects: \(error)")
            }
        }
        return result
    }

    func executeFetchObjectIDs(_ plan: StoreFetchPlan) throws -> [NSManagedObjectID] {
        lock.lock()
        defer { lock.unlock() }
        let holding = stores(holding: plan.entity, among: plan.affectedStores)
        if holding.count == 1 { return try holding[0].executeFetchObjectIDs(plan) }
        return try executeFetch(plan).map(\.objectID)
    }

    func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID) -> [NSManagedObjectID] {
        guard let store = objectID.persistentStore else { return [] }
        lock.lock()
        defer { lock.unlock() }
        do {
            return try store.objectIDs(forRelationship: relationship, of: objectID)
        } catch {
            fatalError("CoreData could not fulfill a relationship fault '\(relationship.name)' of '\(objectID)': \(error)")
        }
    }

    /// The stores whose configuration holds `entity`, of `affected` when the request names stores.
    private func stores(holding entity: NSEntityDescription, among affected: [NSPersistentStore]? = nil) -> [NSPersistentStore] {
        persistentStores.filter { store in
            store.entities.contains { $0.name == entity.name } && (affected.map { $0.contains { $0 === store } } ?? true)
        }
    }

    func executeFetch(_ plan: StoreFetchPlan) throws -> [StoreRow] {
        lock.lock()
        defer { lock.unlock() }
        let holding = stores(holding: plan.entity, among: plan.affectedStores)
        if holding.count <= 1 { return try holding.first?.executeFetch(plan) ?? [] }
        // Several stores: each answers without offset and limit, which apply to the merged result.
        var unlimited = plan
        unlimited.fetchLimit = 0
        unlimited.fetchOffset = 0
        unlimited.needsValues = nil
        var rows = try holding.flatMap { try $0.executeFetch(unlimited) }
        if !plan.sortDescriptors.isEmpty {
            // The merged rows hold attribute values and to-one IDs only: a sort through a relationship
            // (`department.name`, `employees.@count`, `department` itself) has nothing to order by here,
            // and would fail on an ID or order every row alike. Refused, as a store refuses what it
            // cannot translate.
            let relationships = plan.entity.relationshipsByName
            for sort in plan.sortDescriptors {
                guard let key = sort.key, let first = key.split(separator: ".").first.map(String.init) else { continue }
                if relationships[first] != nil || key.hasPrefix("@") {
                    throw coreDataError(134060, [
                        NSLocalizedDescriptionKey: "A fetch of \(plan.entity.name ?? "?") from \(holding.count) stores cannot sort by \(key): rows of several stores are ordered by their own attributes only.",
                    ])
                }
            }
            rows = try rows.map { SortableRow(row: $0) }.sortedThrowing(using: plan.sortDescriptors).map(\.row)
        }
        if plan.fetchOffset > 0 { rows = Array(rows.dropFirst(plan.fetchOffset)) }
        if plan.fetchLimit > 0 { rows = Array(rows.prefix(plan.fetchLimit)) }
        return rows
    }

    /// Dictionary results from the one store holding the entity, if it computes them; nil otherwise.
    func executeDictionaryFetch(_ request: StoreDictionaryRequest) throws -> StoreDictionaryRows? {
        lock.lock()
        defer { lock.unlock() }
        let holding = stores(holding: request.plan.entity, among: request.plan.affectedStores)
        guard holding.count == 1 else { return nil }
        return try holding[0].executeDictionaryFetch(request)
    }

    func countRows(_ plan: StoreFetchPlan) throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        let holding = stores(holding: plan.entity, among: plan.affectedStores)
        if holding.count <= 1 { return try holding.first?.countRows(plan) ?? 0 }
        return try executeFetch(plan).count
    }

    /// Runs one round of a context's save (new IDs, then `save(_:)`) under the coordinator's lock and in
    /// each store's save transaction, so that no other context's work runs between its steps. A store the
    /// round does not touch begins no transaction (SQLite's begins at the round's first statement).
    func performSaveTransaction<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        func nest(_ stores: ArraySlice<NSPersistentStore>) throws -> T {
            guard let store = stores.first else { return try body() }
            return try store.performSaveTransaction { try nest(stores.dropFirst()) }
        }
        return try nest(persistentStores[...])
    }

    /// With more than one store, begins the running save round in every store it will touch, in the
    /// order of their files' paths (``lockOrder(_:)``), before any of them does work: each store locks
    /// its file for the whole round, and two coordinators locking two files in opposite orders would wait
    /// on each other until one gave up. With one store the round begins at its first statement.
    func beginSaveRound(inserted: [NSManagedObject], changed: [NSManagedObject], assigned: [ObjectIdentifier: NSPersistentStore] = [:]) throws {
        lock.lock()
        defer { lock.unlock() }
        guard stores.count > 1 else { return }
        var touched = Set<ObjectIdentifier>()
        for object in inserted {
            if let store = object.objectID.persistentStore ?? assigned[ObjectIdentifier(object)] ?? (try? store(for: object.entity)) { touched.insert(ObjectIdentifier(store)) }
        }
        for object in changed {
            if let store = object.objectID.persistentStore { touched.insert(ObjectIdentifier(store)) }
        }
        guard touched.count > 1 else { return }
        for store in Self.lockOrder(stores.filter { touched.contains(ObjectIdentifier($0)) }) { try store.beginSaveRound() }
    }

    /// The order in which a save round locks `stores`: by the path of their files, symbolic links
    /// resolved, so that every coordinator and process locks the same files in the same order whatever
    /// order it added them in. Stores without a file lock nothing and come first.
    package static func lockOrder(_ stores: [NSPersistentStore]) -> [NSPersistentStore] {
        let keyed = stores.map { store in (store, store.url.map(filePath) ?? "") }
        return keyed.sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// The path of the file at `url`, however the URL spells it: standardized, symbolic links resolved.
    static func filePath(_ url: URL) -> String {
        url.standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Writes each store's changes, one store after the other in the order they were added, once every
    /// store has checked its part. When a store fails while writing, the stores written before it undo
    /// their writes as the round ends (``NSPersistentStore/performSaveTransaction(_:)``), so that no store
    /// keeps part of a failed save; only a failure of the last commit itself, after another store's
    /// commit, can leave one store saved and the other not (two files have no common commit).
    /// Each store's result, in the order of `requests` (an empty result for an empty request).
    func save(_ requests: [(NSPersistentStore, StoreSaveRequest)]) throws -> [StoreSaveResult] {
        lock.lock()
        defer { lock.unlock() }
        // Every store checks its part before any writes, so that a conflict in one changes none. In the
        // stores' order, so that two coordinators on the same files lock them in the same order.
        var order = requests.indices.filter { !requests[$0].1.isEmpty }
        if order.count > 1 {
            let position = Dictionary(uniqueKeysWithValues: stores.enumerated().map { (ObjectIdentifier($1), $0) })
            order.sort { (position[ObjectIdentifier(requests[$0].0)] ?? .max) < (position[ObjectIdentifier(requests[$1].0)] ?? .max) }
        }
        var requests = requests
        if order.count == 1 { requests[order[0]].1.isOnlyStoreOfSave = true }
        for index in order { try requests[index].0.checkSave(requests[index].1) }
        var results = [StoreSaveResult](repeating: StoreSaveResult(), count: requests.count)
        for index in order { results[index] = try requests[index].0.save(requests[index].1) }
        return results
    }
}

/// A row sorted by its attribute values (merging several stores' results).
private final class SortableRow: NSObject, PredicateKeyValueCoding {
    let row: StoreRow
    init(row: StoreRow) { self.row = row }
    func predicateValue(forKey key: String) throws -> Any? { row.value(named: key) }
}

extension NSPersistentStore {
    /// The coordinator the store was added to.
    public var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        coordinatorReference as? NSPersistentStoreCoordinator
    }
}
