import Foundation
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor
import Synchronization

/// A schema: the entities of an app's objects, their configurations, and fetch request templates.
///
/// Apple's `NSManagedObjectModel`. Build one in code or load an Xcode model (`.xcdatamodeld`,
/// `.xcdatamodel`). A model can be edited until a persistent store coordinator uses it; after that, changing
/// it (or anything in it) stops with Apple's message "Can't modify an immutable model.".
public final class NSManagedObjectModel: NSObject, NSCopying, @unchecked Sendable {
    private var entityList: [NSEntityDescription] = []
    private var configurationEntities: [String: [NSEntityDescription]] = [:]
    private var configurationOrder: [String] = []
    private var templates: [String: NSFetchRequest<NSFetchRequestResult>] = [:]
    /// Set once a coordinator uses the model; read on every edit, so an atomic.
    private let inUse = Atomic<Bool>(false)

    /// Localized names for entities, properties and error messages: keys such as `"Entity/Person"`,
    /// `"Property/name/Entity/Person"`, `"ErrorString/…"`.
    public var localizationDictionary: [String: String]? { willSet { assertEditable() } }
    /// Identifiers of this model version (Xcode's "Core Data Model Identifier"); not used for compatibility.
    public var versionIdentifiers: Set<AnyHashable> = [] { willSet { assertEditable() } }

    /// An empty model.
    public override init() {
        super.init()
    }

    // MARK: Entities

    /// The model's entities. Setting them resolves superentities, relationship destinations and inverses
    /// that were given by name (as a model file gives them).
    public var entities: [NSEntityDescription] {
        get { entityList }
        set {
            assertEditable()
            var seen = Set<String>()
            for entity in newValue {
                let name = entity.name ?? ""
                if !seen.insert(name).inserted {
                    fatalError("NSManagedObjectModel: the model has two entities named '\(name)'")
                }
                // Apple raises too: the entity would leave a model that may be in use, its relationships
                // re-resolved against this one.
                if let owner = entity.managedObjectModel, owner !== self {
                    fatalError("NSManagedObjectModel: Can't use an entity in two models ('\(name)' belongs to another model; insert a copy of it).")
                }
            }
            for entity in entityList where entity.managedObjectModel === self { entity.managedObjectModel = nil }
            entityList = newValue
            for entity in newValue { entity.managedObjectModel = self }
            // An entity that leaves the model leaves its configurations too, as in Apple's model: a store
            // of the configuration would otherwise map it and record no version hash for it. One replaced
            // by an entity of its name (an edited copy) is that entity there, as references by name are.
            let replacements = Dictionary(newValue.compactMap { entity in entity.name.map { ($0, entity) } }, uniquingKeysWith: { first, _ in first })
            for configuration in configurationOrder {
                configurationEntities[configuration] = configurationEntities[configuration]?.compactMap { member in
                    newValue.contains { $0 === member } ? member : member.name.flatMap { replacements[$0] }
                }
            }
            resolveReferences()
        }
    }

    /// The entities by name.
    public var entitiesByName: [String: NSEntityDescription] {
        // A model in use cannot change: its table is built once (inserting objects by name reads it).
        if !isEditable, let cached = frozenEntitiesByName.load() { return cached.table }
        let table = Dictionary(entityList.compactMap { entity in entity.name.map { ($0, entity) } }, uniquingKeysWith: { first, _ in first })
        if !isEditable { return frozenEntitiesByName.storeIfNil(EntityTable(table)).table }
        return table
    }

    private final class EntityTable: Sendable {
        let table: [String: NSEntityDescription]
        init(_ table: [String: NSEntityDescription]) { self.table = table }
    }
    private let frozenEntitiesByName = AtomicLazyReference<EntityTable>()

