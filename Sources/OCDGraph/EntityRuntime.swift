import Foundation
import OCDModel
import OCDStore
import Synchronization

/// What the object graph keeps per entity of a model in use, built once and found through the entity's
/// layout: per-object work then costs an atomic load instead of a locked, name-keyed lookup.
final class EntityRuntime: @unchecked Sendable {
    /// Swift Observation's key path of each slot's property.
    let observationPaths: [KeyPath<NSManagedObject, Int>]
    private let resolvedClass = Mutex<ResolvedClass?>(nil)

    private struct ResolvedClass {
        var generation: Int
        var type: NSManagedObject.Type
        /// The class's key-table flags, as an object's `status` keeps them after its first look.
        var keyTableFlags: NSManagedObject.Status
    }

    /// What saving validates of each slot's property when the class has no `validate<Key>` for it.
    let attributeChecks: [AttributeCheck]

    enum AttributeCheck {
        /// An optional attribute without validation predicates: nothing to check.
        case none
        /// A mandatory attribute without validation predicates: only that it has a value.
        case mandatory
        /// Predicates or a relationship: the whole check.
        case full
    }

    /// The model's default values by slot, numbers as the plain `Int64`, `Double` or `Bool` their slot
    /// holds in a word (D27) where they are exactly that, else `NSNumber`s: a model file's defaults are
    /// Swift `Int`s and `Double`s, and `value(forKey:) as? Int16` of a new object must answer as it does
    /// for a set or fetched value.
    let defaultValues: [(slot: Int, value: Any)]

    /// ``defaultValues`` by slot (nil for none): a fault's transient attributes take theirs when it fires.
    let defaultValueBySlot: [Any?]

    private init(layout: EntityLayout) {
        defaultValues = layout.attributes.compactMap { slot, attribute in
            if let composite = attribute as? NSCompositeAttributeDescription {
                // In the form a set value takes (numbers as `NSNumber`s).
                return composite.mergedDefaultValue.flatMap { AttributeValues.composite($0, composite: composite) }.map { (slot, $0 as Any) }
            }
            guard let value = attribute.defaultValue else { return nil }
            switch attribute.attributeType {
            case .floatAttributeType:
                // A Float's NSNumber, so that `as? Float` of a default such as 0.1 answers.
                return (slot, ManagedValueCoercion.number(from: value).map { NSNumber(value: $0.floatValue) } ?? value)
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
                 .doubleAttributeType, .booleanAttributeType:
                return (slot, AttributeValues.plainOrNumber(value, attribute.attributeType) ?? value)
            default:
                return (slot, value)
            }
        }
        var bySlot = [Any?](repeating: nil, count: layout.properties.count)
        for (slot, value) in defaultValues { bySlot[slot] = value }
        defaultValueBySlot = bySlot
        observationPaths = layout.properties.map { ObservationKeyPaths.path(for: $0.name) }
        attributeChecks = layout.properties.map { property in
            guard property is NSAttributeDescription, property.validationPredicates.isEmpty else { return .full }
            return property.isOptional ? .none : .mandatory
        }
    }

    static func of(_ layout: EntityLayout) -> EntityRuntime {
        if let runtime = layout.graphCache.load(as: EntityRuntime.self) { return runtime }
        return layout.graphCache.storeIfNil(EntityRuntime(layout: layout))
    }

    /// The key table of objects of `type`: the table of the class most objects of the entity have, kept
    /// here without a lock, or the class's own.
    func keyTable(for type: NSManagedObject.Type) -> ManagedKeyTable.Shared {
        if let cached = commonKeyTable.load(as: ClassKeyTable.self), cached.type == ObjectIdentifier(type) { return cached.table }
        let table = ManagedKeyTable.shared(type)
        _ = commonKeyTable.storeIfNil(ClassKeyTable(type: ObjectIdentifier(type), table: table))
        return table
    }

    private let commonKeyTable = OnceReference()

    private final class ClassKeyTable {
        let type: ObjectIdentifier
        let table: ManagedKeyTable.Shared
        init(type: ObjectIdentifier, table: ManagedKeyTable.Shared) {
            self.type = type
            self.table = table
        }
    }

    /// The class of the entity's objects: the class its `managedObjectClassName` resolves to, or
    /// `NSManagedObject`. Resolved again after a class registration.
    func managedObjectClass(of entity: NSEntityDescription) -> NSManagedObject.Type {
        resolved(entity).type
    }

    /// The class of the entity's objects with the `status` flags of its key table, for a fault made
    /// by a fetch: read with the class under one lock, where each object looked its table up on its
    /// first access (a fifth of firing a fault through a typed property).
    func managedObjectClassAndKeyTableFlags(of entity: NSEntityDescription) -> (NSManagedObject.Type, NSManagedObject.Status) {
        let resolved = resolved(entity)
        return (resolved.type, resolved.keyTableFlags)
    }

    private func resolved(_ entity: NSEntityDescription) -> ResolvedClass {
        let generation = NSManagedObjectModel.classRegistrationGeneration
        if let cached = resolvedClass.withLock({ $0 }), cached.generation == generation { return cached }
        let type = (entity.resolvedManagedObjectClass as? NSManagedObject.Type) ?? NSManagedObject.self
        let resolved = ResolvedClass(generation: generation, type: type,
                                     keyTableFlags: NSManagedObject.Status.keyTableFlags(of: keyTable(for: type)))
        resolvedClass.withLock { $0 = resolved }
        return resolved
    }
}
