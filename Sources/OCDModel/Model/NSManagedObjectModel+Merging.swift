import Foundation

/// Why models could not be merged.
public struct ModelMergeError: Error, CustomStringConvertible, Sendable {
    /// Apple's reason, e.g. "Can't merge models with two different entities named 'Person'".
    public var reason: String
    public var description: String { reason }
}

extension NSManagedObjectModel {
    /// One model with the entities, configurations and fetch request templates of all `models`.
    ///
    /// An entity that appears in several models with the same version hash is taken once; two different
    /// entities with one name stop with Apple's reason ("Can't merge models with two different entities
    /// named 'X'"), as Apple raises; ``init(validatingMerging:)`` throws instead. Nil for no models.
    public convenience init?(byMerging models: [NSManagedObjectModel]?) {
        guard let models, !models.isEmpty else { return nil }
        do {
            try self.init(validatingMerging: models)
        } catch {
            fatalError("NSManagedObjectModel: \(error)")
        }
    }

    /// Like ``init(byMerging:)``, throwing ``ModelMergeError`` for two different entities of one name, or
    /// two different fetch request templates of one name ("Can't merge models with two different fetch
    /// request templates named 'X'"; the same template in both is kept once).
    public convenience init(validatingMerging models: [NSManagedObjectModel]) throws {
        self.init()
        var chosen: [String: NSEntityDescription] = [:]
        var order: [String] = []
        for model in models {
            for entity in model.entities {
                let name = entity.name ?? ""
                if let existing = chosen[name] {
                    if existing.versionHash != entity.versionHash {
                        throw ModelMergeError(reason: "Can't merge models with two different entities named '\(name)'")
                    }
                    continue
                }
                chosen[name] = entity
                order.append(name)
            }
        }
        entities = order.map { chosen[$0]!.copyAlone(keepingParentName: true) }
        let byName = entitiesByName
        for model in models {
            for configuration in model.configurations {
                // A configuration several models define gets the members of all of them.
                var members = entities(forConfigurationName: configuration).flatMap { configurations.contains(configuration) ? $0 : nil } ?? []
                for name in (model.entities(forConfigurationName: configuration) ?? []).compactMap(\.name) where !members.contains(where: { $0.name == name }) {
                    if let entity = byName[name] { members.append(entity) }
                }
                setEntities(members, forConfigurationName: configuration)
            }
            for (name, template) in model.fetchRequestTemplatesByName {
                if let existing = fetchRequestTemplate(forName: name) {
                    if !Self.sameTemplate(existing, template) {
                        throw ModelMergeError(reason: "Can't merge models with two different fetch request templates named '\(name)'")
                    }
                    continue
                }
                let request = template.copy() as! NSFetchRequest<NSFetchRequestResult>
                request.entity = request.entityName.flatMap { byName[$0] }
                setFetchRequestTemplate(request, forName: name)
            }
            if let dictionary = model.localizationDictionary {
                localizationDictionary = (localizationDictionary ?? [:]).merging(dictionary) { first, _ in first }
            }
            versionIdentifiers.formUnion(model.versionIdentifiers)
        }
    }

    /// Whether two templates of one name ask for the same thing (what merging them may keep one of).
    private static func sameTemplate(_ a: NSFetchRequest<NSFetchRequestResult>, _ b: NSFetchRequest<NSFetchRequestResult>) -> Bool {
        func names(_ properties: [Any]?) -> [String]? {
            properties?.map { ($0 as? NSPropertyDescription)?.name ?? "\($0)" }
        }
        return a.entityName == b.entityName && a.predicate?.predicateFormat == b.predicate?.predicateFormat
            && a.sortDescriptors?.map(\.description) == b.sortDescriptors?.map(\.description)
            && a.fetchLimit == b.fetchLimit && a.fetchOffset == b.fetchOffset && a.resultType == b.resultType
            && a.fetchBatchSize == b.fetchBatchSize && a.includesSubentities == b.includesSubentities
            && a.includesPendingChanges == b.includesPendingChanges && a.includesPropertyValues == b.includesPropertyValues
            && a.returnsObjectsAsFaults == b.returnsObjectsAsFaults && a.returnsDistinctResults == b.returnsDistinctResults
            && names(a.propertiesToFetch) == names(b.propertiesToFetch) && names(a.propertiesToGroupBy) == names(b.propertiesToGroupBy)
            && a.havingPredicate?.predicateFormat == b.havingPredicate?.predicateFormat
            && a.relationshipKeyPathsForPrefetching == b.relationshipKeyPathsForPrefetching
    }

