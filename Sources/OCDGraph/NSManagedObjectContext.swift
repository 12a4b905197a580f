import Foundation
import OCDModel
import OCDStore
import Synchronization

/// Apple's top-level name of the context's concurrency types.
public typealias NSManagedObjectContextConcurrencyType = NSManagedObjectContext.ConcurrencyType

/// A scratch pad of managed objects: it registers them (one object per ID), tracks their changes, and
/// saves them through its coordinator.
///
/// A context's state belongs to its queue (decision D7): use it inside `perform`/`performAndWait` (a
/// main-queue context also from the main thread). With the environment variable
/// `OCD_CONCURRENCY_DEBUG=1` (or Apple's launch argument `-com.apple.CoreData.ConcurrencyDebug 1`), every
/// use from another queue stops with a message, as Apple's concurrency debugging does.
open class NSManagedObjectContext: NSObject, @unchecked Sendable {
    /// How the context is confined.
    public enum ConcurrencyType: UInt, Sendable {
        /// Deprecated on Apple platforms; here it behaves as a private queue.
        case confinementConcurrencyType = 0
        /// The context owns a private serial queue.
        case privateQueueConcurrencyType = 1
        /// The context belongs to the main queue.
        case mainQueueConcurrencyType = 2

        /// A private serial queue: the name of Apple's `ConcurrencyType` struct (2021).
        public static var privateQueue: ConcurrencyType { .privateQueueConcurrencyType }
        /// The main queue: the name of Apple's `ConcurrencyType` struct (2021).
        public static var mainQueue: ConcurrencyType { .mainQueueConcurrencyType }
    }

    /// How `perform(schedule:_:)` runs its block.
    public enum ScheduledTaskType: Sendable {
        /// Run at once when already on the context's queue, otherwise enqueue.
        case immediate
        /// Always enqueue after the blocks already scheduled.
        case enqueued
    }

