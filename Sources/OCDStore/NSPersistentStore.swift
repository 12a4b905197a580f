import Foundation
import OCDModel
import Synchronization

/// The type name of the in-memory store.
public let NSInMemoryStoreType = "InMemory"
/// The type name of the SQLite store.
public let NSSQLiteStoreType = "SQLite"
/// The type name of the binary store (not available in OpenCoreData).
public let NSBinaryStoreType = "Binary"

/// Metadata key: the store's type name.
public let NSStoreTypeKey = "NSStoreType"
/// Metadata key: the store's UUID, which permanent object IDs carry.
public let NSStoreUUIDKey = "NSStoreUUID"
/// Metadata key: the version hashes of the model the store was written with, by entity name.
public let NSStoreModelVersionHashesKey = "NSStoreModelVersionHashes"
/// Metadata key: the model's version identifiers.
public let NSStoreModelVersionIdentifiersKey = "NSStoreModelVersionIdentifiers"
/// Metadata key: the version of the hashing scheme (3 on current Apple platforms).
public let NSStoreModelVersionHashesVersionKey = "NSStoreModelVersionHashesVersion"
/// Metadata key: the persistence framework's version.
public let NSPersistenceFrameworkVersionKey = "NSPersistenceFrameworkVersion"
/// Option key: open the store read-only.
public let NSReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// Option: seconds a store waits for its file when another connection has it locked (the SQLite store:
/// 5 without the option; a container's store description passes its `timeout`, 240 by default).
public let NSPersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"
/// Option keys Apple's stacks pass whether or not they need them, accepted so that such code builds and
/// its stores open. No store here migrates (a store of another model is refused with 134100 whatever
/// these say), keeps persistent history or posts remote-change notifications.
public let NSMigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// Accepted and not acted on: see ``NSMigratePersistentStoresAutomaticallyOption``.
public let NSInferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// Accepted and not acted on: see ``NSMigratePersistentStoresAutomaticallyOption``.
public let NSIgnorePersistentStoreVersioningOption = "NSIgnorePersistentStoreVersioningOption"
/// Accepted and not acted on: no store keeps persistent history yet.
public let NSPersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"
/// Accepted and not acted on: no store posts remote-change notifications yet.
public let NSPersistentStoreRemoteChangeNotificationPostOptionKey = "NSPersistentStoreRemoteChangeNotificationOptionKey"

extension NSPersistentStore {
    /// Store types under their Swift names (`NSPersistentStore.StoreType.sqlite`).
    public struct StoreType: RawRepresentable, Hashable, Sendable {
        /// The type's string, as `addPersistentStore(ofType:…)` takes it.
        public let rawValue: String
        /// The store type named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// `NSInMemoryStoreType`.
        public static let inMemory = StoreType(rawValue: NSInMemoryStoreType)
        /// `NSSQLiteStoreType`, Core Data's SQLite file format.
        public static let sqlite = StoreType(rawValue: NSSQLiteStoreType)
        /// `NSBinaryStoreType`: declared for source compatibility; no binary store is registered.
        public static let binary = StoreType(rawValue: NSBinaryStoreType)
    }
}

/// A store of managed objects' data. Concrete stores (`NSInMemoryStoreType`, `NSSQLiteStoreType`) subclass
/// it and override the store API below; a coordinator creates them from their registered type.
///
/// Difference from Apple: the initializer takes the model rather than the coordinator, because stores sit
/// below the object graph (Documentation/Architecture.md); `persistentStoreCoordinator` is still available
/// once the store is added.
open class NSPersistentStore: NSObject, @unchecked Sendable {
    /// The model the store serves (the coordinator's, frozen).
    public let model: NSManagedObjectModel
    /// The model configuration whose entities the store holds ("Default" for all of them).
    public let configurationName: String
    /// The store's file, nil for a store in memory.
    public private(set) var url: URL?
    /// The options the store was added with.
    public let options: [AnyHashable: Any]?
    /// The store's UUID (its metadata's `NSStoreUUID`).
    public var identifier: String! {
        get { metadata[NSStoreUUIDKey] as? String }
        set {
            // One locked change, so that two setters on two threads cannot lose one of their updates.
            // nil keeps the identifier, as setting `metadata` without one does.
            changeMetadata { metadata in if let newValue { metadata[NSStoreUUIDKey] = newValue } }
        }
    }
    /// The store's metadata: type, UUID, model version hashes and anything the application adds. Setting
    /// it keeps the store's type, UUID and model version keys when the new dictionary leaves them out:
    /// object IDs carry the UUID, and a file whose metadata lost its version hashes could not be opened
    /// again by any model.
    public var metadata: [String: Any]! {
        get { metadataLock.withLock { storedMetadata } }
        set {
            var updated = newValue ?? [:]
            changeMetadata { metadata in
                for key in Self.keptMetadataKeys where updated[key] == nil {
                    if let value = metadata[key] { updated[key] = value }
                }
                metadata = updated
            }
        }
    }