    /// The model a store was made with, assembled from `models` (typically every version of an app's model):
    /// for each entity the store recorded, an entity of one of the models with exactly that version hash.
    /// Nil when some entity of the store is in none of the models.
    public convenience init?(byMerging models: [NSManagedObjectModel]?, forStoreMetadata metadata: [String: Any]) {
        let models = models ?? []
        guard let stored = metadata["NSStoreModelVersionHashes"] as? [String: Any] else { return nil }
        var picked: [NSEntityDescription] = []
        for (name, value) in stored.sorted(by: { $0.key < $1.key }) {
            guard let hash = value as? Data,
                  let entity = models.lazy.compactMap({ $0.entitiesByName[name] }).first(where: { $0.versionHash == hash })
            else { return nil }
            picked.append(entity)
        }
        self.init()
        entities = picked.map { $0.copyAlone(keepingParentName: true) }
        // An entity's hash includes its superentity's, so parents were picked too; check the result anyway.
        guard isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else { return nil }
    }

    /// The models in `bundles` (the main bundle when nil) merged into one: every `.xcdatamodeld` (its
    /// current version) and `.xcdatamodel` at the top of each bundle's resources. A model that cannot be
    /// read is left out, as Apple's Core Data leaves it out (with a log): one broken file does not take
    /// the others with it. Nil when there is no model, or when two different entities (or fetch request
    /// templates) share a name.
    public static func mergedModel(from bundles: [Bundle]?) -> NSManagedObjectModel? {
        var models: [NSManagedObjectModel] = []
        for url in modelURLs(in: bundles) {
            do {
                models.append(try NSManagedObjectModel(validatingContentsOf: url))
            } catch {
                // Apple's Core Data logs the model it leaves out too.
                // (To file descriptor 2 directly: FileHandle's write stops the process on a closed pipe.)
                let line = "OpenCoreData: mergedModel(from:) leaves out the model at \(url.path), which cannot be loaded: \(error)\n"
                _ = line.withCString { write(2, $0, strlen($0)) }
            }
        }
        guard !models.isEmpty else { return nil }
        return try? NSManagedObjectModel(validatingMerging: models)
    }

    /// The model a store was made with, from every version of every model in `bundles` (the main bundle
    /// when nil), not only the current ones: see ``init(byMerging:forStoreMetadata:)``. Nil when no
    /// combination of their entities has the store's version hashes.
    public static func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any]) -> NSManagedObjectModel? {
        var models: [NSManagedObjectModel] = []
        for url in modelURLs(in: bundles) {
            for version in versionURLs(of: url) {
                if let model = NSManagedObjectModel(contentsOf: version) { models.append(model) }
            }
        }
        return NSManagedObjectModel(byMerging: models, forStoreMetadata: metadata)
    }

    /// The model files and folders at the top of each bundle's resources.
    private static func modelURLs(in bundles: [Bundle]?) -> [URL] {
        var urls: [URL] = []
        var seen = Set<String>()
        for bundle in bundles ?? [Bundle.main] {
            for root in [bundle.resourceURL, bundle.bundleURL].compactMap({ $0 }) {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
                for name in names.sorted() where [".xcdatamodeld", ".xcdatamodel", ".momd", ".mom"].contains(where: name.hasSuffix) {
                    let url = root.appendingPathComponent(name).standardizedFileURL
                    if seen.insert(url.path).inserted { urls.append(url) }
                }
            }
        }
        return urls
    }

    /// Every version of a model: the `.xcdatamodel` folders of an `.xcdatamodeld`, the compiled files of
    /// a `.momd` (this project's `.ocdmodel`s, else Apple's `.mom`s), or the model itself.
    private static func versionURLs(of url: URL) -> [URL] {
        switch url.pathExtension {
        case "xcdatamodeld":
            return (try? XcodeModelReader.versionFolders(in: url)) ?? []
        case "momd":
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
            let ours = names.filter { $0.hasSuffix("." + CompiledModel.fileExtension) }
            return (ours.isEmpty ? names.filter { $0.hasSuffix(".mom") } : ours).map { url.appendingPathComponent($0) }
        default:
            return [url]
        }
    }
}