    /// The queue the context's work runs on: the main queue or a private one, fixed at creation.
    public let concurrencyType: ConcurrencyType
    /// The coordinator the context saves through and fetches from.
    // Unchecked, as the context's other state: read on every insert and fetch, where the runtime's
    // access check was about 70 instructions.
    @exclusivity(unchecked) public var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        didSet { modelLookups = ModelLookups() }
    }
    /// A name for debugging.
    open var name: String?
    /// The application's own values.
    public var userInfo = NSMutableDictionary()
    /// The undo manager; nil by default, as in current Core Data. (Undo registration is a later issue.)
    open var undoManager: UndoManager?

    // The entry points a subclass overrides, as with Apple's class; the work is in the extensions
    // (members of an extension cannot be overridden).

    /// Saves the context's changes to its stores: processes pending changes, posts
    /// `NSManagedObjectContextWillSave`, validates each deleted, inserted and updated object and calls its
    /// `willSave()` (again for objects that validation or `willSave()` changed), writes all changes at
    /// once, calls `didSave()` and posts
    /// `NSManagedObjectContextDidSave` and `NSManagedObjectContextDidSaveObjectIDs`. A failed save changes
    /// nothing in the store and leaves the context's changes in place.
    open func save() throws { try saveContext() }

    /// Executes `request`. Results include the context's unsaved changes unless
    /// `includesPendingChanges` is false: an unsaved insert that matches is returned, an updated object is
    /// judged by its current values, a deleted one is left out. Dictionary results see only the stores. A
    /// fetch never overwrites the values of an object already realized in the context.
    open func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] { try fetchResults(request) }

    /// The number of objects `request` would return (pending changes included, as in `fetch(_:)`).
    open func count<T>(for request: NSFetchRequest<T>) throws -> Int { try countResults(for: request) }

    /// Merges the changes of another context's `NSManagedObjectContextDidSave` notification: registered
    /// objects the other context updated are refreshed, keeping this context's own changes over the stored
    /// values (`refresh(_:mergeChanges: true)`); objects it inserted are faulted in; registered objects it
    /// deleted are deleted here, let go of by the objects that point to them, and leave the context as a
    /// saved deletion would. Call it on the context's queue (in `perform`). An
    /// `NSManagedObjectContextObjectsDidChange` reports the merge: inserted, refreshed and deleted objects
    /// (and, as updated, objects that let go of a deleted one).
    open func mergeChanges(fromContextDidSave notification: Notification) { mergeContextDidSave(notification) }

    /// Ends the current event and asks the undo manager to undo its last group. Contexts do not register
    /// their own changes yet (Graph.md), so this undoes what the application registered.
    open func undo() {
        assertQueue()
        processPendingChanges()
        undoManager?.undo()
    }

    /// Ends the current event and asks the undo manager to redo the last group undone.
    open func redo() {
        assertQueue()
        processPendingChanges()
        undoManager?.redo()
    }
    /// Whether a fault whose row is gone becomes a deleted object with nil values (true) or stops.
    open var shouldDeleteInaccessibleFaults = true
    /// How old cached data that fills a fault may be; negative (the default) means no limit. With 0, the
    /// faults a fetch returns (or meets, registered) hold no row and read theirs from the store when they
    /// fire, a batch per query, as Apple documents for "no staleness is acceptable"; a fault no fetch has
    /// met since keeps the row it holds. A positive interval is not yet honoured: cached rows fill faults
    /// whatever their age, as with a negative one.
    open var stalenessInterval: TimeInterval = -1
    /// How `save()` resolves conflicts with the store: an ``NSMergePolicy`` (Apple types the property
    /// `Any`). The default is `NSErrorMergePolicy`, which makes the save fail. Setting anything that is not
    /// an `NSMergePolicy` stops, as Apple raises.
    open var mergePolicy: Any = NSMergePolicy.error {
        didSet {
            if !(mergePolicy is NSMergePolicy) {
                fatalError("mergePolicy: \(type(of: mergePolicy)) is not an NSMergePolicy. Use NSMergePolicy.mergeByPropertyObjectTrump, NSMergeByPropertyObjectTrumpMergePolicy or another NSMergePolicy.")
            }
        }
    }

    let queue: DispatchQueue
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    let registry = ObjectRegistry()
    /// Whether registered objects are held strongly (Core Data's default: only changed ones are).
    public var retainsRegisteredObjects: Bool {
        get { registry.retainsObjects }
        set { registry.retainsObjects = newValue }
    }
    // The change-tracking state below is `@exclusivity(unchecked)` (D23): it is used on the context's
    // queue only, none of it is passed `inout` across a call, and an object's set touches it per value.
    @exclusivity(unchecked) var isSaving = false
    /// While positive, changes of unmodeled properties mark no object updated, whatever its class's
    /// `contextShouldIgnoreUnmodeledPropertyChanges`: the context is turning objects into faults or
    /// giving them values from a snapshot, where the fault and snapshot hooks clear caches of their own.
    @exclusivity(unchecked) var unmodeledChangesIgnored = 0
    /// How the context's objects refer back to it: not `weak`, which would slow every retain of the
    /// context (decision D24).
    let backreference = Backreference()
    @exclusivity(unchecked) private var eventEndScheduled = false
    /// The context's changed objects, each under its own `ObjectIdentifier` (`inAddressOrder` reads the
    /// objects back from the keys).
    @exclusivity(unchecked) var inserted: [ObjectIdentifier: NSManagedObject] = [:]
    /// The stores `assign(_:to:)` chose for inserted objects not yet given permanent IDs. Every object
    /// here is in `inserted` (which holds it), and leaves both together.
    @exclusivity(unchecked) var assignedStores: [ObjectIdentifier: NSPersistentStore] = [:]
    @exclusivity(unchecked) var updated: [ObjectIdentifier: NSManagedObject] = [:]
    @exclusivity(unchecked) var deleted: [ObjectIdentifier: NSManagedObject] = [:]
    // Listed since the last processPendingChanges, for its ObjectsDidChange (`PendingObjects`).
    @exclusivity(unchecked) var unprocessedInserted = PendingObjects(.unprocessedInsert)
    @exclusivity(unchecked) var unprocessedUpdated = PendingObjects(.unprocessedUpdate)
    @exclusivity(unchecked) var unprocessedDeleted = PendingObjects(.unprocessedDelete)
    @exclusivity(unchecked) var unprocessedRefreshed: [ObjectIdentifier: NSManagedObject] = [:]
    @exclusivity(unchecked) var pendingDeletePropagation: [NSManagedObject] = []
    /// Each object once (its `listedForEventValues` bit says whether it is here), in the order listed:
    /// an append rather than a hash insert per changed object, and a pass in about address order.
    @exclusivity(unchecked) var objectsWithEventValues: [NSManagedObject] = []
    @exclusivity(unchecked) var isProcessingPendingChanges = false
    /// While `processPendingChanges()` posts its ObjectsDidChange.
    @exclusivity(unchecked) var isPostingObjectsDidChange = false
    /// Objects changed while `willSave()` runs, which get `willSave()` again.
    @exclusivity(unchecked) var changedDuringWillSave: [ObjectIdentifier: NSManagedObject]?
    /// Counts objects put into `inserted` or `deleted`, so that a save's `willSave()` round knows
    /// without comparing sets whether it made any (those get validated and `willSave()` too).
    @exclusivity(unchecked) var listingsAdded = 0
    /// The last entity `insertNewObject(forEntityName:into:)` found by name in the coordinator's model,
    /// and the last inserted object's entity found to be of that model: inserting objects one by one
    /// asks both per object, and reading the model from the coordinator retains it on the runtime's slow
    /// path (its entities refer to it weakly). Used on the context's queue only, as inserting is.
    struct ModelLookups {
        var byName: (name: String, entity: NSEntityDescription)?
        var ofModel: NSEntityDescription?
    }
    @exclusivity(unchecked) var modelLookups = ModelLookups()
    /// How many contexts, in any thread, have `changedDuringWillSave` now. While none has, a change of an
    /// object that needs nothing else from its context skips loading it. A constant start, so that a read
    /// is a plain load (a lazy global's `swift_once` ran per read); relaxed, because what a context's own
    /// objects must see is its own count, made on the same thread.
    static let contextsCollectingWillSaveChanges = Atomic<Int>(0)
    /// The observer of other contexts' saves while `automaticallyMergesChangesFromParent` is on.
    var mergeObserver: NSObjectProtocol?

    /// A context of the given concurrency type (`.privateQueue`, `.mainQueue`), without a coordinator.
    public convenience init(_ type: ConcurrencyType) {
        self.init(concurrencyType: type)
    }

    /// A context of the given concurrency type, without a coordinator.
    public init(concurrencyType: ConcurrencyType) {
        self.concurrencyType = concurrencyType
        if concurrencyType == .mainQueueConcurrencyType {
            queue = .main
        } else {
            queue = DispatchQueue(label: "OpenCoreData.NSManagedObjectContext")
        }
        super.init()
        backreference.attach(self)
        if concurrencyType != .mainQueueConcurrencyType {
            queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
        }
    }

    deinit {
        if let mergeObserver { NotificationCenter.default.removeObserver(mergeObserver) }
        backreference.clear()
        // Related objects hold each other strongly; releasing their values breaks those cycles, as a
        // deallocated Core Data context leaves its objects without data.
        let objects = registry.values
        // First, for all of them: releasing a value can run code (its deinit) that fires another object's
        // fault, which must find no context rather than fill itself from the row it read ahead.
        for object in objects { object.managedObjectContext = nil }
        for object in objects {
            object.releaseValues()
            // It leaves the table now: the table reads its entries' objects, and an object that outlives
            // the context could be given another ID elsewhere, leaving its entry here to dangle.
            object.registry = nil
        }
        for object in inserted.values where object.managedObjectContext == nil { object.releaseValues() }
        // The event ends with the context: an object that outlives it starts clean in another one.
        endEventValues()
        unprocessedInserted.forget(owner: backreference)
        unprocessedUpdated.forget(owner: backreference)
        unprocessedDeleted.forget(owner: backreference)
        // Inserted, updated and deleted were this context's: an object that outlives it is in none, as
        // after reset(), and another context it joins takes it in (rather than seeing it inserted already).
        for object in objects { object.status = object.status.intersection(.keptOutsideAContext) }
        for object in inserted.values where object.contextReference == nil {
            object.status = object.status.intersection(.keptOutsideAContext)
        }
        registry.removeAll()
    }

    // MARK: Concurrency

    /// Whether concurrency debugging is on (`OCD_CONCURRENCY_DEBUG=1`, or Apple's
    /// `-com.apple.CoreData.ConcurrencyDebug 1` launch argument).
    public static var concurrencyDebugEnabled: Bool {
        @inline(__always) get { ConcurrencyDebug.isEnabled }
        set { ConcurrencyDebug.isEnabled = newValue }
    }

    /// Whether the current thread may use this context now.
    var isOnQueue: Bool {
        if PerformStack.current.contains(self) { return true }
        if concurrencyType == .mainQueueConcurrencyType { return Self.isOnMainQueue }
        return DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self)
    }

    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the caller runs on the main queue: the main thread, or a main-queue block on another
    /// thread (where Linux runs main-actor jobs when the main thread is not draining the queue itself).
    static var isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }

    /// The context whose `perform`/`performAndWait` block is running on this thread (the innermost).
    static var current: NSManagedObjectContext? { PerformStack.current.contexts.last }

    /// Stops when concurrency debugging is on and the caller is off the context's queue.
    func assertQueue(_ function: String = #function) {
        guard ConcurrencyDebug.isEnabled, !isOnQueue else { return }
        fatalError("CoreData concurrency violation: \(function) called on \(name ?? "a context") (\(concurrencyType)) from outside its queue. Use perform(_:) or performAndWait(_:).")
    }

    private func runOnQueue<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let stack = PerformStack.current
        let wasPerforming = stack.contains(self)
        stack.contexts.append(self)
        defer {
            if !wasPerforming { processPendingChanges() }
            stack.contexts.removeLast()
        }
        return try body()
    }

    /// Runs `block` on the context's queue, asynchronously. Pending changes are processed at its end.
    open func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async { self.runOnQueue(block) }
    }

    /// Runs `block` on the context's queue and waits; reentrant (runs at once when already there).
    open func performAndWait<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        if isOnQueue { return try runOnQueue(block) }
        let result: Result<T, E> = withoutActuallyEscaping(block) { escapable in
            nonisolated(unsafe) let escapable = escapable
            return queue.sync { Result { () throws(E) -> T in try self.runOnQueue(escapable) } }
        }
        return try result.get()
    }

    /// Runs `block` on the context's queue and returns its result to the caller's isolation.
    open func perform<T, E: Error>(schedule: ScheduledTaskType = .immediate, _ block: @escaping () throws(E) -> T) async throws(E) -> sending T {
        nonisolated(unsafe) let block = block
        if schedule == .immediate && isOnQueue {
            let box = UnsafeResultBox(result: Result<T, E> { () throws(E) -> T in try runOnQueue(block) })
            return try box.take()
        }
        let box: UnsafeResultBox<T, E> = await withCheckedContinuation { continuation in
            queue.async {
                let result = Result<T, E> { () throws(E) -> T in try self.runOnQueue(block) }
                continuation.resume(returning: UnsafeResultBox(result: result))
            }
        }
        return try box.take()
    }

    // MARK: Registered objects

    /// Every object registered in the context.
    open var registeredObjects: Set<NSManagedObject> { Set(registry.values) }
    /// Objects inserted since the last save.
    open var insertedObjects: Set<NSManagedObject> { Set(inserted.values) }
    /// Objects with unsaved changes (not inserted or deleted ones).
    open var updatedObjects: Set<NSManagedObject> { Set(updated.values) }
    /// Objects that the next save deletes.
    open var deletedObjects: Set<NSManagedObject> { Set(deleted.values) }
    /// Whether the context has unsaved changes.
    open var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

    /// The object registered for `objectID`, or nil. Never fetches.
    open func registeredObject(for objectID: NSManagedObjectID) -> NSManagedObject? {
        assertQueue()
        return registry[objectID]
    }

    /// The object for `objectID`: the registered one, or a new fault (without I/O). Stops when the ID's
    /// store is not one of the coordinator's, as Apple raises.
    open func object(with objectID: NSManagedObjectID) -> NSManagedObject {
        assertQueue()
        if let object = registry[objectID] { return object }
        if objectID.isTemporaryID {
            fatalError("object(with:): \(objectID) is a temporary ID of an object that is not in this context.")
        }
        guard let store = objectID.persistentStore, persistentStoreCoordinator?.persistentStores.contains(where: { $0 === store }) == true else {
            fatalError("Object's persistent store is not reachable from this NSManagedObjectContext's coordinator (\(objectID)).")
        }
        let object = NSManagedObject.makeFault(for: objectID, row: nil, in: self)
        registry[objectID] = object
        return object
    }

    /// The object for `objectID`, realized; throws `NSManagedObjectReferentialIntegrityError` when the
    /// store has no such object.
    open func existingObject(with objectID: NSManagedObjectID) throws -> NSManagedObject {
        assertQueue()
        if let object = registry[objectID], !object.isFault || object.isDeleted { return object }
        guard !objectID.isTemporaryID, let row = storeRow(for: objectID) else {
            throw coreDataError(NSManagedObjectReferentialIntegrityError, [
                NSAffectedObjectsErrorKey: [objectID],
                NSLocalizedDescriptionKey: "The object \(objectID) does not exist in the store.",
            ])
        }
        let object = registry[objectID] ?? NSManagedObject.makeFault(for: objectID, row: row, in: self)
        registry[objectID] = object
        // The row just read is the newest: an older cached one must not win.
        if row.version >= (object.knownRowVersion ?? -1) { object.setRow(row) }
        object.fireFault()
        return object
    }

    // MARK: Inserting and deleting

    /// Registers `object` as inserted; it is saved at the next save. Calls `awakeFromInsert()` the first
    /// time. Inserting a deleted object undeletes it.
    open func insert(_ object: NSManagedObject) {
        assertQueue()
        if let owner = object.contextReference, owner !== backreference {
            fatalError("An NSManagedObject may only be in (or observed by) a single NSManagedObjectContext (\(object.objectID)).")
        }
        // From no context: bits saying which of a context's lists hold it are a former context's.
        let fromNoContext = object.contextReference == nil
        if fromNoContext { object.forgetListings() }
        if let coordinator = persistentStoreCoordinator, object.entity !== modelLookups.ofModel {
            guard coordinator.managedObjectModel.entitiesByName[object.entity.name ?? ""] === object.entity else {
                fatalError("insert(_:): the entity \(object.entity.name ?? "?") is not an entity of this context's model.")
            }
            modelLookups.ofModel = object.entity
        }
        let key = ObjectIdentifier(object)
        if object.status.contains(.deleted) {
            object.status.remove(.deleted)
            deleted[key] = nil
            unprocessedDeleted.remove(object)
            pendingDeletePropagation.removeAll { $0 === object }
            if !object.status.contains(.inserted) {
                // An object from the store that was deleted and is inserted again is simply not deleted;
                // its changes (delete propagation may have broken relationships) are saved as an update.
                // Whether it is new is `.inserted`, not its ID: obtainPermanentIDs gives new objects
                // permanent IDs, and such an object taken for a stored one was saved as an update of a
                // row that does not exist.
                if object.hasChangedValues && !object.status.contains(.updated) {
                    object.status.insert(.updated)
                    updated[key] = object
                    unprocessedUpdated.add(object)
                }
                scheduleEventEnd()
                return
            }
        }
        if object.status.contains(.inserted) { return }
        if object.status.contains(.fault) && (object.objectID.isTemporaryID || fromNoContext) {
            // A forgotten new object (after reset() or insert-then-delete) comes back empty, not as a fault
            // that no store could fill; with a permanent ID from obtainPermanentIDs too, as a fault left
            // without a context has no context to fill it from.
            object.status.remove(.fault)
            for (slot, relationship) in object.layout.relationships where relationship.isToMany {
                object.slots[slot] = ToManyStorage()
            }
        }
        object.managedObjectContext = self
        registry[object.objectID] = object
        object.status.insert(.inserted)
        object.status.remove(.insertionAnnounced)
        inserted[key] = object
        unprocessedInserted.add(object)
        listingsAdded &+= 1
        if !object.status.contains(.awakenedFromInsert) {
            object.status.insert(.awakenedFromInsert)
            object.awakeFromInsert()
        }
        scheduleEventEnd()
    }

    /// A main-queue context used outside `perform` processes its pending changes at the end of the
    /// current main-queue turn, as Core Data does at the end of a run-loop event.
    func scheduleEventEnd() {
        guard concurrencyType == .mainQueueConcurrencyType, !eventEndScheduled,
              !PerformStack.current.contains(self), Self.isOnMainQueue else { return }
        eventEndScheduled = true
        DispatchQueue.main.async { [weak self] in
            guard let self else { return }
            self.eventEndScheduled = false
            self.processPendingChanges()
        }
    }

    /// Marks `object` to be deleted at the next save. Delete rules run at `processPendingChanges()`.
    open func delete(_ object: NSManagedObject) {
        assertQueue()
        // An object outside any context (deleted and saved, or never inserted): nothing to do, as on Apple.
        guard let owner = object.managedObjectContext else { return }
        guard owner === self else {
            fatalError("An NSManagedObjectContext cannot delete objects in other contexts.")
        }
        if object.status.contains(.deleted) {
            object.prepareForDeletion()
            return
        }
        object.fireFault()
        if object.status.contains(.deleted) { return }
        markDeleted(object)
        pendingDeletePropagation.append(object)
        object.prepareForDeletion()
        scheduleEventEnd()
    }

    /// Lists `object` as deleted (no longer updated) for the save and the next ObjectsDidChange.
    func markDeleted(_ object: NSManagedObject) {
        let key = ObjectIdentifier(object)
        object.status.insert(.deleted)
        object.status.remove(.updated)
        updated[key] = nil
        unprocessedUpdated.remove(object)
        deleted[key] = object
        unprocessedDeleted.add(object)
        listingsAdded &+= 1
    }

    /// A fault whose row is gone: a deleted object with nil values, skipped by validation and by the
    /// store at the next save (`shouldDeleteInaccessibleFaults`).
    func markInaccessible(_ object: NSManagedObject) {
        let key = ObjectIdentifier(object)
        object.status.insert([.deleted, .inaccessible])
        deleted[key] = object
        listingsAdded &+= 1
    }

    /// Called by `didChangeValue(forKey:)` of a registered object.
    func objectDidChange(_ object: NSManagedObject) {
        let key = ObjectIdentifier(object)
        // Listed even when deleted (delete propagation changes deleted objects): the event's end must
        // clear what `changedValuesForCurrentEvent()` recorded for it.
        if !object.status.contains(.listedForEventValues) {
            object.status.insert(.listedForEventValues)
            objectsWithEventValues.append(object)
        }
        guard !object.status.contains(.deleted) else { return }
        changedDuringWillSave?[key] = object
        if object.status.contains(.inserted) {
            // Not an updated object (`updatedObjects` leaves inserted ones out), but a change all the same:
            // once its insertion has been announced, the next ObjectsDidChange lists it as updated, as
            // Core Data's does (a fetched results controller reports edits to unsaved objects).
            if object.status.contains(.insertionAnnounced) {
                unprocessedUpdated.add(object)
                scheduleEventEnd()
            }
            return
        }
        if !object.status.contains(.updated) {
            object.status.insert(.updated)
            updated[key] = object
        }
        unprocessedUpdated.add(object)
        scheduleEventEnd()
    }

    /// Ends the current event for its changed objects: `changedValuesForCurrentEvent()` is empty again.
    private func endEventValues() {
        let ended = objectsWithEventValues
        objectsWithEventValues = []
        endEventValues(of: ended, carryingChanged: false)
    }

    /// Clears the event's values of `ended`, taken from `objectsWithEventValues` before a post so that
    /// observers of ObjectsDidChange still read them. With `carryingChanged`, an object an observer
    /// changed again carries its values into the next event (listed again) rather than losing the new
    /// event's old values.
    private func endEventValues(of ended: [NSManagedObject], carryingChanged: Bool) {
        for object in ended where object.isListed(by: backreference) {
            if carryingChanged && !object.status.isDisjoint(with: [.unprocessedInsert, .unprocessedUpdate, .unprocessedDelete]) {
                objectsWithEventValues.append(object)
                continue
            }
            object.clearEventOldValues()
            object.status.remove(.listedForEventValues)
        }
    }

    // MARK: Processing pending changes

    /// Runs delete rules for objects deleted since the last call, drops objects inserted and deleted
    /// before any save, and posts `NSManagedObjectContextObjectsDidChange`.
    open func processPendingChanges() {
        assertQueue()
        guard !isProcessingPendingChanges else { return }
        isProcessingPendingChanges = true
        runPendingDeleteRules()
        dropObjectsInsertedAndDeleted()
        isProcessingPendingChanges = false
        // Called from an observer of this context's own post (a save or a fetch there): the delete rules
        // run, so that a save writes their effects, but the notification of these changes waits for the
        // next event rather than being posted nested in this one (an observer that changes something at
        // every notification would recurse).
        guard !isPostingObjectsDidChange else { return }
        postingObjectsDidChange { postObjectsDidChange() }
    }

    /// Inserted, then deleted before a save: the object never existed.
    func dropObjectsInsertedAndDeleted() {
        // Such an object is in both sets: the smaller one is searched, as a pass over a large insert's
        // objects in hash order is mostly cache misses.
        guard !inserted.isEmpty && !deleted.isEmpty else { return }
        let candidates = inserted.count <= deleted.count ? inserted : deleted.filter { inserted[$0.key] != nil }
        for (key, object) in candidates where object.status.contains(.deleted) {
            inserted[key] = nil
            assignedStores[key] = nil
            deleted[key] = nil
            // Inserted in this event too: observers never heard of it, so they hear nothing. Announced in
            // an earlier event: they hear of its deletion.
            if unprocessedInserted.contains(object) { unprocessedDeleted.remove(object) }
            unprocessedInserted.remove(object)
            unprocessedUpdated.remove(object)
            registry[object.objectID] = nil
            object.turnIntoFault()
            object.status.subtract([.inserted, .deleted])
            object.managedObjectContext = nil
        }
    }

    /// The delete rules of the objects deleted since the last call (cascades included).
    func runPendingDeleteRules() {
        // Cascades append while this runs; an index keeps it linear.
        var next = 0
        while next < pendingDeletePropagation.count {
            let object = pendingDeletePropagation[next]
            next += 1
            if object.isDeleted { propagateDelete(of: object) }
        }
        pendingDeletePropagation = []
    }

    func postObjectsDidChange(invalidatedAll: [NSManagedObjectID]? = nil, merged: Set<NSManagedObject> = []) {
        var userInfo = [AnyHashable: Any](minimumCapacity: 4)
        // Objects another context saved and a merge faulted in: inserted, as far as observers go.
        if !merged.isEmpty { userInfo[PostedKey.inserted] = merged }
        if !unprocessedInserted.isEmpty {
            let insertedNow = unprocessedInserted.take(adding: merged, owner: backreference) { $0.status.insert(.insertionAnnounced) }
            if !insertedNow.isEmpty { userInfo[PostedKey.inserted] = insertedNow }
        }
        if !unprocessedUpdated.isEmpty {
            let updatedNow = unprocessedUpdated.take(owner: backreference)
            if !updatedNow.isEmpty { userInfo[PostedKey.updated] = updatedNow }
        }
        if !unprocessedDeleted.isEmpty {
            let deletedNow = unprocessedDeleted.take(owner: backreference)
            if !deletedNow.isEmpty { userInfo[PostedKey.deleted] = deletedNow }
        }
        if !unprocessedRefreshed.isEmpty { userInfo[PostedKey.refreshed] = Set(unprocessedRefreshed.values) }
        if let invalidatedAll { userInfo[PostedKey.invalidatedAll] = invalidatedAll }
        unprocessedRefreshed = [:]
        // Cleared after the post: `changedValuesForCurrentEvent()` is what an observer of it reads.
        let ended = objectsWithEventValues
        objectsWithEventValues = []
        if !userInfo.isEmpty {
            NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: userInfo)
        }
        endEventValues(of: ended, carryingChanged: true)
    }

    /// Each relationship's delete rule (`prepareForDeletion()` ran in `delete(_:)`).
    private func propagateDelete(of object: NSManagedObject) {
        for (slot, relationship) in object.layout.relationships {
            let destinations: [NSManagedObject]
            if relationship.isToMany {
                destinations = object.toMany(slot).objects
            } else {
                destinations = (object.slots[slot] as? NSManagedObject).map { [$0] } ?? []
            }
            guard !destinations.isEmpty else { continue }
            switch relationship.deleteRule {
            case .nullifyDeleteRule:
                // Breaking the link through the relationship updates the inverse side too.
                // The modeled path, not a class-provided setter: the object is already deleted.
                if relationship.isToMany {
                    object.managedRemove(destinations, forKey: relationship.name)
                } else {
                    object.noteWillChange(relationship.name)
                    object.kvcSetPrimitiveValue(nil, forKey: relationship.name)
                    object.noteDidChange(relationship.name)
                }
            case .cascadeDeleteRule:
                for destination in destinations where !destination.isDeleted { delete(destination) }
            case .denyDeleteRule, .noActionDeleteRule:
                break
            }
        }
    }

    // MARK: Undoing changes

    /// Discards every unsaved change: inserted objects are dropped, deleted and updated ones get their
    /// committed values back (`awake(fromSnapshotEvents: .rollback)`).
    open func rollback() {
        assertQueue()
        pendingDeletePropagation = []
        // What observers see undone, as undoing each change would announce it: an announced insertion
        // is deleted, an announced deletion inserted again, and every other object whose values are
        // restored refreshed (one whose changes were never announced too: a refresh tells nothing false).
        // An unannounced insertion goes unheard.
        let discarded = Set(inserted.values.filter { $0.status.contains(.insertionAnnounced) })
        let restoredDeletions = deleted.values.filter {
            !$0.status.contains(.inaccessible) && !$0.objectID.isTemporaryID && inserted[ObjectIdentifier($0)] == nil
        }
        let undeleted = Set(restoredDeletions.filter { !$0.status.contains(.unprocessedDelete) })
        let reverted = Set(updated.values).union(restoredDeletions.filter { $0.status.contains(.unprocessedDelete) })
        for object in inserted.values {
            registry[object.objectID] = nil
            object.status.subtract([.inserted, .deleted, .updated])
            object.managedObjectContext = nil
        }
        let restored = Array(updated.values) + Array(deleted.values.filter { !$0.objectID.isTemporaryID && inserted[ObjectIdentifier($0)] == nil })
        inserted = [:]
        assignedStores = [:]
        updated = [:]
        deleted = [:]
        for object in restored {
            object.status.subtract([.updated, .deleted])
            if let values = object.rowValues {
                object.notifyingWholesaleChange { object.fill(values: values, version: object.rowVersion, in: self) }
            } else {
                object.turnIntoFault()
            }
            object.clearEventOldValues()
            object.sendSnapshotEvents(.rollback)
        }
        unprocessedInserted.forget(owner: backreference)
        unprocessedUpdated.forget(owner: backreference)
        unprocessedDeleted.forget(owner: backreference)
        endEventValues()
        undoManager?.removeAllActions()
        var userInfo: [AnyHashable: Any] = [:]
        if !discarded.isEmpty { userInfo[PostedKey.deleted] = discarded }
        if !undeleted.isEmpty { userInfo[PostedKey.inserted] = undeleted }
        let refreshed = reverted.union(unprocessedRefreshed.values)
        unprocessedRefreshed = [:]
        if !refreshed.isEmpty { userInfo[PostedKey.refreshed] = refreshed }
        guard !userInfo.isEmpty else { return }
        postingObjectsDidChange {
            NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: userInfo)
        }
    }

    /// Forgets every registered object: they turn into faults and leave the context.
    open func reset() {
        assertQueue()
        let objects = Array(registry.values)
        let invalidated = Array(registry.keys)
        unprocessedInserted.forget(owner: backreference)
        unprocessedUpdated.forget(owner: backreference)
        unprocessedDeleted.forget(owner: backreference)
        unprocessedRefreshed = [:]
        endEventValues()
        registry.removeAll()
        inserted = [:]
        assignedStores = [:]
        updated = [:]
        deleted = [:]
        pendingDeletePropagation = []
        for object in objects {
            object.turnIntoFault()
            object.status = object.status.intersection(.keptOutsideAContext)
            object.managedObjectContext = nil
        }
        undoManager?.removeAllActions()
        // Posted once every object is gone: "have been invalidated", so an observer that fetches again
        // gets new objects, not the ones about to leave.
        postingObjectsDidChange { postObjectsDidChange(invalidatedAll: invalidated) }
    }

    /// Runs `post` with the flag that keeps an observer's `processPendingChanges()` from posting nested.
    func postingObjectsDidChange(_ post: () -> Void) {
        let wasPosting = isPostingObjectsDidChange
        isPostingObjectsDidChange = true
        defer { isPostingObjectsDidChange = wasPosting }
        post()
    }

    /// `false`: turns `object` into a fault and drops its unsaved changes. `true`: reads its values again
    /// from the store and puts its unsaved changes back on top.
    open func refresh(_ object: NSManagedObject, mergeChanges flag: Bool) {
        assertQueue()
        refresh(object, mergeChanges: flag, fetched: nil)
    }

    /// `refresh(_:mergeChanges:)` with the row a fetch has just read for the object, if any
    /// (`shouldRefreshRefetchedObjects`), in place of a second trip to the store.
    func refresh(_ object: NSManagedObject, mergeChanges flag: Bool, fetched: StoreRow?) {
        guard object.contextReference === backreference, !object.isInserted else { return }
        let key = ObjectIdentifier(object)
        if !flag || !object.hasChanges {
            if object.isDeleted {
                // A pending delete is one of the changes refreshing without merge drops.
                deleted[key] = nil
                unprocessedDeleted.remove(object)
                pendingDeletePropagation.removeAll { $0 === object }
                object.status.subtract([.deleted, .inaccessible])
            }
            updated[key] = nil
            unprocessedUpdated.remove(object)
            object.status.remove(.updated)
            // A fault has no values to reload: it stays one, and reads the store's when it fires (with
            // `awakeFromFetch()` and its transient defaults, as any fault).
            if flag, !object.isFault, let row = fetched ?? storeRow(for: object.objectID) {
                merge(row, into: object, keeping: [])
                object.sendSnapshotEvents(.refresh)
            } else {
                object.turnIntoFault()
            }
            unprocessedRefreshed[key] = object
            scheduleEventEnd()
            return
        }
        guard let row = fetched ?? storeRow(for: object.objectID) else { return }
        merge(row, into: object, keeping: nil)
        object.sendSnapshotEvents(.refresh)
        unprocessedRefreshed[key] = object
        scheduleEventEnd()
    }

    /// Refreshes every registered object: those with changes keep them, the others turn into faults.
    open func refreshAllObjects() {
        assertQueue()
        for object in Array(registry.values) { refresh(object, mergeChanges: object.hasChanges) }
    }

    // MARK: IDs

    /// Chooses the store a newly inserted object is saved to, among stores whose configuration holds its
    /// entity (by default, the first such store). Stops with Apple's reason when the store does not hold
    /// the entity, or the object is not a new object of this context.
    open func assign(_ object: Any, to store: NSPersistentStore) {
        assertQueue()
        guard let object = object as? NSManagedObject else {
            fatalError("assign(_:to:): \(object) is not a managed object.")
        }
        guard object.contextReference === backreference, object.isInserted, object.objectID.isTemporaryID else {
            fatalError("assign(_:to:): \(object.objectID) is not a new object of this context; only newly inserted objects can be assigned to a store.")
        }
        guard persistentStoreCoordinator?.persistentStores.contains(where: { $0 === store }) == true else {
            fatalError("assign(_:to:): the store \(store.url?.lastPathComponent ?? store.type) is not one of the context's coordinator.")
        }
        guard store.entities.contains(where: { $0.name == object.entity.name }) else {
            fatalError("Can't assign an object to a store that does not contain the object's entity.")
        }
        assignedStores[ObjectIdentifier(object)] = store
    }

    /// Gives the objects permanent IDs from their stores now, rather than at save.
    open func obtainPermanentIDs(for objects: [NSManagedObject]) throws {
        try assignPermanentIDs(objects, distinct: false)
    }

    /// ``obtainPermanentIDs(for:)``; `distinct` when the caller knows that no object is listed twice (a
    /// save's inserted objects), so that no set of them is built.
    func assignPermanentIDs(_ objects: [NSManagedObject], distinct: Bool) throws {
        assertQueue()
        guard let coordinator = persistentStoreCoordinator else {
            throw coreDataError(NSPersistentStoreSaveError, [NSLocalizedDescriptionKey: "The context has no persistent store coordinator."])
        }
        // By entity and by the store `assign(_:to:)` chose (none: the one `store(for:)` chooses). Groups
        // are few and objects of one entity mostly come together: a linear search, starting with the last
        // group, instead of hashing a key per object. One pass over the objects, as a save's are mostly
        // out of the cache by now.
        var seen = Set<ObjectIdentifier>()
        var groups: [(entity: NSEntityDescription, store: NSPersistentStore?, objects: [NSManagedObject])] = []
        var last = -1
        for object in objects {
            let objectID = object.objectID
            guard objectID.isTemporaryID else { continue }
            // Each object once: an object listed twice would take two keys and stay registered under both.
            if !distinct { guard seen.insert(ObjectIdentifier(object)).inserted else { continue } }
            if let reference = object.contextReference, reference !== backreference {
                fatalError("obtainPermanentIDs(for:): \(objectID) belongs to another context.")
            }
            let entity = object.entity
            let store = assignedStores.isEmpty ? nil : assignedStores[ObjectIdentifier(object)]
            if last < 0 || groups[last].entity !== entity || groups[last].store !== store {
                if let index = groups.firstIndex(where: { $0.entity === entity && $0.store === store }) {
                    last = index
                } else {
                    groups.append((entity, store, []))
                    last = groups.count - 1
                }
            }
            groups[last].objects.append(object)
        }
        // All IDs first, so that a failure leaves every object as it was.
        let ids = try groups.map { try coordinator.newObjectIDs(for: $0.entity, count: $0.objects.count, in: $0.store) }
        for (group, ids) in zip(groups, ids) {
            registry.move(group.objects, to: ids, owner: backreference)
            if !assignedStores.isEmpty {
                for object in group.objects { assignedStores[ObjectIdentifier(object)] = nil }
            }
        }
    }

    // MARK: Store access for objects

    func storeRow(for objectID: NSManagedObjectID) -> StoreRow? {
        guard !objectID.isTemporaryID else { return nil }
        return persistentStoreCoordinator?.row(for: objectID)
    }

    /// The objects for `ids`; those that are new faults share one batch, so that touching one reads the
    /// rows of its batch neighbours in the same store query.
    /// `batched: false` for faults whose rows the caller reads at once (prefetching): no batch is made.
    func faults(for ids: [NSManagedObjectID], batchSize: Int = FaultBatch.defaultSize, refetched: Bool = false, batched: Bool = true) -> [NSManagedObject] {
        let batch = batched && ids.count > 1 ? FaultBatch(ids, size: batchSize) : nil
        return ids.map { id in
            let object = self.object(with: id)
            // A refetch must not be answered from a row read before it: the fault reads its batch again.
            if refetched, object.isFault { object.setRow(nil) }
            if let batch, object.isFault, object.rowValues == nil { object.faultBatch = batch }
            return object
        }
    }

    /// Reads, in one query, the rows of the unfired faults of `batch` in the window around `objectID`.
    func fillBatch(_ batch: FaultBatch, around objectID: NSManagedObjectID) {
        let window = batch.window(around: objectID)
        var wanted: [NSManagedObjectID] = []
        for id in window {
            guard let object = registry[id], object.isFault, object.rowValues == nil else { continue }
            wanted.append(id)
        }
        guard wanted.count > 1, let coordinator = persistentStoreCoordinator else { return }
        for row in coordinator.rows(for: wanted) {
            guard let object = registry[row.objectID], object.isFault, object.rowValues == nil else { continue }
            object.setRow(row)
            object.faultBatch = nil
        }
    }

    func storeObjectIDs(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID) -> [NSManagedObjectID] {
        persistentStoreCoordinator?.objectIDs(forRelationship: relationship, of: objectID) ?? []
    }
}

