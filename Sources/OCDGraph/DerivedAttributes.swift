import Foundation
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSPredicate

/// The model's derived attributes by entity, and which changes of other objects make them stale: built
/// once per model in use (`NSManagedObjectModel.graphCache`). Holds names and entity identities, not
/// the descriptions, so it keeps nothing of the model alive.
final class DerivationPlan: @unchecked Sendable {
    struct Derived {
        let name: String
        let derivation: Derivation
    }

    /// A derived value that follows an attribute of another object, reached back through `inverse`.
    struct Dependent {
        /// The changed object's attribute the value follows.
        let key: String
        /// The entity that has the derived attribute (its objects, or its subentities', are recomputed).
        let sourceEntity: String
        /// The source's relationship the value is read through, and whether it is to-many.
        let relationship: String
        let toMany: Bool
        /// The changed object's way back to the sources; nil when the relationship has no inverse.
        let inverse: String?
        let derivedName: String
    }

    private let derivedByEntity: [ObjectIdentifier: [Derived]]
    private let dependentsByEntity: [ObjectIdentifier: [Dependent]]
    /// Whether the model has no derived attribute: every save asks, and then does nothing more.
    let isEmpty: Bool

    private init(model: NSManagedObjectModel) throws {
        var derived: [ObjectIdentifier: [Derived]] = [:]
        var dependents: [ObjectIdentifier: [Dependent]] = [:]
        var seen = Set<String>()
        func withSubentities(_ entity: NSEntityDescription) -> [NSEntityDescription] {
            [entity] + entity.subentities.flatMap(withSubentities)
        }
        for entity in model.entities {
            // Inherited ones too: a subentity's objects keep their superentity's derived attributes.
            let attributes = entity.propertiesByName.values.compactMap { $0 as? NSDerivedAttributeDescription }.sorted { $0.name < $1.name }
            for attribute in attributes {
                let derivation = try attribute.derivation(in: entity)
                derived[ObjectIdentifier(entity), default: []].append(Derived(name: attribute.name, derivation: derivation))
                guard let (name, key) = derivation.destinationDependency,
                      let relationship = entity.relationshipsByName[name], let destination = relationship.destinationEntity else { continue }
                // Inherited by subentities: one dependent for the declaring entity's attribute is enough,
                // as the way back reaches the subentities' objects too.
                let declaring = attribute.entity ?? entity
                guard seen.insert("\(declaring.name ?? "").\(attribute.name)").inserted else { continue }
                let dependent = Dependent(key: key, sourceEntity: declaring.name ?? "", relationship: name, toMany: relationship.isToMany,
                                          inverse: relationship.inverseRelationship?.name, derivedName: attribute.name)
                for entity in withSubentities(destination) { dependents[ObjectIdentifier(entity), default: []].append(dependent) }
            }
        }
        derivedByEntity = derived
        dependentsByEntity = dependents
        isEmpty = derived.isEmpty
    }

    /// The plan of `model`; throws ``DerivationError`` for a derivation Core Data cannot keep.
    static func of(_ model: NSManagedObjectModel) throws -> DerivationPlan {
        if let plan = model.graphCache.load(as: DerivationPlan.self) { return plan }
        let plan = try DerivationPlan(model: model)
        // An editable model may still change: its plan is not kept.
        return model.isEditable ? plan : model.graphCache.storeIfNil(plan)
    }

    func derived(of entity: NSEntityDescription) -> [Derived] { derivedByEntity[ObjectIdentifier(entity)] ?? [] }
    func dependents(of entity: NSEntityDescription) -> [Dependent] { dependentsByEntity[ObjectIdentifier(entity)] ?? [] }
}

extension NSPersistentStoreCoordinator {
    /// Core Data's SQLite store refuses, with this code, to be added for a model whose derived attribute it
    /// cannot keep up to date (no public constant names it).
    static let unsupportedDerivationError = 134097

    /// Throws Core Data's error for a model with a derived attribute no store can keep.
    func checkDerivations() throws {
        do {
            _ = try DerivationPlan.of(managedObjectModel)
        } catch let error as DerivationError {
            throw coreDataError(Self.unsupportedDerivationError, [
                NSLocalizedDescriptionKey: "\(error)", "NSEntityName": error.entity, "NSPropertyName": error.attribute,
            ])
        }
    }
}

