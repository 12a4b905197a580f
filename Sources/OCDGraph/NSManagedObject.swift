import Foundation
import CSwiftRuntime
import Observation
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSExpression

/// The type of snapshot change that `awake(fromSnapshotEvents:)` reports.
public struct NSSnapshotEventType: OptionSet, Sendable {
    /// Apple's values (`NSSnapshotEventUndoInsertion` is 1 << 1 …).
    public let rawValue: UInt
    /// The events of `rawValue`.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// An undo brought back an object whose insertion was undone.
    public static let undoInsertion = NSSnapshotEventType(rawValue: 1 << 1)
    /// An undo brought back a deleted object.
    public static let undoDeletion = NSSnapshotEventType(rawValue: 1 << 2)
    /// An undo restored an object's values.
    public static let undoUpdate = NSSnapshotEventType(rawValue: 1 << 3)
    /// `rollback()` restored the object's committed values.
    public static let rollback = NSSnapshotEventType(rawValue: 1 << 4)
    /// `refresh(_:mergeChanges:)` took the stored values.
    public static let refresh = NSSnapshotEventType(rawValue: 1 << 5)
    /// A merge policy resolving a conflict took the stored values.
    public static let mergePolicy = NSSnapshotEventType(rawValue: 1 << 6)
}

/// A managed object: the values of one instance of an entity, tracked by a managed object context.
///
/// With no subclass at all, `value(forKey:)` and `setValue(_:forKey:)` read and write every modeled
/// property. Subclasses declare typed properties with `@Managed` (Apple's `@NSManaged`), or write their own
/// accessors over `primitiveValue(forKey:)` between the access and change notifications, as Core Data's
/// accessor guide shows.
///
/// Subclasses that declare a designated initializer must also implement the required
/// `init(entity:insertInto:)`: the context creates fetched objects through it.
open class NSManagedObject: NSObject, NSFetchRequestResult {
    struct Status: OptionSet {
        let rawValue: UInt16
        static let fault = Status(rawValue: 1 << 0)
        static let inserted = Status(rawValue: 1 << 1)
        static let updated = Status(rawValue: 1 << 2)
        static let deleted = Status(rawValue: 1 << 3)
        static let awakingFromFetch = Status(rawValue: 1 << 4)
        static let transitioning = Status(rawValue: 1 << 5)
        static let awakenedFromInsert = Status(rawValue: 1 << 6)
        /// Deleted because its row was gone when the fault fired (`shouldDeleteInaccessibleFaults`).
        static let inaccessible = Status(rawValue: 1 << 7)
        /// In the context's `objectsWithEventValues`: a set bit instead of a hash per property change.
        static let listedForEventValues = Status(rawValue: 1 << 8)
        /// An inserted object whose insertion an ObjectsDidChange has announced: its later changes are
        /// announced as updates. A bit, so that a change needs no lookup in the event's inserted objects.
        static let insertionAnnounced = Status(rawValue: 1 << 9)
        /// In the context's `unprocessedInserted`, `unprocessedUpdated` or `unprocessedDeleted` (which
        /// may still hold it once the bit is cleared: it then no longer counts there; `PendingObjects`).
        static let unprocessedInsert = Status(rawValue: 1 << 13)
        static let unprocessedUpdate = Status(rawValue: 1 << 14)
        static let unprocessedDelete = Status(rawValue: 1 << 15)
        /// The three below hold the class's key-table flags once read (`hasClassAccessors`).
        static let keyTableRead = Status(rawValue: 1 << 10)
        static let classHasAccessors = Status(rawValue: 1 << 11)
        static let classHasPrimitiveAccessors = Status(rawValue: 1 << 12)

        /// What an object keeps of its status when it leaves its context (reset, the context going
        /// away): whether it is a fault, and that it was awakened from insertion (it is not again).
        static let keptOutsideAContext: Status = [.fault, .awakenedFromInsert]

        /// What an object's status keeps of its class's key table once read.
        static func keyTableFlags(of table: ManagedKeyTable.Shared) -> Status {
            var flags: Status = .keyTableRead
            if table.hasAccessors { flags.insert(.classHasAccessors) }
            if table.hasPrimitiveAccessors { flags.insert(.classHasPrimitiveAccessors) }
            return flags
        }
    }

    /// The entity of the object (its layout's: one word less per object).
    public var entity: NSEntityDescription { layout.entity }
    /// The object's ID: temporary until the object is saved (or given a permanent ID).
    // Unchecked (D23): every registry lookup reads it, and the runtime's access check was a sixth of one.
    @exclusivity(unchecked) public internal(set) var objectID: NSManagedObjectID
    /// The context the object is registered in; nil for an object not inserted (or deleted and saved).
    public internal(set) var managedObjectContext: NSManagedObjectContext? {
        get { contextReference?.load(as: NSManagedObjectContext.self) }
        set { contextReference = newValue?.backreference }
    }
    /// The context's back-reference rather than a `weak` one (decision D24); compared by identity where
    /// the question is only which context, if any, holds the object. A context clears its objects' on
    /// `deinit`.
    @exclusivity(unchecked) var contextReference: Backreference?

    let layout: EntityLayout
    // The per-object state below is `@exclusivity(unchecked)`: an object is used on its context's queue
    // only, none of these is passed `inout` across a call, and the runtime's access checks on every read
    // and write of a class property were 5 % of inserting and reading objects.

    /// Current values by slot. A to-many slot holds a `ToManyStorage`, or nil while not loaded.
    @exclusivity(unchecked) var slots: SlotValues
    /// Where the object's row is (see ``rowValues`` and ``faultBatch``).
    enum RowState {
        case none
        case values(SlotValues)
        case batch(FaultBatch)
    }
    /// One word for what were two: a fault has its row read ahead or a batch to read it with, never
    /// both, and a realized object has no batch. A word less makes an object a 112-byte allocation, not
    /// a 128-byte one.
    @exclusivity(unchecked) var rowState: RowState = .none

    /// The object's row, as its values and version rather than the store's `StoreRow` (48 bytes less per
    /// object): for a realized object, the values last fetched or saved (nil for a new object); for a
    /// fault, a row already read, so that firing it needs no store trip (nil: read when fired). Turning
    /// into a fault drops it, as it drops the values it was the snapshot of. Setting it drops the batch.
    var rowValues: SlotValues? {
        @inline(__always) get {
            if case .values(let values) = rowState { return values }
            return nil
        }
        set {
            if let newValue {
                rowState = .values(newValue)
            } else if case .values = rowState {
                rowState = .none
            }
        }
    }
    /// The version (`Z_OPT`) of ``rowValues``.
    @exclusivity(unchecked) var rowVersion: Int64 = 0

    /// Takes `row` as the object's row (see ``rowValues``); nil forgets it.
    func setRow(_ row: StoreRow?) {
        rowValues = row?.values
        rowVersion = row?.version ?? 0
    }

    /// ``rowValues`` as a `StoreRow`, made for the rare readers that take one (merge conflicts, merge
    /// policies).
    var rowSnapshot: StoreRow? {
        rowValues.map { StoreRow(objectID: objectID, version: rowVersion, values: $0) }
    }

