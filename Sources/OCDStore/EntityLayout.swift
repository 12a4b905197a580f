import Foundation
import Synchronization
import OCDModel

/// The slots of an entity's objects and rows: every attribute and relationship, inherited ones first, each
/// at a fixed index, so that values live in arrays rather than dictionaries (decision D8).
///
/// Layouts are built once per entity of a model in use and shared by stores and contexts.
public final class EntityLayout: @unchecked Sendable {
    /// The entity laid out.
    public let entity: NSEntityDescription
    /// Attributes and relationships, in slot order. Fetched properties and expression descriptions have no
    /// slot: they are not stored.
    public let properties: [NSPropertyDescription]
    /// Slot index by property name.
    public let slotByName: [String: Int]
    @usableFromInline let slotIndex: NameIndex

    /// The slot of the property `name`, or nil: ``slotByName`` without hashing the name (every
    /// `value(forKey:)` and `setValue(_:forKey:)` looks its key up several times). Inlined where it is
    /// asked: a typed property's setter asks three times.
    @inlinable @inline(__always)
    public func slot(named name: String) -> Int? {
        slotIndex.slot(named: name) ?? slotByName[name]
    }
    /// The attributes' slots, with their descriptions.
    public let attributes: [(slot: Int, attribute: NSAttributeDescription)]
    /// The relationships' slots, with their descriptions.
    public let relationships: [(slot: Int, relationship: NSRelationshipDescription)]
    /// Slots of non-transient properties: what a store keeps.
    public let persistentSlots: [Int]
    /// What each slot holds, so hot paths (filling a fault, reading a value) need no cast per property.
    public let kinds: [SlotKind]

    /// Where each slot's value lives in a ``SlotValues`` (numbers in a word, D27).
    public let slotPlan: SlotPlan

    /// One nil per slot: the starting values of an object, shared until written.
    public let nilValues: SlotValues

    /// Whether every slot is a persistent attribute: an object's values are then its row's values as they are.
    public let hasOnlyPersistentAttributes: Bool

    /// What every temporary object ID of the entity shares, with the hash they start from (by the entity's
    /// name, as ID equality compares names): made once, so that a new object's ID hashes only its key.
    package let temporaryIDScope: NSManagedObjectID.Scope

    /// The kind of a slot's property.
    public enum SlotKind: Sendable {
        case attribute, transientAttribute, toOne, toMany
    }

    private init(entity: NSEntityDescription) {
        self.entity = entity
        let properties = entity.allProperties.filter { $0 is NSAttributeDescription || $0 is NSRelationshipDescription }
        self.properties = properties
        var slots: [String: Int] = [:]
        var attributes: [(Int, NSAttributeDescription)] = []
        var relationships: [(Int, NSRelationshipDescription)] = []
        var persistent: [Int] = []
        var kinds: [SlotKind] = []
        for (index, property) in properties.enumerated() {
            slots[property.name] = index
            if let attribute = property as? NSAttributeDescription {
                attributes.append((index, attribute))
                kinds.append(attribute.isTransient ? .transientAttribute : .attribute)
            }
            if let relationship = property as? NSRelationshipDescription {
                relationships.append((index, relationship))
                kinds.append(relationship.isToMany ? .toMany : .toOne)
            }
            if !property.isTransient { persistent.append(index) }
        }
        self.kinds = kinds
        self.slotPlan = SlotPlan(properties: properties)
        self.nilValues = SlotValues(plan: slotPlan)
        self.hasOnlyPersistentAttributes = kinds.allSatisfy { $0 == .attribute }
        self.slotByName = slots
        self.slotIndex = NameIndex(slots)
        self.attributes = attributes
        self.relationships = relationships
        self.persistentSlots = persistent
        self.temporaryIDScope = NSManagedObjectID.Scope(entity: entity, store: nil, identifier: nil, temporary: true)
    }

    /// The layout of `entity`, built on first use and kept by the entity. The entity's model must be in
    /// use (frozen): a layout never changes after it is built.
    public static func of(_ entity: NSEntityDescription) -> EntityLayout {
        if let layout = entity.layerCache.load(as: EntityLayout.self) { return layout }
        return entity.layerCache.storeIfNil(EntityLayout(entity: entity))
    }

    /// What the object graph layer keeps per entity (its accessors' tables), built on first use.
    package let graphCache = OnceReference()
}

