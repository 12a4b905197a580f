import Foundation
import Synchronization
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// An entity: a kind of managed object, with its properties, its place in an inheritance hierarchy, and
/// its indexes and uniqueness constraints.
///
/// Apple's `NSEntityDescription`. Editable until a persistent store coordinator uses its model.
public final class NSEntityDescription: NSObject, NSCopying, @unchecked Sendable {
    /// The entity's name, unique in its model.
    public var name: String? { willSet { assertEditable() } }
    /// The model the entity belongs to.
    public internal(set) weak var managedObjectModel: NSManagedObjectModel!
    /// What the layers above keep per entity of a model in use (the store layer's slot layout), so that
    /// finding it costs an atomic load rather than a locked table lookup per object.
    package let layerCache = OnceReference()
    /// The name of the class of the entity's objects (`representedClassName` in a model file;
    /// `NSManagedObject` when not set). A leading "." means the app's own module, as Xcode writes it.
    public var managedObjectClassName: String! { willSet { assertEditable() } }
    /// Whether the entity has no objects of its own, only objects of subentities.
    public var isAbstract = false { willSet { assertEditable() } }
    /// Arbitrary information for the application.
    public var userInfo: [AnyHashable: Any]? { willSet { assertEditable() } }
    /// A string mixed into the version hash.
    public var versionHashModifier: String? { willSet { assertEditable() } }
    /// The entity's name in the previous model version, for lightweight migration. Unset, it is the
    /// entity's name, as Apple's documentation says.
    public var renamingIdentifier: String? {
        get { explicitRenamingIdentifier ?? name }
        set { assertEditable(); explicitRenamingIdentifier = newValue }
    }
    /// The identifier the model gives (nil when it gives none): what a model file writes.
    package var explicitRenamingIdentifier: String?
    /// The entity's fetch indexes.
    public var indexes: [NSFetchIndexDescription] = [] {
        willSet { assertEditable() }
        didSet { for index in indexes { index.entity = self } }
    }
    /// Groups of property names whose values must be unique together: `[["email"], ["first", "last"]]`.
    public var uniquenessConstraints: [[Any]] = [] { willSet { assertEditable() } }
    /// Groups of property names indexed together (deprecated on Apple platforms in favour of `indexes`).
    public var compoundIndexes: [[Any]] = [] { willSet { assertEditable() } }

    /// The entity this one inherits from.
    public private(set) var superentity: NSEntityDescription? {
        get { superentityReference?.load(as: NSEntityDescription.self) }
        set { superentityReference = newValue?.backreference }
    }
    private var superentityReference: Backreference?
    /// How properties, subentities, indexes and relationships refer back to this entity: not `weak`, which
    /// would slow every retain of the entity (decision D24).
    package let backreference = Backreference()

    /// The properties this entity declares itself, in order (what a model file lists under it).
    package private(set) var ownProperties: [NSPropertyDescription] = []
    private var ownSubentities: [NSEntityDescription] = []
    /// The parent's name until the model resolves it (model files name the parent before it is read).
    var superentityName: String?

    /// An entity with no name yet.
    public override init() {
        self.managedObjectClassName = "NSManagedObject"
        super.init()
        backreference.attach(self)
    }

    deinit {
        backreference.clear()
    }

    // MARK: Properties

    /// The entity's properties: the inherited ones first (the superentity's own objects), then its own, as
    /// Core Data gives them. Setting them sets the entity's own properties and makes this entity their
    /// owner. A property can belong to one entity only: one that already belongs to another entity is
    /// added as a copy, as Apple's Core Data does, and the original stays with its entity. Inherited
    /// properties in the new value (read back from this getter, as in `properties.append(…)`) are left to
    /// their entity.
    public var properties: [NSPropertyDescription] {
        get { superentity == nil ? ownProperties : allProperties }
        set {
            assertEditable()
            let inherited = superentity?.allProperties ?? []
            let newValue = newValue.filter { property in !inherited.contains { $0 === property } }.map { property in
                if let owner = property.entity, owner !== self { return property.copy() as! NSPropertyDescription }
                return property
            }
            var seen = Set<String>()
            for property in newValue where !seen.insert(property.name).inserted {
                fatalError("NSEntityDescription: the entity \(name ?? "(unnamed)") has two properties named '\(property.name)'")
            }
            for property in ownProperties where property.entity === self { property.entity = nil }
            ownProperties = newValue
            for property in newValue { property.entity = self }
        }
    }

    /// Every property, inherited ones first, by name.
    public var propertiesByName: [String: NSPropertyDescription] {
        var result = superentity?.propertiesByName ?? [:]
        for property in ownProperties { result[property.name] = property }
        return result
    }

    /// Inherited and own properties: the superentity's first, then this entity's.
    package var allProperties: [NSPropertyDescription] {
        var result = superentity?.allProperties ?? []
        let own = Set(ownProperties.map(\.name))
        result.removeAll { own.contains($0.name) }
        return result + ownProperties
    }

    /// Every attribute (inherited ones included), by name.
    public var attributesByName: [String: NSAttributeDescription] {
        propertiesByName.compactMapValues { $0 as? NSAttributeDescription }
    }

    /// Every relationship (inherited ones included), by name.
    public var relationshipsByName: [String: NSRelationshipDescription] {
        propertiesByName.compactMapValues { $0 as? NSRelationshipDescription }
    }