    /// The version of the row at hand, or nil without one.
    var knownRowVersion: Int64? { rowValues == nil ? nil : rowVersion }
    /// The objects fetched together with this fault (a `fetchBatchSize` fetch, a to-many relationship):
    /// firing it reads its neighbours' rows in the same query. Only for a fault without ``rowValues``:
    /// setting it drops them.
    var faultBatch: FaultBatch? {
        get {
            if case .batch(let batch) = rowState { return batch }
            return nil
        }
        set {
            if let newValue {
                rowState = .batch(newValue)
            } else if case .batch = rowState {
                rowState = .none
            }
        }
    }
    @exclusivity(unchecked) var status: Status = []
    /// While positive, relationship changes do not update the inverse (the change *is* an inverse update).
    /// Beside `status`, the next field and the mask below, the four share one word. One byte: it counts
    /// inverse updates nested on one object, rarely more than a few; past 127 (observers that change the
    /// relationship again from inside its notifications) the rest is counted in `Extras`. Changed through
    /// `beginInverseUpdate()` and `endInverseUpdate()` only.
    @exclusivity(unchecked) private(set) var inverseUpdateDepth: Int8 = 0

    /// Enters an inverse update: relationship changes of this object update no inverse until it ends.
    func beginInverseUpdate() {
        if inverseUpdateDepth < Int8.max { inverseUpdateDepth += 1 } else { madeExtras().inverseUpdateOverflow += 1 }
    }

    /// Ends the innermost inverse update.
    func endInverseUpdate() {
        if let extras, extras.inverseUpdateOverflow > 0 { extras.inverseUpdateOverflow -= 1 } else { inverseUpdateDepth -= 1 }
    }
    /// The slot, plus one, of the change begun on the fast path (an unobserved attribute of slot 0 to 31:
    /// no old value kept) and not yet ended; 0 for none. A field rather than an entry in
    /// `pendingChanges`, whose buffer was an allocation per changed object; a second change begun while
    /// one is pending goes to the list. A slot is here or in the list, never both.
    @exclusivity(unchecked) var fastPendingSlot: UInt8 = 0
    /// The persistent attributes of slots 0 to 31 changed in the current event: their old values
    /// (`changedValuesForCurrentEvent()`) are ``eventStartValues``'.
    @exclusivity(unchecked) var eventAttributeMask: UInt32 = 0
    /// The values as they were at the event's first change of an attribute: a copy of `slots` that shares
    /// the buffer the change then copies from (a fetched object's row, a new object's defaults), so
    /// recording old values costs no allocation (D28).
    @exclusivity(unchecked) var eventStartValues: SlotValues?
    /// Other old values of the current event, by slot: relationships (a to-many changes in place) and
    /// attributes past slot 31. Empty until one of them changes.
    var eventOldValues: [EventOldValue] {
        get { extras?.eventOldValues ?? [] }
        // In place: a get and a set would copy the array at every change of it.
        _modify { yield &madeExtras().eventOldValues }
    }
    /// Changes begun by `willChangeValue` and not yet ended, by slot (rarely more than one at a time):
    /// relationship members and observed values, used by `didChangeValue`.
    @exclusivity(unchecked) var pendingChanges: [(slot: Int, change: PendingChange)] = []

    enum EventOldValue {
        case unrecorded
        case recorded(Any?)
    }

    func hasEventOldValue(_ slot: Int) -> Bool {
        if slot < 32, eventAttributeMask & (1 << UInt32(slot)) != 0 { return true }
        guard slot < eventOldValues.count, case .recorded = eventOldValues[slot] else { return false }
        return true
    }

    /// Records `old`, the value of `slot` now, as its old value in the current event.
    func recordEventOldValue(_ old: Any?, slot: Int) {
        // Not for a class with primitive accessors: its slots only mirror what it keeps itself.
        guard slot < 32, layout.kinds[slot] == .attribute, !hasPrimitiveAccessors else {
            if eventOldValues.isEmpty { eventOldValues = Array(repeating: .unrecorded, count: layout.properties.count) }
            eventOldValues[slot] = .recorded(old)
            return
        }
        if var start = eventStartValues {
            // A write that recorded nothing (a primitive setter) may have changed the slot since the
            // snapshot: the old value is the value now, as it would have been recorded then.
            if !start.holdsSame(slot, as: slots) && !Self.valuesEqual(start.stored(slot), old) {
                eventStartValues = nil
                start[slot] = old
                eventStartValues = start
            }
        } else {
            eventStartValues = slots
        }
        eventAttributeMask |= 1 << UInt32(slot)
    }

    /// `recordEventOldValue(slots.stored(slot), slot:)` for a persistent attribute below slot 32 of a class
    /// without primitive accessors, not yet recorded in this event: the old value is read only when the
    /// snapshot no longer holds it.
    func recordEventStartValue(slot: Int) {
        // Compared without references of their own: the object keeps both values meanwhile.
        guard let start = eventStartValues?.unretained else {
            eventStartValues = slots
            eventAttributeMask |= 1 << UInt32(slot)
            return
        }
        if start.holdsSame(slot, as: slots.unretained) {
            eventAttributeMask |= 1 << UInt32(slot)
        } else {
            recordEventOldValue(slots.stored(slot), slot: slot)
        }
    }

    /// Forgets the current event's old values.
    func clearEventOldValues() {
        if extras != nil { clearExtrasEventOldValues() }
        eventStartValues = nil
        eventAttributeMask = 0
    }

    // Apart, as it reads the `ObservationRegistrar?` (a resilient type, whose metadata a function
    // holding one fetches on entry): most objects have no `Extras`.
    @inline(never)
    private func clearExtrasEventOldValues() {
        guard let extras else { return }
        // Dropped when nothing else needs it: an object edited through a relationship keeps no
        // `Extras` past its event.
        if extras.observers.isEmpty && extras.registrar == nil && extras.inverseUpdateOverflow == 0 {
            self.extras = nil
        } else {
            extras.eventOldValues = []
        }
    }

    /// Whether the object has made its ``Extras`` (for tests of when it does).
    package var hasExtrasForTesting: Bool { extras != nil }
    var observers: [KeyObserver] {
        get { extras?.observers ?? [] }
        _modify { yield &madeExtras().observers }
    }
    var registrar: ObservationRegistrar? {
        get { extras?.registrar }
        set { if extras != nil || newValue != nil { madeExtras().registrar = newValue } }
    }

    /// State few objects need, made on first use (as Core Data's `cd_extras`): it would otherwise take
    /// three words of every object.
    final class Extras {
        // Unchecked as the object's own state is (see `slots`): used on the context's queue only.
        /// Old values of the current event that `eventStartValues` cannot hold (D28).
        @exclusivity(unchecked) var eventOldValues: [EventOldValue] = []
        /// Key-value observers.
        @exclusivity(unchecked) var observers: [KeyObserver] = []
        /// Made on the first read inside `withObservationTracking` only (D25).
        @exclusivity(unchecked) var registrar: ObservationRegistrar?
        /// Inverse updates nested on the object past the 127 `inverseUpdateDepth` counts.
        @exclusivity(unchecked) var inverseUpdateOverflow = 0
    }
    @exclusivity(unchecked) var extras: Extras?