/// Objects fetched together, in fetch order: firing one fault reads the rows of the faults of its window
/// (`size` objects) in one query, as Core Data's batch faulting does.
final class FaultBatch {
    static let defaultSize = 100
    let ids: [NSManagedObjectID]
    let size: Int
    private var positions: [NSManagedObjectID: Int] = [:]

    init(_ ids: [NSManagedObjectID], size: Int) {
        self.ids = ids
        self.size = max(size, 1)
    }

    func window(around id: NSManagedObjectID) -> ArraySlice<NSManagedObjectID> {
        if positions.isEmpty { for (index, member) in ids.enumerated() { positions[member] = index } }
        guard let position = positions[id] else { return [] }
        let start = position / size * size
        return ids[start..<min(start + size, ids.count)]
    }
}

/// The contexts whose blocks run on this thread, innermost last.
final class PerformStack {
    var contexts: [NSManagedObjectContext] = []

    func contains(_ context: NSManagedObjectContext) -> Bool { contexts.contains { $0 === context } }

    static var current: PerformStack {
        let key = "OpenCoreData.PerformStack"
        if let stack = Thread.current.threadDictionary[key] as? PerformStack { return stack }
        let stack = PerformStack()
        Thread.current.threadDictionary[key] = stack
        return stack
    }
}