    /// The relationships (inherited ones included) whose destination is `entity`.
    public func relationships(forDestination entity: NSEntityDescription) -> [NSRelationshipDescription] {
        allProperties.compactMap { $0 as? NSRelationshipDescription }.filter { $0.destinationEntity === entity }
    }

    // MARK: Inheritance

    /// The entities that inherit from this one. Setting them makes this entity their superentity. An
    /// entity has one superentity: giving it a second of the same model (or both of none) stops with
    /// Apple's reason, as Apple raises, and so does making an entity a subentity of itself or of one of
    /// its own subentities. A child whose parent is in another model (editable) leaves that parent's list.
    public var subentities: [NSEntityDescription] {
        get { ownSubentities }
        set {
            assertEditable()
            // The children change too (their superentity): none may belong to a model in use.
            for child in ownSubentities + newValue { child.assertEditable() }
            for child in newValue {
                if child === self { fatalError("NSEntityDescription: Can't set superentity of self to self ('\(name ?? "")').") }
                if isKindOf(entity: child) {
                    fatalError("NSEntityDescription: Can't make '\(child.name ?? "")' a subentity of its own subentity '\(name ?? "")'.")
                }
                guard let parent = child.superentity, parent !== self, parent.ownSubentities.contains(where: { $0 === child }) else { continue }
                if parent.managedObjectModel === managedObjectModel {
                    fatalError("NSEntityDescription: Can't add an entity to multiple superentities ('\(child.name ?? "")' is a subentity of '\(parent.name ?? "")').")
                }
                // A parent in another model: a reference a copy or a merge left, resolved again by name.
                if parent.managedObjectModel?.isEditable ?? true { parent.ownSubentities.removeAll { $0 === child } }
            }
            for child in ownSubentities where child.superentity === self {
                child.superentity = nil
                child.superentityName = nil
            }
            ownSubentities = newValue
            for child in newValue {
                child.superentity = self
                child.superentityName = name
            }
        }
    }

    /// The subentities by name.
    public var subentitiesByName: [String: NSEntityDescription] {
        Dictionary(ownSubentities.compactMap { child in child.name.map { ($0, child) } }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether this entity is `entity` or inherits from it.
    public func isKindOf(entity: NSEntityDescription) -> Bool {
        var current: NSEntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    // MARK: Version hash

    /// The entity's version hash: SHA-256 of its name, abstractness, superentity's hash, the hashes of its
    /// persisted properties (inherited ones included) sorted by name, its modifier and its uniqueness
    /// constraints, exactly as Apple's Core Data computes it (spec/sqlite-store-format.md §7). Stores record
    /// these to tell whether a model can open them.
    public var versionHash: Data {
        var bytes = Array((name ?? "").utf8)
        bytes.append(isAbstract ? 1 : 0)
        if let superentity { bytes += Array(superentity.versionHash) }
        let persisted = allProperties
            .filter { !$0.isTransient && !($0 is NSFetchedPropertyDescription) }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        for property in persisted { bytes += Array(property.versionHash) }
        if let versionHashModifier { bytes += Array(versionHashModifier.utf8) }
        let constraints = uniquenessConstraints
            .map { group in group.map { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name ?? "\($0)" }.joined(separator: ".") }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for constraint in constraints where !constraint.isEmpty { bytes += Array(constraint.utf8) }
        return SHA2.sha256(bytes)
    }

    // MARK: Editing

    func assertEditable() {
        managedObjectModel?.assertEditable()
    }

    /// A copy with copies of the entity's own properties and of its subentities (each a subentity of
    /// the copy), belonging to no model and with no superentity, as Apple's copy is.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = copyAlone(keepingParentName: false)
        copy.subentities = ownSubentities.map { $0.copy() as! NSEntityDescription }
        return copy
    }

    /// A copy of this entity without its subentities. Copying a whole model, or merging models, copies
    /// each entity this way and keeps the parent's name, which the new model resolves again.
    package func copyAlone(keepingParentName: Bool) -> NSEntityDescription {
        let copy = NSEntityDescription()
        copy.name = name
        copy.managedObjectClassName = managedObjectClassName
        copy.isAbstract = isAbstract
        copy.userInfo = userInfo
        copy.versionHashModifier = versionHashModifier
        copy.explicitRenamingIdentifier = explicitRenamingIdentifier
        copy.uniquenessConstraints = uniquenessConstraints
        copy.compoundIndexes = compoundIndexes
        if keepingParentName { copy.superentityName = superentity?.name ?? superentityName }
        let properties = ownProperties.map { $0.copy() as! NSPropertyDescription }
        copy.properties = properties
        // Index elements point at the copy's properties, not the original's.
        copy.indexes = indexes.map { index in
            let indexCopy = index.copy() as! NSFetchIndexDescription
            for element in indexCopy.elements {
                element.property = properties.first { $0.name == element.propertyName }
            }
            return indexCopy
        }
        return copy
    }

    public override var description: String {
        "(<NSEntityDescription>) name \(name ?? "nil"), managedObjectClassName \(managedObjectClassName ?? "nil"), superentity \(superentity?.name ?? "nil"), properties \(ownProperties.map(\.name))"
    }
}