    /// The keys of what the store itself records in its metadata.
    package static let keptMetadataKeys = [
        NSStoreUUIDKey, NSStoreTypeKey, NSStoreModelVersionHashesKey, NSStoreModelVersionIdentifiersKey,
        NSStoreModelVersionHashesVersionKey, NSPersistenceFrameworkVersionKey,
        "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey", "OCDStoreFormat",
    ]
    /// The metadata and the count of its settings, together under one lock: a save on another thread reads
    /// both at once, so that it never records a newer count for older metadata. The count lets a store
    /// tell whether it has written the current metadata without comparing the dictionaries (bridged
    /// property-list values, version hashes as data), which cost more than the rest of a small save.
    private let metadataLock = NSLock()
    private var storedMetadata: [String: Any] = [:]
    /// Changed under `metadataLock` only; atomic so that a reader that only needs to notice a change
    /// (the object-ID cache) reads it without the lock.
    private let generation = Atomic<Int>(0)

    private func changeMetadata(_ change: (inout [String: Any]) -> Void) {
        metadataLock.withLock {
            change(&storedMetadata)
            generation.add(1, ordering: .releasing)
        }
    }

    /// How many times `metadata` was set.
    package var metadataGeneration: Int { generation.load(ordering: .acquiring) }

    /// The metadata with its `metadataGeneration`, read at once.
    package var metadataWithGeneration: (metadata: [String: Any], generation: Int) {
        metadataLock.withLock { (storedMetadata, generation.load(ordering: .relaxed)) }
    }

    /// Whether saves are refused.
    open var isReadOnly: Bool

    /// Set by the coordinator when it adds the store (the graph layer's `persistentStoreCoordinator`).
    package weak var coordinatorReference: AnyObject?

    /// Creates a store; `load` happens when the coordinator adds it (`loadMetadata()`).
    public required init(model: NSManagedObjectModel, configurationName: String?, at url: URL?, options: [AnyHashable: Any]?) {
        self.model = model
        self.configurationName = configurationName ?? "PF_DEFAULT_CONFIGURATION_NAME"
        self.url = url
        self.options = options
        self.isReadOnly = Self.flag(options?[NSReadOnlyPersistentStoreOption])
        super.init()
        backreference.attach(self)
    }

    /// An option's value read as Core Data reads it (`boolValue`): a `Bool`, any number (non-zero is
    /// true), or a string such as "YES" or "1". An `Int` given in Swift is not a `Bool` on Linux, and
    /// reading only `Bool`s opened a store asked to be read-only for writing.
    package static func flag(_ value: Any?) -> Bool {
        switch value {
        case let flag as Bool: return flag
        case let number as NSNumber: return number.boolValue
        case let text as String: return NSString(string: text).boolValue
        default: return false
        }
    }

    deinit {
        backreference.clear()
    }

    /// How this store's object IDs refer back to it: not `weak`, which would slow every retain of the
    /// store (decision D24).
    package let backreference = Backreference()

    /// The store's type name (`NSInMemoryStoreType`, `NSSQLiteStoreType` …).
    open var type: String { fatalError("\(Swift.type(of: self)) must override NSPersistentStore.type") }

    /// Opens the store and reads (or creates) its metadata. Throws when the store cannot be used.
    open func loadMetadata() throws {}