    func madeExtras() -> Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }
    /// The registry of the context that registered the object, which the object leaves in `deinit`.
    /// Unchecked as the rest (D23): the runtime's access checks were read per object in `deinit`.
    @exclusivity(unchecked) var registry: ObjectRegistry?
    /// The class's key table (accessors by key), looked up when needed: `status` keeps whether there is
    /// anything in it (`hasClassAccessors`), so a stored reference would cost a word of every object.
    var sharedKeyTable: ManagedKeyTable.Shared { EntityRuntime.of(layout).keyTable(for: Swift.type(of: self)) }
    var keyTable: ManagedKeyTable { sharedKeyTable.table }

    /// Whether the class declares accessors (`hasClassAccessors`), from `status` after the
    /// first look: reading it through the table retained and released the table at every access.
    var hasClassAccessors: Bool { keyTableFlags.contains(.classHasAccessors) }
    /// Whether the class declares primitive accessors (`hasPrimitiveAccessors`), likewise.
    var hasPrimitiveAccessors: Bool { keyTableFlags.contains(.classHasPrimitiveAccessors) }

    @inline(__always)
    private var keyTableFlags: Status {
        if !status.contains(.keyTableRead) { readKeyTableFlags() }
        return status
    }

    @inline(never)
    private func readKeyTableFlags() {
        status.formUnion(Status.keyTableFlags(of: sharedKeyTable))
    }

    struct PendingChange {
        var oldObjects: [NSManagedObject]?
        var oldValue: Any?
        var depth: Int
    }

    /// Creates an object of `entity` and, if `context` is given, inserts it there (which calls
    /// `awakeFromInsert()`). The model's default values are set first.
    public required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        let pending = FaultCreation.take(for: Self.self, entity: entity)
        // The pending fault first: reading `isAbstract` (another module's stored property) is a runtime
        // access check, about 60 instructions per fetched object otherwise.
        if pending == nil && entity.isAbstract {
            fatalError("Cannot create an instance of the abstract entity \(entity.name ?? "?").")
        }
        self.layout = EntityLayout.of(entity)
        self.objectID = pending?.pointee.objectID.takeUnretainedValue() ?? NSManagedObjectID(temporaryFor: entity)
        // Shared until the first write (copy-on-write): a fault's values come from its row.
        self.slots = layout.nilValues
        super.init()
        // A fault's values come from its row; defaults and insertion are for new objects only.
        if let pending {
            FaultCreation.taken(pending, by: self, insertInto: context)
            return
        }
        becomeNewObject(insertInto: context)
    }

    /// The set-up of a new object: the model's defaults where nothing is set yet, empty to-many
    /// relationships where none is made, and the insertion asked for (unless it is inserted already).
    private func becomeNewObject(insertInto context: NSManagedObjectContext?) {
        for (slot, value) in EntityRuntime.of(layout).defaultValues where slots.isNil(slot) {
            slots[slot] = Self.copyIfNeeded(value)
        }
        for (slot, relationship) in layout.relationships where relationship.isToMany && !(slots[slot] is ToManyStorage) {
            slots[slot] = ToManyStorage()
        }
        if let context, managedObjectContext == nil { context.insert(self) }
    }

    deinit {
        // Unretained: the object holds both until its fields are destroyed, after this (a retain and a
        // release of each per object otherwise).
        guard let registry = registry.map(Unmanaged.passUnretained) else { return }
        let id = Unmanaged.passUnretained(objectID)
        let object = Unmanaged.passUnretained(self).toOpaque()
        registry._withUnsafeGuaranteedRef { registry in
            id._withUnsafeGuaranteedRef { id in registry.objectDeinitializing(object, id: id) }
        }
    }

    /// Creates an object of the entity this class is the class of, and inserts it into `context`.
    public convenience init(context: NSManagedObjectContext) {
        guard let entity = Self.findEntity(in: context.persistentStoreCoordinator?.managedObjectModel) else {
            fatalError("An NSManagedObject of class '\(Self.self)' must have a valid NSEntityDescription.")
        }
        self.init(entity: entity, insertInto: context)
    }

    /// An object for a fetched row or `object(with:)`: a fault, registered in `context`.
    static func makeFault(for objectID: NSManagedObjectID, row: StoreRow?, in context: NSManagedObjectContext,
                          classAndFlags: (NSManagedObject.Type, Status)? = nil) -> NSManagedObject {
        let (type, keyTableFlags) = classAndFlags ?? faultClassAndFlags(of: objectID.entity)
        let (object, taker) = FaultCreation.creating(objectID, of: type) { type.init(entity: objectID.entity, insertInto: nil) }
        object.status = keyTableFlags.union(.fault)
        object.setRow(row)
        object.managedObjectContext = context
        if taker?.object !== object {
            // An object of the same class and entity, made by the class's initializer before `super.init`,
            // took the ID (see FaultCreation), and this one was set up as a new object. This one becomes
            // the fault, registered before the other turns into the new object it was asked to be (whose
            // insertion runs `awakeFromInsert`, which may look the fault up).
            object.objectID = objectID
            object.slots = object.layout.nilValues
            context.registry[objectID] = object
            if let taker { taker.object.becomeNewObjectAfterTakingAFaultsID(insertInto: taker.context) }
        }
        return object
    }

    /// The class of `entity`'s objects with its key table's `status` flags, which ``makeFault(for:row:in:classAndFlags:)``
    /// gives a fault of that entity (a fetch reads them once per entity).
    static func faultClassAndFlags(of entity: NSEntityDescription) -> (NSManagedObject.Type, Status) {
        EntityRuntime.of(EntityLayout.of(entity)).managedObjectClassAndKeyTableFlags(of: entity)
    }

    /// The repair of an object that took a fault's ID in `init`: it gets a temporary ID (moving its
    /// registration if its initializer inserted it), then the set-up of a new object around what its
    /// initializer set after `super.init`.
    private func becomeNewObjectAfterTakingAFaultsID(insertInto context: NSManagedObjectContext?) {
        let temporary = NSManagedObjectID(temporaryFor: entity)
        if let owner = managedObjectContext {
            owner.registry.move([self], to: [temporary], owner: owner.backreference)
        } else {
            objectID = temporary
        }
        becomeNewObject(insertInto: context)
    }

    private static func copyIfNeeded(_ value: Any) -> Any {
        if let copying = value as? NSCopying, type(of: value) is AnyClass { return copying.copy(with: nil) }
        return value
    }

    // MARK: Key-value coding (overridable; the implementations are in NSManagedObject+KeyValueCoding.swift)

    /// The value of the property `key`: a class-provided accessor if the class has one for the key,
    /// otherwise the modeled property's value (firing the fault). To-many relationships answer
    /// `Set<NSManagedObject>` (`NSOrderedSet` when ordered). Stops on a key the entity does not have, as
    /// Apple raises `NSUnknownKeyException`.
    open func value(forKey key: String) -> Any? { kvcValue(forKey: key) }

    /// Sets the property `key`: through a class-provided accessor if the class has one, otherwise the
    /// modeled property with change notifications and inverse maintenance. Stops on an unknown key or a
    /// value of the wrong type, as Apple raises.
    open func setValue(_ value: Any?, forKey key: String) { kvcSetValue(value, forKey: key) }

    /// The value at a dotted key path; a to-many step maps the rest of the path over its members and
    /// answers a set. Collection operators (`@count`, `@sum.salary` …) work as in key-value coding.
    open func value(forKeyPath keyPath: String) -> Any? { kvcValue(forKeyPath: keyPath) }

    /// Sets the value at a dotted key path on the object the path's prefix reaches (nothing if it is nil).
    open func setValue(_ value: Any?, forKeyPath keyPath: String) { kvcSetValue(value, forKeyPath: keyPath) }

    /// The stored value of `key`, without access notifications (a custom primitive accessor wins). A
    /// to-many relationship answers a `Set<NSManagedObject>` (an `NSOrderedSet` when ordered).
    open func primitiveValue(forKey key: String) -> Any? { kvcPrimitiveValue(forKey: key) }

    /// Sets the stored value of `key` without change notifications (a custom primitive accessor wins).
    /// An inverse relationship is updated by the surrounding `didChangeValue(forKey:)`, not here.
    open func setPrimitiveValue(_ value: Any?, forKey key: String) { kvcSetPrimitiveValue(value, forKey: key) }

    /// Fires the fault (for any key, or nil) and lets Swift Observation record the read.
    open func willAccessValue(forKey key: String?) { noteWillAccess(key) }

    /// The end of an access; present for the accessor pattern.
    open func didAccessValue(forKey key: String?) {}

    /// Announces a change of `key`: records the old value for observers, the current event and inverse
    /// maintenance.
    open func willChangeValue(forKey key: String) { noteWillChange(key) }

    /// Completes a change of `key`: marks the object changed, updates an inverse relationship and
    /// notifies observers.
    open func didChangeValue(forKey key: String) { noteDidChange(key) }

    /// Announces a mutation of the to-many relationship `key` by `objects`.
    open func willChangeValue(forKey key: String, withSetMutation mutation: NSKeyValueSetMutationKind, using objects: Set<AnyHashable>) {
        noteWillChange(key, mutation: mutation, objects: objects)
    }

    /// Completes a mutation of the to-many relationship `key`.
    open func didChangeValue(forKey key: String, withSetMutation mutation: NSKeyValueSetMutationKind, using objects: Set<AnyHashable>) {
        noteDidChange(key, mutation: mutation, objects: objects)
    }

    /// Announces a change of the members at `indexes` of the ordered to-many relationship `key`:
    /// `.insertion` (indexes in the new value), `.removal` (indexes in the old value) or `.replacement`.
    /// Observers are told the kind and the indexes and, as they asked, the members removed or replaced
    /// (old) and the members inserted or put in their place (new), each as an array in index order.
    /// Paired with ``didChange(_:valuesAt:forKey:)``; `.setting` announces a change of the whole value.
    open func willChange(_ changeKind: NSKeyValueChange, valuesAt indexes: IndexSet, forKey key: String) {
        noteWillChange(key, kind: changeKind, indexes: indexes)
    }

    /// Completes a change announced by ``willChange(_:valuesAt:forKey:)``: marks the object changed,
    /// updates the inverse relationship and notifies observers.
    open func didChange(_ changeKind: NSKeyValueChange, valuesAt indexes: IndexSet, forKey key: String) {
        noteDidChange(key, kind: changeKind, indexes: indexes)
    }

    /// The class's key-value coding table: key path names, class-provided accessors, custom primitive
    /// accessors and `validate<Key>` methods. `@ManagedObject` overrides it; the base table is empty.
    open class var managedKeyTable: ManagedKeyTable { ManagedKeyTable() }

    // MARK: Validation (overridable; the implementations are in NSManagedObject+Validation.swift)

    /// Validates `value` for the property `key`: the model's constraints (optionality, validation
    /// predicates such as minimum and maximum, relationship counts), then the class's `validate<Key>`
    /// method, which may replace the value. Throws Core Data's validation error. For a key the model does
    /// not define, only the class's `validate<Key>` method runs, as in key-value coding (none: valid).
    open func validateValue(_ value: inout Any?, forKey key: String) throws { try modelValidateValue(&value, forKey: key) }

    /// Validates the object for a save that inserts it. Throws one error, or
    /// `NSValidationMultipleErrorsError` with the errors under `NSDetailedErrorsKey`.
    open func validateForInsert() throws { try modelValidateForInsert() }

    /// Validates the object for a save that updates it.
    open func validateForUpdate() throws { try modelValidateForUpdate() }

    /// Validates the object for a save that deletes it: a Deny delete rule with objects at its
    /// destination fails with `NSValidationRelationshipDeniedDeleteError`.
    open func validateForDelete() throws { try modelValidateForDelete() }

    // MARK: Entity lookup

    /// The entity whose objects are instances of this class, in the models in use.
    open class func entity() -> NSEntityDescription {
        guard let entity = findEntity(in: nil) else {
            fatalError("No NSEntityDescriptions in any model claim the NSManagedObject subclass '\(self)' so +entity is confused. Have you loaded your NSManagedObjectModel yet? (Set the entity's managedObjectClassName, or register the class with NSManagedObjectModel.registerManagedObjectClass(_:forName:).)")
        }
        return entity
    }

    static func findEntity(in model: NSManagedObjectModel?) -> NSEntityDescription? {
        let models = (model.map { [$0] } ?? []) + ModelsInUse.all
        for model in models {
            if let entity = model.entities.first(where: { ($0.resolvedManagedObjectClass as? NSManagedObject.Type) == self }) {
                return entity
            }
            let shortName = String(describing: self)
            if let entity = model.entities.first(where: { ($0.managedObjectClassName ?? "").split(separator: ".").last.map(String.init) == shortName }) {
                return entity
            }
        }
        return nil
    }

    /// A fetch request for this class's entity.
    open class func fetchRequest() -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = entity()
        return request
    }

    // MARK: Flags (none of them fires a fault)

    /// Whether the object was inserted and not yet saved.
    public var isInserted: Bool { status.contains(.inserted) }
    /// Whether the object has unsaved changes (and is neither inserted nor deleted).
    public var isUpdated: Bool { status.contains(.updated) }
    /// Whether the object will be deleted at the next save.
    public var isDeleted: Bool { status.contains(.deleted) }
    /// Whether the object's values are not loaded yet.
    public var isFault: Bool { status.contains(.fault) }
    /// Whether the object is inserted, updated or deleted.
    public var hasChanges: Bool { !status.isDisjoint(with: [.inserted, .updated, .deleted]) }
    /// Whether any persistent property differs from its committed value.
    public var hasPersistentChangedValues: Bool { hasChangedValues }
    /// 0 when the object is realized and not changing state; non-zero for a fault and while it turns into
    /// one or is being filled.
    public var faultingState: Int { status.isDisjoint(with: [.fault, .transitioning, .awakingFromFetch]) ? 0 : 1 }

    /// Whether the context ignores changes to unmodeled properties of the class's objects (true, Core
    /// Data's default). A subclass that answers false has an object marked updated (`isUpdated`, in the
    /// context's `updatedObjects` and the next ObjectsDidChange) when `didChangeValue(forKey:)` ends a
    /// change of a key its entity does not model: Swift has no automatic change notifications, so such a
    /// property's setter announces its changes with `willChangeValue(forKey:)` and
    /// `didChangeValue(forKey:)`. Saving the object writes no column, since nothing modeled changed, but
    /// it is validated and gets `willSave()` and `didSave()`.
    open class var contextShouldIgnoreUnmodeledPropertyChanges: Bool { true }

    /// The keys whose changes change the value of `key` (key-value observing's dependent keys): an
    /// observer of `key` is told of a change of `key` whenever one of them changes. None by default.
    ///
    /// Override it for a derived property, as on Apple platforms. Foundation there also finds a class
    /// property named `keyPathsForValuesAffecting<Key>` through the Objective-C runtime; Swift on Linux
    /// has none, so this method is the only way here. Only keys of the object itself are followed: a key
    /// path through a relationship (`"department.name"`) is ignored.
    ///
    /// ```swift
    /// override class func keyPathsForValuesAffectingValue(forKey key: String) -> Set<String> {
    ///     key == "fullName" ? ["firstName", "lastName"] : super.keyPathsForValuesAffectingValue(forKey: key)
    /// }
    /// ```
    open class func keyPathsForValuesAffectingValue(forKey key: String) -> Set<String> { [] }

    // MARK: Life cycle hooks

    /// Called once in the object's life, when it is first inserted into a context. Values set here with
    /// primitive setters are the object's starting values.
    open func awakeFromInsert() {}
    /// Called when a fault is filled from the store; change tracking is off.
    open func awakeFromFetch() {}
    /// Called after undo, rollback, refresh and merge change the object's values.
    open func awake(fromSnapshotEvents flags: NSSnapshotEventType) {}

    @available(*, unavailable, renamed: "awake(fromSnapshotEvents:)")
    open func awakeFromSnapshotEvents(_ flags: NSSnapshotEventType) {}
    /// Called before the object is saved (inserted, updated or deleted).
    open func willSave() {}
    /// Called after the object was saved.
    open func didSave() {}
    /// Called when the object is about to be deleted, before its relationships are broken.
    open func prepareForDeletion() {}
    /// Called before the object turns into a fault.
    open func willTurnIntoFault() {}
    /// Called after the object turned into a fault: clear caches here.
    open func didTurnIntoFault() {}

    // MARK: Faulting

    /// Fills a fault from its cached row or the store.
    @inline(__always)
    func fireFault() {
        // The test inline, the work apart: every read and set asks, and the work's prologue (saving
        // registers for a long function) cost more than the test.
        if status.contains(.fault) { fireFaultNow() }
    }

    @inline(never)
    private func fireFaultNow() {
        // A fault with its row read ahead (a fetch's) of an entity of attributes only shares the row's
        // values: the context is not needed, and loading it (a lock and a retain) was a fifth of firing.
        // A context going away first takes its objects' context references, then their rows, so a fault
        // that passes this test is a live context's.
        // The row is bound last: with nothing opaque between the binding and the assignment, the values
        // are retained once, for the slots.
        if !hasPrimitiveAccessors, contextReference != nil, layout.hasOnlyPersistentAttributes,
           case .values(let values) = rowState, values.count == slots.count {
            status.remove(.fault)
            slots = values
            status.insert(.awakingFromFetch)
            awakeFromFetch()
            status.remove(.awakingFromFetch)
            return
        }
        guard let context = managedObjectContext else {
            status.remove(.fault)
            return
        }
        if rowValues == nil, let batch = faultBatch {
            context.fillBatch(batch, around: objectID)
        }
        faultBatch = nil
        if rowValues == nil, let row = context.storeRow(for: objectID) { setRow(row) }
        guard let values = rowValues else {
            if context.shouldDeleteInaccessibleFaults {
                // Apple's behaviour: the object becomes a deleted object with nil values.
                status.remove(.fault)
                for (slot, relationship) in layout.relationships where relationship.isToMany { slots[slot] = ToManyStorage() }
                context.markInaccessible(self)
                return
            }
            fatalError("CoreData could not fulfill a fault for '\(objectID)'")
        }
        fill(values: values, version: rowVersion, in: context)
        status.insert(.awakingFromFetch)
        awakeFromFetch()
        status.remove(.awakingFromFetch)
    }

    /// Copies a row's values into the slots (relationships as faults) and makes it the committed row.
    func fill(from row: StoreRow, in context: NSManagedObjectContext) {
        fill(values: row.values, version: row.version, in: context)
    }

    /// ``fill(from:in:)`` of a row's values and version.
    func fill(values: SlotValues, version: Int64, in context: NSManagedObjectContext) {
        status.insert(.transitioning)
        status.remove(.fault)
        if layout.hasOnlyPersistentAttributes && values.count == slots.count {
            // Shares the row's storage until the first change (copy-on-write): no second copy of the values.
            slots = values
        } else {
            fillSlots(from: values, in: context)
        }
        rowValues = values
        rowVersion = version
        if hasPrimitiveAccessors {
            for (key, accessor) in keyTable.primitiveAccessors {
                if let slot = layout.slot(named: key), let set = accessor.set { set(self, slots[slot]) }
            }
        }
        status.remove(.transitioning)
    }

    private func fillSlots(from values: SlotValues, in context: NSManagedObjectContext) {
        for (index, kind) in layout.kinds.enumerated() {
            switch kind {
            case .attribute:
                slots.copySlot(index, from: values)
            case .transientAttribute:
                // The default as a new object gets it (numbers in their plain form), not the model's Swift `Int`.
                slots[index] = EntityRuntime.of(layout).defaultValueBySlot[index]
            case .toOne:
                if layout.properties[index].isTransient {
                    slots[index] = nil
                } else {
                    slots[index] = (values[index] as? NSManagedObjectID).map { context.object(with: $0) }
                }
            case .toMany:
                slots[index] = nil
            }
        }
    }

    /// Turns the object back into a fault: its values are dropped and read again on next access.
    func turnIntoFault() {
        // A fault's row would be as stale as the values a realized object drops, and so is the row a
        // realized object was read with: firing reads the store's.
        guard !status.contains(.fault) else {
            setRow(nil)
            faultBatch = nil
            return
        }
        // The hooks are where a class clears caches of its own: no unmodeled change they announce dirties
        // the object again (a refresh or a reset is discarding its changes).
        let context = managedObjectContext
        context?.unmodeledChangesIgnored += 1
        defer { context?.unmodeledChangesIgnored -= 1 }
        willTurnIntoFault()
        notifyingWholesaleChange {
            status.insert(.transitioning)
            slots = layout.nilValues
            setRow(nil)
            pendingChanges = []
            fastPendingSlot = 0
            clearEventOldValues()
            status.insert(.fault)
            status.remove(.transitioning)
        }
        didTurnIntoFault()
    }

    /// Calls `awake(fromSnapshotEvents:)` for the context, which is giving the object values from a
    /// snapshot: unmodeled changes the hook announces do not mark it updated.
    func sendSnapshotEvents(_ events: NSSnapshotEventType) {
        let context = managedObjectContext
        context?.unmodeledChangesIgnored += 1
        defer { context?.unmodeledChangesIgnored -= 1 }
        awake(fromSnapshotEvents: events)
    }

    /// The transient values, kept across a refresh that merges changes.
    func transientValues() -> [(Int, Any?)] {
        layout.properties.indices.filter { layout.properties[$0].isTransient }.map { ($0, slots.stored($0)) }
    }

    func restoreTransientValues(_ values: [(Int, Any?)]) {
        for (slot, value) in values { slots[slot] = value }
    }

    /// Drops every value without the fault hooks: the context is going away.
    func releaseValues() {
        slots = layout.nilValues
        setRow(nil)
        pendingChanges = []
        fastPendingSlot = 0
        status.insert(.fault)
    }

    /// The objects `slot` (a relationship's) holds in memory, loading nothing: nil for a to-many not
    /// loaded yet, no object for a nil to-one.
    func loadedDestinations(_ slot: Int, isToMany: Bool) -> [NSManagedObject]? {
        if isToMany { return (slots[slot] as? ToManyStorage)?.objects }
        return (slots[slot] as? NSManagedObject).map { [$0] } ?? []
    }

    /// The to-many storage of `slot`, loaded from the committed row or the store on first use.
    func toMany(_ slot: Int) -> ToManyStorage {
        fireFault()
        if let storage = slots[slot] as? ToManyStorage { return storage }
        let relationship = layout.properties[slot] as! NSRelationshipDescription
        var ids: [NSManagedObjectID] = []
        if let known = rowValues?[slot] as? [NSManagedObjectID] {
            ids = known
        } else if !objectID.isTemporaryID, let context = managedObjectContext {
            ids = context.storeObjectIDs(forRelationship: relationship, of: objectID)
        }
        let storage = ToManyStorage(managedObjectContext.map { context in context.faults(for: ids) } ?? [])
        slots[slot] = storage
        return storage
    }

    /// Whether the to-many relationship `key` holds its objects (loaded or changed).
    func isToManyLoaded(_ key: String) -> Bool {
        guard let slot = layout.slot(named: key) else { return true }
        return slots[slot] is ToManyStorage || rowValues?[slot] is [NSManagedObjectID]
    }

    /// Sets a prefetched to-many relationship that is not loaded yet.
    func loadToMany(_ key: String, _ objects: [NSManagedObject]) {
        guard let slot = layout.slot(named: key), !(slots[slot] is ToManyStorage) else { return }
        fireFault()
        slots[slot] = ToManyStorage(objects)
    }

    /// Whether the relationship `key` is not loaded (to-many) or points to a fault (to-one). Never fires.
    public func hasFault(forRelationshipNamed key: String) -> Bool {
        guard let slot = layout.slot(named: key), let relationship = layout.properties[slot] as? NSRelationshipDescription else {
            fatalError("hasFaultForRelationshipNamed: \(key) is not a relationship of the entity \(entity.name ?? "?").")
        }
        if status.contains(.fault) { return true }
        if relationship.isToMany { return !(slots[slot] is ToManyStorage) }
        return (slots[slot] as? NSManagedObject)?.isFault ?? false
    }

    /// The IDs of the objects the relationship `key` points to, without firing relationship faults.
    public func objectIDs(forRelationshipNamed key: String) -> [NSManagedObjectID] {
        guard let slot = layout.slot(named: key), let relationship = layout.properties[slot] as? NSRelationshipDescription else {
            fatalError("objectIDsForRelationshipNamed: \(key) is not a relationship of the entity \(entity.name ?? "?").")
        }
        if status.contains(.fault) {
            let values = rowValues ?? managedObjectContext?.storeRow(for: objectID)?.values
            if relationship.isToMany {
                if let ids = values?[slot] as? [NSManagedObjectID] { return ids }
                return managedObjectContext?.storeObjectIDs(forRelationship: relationship, of: objectID) ?? []
            }
            return (values?[slot] as? NSManagedObjectID).map { [$0] } ?? []
        }
        if relationship.isToMany {
            if let storage = slots[slot] as? ToManyStorage { return storage.objects.map(\.objectID) }
            if let ids = rowValues?[slot] as? [NSManagedObjectID] { return ids }
            if objectID.isTemporaryID { return [] }
            return managedObjectContext?.storeObjectIDs(forRelationship: relationship, of: objectID) ?? []
        }
        return (slots[slot] as? NSManagedObject).map { [$0.objectID] } ?? []
    }

    // MARK: Changes

    /// Persistent properties changed since the last fetch or save, with their new values (`NSNull` for
    /// nil). Does not fire relationship faults.
    public func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        visitChanges { _, name, value in
            result[name] = value()
            return true
        }
        return result
    }

    /// Whether `changedValues()` would not be empty, without building it (saving asks it of every
    /// updated object).
    var hasChangedValues: Bool {
        var found = false
        visitChanges { _, _, _ in
            found = true
            return false
        }
        return found
    }

    /// The slots of the persistent properties changed since the object was read or saved.
    var changedPersistentSlots: [Int] {
        var slots: [Int] = []
        visitChanges { slot, _, _ in
            slots.append(slot)
            return true
        }
        return slots
    }

    /// Calls `body` with each changed persistent property's slot, name and new value until it returns false.
    private final func visitChanges(_ body: (Int, String, () -> Any) -> Bool) {
        if status.contains(.fault) { return }
        let committedValues = rowValues
        let comparesBits = !hasPrimitiveAccessors
        // Read once: read in the loop, each was retained and released per slot (a save visits every
        // slot of every changed object).
        let layout = self.layout, kinds = layout.kinds, values = slots
        for slot in layout.persistentSlots {
            switch kinds[slot] {
            case .toMany:
                let property = layout.properties[slot]
                let relationship = property as! NSRelationshipDescription
                guard let storage = slots[slot] as? ToManyStorage else { continue }
                let committed = committedValues?[slot] as? [NSManagedObjectID]
                let current = storage.objects.map(\.objectID)
                let changed: Bool
                if let committed {
                    changed = relationship.isOrdered ? committed != current : Set(committed) != Set(current)
                } else if committedValues != nil {
                    // Loaded from the store, not from the row: changed if it was ever touched.
                    changed = storage.modified
                } else {
                    changed = !current.isEmpty
                }
                if changed, !body(slot, property.name, { self.publicValue(ofToMany: storage, relationship) }) { return }
            case .toOne:
                let current = slots[slot] as? NSManagedObject
                let committed = committedValues?[slot] as? NSManagedObjectID
                if current?.objectID != committed, !body(slot, layout.properties[slot].name, { current ?? NSNull() }) { return }
            case .attribute, .transientAttribute:
                if comparesBits, let committedValues {
                    // The same bits in the slot and the committed row are the same value, with no copy out.
                    if values.holdsSame(slot, as: committedValues) { continue }
                    // Two integers with different bits differ: no values made to compare. (Equal bits prove
                    // nothing here: `holdsSame` compares an existential's bits only for nil.)
                    let now = values.words(at: slot), then = committedValues.words(at: slot)
                    if now.type == SlotValues.int64Type, then.type == SlotValues.int64Type, now.value != then.value {
                        if !body(slot, layout.properties[slot].name, { SlotValues.number(now) ?? NSNull() }) { return }
                        continue
                    }
                }
                // As held (numbers maybe unboxed): comparing needs no `NSNumber`; only a reported value is boxed.
                let value = storedAttributeValue(slot: slot)
                let committed = committedValues?.stored(slot) ?? nil
                if !Self.valuesEqual(value, committed), !body(slot, layout.properties[slot].name, { SlotValues.boxed(value) ?? NSNull() }) { return }
            }
        }
    }

    /// An attribute's stored value: from the class's custom primitive accessor when it has one (the value
    /// then lives in the subclass's own storage), else from the slot.
    func attributeValue(slot: Int) -> Any? {
        SlotValues.boxed(storedAttributeValue(slot: slot))
    }

    /// ``attributeValue(slot:)`` as a row holds it: a number maybe unboxed (see `SlotValues`).
    func storedAttributeValue(slot: Int) -> Any? {
        guard hasPrimitiveAccessors else { return slots.stored(slot) }
        let property = layout.properties[slot]
        if let accessor = keyTable.primitiveAccessors[property.name], let attribute = property as? NSAttributeDescription {
            return AttributeValues.normalize(accessor.get(self), for: attribute)
        }
        return slots.stored(slot)
    }

    /// Old values of the persistent properties changed since the last `processPendingChanges()`.
    public func changedValuesForCurrentEvent() -> [String: Any] {
        var result: [String: Any] = [:]
        if let start = eventStartValues {
            for slot in 0..<min(32, layout.properties.count) where eventAttributeMask & (1 << UInt32(slot)) != 0 {
                result[layout.properties[slot].name] = start[slot] ?? NSNull()
            }
        }
        for (slot, entry) in eventOldValues.enumerated() {
            if case .recorded(let old) = entry { result[layout.properties[slot].name] = SlotValues.boxed(old) ?? NSNull() }
        }
        return result
    }

    /// The last fetched or saved values of `keys` (all persistent properties for nil): `NSNull` for nil,
    /// relationships as objects (a set of them for to-many; faults, never fired). Empty for an object
    /// never saved.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        if status.contains(.fault) { fireFault() }
        guard let values = rowValues else { return [:] }
        var result: [String: Any] = [:]
        let names = keys ?? layout.persistentSlots.map { layout.properties[$0].name }
        for name in names {
            guard let slot = layout.slot(named: name) else {
                fatalError("committedValuesForKeys: \(name) is not a property of the entity \(entity.name ?? "?").")
            }
            let property = layout.properties[slot]
            if property.isTransient { continue }
            if let relationship = property as? NSRelationshipDescription {
                // Relationships as objects (faults where not registered), as Apple's snapshot holds them.
                guard let context = managedObjectContext else { continue }
                if relationship.isToMany {
                    let ids = values[slot] as? [NSManagedObjectID]
                        ?? context.storeObjectIDs(forRelationship: relationship, of: objectID)
                    let objects = ids.map { context.object(with: $0) }
                    result[name] = relationship.isOrdered ? NSOrderedSet(array: objects) as Any : Set(objects) as Any
                } else {
                    result[name] = (values[slot] as? NSManagedObjectID).map { context.object(with: $0) as Any } ?? NSNull()
                }
            } else {
                result[name] = values[slot] ?? NSNull()
            }
        }
        return result
    }

    static func valuesEqual(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case let (x?, y?):
            // Unboxed numbers (`SlotValues`) of one type by value; against any other form, as the `NSNumber`
            // they stand for.
            if let a = SlotValues.unboxedInteger(x), let b = SlotValues.unboxedInteger(y) { return a == b }
            // As `NSNumber.isEqual(_:)` compares doubles: a NaN equals a NaN.
            if let a = SlotValues.unboxedDouble(x), let b = SlotValues.unboxedDouble(y) { return a == b || (a.isNaN && b.isNaN) }
            if let a = SlotValues.unboxedBool(x), let b = SlotValues.unboxedBool(y) { return a == b }
            if SlotValues.isUnboxedNumber(x) || SlotValues.isUnboxedNumber(y) { return valuesEqual(SlotValues.boxed(x), SlotValues.boxed(y)) }
            // Class instances first, by identity (an unchanged value is the very object its row holds),
            // then `isEqual(_:)`: the cast to `AnyHashable` below costs a conformance lookup.
            if Swift.type(of: x) is AnyClass, Swift.type(of: y) is AnyClass {
                // `as? NSObject` first: `as AnyObject` takes the runtime's general bridging path, about
                // three times the cost for an object already inside the `Any`.
                if let left = x as? NSObject, let right = y as? NSObject { return left === right || left.isEqual(right) }
                let left = x as AnyObject, right = y as AnyObject
                if left === right { return true }
                if let left = left as? NSObject { return left.isEqual(right) }
            }
            // Composite attributes' dictionaries, element by element (a type test, no cast for other values).
            if Swift.type(of: x) == [String: Any].self, Swift.type(of: y) == [String: Any].self,
               let x = x as? [String: Any], let y = y as? [String: Any] {
                return x.count == y.count && x.allSatisfy { key, value in y[key].map { valuesEqual(value, $0) } ?? false }
            }
            // Strings literally, as `NSString.isEqual(_:)` compares them: Swift's `==` takes "é" and "e" + a
            // combining accent as equal, and a change of form alone would be neither seen nor saved.
            if Swift.type(of: x) == String.self, Swift.type(of: y) == String.self,
               let x = x as? String, let y = y as? String {
                return x.utf8.elementsEqual(y.utf8)
            }
            if let x = x as? AnyHashable, let y = y as? AnyHashable { return x == y }
            if let x = x as? NSObject { return x.isEqual(y) }
            return false
        }
    }

    // MARK: Identity and description (never fire a fault)

    /// Identity, as on Apple platforms (predicates compare objects with their IDs through
    /// `PredicateObjectIdentity` instead).
    public override func isEqual(_ object: Any?) -> Bool {
        // Not `as AnyObject?` nor `as?` out of the `Any?`: both go through the runtime's general cast,
        // and every collision in a `Set` of objects (a save's notifications build several) asks.
        ObjectCast.object(object, as: NSManagedObject.self) === self
    }

    /// The address, as `NSObject`'s on Apple platforms: a `Set` or `Dictionary` mixes it with its own
    /// hasher, so hashing it here first only did the work twice (a save's notifications build sets
    /// of every saved object).
    public override var hash: Int { Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self))) }

    open override var description: String {
        let address = "0x" + String(UInt(bitPattern: ObjectIdentifier(self)), radix: 16)
        let data: String
        if status.contains(.fault) {
            data = "<fault>"
        } else {
            var lines: [String] = []
            for (index, property) in layout.properties.enumerated() {
                lines.append("    \(property.name) = \(Self.describe(slots[index], property));")
            }
            data = "{\n" + lines.joined(separator: "\n") + "\n}"
        }
        return "<\(Swift.type(of: self)): \(address)> (entity: \(entity.name ?? "?"); id: \(objectID); data: \(data))"
    }

    private static func describe(_ value: Any?, _ property: NSPropertyDescription) -> String {
        guard let value else { return (property as? NSRelationshipDescription)?.isToMany == true ? "<relationship fault: '\(property.name)'>" : "nil" }
        if let object = value as? NSManagedObject { return "\"\(object.objectID)\"" }
        if let storage = value as? ToManyStorage { return "(" + storage.objects.map { "\"\($0.objectID)\"" }.joined(separator: ", ") + ")" }
        if let string = value as? String { return "\"\(string)\"" }
        return "\(value)"
    }
}