    /// Links entities named as parents, relationship destinations and inverses to the entities themselves.
    /// References to entities of another model (left by copying or merging) are resolved again by name.
    private func resolveReferences() {
        let byName = entitiesByName
        for entity in entityList {
            if let parentName = entity.superentityName ?? entity.superentity?.name,
               entity.superentity.map({ $0.managedObjectModel !== self }) ?? true, let parent = byName[parentName] {
                parent.subentities = parent.subentities.filter { $0 !== entity && $0.name != entity.name } + [entity]
            }
        }
        // A subentity outside the model (an entity's `copy()` brings copies of its subentities) gives way
        // to the model's entity of its name, or goes: a hierarchy reaches only the model's entities.
        for entity in entityList where entity.subentities.contains(where: { child in !entityList.contains { $0 === child } }) {
            var members: [NSEntityDescription] = []
            for child in entity.subentities {
                let member = entityList.contains(where: { $0 === child }) ? child : child.name.flatMap { byName[$0] }
                if let member, !members.contains(where: { $0 === member }) { members.append(member) }
            }
            entity.subentities = members
        }
        for entity in entityList {
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                // Setting the object also sets the cached name, so the name is restored after: an unresolved
                // destination or inverse keeps its name for `cdtool model validate` and the hash.
                if relationship.destinationEntity.map({ $0.managedObjectModel !== self }) ?? true,
                   let name = relationship.destinationEntityName ?? relationship.destinationEntity?.name {
                    relationship.destinationEntity = byName[name]
                    relationship.destinationEntityName = name
                }
                if relationship.inverseRelationship.map({ $0.entity?.managedObjectModel !== self }) ?? true,
                   let inverseName = relationship.inverseRelationshipName ?? relationship.inverseRelationship?.name {
                    relationship.inverseRelationship = relationship.destinationEntity?.relationshipsByName[inverseName]
                    relationship.inverseRelationshipName = inverseName
                }
            }
        }
    }

    // MARK: Configurations

    /// The names of the model's configurations (groups of entities that go to one store).
    public var configurations: [String] { configurationOrder }

    /// The entities of a configuration; nil for an unknown name.
    public func entities(forConfigurationName configuration: String?) -> [NSEntityDescription]? {
        guard let configuration else { return entityList }
        if let members = configurationEntities[configuration] { return members }
        return configuration == "Default" || configuration == "PF_DEFAULT_CONFIGURATION_NAME" ? entityList : nil
    }

    /// Sets the entities of a configuration, creating it if needed. Each must already be an entity of the
    /// model: another stops with Apple's reason, as Apple raises.
    public func setEntities(_ entities: [NSEntityDescription], forConfigurationName configuration: String) {
        assertEditable()
        for entity in entities where !entityList.contains(where: { $0 === entity }) {
            fatalError("NSManagedObjectModel: Entities for a configuration must already be in the model ('\(entity.name ?? "")' is not an entity of this model).")
        }
        if configurationEntities[configuration] == nil { configurationOrder.append(configuration) }
        configurationEntities[configuration] = entities
    }

    // MARK: Version hashes

    /// Each entity's version hash by entity name: what a store records in its metadata as
    /// `NSStoreModelVersionHashes`, byte for byte as Apple's Core Data computes it.
    public var entityVersionHashesByName: [String: Data] {
        var hashes: [String: Data] = [:]
        for entity in entityList { if let name = entity.name { hashes[name] = entity.versionHash } }
        return hashes
    }

    /// Whether a store whose metadata is `metadata` can be opened with the entities of `configuration`
    /// (nil for all): every entity's version hash must equal the one the store recorded. With no
    /// configuration the store must record no other entity. A store added with a configuration records
    /// the hashes of the whole model it was made with (this project's stores and, as far as is known,
    /// Apple's), so there every recorded entity must be one of this model, with the same hash.
    public func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any]) -> Bool {
        guard let entities = entities(forConfigurationName: configuration),
              let stored = metadata["NSStoreModelVersionHashes"] as? [String: Any]
        else { return false }
        for entity in entities {
            guard let name = entity.name, let hash = stored[name] as? Data, hash == entity.versionHash else { return false }
        }
        if configuration == nil {
            return Set(stored.keys) == Set(entities.compactMap(\.name))
        }
        let all = entityVersionHashesByName
        return stored.allSatisfy { name, value in all[name].map { $0 == value as? Data } ?? false }
    }

    /// `NSStoreModelVersionHashesDigest`: base64 of SHA-512 over every entity's name and hash, names sorted.
    public var versionHashesDigest: String {
        var bytes: [UInt8] = []
        for (name, hash) in entityVersionHashesByName.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            bytes += Array(name.utf8) + Array(hash)
        }
        return SHA2.sha512(bytes).base64EncodedString()
    }

    /// `NSStoreModelVersionChecksumKey` (Apple's `versionChecksum`): base64 of SHA-256 over the entity
    /// hashes, in entity-name order.
    public var versionChecksum: String {
        var bytes: [UInt8] = []
        for (_, hash) in entityVersionHashesByName.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            bytes += Array(hash)
        }
        return SHA2.sha256(bytes).base64EncodedString()
    }

    // MARK: Fetch request templates

    /// The fetch request templates by name.
    public var fetchRequestTemplatesByName: [String: NSFetchRequest<NSFetchRequestResult>] { templates }

    /// Stores `fetchRequest` as the template named `name` (nil removes it).
    public func setFetchRequestTemplate(_ fetchRequest: NSFetchRequest<NSFetchRequestResult>?, forName name: String) {
        assertEditable()
        fetchRequest?.owningModel = self
        templates[name] = fetchRequest
    }

    /// The template named `name`, as stored.
    public func fetchRequestTemplate(forName name: String) -> NSFetchRequest<NSFetchRequestResult>? {
        templates[name]
    }

    /// A copy of the template named `name` with its `$VARIABLES` replaced by `variables` (use `NSNull` for
    /// nil); nil when there is no such template. Every variable must have a value: a missing one stops with
    /// Apple's message; ``fetchRequestFromTemplateThrowing(withName:substitutionVariables:)`` throws instead.
    public func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any]) -> NSFetchRequest<NSFetchRequestResult>? {
        do {
            return try fetchRequestFromTemplateThrowing(withName: name, substitutionVariables: variables)
        } catch {
            fatalError("NSManagedObjectModel: \(error) (template \(name))")
        }
    }

    /// Like ``fetchRequestFromTemplate(withName:substitutionVariables:)``, throwing
    /// `PredicateEvaluationError` (code `.unboundVariable`) for a variable without a value.
    public func fetchRequestFromTemplateThrowing(withName name: String, substitutionVariables variables: [String: Any]) throws -> NSFetchRequest<NSFetchRequestResult>? {
        // The copy belongs to no model, so it can be changed even when the model is in use.
        guard let template = templates[name], let copy = template.copy() as? NSFetchRequest<NSFetchRequestResult> else { return nil }
        copy.predicate = try template.predicate?.withSubstitutionVariablesThrowing(variables)
        return copy
    }

    // MARK: Editing

    /// Whether the model can still be changed (no coordinator has used it).
    public var isEditable: Bool { !inUse.load(ordering: .acquiring) }

    /// Called by a persistent store coordinator when it starts using the model: from then on the model is
    /// immutable, as on Apple platforms. A model Core Data would refuse at this point (``usageProblems()``:
    /// a subentity redeclaring an inherited property, a uniqueness constraint on no property) stops with
    /// Apple's reason, as Apple raises.
    package func markInUse() {
        if isEditable {
            dropIdenticalRedeclarations()
            if let problem = usageProblems().first { fatalError("NSManagedObjectModel: \(problem.reason)") }
        }
        inUse.store(true, ordering: .releasing)
    }

    func assertEditable() {
        if !isEditable { fatalError("NSManagedObjectModel: Can't modify an immutable model.") }
    }

    /// Whether an entity of the model declares a uniqueness constraint; nil while the model is editable
    /// (it may still gain one). Asked by every save: most models have none, and then no row is looked at.
    package var declaresUniquenessConstraints: Bool? {
        if isEditable { return nil }
        switch uniquenessAnswer.load(ordering: .relaxed) {
        case 1: return false
        case 2: return true
        default:
            let declares = entityList.contains { !$0.uniquenessConstraints.isEmpty }
            uniquenessAnswer.store(declares ? 2 : 1, ordering: .relaxed)
            return declares
        }
    }
    /// ``declaresUniquenessConstraints`` once known: 0 not yet, 1 no, 2 yes.
    private let uniquenessAnswer = Atomic<UInt8>(0)

    /// The model's ``DerivationPlan``, built once it is in use (only that type is stored here).
    package let derivationPlanCache = OnceReference()

    /// An editable copy: entities, configurations and templates copied, references resolved anew.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSManagedObjectModel()
        copy.entities = entityList.map { $0.copyAlone(keepingParentName: true) }
        let byName = copy.entitiesByName
        for configuration in configurationOrder {
            copy.setEntities((configurationEntities[configuration] ?? []).compactMap { $0.name.flatMap { byName[$0] } }, forConfigurationName: configuration)
        }
        for (name, template) in templates {
            let request = template.copy() as! NSFetchRequest<NSFetchRequestResult>
            request.entity = request.entityName.flatMap { byName[$0] }
            copy.setFetchRequestTemplate(request, forName: name)
        }
        copy.localizationDictionary = localizationDictionary
        copy.versionIdentifiers = versionIdentifiers
        return copy
    }

    public override var description: String {
        "(<NSManagedObjectModel>) isEditable \(isEditable), entities \(entityList.compactMap(\.name)), fetch request templates \(templates.keys.sorted())"
    }
}