extension NSManagedObjectContext {
    /// Recomputes the derived attributes a save changes, as Core Data's store does during the save:
    /// those of inserted objects, those of updated objects whose inputs changed (and `now()` on every
    /// changed object), and those of other objects that read a changed attribute through a relationship.
    /// New values are set like any change (the objects are saved as updated), so the store writes them and
    /// the objects hold them after the save.
    func deriveAttributes() throws {
        guard let model = persistentStoreCoordinator?.managedObjectModel else { return }
        let plan: DerivationPlan
        do {
            plan = try DerivationPlan.of(model)
        } catch {
            throw coreDataError(NSPersistentStoreCoordinator.unsupportedDerivationError, [NSLocalizedDescriptionKey: "\(error)"])
        }
        if plan.isEmpty { return }

        // Found first, computed after: each new value changes `updated`, and a value set here follows
        // no other derived value (Core Data refuses derived attributes in a dependency chain).
        struct Queued: Hashable {
            let object: ObjectIdentifier
            let name: String
        }
        var work: [(object: NSManagedObject, derived: DerivationPlan.Derived)] = []
        var queued = Set<Queued>()
        func queue(_ object: NSManagedObject, _ derived: DerivationPlan.Derived) {
            if object.isDeleted || object.managedObjectContext !== self { return }
            if queued.insert(Queued(object: ObjectIdentifier(object), name: derived.name)).inserted { work.append((object, derived)) }
        }
        for object in Self.inAddressOrder(inserted) {
            for derived in plan.derived(of: object.entity) { queue(object, derived) }
        }
        for object in Self.inAddressOrder(updated) where !object.isDeleted {
            let changed = Set(object.changedPersistentSlots.map { object.layout.properties[$0].name })
            if changed.isEmpty { continue }
            for derived in plan.derived(of: object.entity) where derived.derivation.ownKey.map(changed.contains) ?? true {
                queue(object, derived)
            }
            for dependent in plan.dependents(of: object.entity) where changed.contains(dependent.key) {
                for source in try sources(following: object, dependent) {
                    if let derived = plan.derived(of: source.entity).first(where: { $0.name == dependent.derivedName }) {
                        queue(source, derived)
                    }
                }
            }
        }
        if work.isEmpty { return }
        // The store's values, not the user's edits: nothing for undo to take back.
        undoManager?.disableUndoRegistration()
        defer { undoManager?.enableUndoRegistration() }
        let now = Date()
        var changed = false
        for (object, derived) in work {
            if object.setDerivedValue(derived, now: now) { changed = true }
        }
        // Announced before the save, as changes made by willSave() are.
        if changed { processPendingChanges() }
    }

    /// The objects whose derived value reads `object` through `dependent`'s relationship: through the
    /// inverse when there is one, else by a fetch.
    private func sources(following object: NSManagedObject, _ dependent: DerivationPlan.Dependent) throws -> [NSManagedObject] {
        guard let source = persistentStoreCoordinator?.managedObjectModel.entitiesByName[dependent.sourceEntity] else { return [] }
        let found: [NSManagedObject]
        if let inverse = dependent.inverse {
            switch object.value(forKey: inverse) {
            case let one as NSManagedObject: found = [one]
            case let set as Set<NSManagedObject>: found = Array(set)
            case let ordered as NSOrderedSet: found = ordered.array.compactMap { $0 as? NSManagedObject }
            default: found = []
            }
        } else {
            let request = NSFetchRequest<NSManagedObject>(entityName: dependent.sourceEntity)
            request.predicate = NSPredicate(format: dependent.toMany ? "ANY %K == %@" : "%K == %@", argumentArray: [dependent.relationship, object])
            found = try fetch(request)
        }
        return found.filter { $0.entity.isKindOf(entity: source) }
    }
}

extension NSManagedObject {
    /// Sets `derived`'s value computed from the object's current state, as a change when it differs;
    /// whether it did.
    fileprivate func setDerivedValue(_ derived: DerivationPlan.Derived, now: Date) -> Bool {
        guard let slot = layout.slot(named: derived.name), let attribute = layout.properties[slot] as? NSAttributeDescription else { return false }
        let value = AttributeValues.normalize(derivedValue(derived.derivation, now: now), for: attribute, of: self)
        if NSManagedObject.valuesEqual(value, storedAttributeValue(slot: slot)) { return false }
        willChangeValue(forKey: derived.name)
        setPrimitiveValue(value, forKey: derived.name)
        didChangeValue(forKey: derived.name)
        return true
    }

    private func derivedValue(_ derivation: Derivation, now: Date) -> Any? {
        func apply(_ function: Derivation.TextFunction?, _ value: Any?) -> Any? {
            guard let function, let string = value as? String else { return value }
            switch function {
            case .canonical: return TextFolding.canonical(string)
            case .lowercase: return string.lowercased()
            case .uppercase: return string.uppercased()
            }
        }
        switch derivation {
        case .attribute(let key, let function):
            return apply(function, value(forKey: key))
        case .toOne(let relationship, let key, let function):
            return apply(function, (value(forKey: relationship) as? NSManagedObject)?.value(forKey: key))
        case .count(let relationship):
            return members(of: relationship).count
        case .sum(let relationship, let key):
            // In the type of the values added: integers exactly, else as doubles (decimals as decimals).
            var integer: Int64 = 0, double = 0.0, decimal = Decimal(0)
            var kind = 0  // 0 integers, 1 doubles, 2 decimals
            for member in members(of: relationship) {
                switch member.value(forKey: key) {
                case let value as Decimal:
                    kind = 2
                    decimal += value
                case let number as NSNumber:
                    if Self.isFloatingPoint(number) { kind = max(kind, 1); double += number.doubleValue } else { integer &+= number.int64Value }
                default:
                    continue
                }
            }
            switch kind {
            case 0: return integer
            case 1: return double + Double(integer)
            default: return decimal + Decimal(double) + Decimal(integer)
            }
        case .now:
            return now
        }
    }

    private static func isFloatingPoint(_ number: NSNumber) -> Bool {
        let type = number.objCType.pointee
        return type == 0x64 || type == 0x66  // "d", "f"
    }

    private func members(of relationship: String) -> [NSManagedObject] {
        switch value(forKey: relationship) {
        case let set as Set<NSManagedObject>: return Array(set)
        case let ordered as NSOrderedSet: return ordered.array.compactMap { $0 as? NSManagedObject }
        default: return []
        }
    }
}