/// The ID of the fault the context is building through `init(entity:insertInto:)` on this thread.
///
/// A thread-specific value rather than a task-local one: binding a task-local allocates, once per
/// fetched object. `NSManagedObject.init` takes the value only for the fault's own class and entity,
/// and clears it: a subclass may create managed objects before `super.init` (to initialize a stored
/// property) or after it, and those are new objects, not the fault. The object that took the ID is
/// recorded, so that `makeFault` can tell when it was not the object the initializer returned (one of
/// the same class and entity made before `super.init`) and set both right.
enum FaultCreation {
    struct Pending {
        let objectID: Unmanaged<NSManagedObjectID>
        let type: ObjectIdentifier
        /// +1 references, released when the creation ends.
        fileprivate(set) var taker: Unmanaged<NSManagedObject>?
        fileprivate(set) var takerContext: Unmanaged<NSManagedObjectContext>?
    }

    /// The object that took the pending ID, and the context its initializer was asked to insert it into.
    struct Taker {
        let object: NSManagedObject
        let context: NSManagedObjectContext?
    }

    static func creating(_ objectID: NSManagedObjectID, of type: NSManagedObject.Type,
                         _ body: () -> NSManagedObject) -> (NSManagedObject, Taker?) {
        // A C thread-local (CSwiftRuntime), not a pthread key: three calls per fetched object.
        let previous = ocd_pending_fault()
        var pending = Pending(objectID: .passUnretained(objectID), type: ObjectIdentifier(type))
        defer { ocd_set_pending_fault(previous) }
        let object = withExtendedLifetime(objectID) {
            withUnsafeMutablePointer(to: &pending) { pointer in
                ocd_set_pending_fault(pointer)
                return body()
            }
        }
        guard let taker = pending.taker?.takeRetainedValue() else { return (object, nil) }
        return (object, Taker(object: taker, context: pending.takerContext?.takeRetainedValue()))
    }