/// One stored object as a store returns it: its ID, its optimistic-locking version and its persistent
/// values by slot of the entity's ``EntityLayout``. Immutable. A value, not an object: a fetch of N rows
/// makes no allocation per row for the rows themselves, and an object keeps the row's values and version,
/// not the row (each row object left a 48-byte hole between the objects and values that outlive it).
///
/// Values are `nil` for NULL; an attribute's value has the attribute type's Swift representation
/// (`NSNumber` for numbers and booleans, though ``values`` may hold an integer, double or boolean unboxed
/// and box it when read; `String`, `Date`, `Data`, `Decimal`, `UUID`, `URL`, or the transformed object). A to-one relationship holds an `NSManagedObjectID` or nil. A to-many relationship
/// holds `[NSManagedObjectID]` when the store knows it cheaply, or nil to mean "ask the store".
public struct StoreRow: @unchecked Sendable {
    /// The object the row stores.
    public let objectID: NSManagedObjectID
    /// Its optimistic-locking version (`Z_OPT` in an SQLite file).
    public let version: Int64
    /// The values by slot (numbers possibly unboxed: see ``SlotValues``).
    public let values: SlotValues
    /// False for a row fetched without its values (``StoreFetchPlan/needsValues``): `values` are then all
    /// nil and say nothing about the stored object.
    public let hasValues: Bool

    /// A row of `values`.
    public init(objectID: NSManagedObjectID, version: Int64, values: SlotValues, hasValues: Bool = true) {
        self.objectID = objectID
        self.version = version
        self.values = values
        self.hasValues = hasValues
    }

    /// A row of `values` as they are (numbers as `NSNumber`s or unboxed).
    public init(objectID: NSManagedObjectID, version: Int64, values: [Any?], hasValues: Bool = true) {
        self.init(objectID: objectID, version: version, values: SlotValues(values), hasValues: hasValues)
    }

    /// The layout of the row's entity, whose slots `values` follows.
    public var layout: EntityLayout { EntityLayout.of(objectID.entity) }

    /// The value of the property named `name`, or nil if the row has no such slot.
    public func value(named name: String) -> Any? {
        guard let slot = layout.slot(named: name) else { return nil }
        return values[slot]
    }
}

/// An open-addressing table from a name's 16 bytes of `String` representation to its index (a slot).
///
/// A name of up to 15 UTF-8 bytes is a small string, whose representation is its bytes, so equal bits
/// mean equal names. A longer name's bits point to its storage, which the table keeps alive, so equal
/// bits still mean the same string. Whatever the table misses (the same name stored elsewhere, a
/// representation it did not expect, an unknown key) is looked up by hashing, so a miss costs speed,
/// never correctness.
@usableFromInline
struct NameIndex: @unchecked Sendable {
    @usableFromInline var keys: [(UInt64, UInt64)]
    @usableFromInline var slots: [Int]
    @usableFromInline let mask: Int
    /// The strings whose bits are the keys, kept so that their storage is never reused.
    private let names: [String]

    init(_ byName: [String: Int]) {
        var size = 8
        while size < byName.count * 2 { size *= 2 }
        mask = size - 1
        keys = Array(repeating: (0, 0), count: size)
        slots = Array(repeating: -1, count: size)
        var names: [String] = []
        #if _pointerBitWidth(_64)
        for (name, slot) in byName {
            // Built from its bytes: a name that fits is then in its small (inline) form.
            let canonical = String(decoding: Array(name.utf8), as: UTF8.self)
            names.append(canonical)
            let bits = Self.bits(canonical)
            var index = Self.start(bits, mask)
            while keys[index].0 != 0 || keys[index].1 != 0 { index = (index + 1) & mask }
            keys[index] = bits
            slots[index] = slot
        }
        #endif
        self.names = names
    }

    @inlinable @inline(__always)
    static func bits(_ string: String) -> (UInt64, UInt64) {
        #if _pointerBitWidth(_64)
        unsafeBitCast(string, to: (UInt64, UInt64).self)
        #else
        (0, 0)
        #endif
    }

    @inlinable @inline(__always)
    static func start(_ bits: (UInt64, UInt64), _ mask: Int) -> Int {
        Int(truncatingIfNeeded: ((bits.0 &* 0x9E37_79B9_7F4A_7C15) ^ (bits.1 &* 0xC2B2_AE3D_27D4_EB4F)) >> 40) & mask
    }

    @inlinable @inline(__always)
    func slot(named name: String) -> Int? {
        #if _pointerBitWidth(_64)
        let bits = Self.bits(name)
        var index = Self.start(bits, mask)
        while true {
            let key = keys[index]
            if key.0 == bits.0 && key.1 == bits.1 { return slots[index] }
            if key.0 == 0 && key.1 == 0 { return nil }
            index = (index + 1) & mask
        }
        #else
        return nil
        #endif
    }
}