    /// The metadata of the store file at `url`, without opening it for use. Stores without files throw.
    open class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        throw StoreError.invalidStore("this store type keeps no metadata in files")
    }

    /// Replaces the metadata of the store file at `url` without adding the store. Stores without files throw.
    open class func setMetadata(_ metadata: [String: Any], forPersistentStoreAt url: URL) throws {
        throw StoreError.invalidStore("this store type keeps no metadata in files")
    }

    /// Deletes the store at `url` and whatever files go with it (the coordinator's
    /// `destroyPersistentStore(at:ofType:options:)`). The default deletes nothing: a store class that
    /// keeps files says which (a URL given to a store without files may name someone else's file).
    open class func destroyStore(at url: URL) throws {}

    /// Metadata for a new store of this model: type, a fresh UUID and the version hashes.
    public func freshMetadata() -> [String: Any] {
        var hashes: [String: Any] = [:]
        for (name, hash) in model.entityVersionHashesByName { hashes[name] = hash }
        return [
            NSStoreTypeKey: type,
            NSStoreUUIDKey: UUID().uuidString,
            NSStoreModelVersionHashesKey: hashes,
            NSStoreModelVersionIdentifiersKey: Array(model.versionIdentifiers.compactMap { $0 as? String }),
            NSStoreModelVersionHashesVersionKey: 3,
            NSPersistenceFrameworkVersionKey: 1,
        ]
    }

    /// The entities this store holds: those of its configuration.
    public var entities: [NSEntityDescription] {
        if configurationName == "PF_DEFAULT_CONFIGURATION_NAME" { return model.entities }
        return model.entities(forConfigurationName: configurationName) ?? []
    }

    /// Called when the coordinator has added the store. (Apple's parameter is the coordinator; here the
    /// store layer sits below it, so it is `AnyObject`: see Documentation/Graph.md.)
    open func didAdd(to coordinator: AnyObject) {}
    /// Called before the coordinator removes the store.
    open func willRemove(from coordinator: AnyObject?) {}

    // MARK: Store API (overridden by concrete stores)

    /// The rows matching `plan`, sorted, with offset and limit applied.
    open func executeFetch(_ plan: StoreFetchPlan) throws -> [StoreRow] {
        throw StoreError.invalidRequest("\(type) store does not fetch")
    }

    /// The IDs of the rows matching `plan`, sorted, with offset and limit applied: for fetches that do not
    /// need values (object-ID results, `includesPropertyValues == false`, `fetchBatchSize`).
    open func executeFetchObjectIDs(_ plan: StoreFetchPlan) throws -> [NSManagedObjectID] {
        try executeFetch(plan).map(\.objectID)
    }

    /// Dictionary results computed by the store (in SQL for the SQLite store), or nil when the store
    /// leaves them to the object graph, which computes them from rows.
    open func executeDictionaryFetch(_ request: StoreDictionaryRequest) throws -> StoreDictionaryRows? { nil }

    /// The number of rows matching `plan` (offset and limit applied).
    open func countRows(_ plan: StoreFetchPlan) throws -> Int {
        try executeFetch(plan).count
    }

    /// The row of `objectID`, or nil if the store has none.
    open func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        throw StoreError.invalidRequest("\(type) store does not read rows")
    }

    /// The rows of those of `objectIDs` the store holds, in any order. Stores answer in one query where
    /// they can: the object graph fires batches of faults through this.
    open func rows(for objectIDs: [NSManagedObjectID]) throws -> [StoreRow] {
        try objectIDs.compactMap { try row(for: $0) }
    }

    /// The destinations of a to-many `relationship` for each of `objectIDs` (all of one entity), in one
    /// query where the store can: prefetching and batch faulting use it.
    open func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectIDs: [NSManagedObjectID]) throws -> [NSManagedObjectID: [NSManagedObjectID]] {
        var result: [NSManagedObjectID: [NSManagedObjectID]] = [:]
        for id in objectIDs { result[id] = try self.objectIDs(forRelationship: relationship, of: id) }
        return result
    }

    /// The destinations of a to-many `relationship` of the object `objectID`, in order for an ordered one.
    open func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID) throws -> [NSManagedObjectID] {
        guard let row = try row(for: objectID), let slot = row.layout.slot(named: relationship.name) else { return [] }
        return row.values[slot] as? [NSManagedObjectID] ?? []
    }

    /// `count` new permanent object IDs for objects of `entity`.
    open func newObjectIDs(for entity: NSEntityDescription, count: Int) throws -> [NSManagedObjectID] {
        throw StoreError.invalidRequest("\(type) store does not allocate object IDs")
    }

    /// Checks that `request` can be written (versions, IDs) without writing anything. The coordinator asks
    /// every store before it writes to any, so that a save across stores fails before it changes one.
    open func checkSave(_ request: StoreSaveRequest) throws {}

    /// Writes one save's changes, all or nothing. Throws ``StoreError/conflicts(_:)`` when a row's
    /// version is not the one the context read.
    open func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        throw StoreError.invalidRequest("\(type) store is read-only")
    }

    /// Runs `body`, one round of a context's save (new object IDs, then ``checkSave(_:)`` and
    /// ``save(_:)``), as one unit of the store's work. A store with transactions runs it in one. Object
    /// IDs handed out must stay taken even when `body` throws: the transaction commits after `save(_:)`
    /// undid its own failed work, or, when the store rolls the whole round back, the store takes those
    /// keys again on its own (the SQLite store does either; Documentation/SQLiteStore.md). When `body`
    /// throws after this store's `save(_:)` succeeded (another store of the save failed), the store
    /// undoes what that save wrote. The default runs `body`.
    open func performSaveTransaction<T>(_ body: () throws -> T) throws -> T {
        try body()
    }

    /// Inside ``performSaveTransaction(_:)``: takes now the locks the round would take at its first
    /// statement, so that a save across stores takes them in the coordinator's order. The default does
    /// nothing.
    open func beginSaveRound() throws {}

    // MARK: For subclasses

    /// A permanent ID of this store.
    public func objectID(for entity: NSEntityDescription, primaryKey: Int64) -> NSManagedObjectID {
        NSManagedObjectID(scope: idBase(for: entity), primaryKey: primaryKey)
    }

    /// Makes permanent IDs of one entity of this store, for a loop over rows: the entity's cached ID
    /// base is found once (a lock and a lookup, about a fifth of making an ID) rather than per ID.
    package struct ObjectIDMaker {
        fileprivate let base: NSManagedObjectID.Scope

        /// The ID of the row `primaryKey`.
        package func objectID(primaryKey: Int64) -> NSManagedObjectID {
            NSManagedObjectID(scope: base, primaryKey: primaryKey)
        }
    }

    /// An ``ObjectIDMaker`` for `entity`. Made per query: it keeps the identifier it was made with.
    package func objectIDMaker(for entity: NSEntityDescription) -> ObjectIDMaker {
        ObjectIDMaker(base: idBase(for: entity))
    }

    /// Reads the primary keys of many IDs: an ID of the scope the last accepted one had is this store's
    /// as that one was, without `primaryKey(of:)`'s lock and lookup (IDs of one entity share a scope).
    /// Made for one call over a list: should the store's identifier change meanwhile (its metadata set
    /// from another thread), IDs of the scope it already accepted are still taken until the call ends.
    package struct PrimaryKeyReader {
        private var accepted: NSManagedObjectID.Scope?
        package init() {}

        /// `store`'s ``primaryKey(of:)`` of `objectID`.
        package mutating func primaryKey(of objectID: NSManagedObjectID, in store: NSPersistentStore) -> Int64? {
            if objectID.scope === accepted { return objectID.primaryKey }
            guard let key = store.primaryKey(of: objectID) else { return nil }
            accepted = objectID.scope
            return key
        }
    }

    /// The primary key of one of this store's permanent IDs.
    public func primaryKey(of objectID: NSManagedObjectID) -> Int64? {
        guard let key = objectID.primaryKey, objectID.storeIdentifier == idBase(for: objectID.entity).storeIdentifier else { return nil }
        return key
    }

    /// What every permanent ID of one entity shares: the store's identifier and the hash of it with the
    /// entity's name. Made once per entity (and again after the metadata, which holds the identifier, is
    /// set to another identifier): reading the identifier out of the metadata and hashing two strings cost
    /// more than the rest of making an ID. Holds the entity, so that its ObjectIdentifier is not reused
    /// while cached.
    private let idBases = Mutex<(generation: Int, bases: [ObjectIdentifier: NSManagedObjectID.Scope])>((-1, [:]))

    private func idBase(for entity: NSEntityDescription) -> NSManagedObjectID.Scope {
        let generation = metadataGeneration
        let key = ObjectIdentifier(entity)
        if let base = idBases.withLock({ $0.generation == generation ? $0.bases[key] : nil }) { return base }
        let identifier = self.identifier
        let base = NSManagedObjectID.Scope(entity: entity, store: self, identifier: identifier)
        return idBases.withLock { state in
            if state.generation != generation {
                // Metadata that keeps the identifier keeps the scopes: IDs made before and after it share
                // one, and compare by key alone.
                if state.bases.values.first?.storeIdentifier != identifier { state.bases = [:] }
                state.generation = generation
            }
            if let kept = state.bases[key] { return kept }
            state.bases[key] = base
            return base
        }
    }
}