    /// The pending fault if the object being initialized is that fault (of its class and entity),
    /// cleared for the rest of its creation.
    static func take(for type: NSManagedObject.Type, entity: NSEntityDescription) -> UnsafeMutablePointer<Pending>? {
        guard let raw = ocd_pending_fault() else { return nil }
        let pending = raw.assumingMemoryBound(to: Pending.self)
        guard pending.pointee.type == ObjectIdentifier(type),
              pending.pointee.objectID.takeUnretainedValue().entity === entity else { return nil }
        ocd_set_pending_fault(nil)
        return pending
    }

    /// Records the object that took `pending`'s ID, once its `super.init` has run.
    static func taken(_ pending: UnsafeMutablePointer<Pending>, by object: NSManagedObject, insertInto context: NSManagedObjectContext?) {
        pending.pointee.taker = .passRetained(object)
        pending.pointee.takerContext = context.map { .passRetained($0) }
    }
}

/// The members of a to-many relationship, in order (insertion order for an unordered one).
final class ToManyStorage {
    private(set) var objects: [NSManagedObject]
    private(set) var members: Set<ObjectIdentifier>
    /// Whether the relationship was changed since it was loaded or saved.
    private(set) var modified = false
    /// The members before the first change since the relationship was loaded or saved (nil while
    /// unchanged): a merge re-applies the members added and removed since then over the stored ones,
    /// rather than the whole set, which would drop members another context added.
    private(set) var baseline: [NSManagedObject]?