/// Carries a result across the continuation of `perform(schedule:_:)`; the context's queue hands the
/// value over and never touches it again.
struct UnsafeResultBox<T, E: Error>: @unchecked Sendable {
    let result: Result<T, E>

    consuming func take() throws(E) -> sending T {
        nonisolated(unsafe) let value = result
        switch value {
        case .success(let success): return success
        case .failure(let failure): throw failure
        }
    }
}

/// Objects listed since the last ObjectsDidChange as inserted, updated or deleted, each once: a status
/// bit says whether an object counts here, so adding one is an append (not a hash insert) and removing
/// one clears its bit (the entry stays, and no longer counts). A pass over them then goes in the order
/// they were listed, about their order in memory (D35). An entry whose object has since joined another
/// context counts no longer either: the bit is that context's then (`insert(_:)` clears a joining
/// object's bits, `forgetListings()`).
struct PendingObjects {
    private let bit: NSManagedObject.Status
    private var objects: [NSManagedObject] = []

    init(_ bit: NSManagedObject.Status) { self.bit = bit }

    /// Whether nothing was listed (entries whose bit was cleared count here).
    var isEmpty: Bool { objects.isEmpty }

    func contains(_ object: NSManagedObject) -> Bool { object.status.contains(bit) }

    mutating func add(_ object: NSManagedObject) {
        guard !object.status.contains(bit) else { return }
        object.status.insert(bit)
        objects.append(object)
    }

