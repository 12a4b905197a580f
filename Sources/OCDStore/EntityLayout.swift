import Foundation
import Synchronization
import OCDModel

/// The slots of an entity's objects and rows: every attribute and relationship, inherited ones first, each
/// at a fixed index, so that values live in arrays rather than dictionaries (decision D8).
///
/// Layouts are built once per entity of a model in use and shared by stores and contexts.
public final class EntityLayout: @unchecked Sendable {
    public let entity: NSEntityDescription
    /// Attributes and relationships, in slot order. Fetched properties and expression descriptions have no
    /// slot: they are not stored.
    public let properties: [NSPropertyDescription]
    /// Slot index by property name.
    public let slotByName: [String: Int]
    /// The attributes' slots, with their descriptions.
    public let attributes: [(slot: Int, attribute: NSAttributeDescription)]
    /// The relationships' slots, with their descriptions.
    public let relationships: [(slot: Int, relationship: NSRelationshipDescription)]
    /// Slots of non-transient properties: what a store keeps.
    public let persistentSlots: [Int]
    /// What each slot holds, so hot paths (filling a fault, reading a value) need no cast per property.
    public let kinds: [SlotKind]

    /// Whether every slot is a persistent attribute: an object's values are then its row's values as they are.
    public let hasOnlyPersistentAttributes: Bool

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
        self.hasOnlyPersistentAttributes = kinds.allSatisfy { $0 == .attribute }
        self.slotByName = slots
        self.attributes = attributes
        self.relationships = relationships
        self.persistentSlots = persistent
    }

    /// The layout of `entity`, built on first use and kept by the entity. The entity's model must be in
    /// use (frozen): a layout never changes after it is built.
    public static func of(_ entity: NSEntityDescription) -> EntityLayout {
        if let layout = entity.layerCache.load() { return unsafeDowncast(layout, to: EntityLayout.self) }
        return unsafeDowncast(entity.layerCache.storeIfNil(EntityLayout(entity: entity)), to: EntityLayout.self)
    }

    /// What the object graph layer keeps per entity (its accessors' tables), built on first use.
    public let graphCache = AtomicLazyReference<AnyObject>()
}

/// One stored object as a store returns it: its ID, its optimistic-locking version and its persistent
/// values by slot of the entity's ``EntityLayout``. Rows are immutable and shared.
///
/// Values are `nil` for NULL; an attribute's value has the attribute type's Swift representation
/// (`NSNumber` for numbers and booleans, `String`, `Date`, `Data`, `Decimal`, `UUID`, `URL`, or the
/// transformed object). A to-one relationship holds an `NSManagedObjectID` or nil. A to-many relationship
/// holds `[NSManagedObjectID]` when the store knows it cheaply, or nil to mean "ask the store".
public final class StoreRow: @unchecked Sendable {
    public let objectID: NSManagedObjectID
    public let version: Int64
    public let values: [Any?]

    public init(objectID: NSManagedObjectID, version: Int64, values: [Any?]) {
        self.objectID = objectID
        self.version = version
        self.values = values
    }

    public var layout: EntityLayout { EntityLayout.of(objectID.entity) }

    /// The value of the property named `name`, or nil if the row has no such slot.
    public func value(named name: String) -> Any? {
        guard let slot = layout.slotByName[name] else { return nil }
        return values[slot]
    }
}