    init(_ objects: [NSManagedObject] = []) {
        var seen = Set<ObjectIdentifier>()
        self.objects = objects.filter { seen.insert(ObjectIdentifier($0)).inserted }
        self.members = seen
    }

    func contains(_ object: NSManagedObject) -> Bool { members.contains(ObjectIdentifier(object)) }

    /// Marks the relationship changed, keeping the members as they were before the first change: called
    /// before each change made here, and after one announced around the storage (already counted).
    func markModified() {
        if baseline == nil { baseline = objects }
        modified = true
    }

    /// The current members are the committed ones (after a save or a merge).
    func markUnmodified() {
        modified = false
        baseline = nil
    }

    /// The members added and removed since the relationship was loaded or saved; nil if unchanged.
    var changesSinceBaseline: (added: [NSManagedObject], removed: [NSManagedObject])? {
        guard let baseline else { return nil }
        let before = Set(baseline.map(ObjectIdentifier.init))
        return (objects.filter { !before.contains(ObjectIdentifier($0)) }, baseline.filter { !members.contains(ObjectIdentifier($0)) })
    }

    func append(_ object: NSManagedObject) {
        // `markModified` reads `objects` only: the member set can change first.
        guard members.insert(ObjectIdentifier(object)).inserted else { return }
        markModified()
        objects.append(object)
    }

    func remove(at index: Int) {
        markModified()
        members.remove(ObjectIdentifier(objects.remove(at: index)))
    }

    func remove(_ object: NSManagedObject) {
        guard members.remove(ObjectIdentifier(object)) != nil else { return }
        markModified()
        if let index = objects.lastIndex(where: { $0 === object }) { objects.remove(at: index) }
    }

    func replace(with objects: [NSManagedObject]) {
        markModified()
        var seen = Set<ObjectIdentifier>()
        self.objects = objects.filter { seen.insert(ObjectIdentifier($0)).inserted }
        self.members = seen
    }
}

/// Models whose objects exist somewhere (coordinators register theirs), for `NSManagedObject.entity()`.
enum ModelsInUse {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var models: [WeakModel] = []
    struct WeakModel { weak var model: NSManagedObjectModel? }

    static func add(_ model: NSManagedObjectModel) {
        lock.lock()
        defer { lock.unlock() }
        models.removeAll { $0.model == nil || $0.model === model }
        models.append(WeakModel(model: model))
    }

    static var all: [NSManagedObjectModel] {
        lock.lock()
        defer { lock.unlock() }
        return models.compactMap(\.model).reversed()
    }
}