    func remove(_ object: NSManagedObject) { object.status.remove(bit) }

    /// The objects that count, added to `set` (each is passed to `each` first); the list is then empty.
    mutating func take(adding set: Set<NSManagedObject> = [], owner: Backreference, _ each: (NSManagedObject) -> Void = { _ in }) -> Set<NSManagedObject> {
        var result = set
        result.reserveCapacity(set.count + objects.count)
        for object in objects where object.status.contains(bit) && object.isListed(by: owner) {
            object.status.remove(bit)
            each(object)
            result.insert(object)
        }
        objects = []
        return result
    }

    /// Empties the list without taking its objects.
    mutating func forget(owner: Backreference) {
        for object in objects where object.isListed(by: owner) { object.status.remove(bit) }
        objects = []
    }
}

extension NSManagedObject {
    /// Whether the listing bits of this object, found in a list of the context `owner`, are that
    /// context's: it is still there, or in no context (it left, and joined none since).
    func isListed(by owner: Backreference) -> Bool {
        let current = contextReference
        return current == nil || current === owner
    }

    /// Clears the bits saying which of a context's lists hold the object, and the event's old values:
    /// for an object joining a context from none, which a former context may still list.
    func forgetListings() {
        status.subtract([.unprocessedInsert, .unprocessedUpdate, .unprocessedDelete])
        if status.contains(.listedForEventValues) {
            clearEventOldValues()
            status.remove(.listedForEventValues)
        }
    }
}