/// The registry of store types: the coordinator creates stores through it, and more stores plug in with
/// `NSPersistentStoreCoordinator.registerStoreClass(_:forStoreType:)`.
package enum PersistentStoreTypes {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var registered: [String: NSPersistentStore.Type] = [:]
    // Built-in stores live in targets the object graph does not import; found by name when first asked,
    // so that the layers keep pointing down.
    private static let builtIn: [String: String] = [
        NSInMemoryStoreType: "OCDInMemoryStore.InMemoryStore",
        NSSQLiteStoreType: "OCDSQLiteStore.SQLiteStore",
    ]

    package static func register(_ type: NSPersistentStore.Type?, for name: String) {
        lock.lock()
        defer { lock.unlock() }
        registered[name] = type
    }

    package static func storeClass(for name: String) -> NSPersistentStore.Type? {
        lock.lock()
        defer { lock.unlock() }
        if let type = registered[name] { return type }
        if let className = builtIn[name], let type = NSClassFromString(className) as? NSPersistentStore.Type {
            registered[name] = type
            return type
        }
        return nil
    }

    package static var all: [String: NSPersistentStore.Type] {
        for name in builtIn.keys { _ = storeClass(for: name) }
        lock.lock()
        defer { lock.unlock() }
        return registered
    }
}