/// The concurrency debugging switch behind `NSManagedObjectContext.concurrencyDebugEnabled`, apart from
/// the class: a static of the class passed its metadata (an accessor call) on every property access.
enum ConcurrencyDebug {
    static var isEnabled: Bool {
        @inline(__always) get {
            let state = self.state.load(ordering: .relaxed)
            return state == 0 ? readSetting() : state == 2
        }
        set { state.store(newValue ? 2 : 1, ordering: .relaxed) }
    }

    // Read on every property access, so an atomic with a constant start (a relaxed load is a plain
    // load) rather than a lazy global, whose `swift_once` call ran on every read: 0 until the
    // environment is read, then 1 (off) or 2 (on). Tests set it between uses.
    private static let state = Atomic<UInt8>(0)

    @inline(never)
    private static func readSetting() -> Bool {
        var enabled = ProcessInfo.processInfo.environment["OCD_CONCURRENCY_DEBUG"] == "1"
        let arguments = ProcessInfo.processInfo.arguments
        if !enabled, let index = arguments.firstIndex(of: "-com.apple.CoreData.ConcurrencyDebug"), index + 1 < arguments.count {
            enabled = arguments[index + 1] != "0"
        }
        // Only if nobody set it meanwhile: a setting made while the environment was read stands.
        let (exchanged, current) = state.compareExchange(expected: 0, desired: enabled ? 2 : 1, ordering: .relaxed)
        return exchanged ? enabled : current == 2
    }
}
