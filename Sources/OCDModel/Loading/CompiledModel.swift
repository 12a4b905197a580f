import Foundation
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// OpenCoreData's compiled model format, written by `cdtool compile` (the `momc` equivalent) and read by
/// `NSManagedObjectModel(contentsOf:)`. Documentation/Model.md describes it.
///
/// A `.momd` folder holds `VersionInfo.plist`, with Apple's keys (`NSManagedObjectModel_CurrentVersionName`,
/// `NSManagedObjectModel_VersionHashes`), and one `<version>.ocdmodel` per version: the records below in
/// the byte layout of `BinaryWriter`. Predicates and expressions are kept as format strings. A layout of
/// our own because the generic decoders cost more than the XML parse they replace: on Linux
/// `PropertyListSerialization` bridges every nested dictionary, and `JSONDecoder` looks up every key.
package enum CompiledModel {
    static let formatName = "OpenCoreData compiled model"
    static let formatVersion = 1
    package static let fileExtension = "ocdmodel"

    struct File {
        var format: String
        var formatVersion: Int
        var versionIdentifiers: [String]
        var entities: [Entity]
        var configurations: [Configuration]
        var fetchRequests: [FetchRequest]
        var localization: [String: String]?
    }

    struct Entity {
        var name: String
        var className: String
        var parent: String?
        var abstract: Bool
        var userInfo: [String: String]?
        var versionHashModifier: String?
        var renamingIdentifier: String?
        var properties: [Property]
        var uniquenessConstraints: [[String]]
        var compoundIndexes: [[String]]
        var indexes: [Index]
    }

    /// One property; the fields after `validation` are set only for the kinds that have them.
    struct Property {
        /// `attribute`, `derived`, `composite`, `relationship` or `fetched`.
        var kind: String
        var name: String
        var optional: Bool
        var transient: Bool
        var indexed: Bool
        var spotlight: Bool
        var userInfo: [String: String]?
        var versionHashModifier: String?
        var renamingIdentifier: String?
        var validation: [Validation]
        var attributeType: UInt?
        var defaultValue: DefaultValue?
        var valueClassName: String?
        var valueTransformerName: String?
        var externalStorage: Bool?
        var preserveAfterDeletion: Bool?
        var cloudEncryption: Bool?
        var scalar: Bool?
        var derivation: String?
        var elements: [Property]?
        var destination: String?
        var inverse: String?
        var minCount: Int?
        var maxCount: Int?
        var deleteRule: UInt?
        var ordered: Bool?
        var fetchRequest: FetchRequest?
    }

    /// A validation predicate and its warning: a Core Data error code, or text.
    struct Validation {
        var predicate: String
        var warningCode: Int?
        var warning: String?
    }

    /// A default value with its kind (`int`, `double`, `bool`, `string`, `decimal`, `uuid`, `url`, `date`
    /// in seconds since 2001, `data` in base64), so it reads back as the same type.
    struct DefaultValue {
        var kind: String
        var value: String
    }

    struct Index {
        var name: String
        var elements: [IndexElement]
        var partialIndexPredicate: String?
    }

    struct IndexElement {
        var property: String
        var rTree: Bool
        var ascending: Bool
    }

    struct FetchRequest {
        var name: String?
        var entity: String
        var predicate: String?
        var sortDescriptors: [SortDescriptor]
        var fetchLimit: Int
        var fetchOffset: Int
        var fetchBatchSize: Int
        var relationshipKeyPathsForPrefetching: [String]
        var shouldRefreshRefetchedObjects: Bool
        var resultType: UInt
        var includesSubentities: Bool
        var includesPropertyValues: Bool
        var includesPendingChanges: Bool
        var returnsObjectsAsFaults: Bool
        var returnsDistinctResults: Bool
    }

    /// A sort descriptor by key, direction and selector (comparator descriptors cannot be stored).
    struct SortDescriptor {
        var key: String?
        var ascending: Bool
        var selector: String
    }

    struct Configuration {
        var name: String
        var entities: [String]
    }

    // MARK: Writing

    /// Compiles every version of `source` (an `.xcdatamodeld`, or one `.xcdatamodel`) into the `.momd`
    /// folder `destination`, replacing it. Returns the problems found (warnings); throws for errors.
    package static func compile(_ source: URL, to destination: URL) throws -> [String] {
        // Models are found by extension: a compiled folder named otherwise (`Model.mom`, as momc names a
        // single compiled version) could not be loaded, nor replaced by the next compile.
        guard destination.pathExtension == "momd" else {
            throw ModelLoadError(file: destination, line: nil, problem: "the output must be a folder named <name>.momd (a compiled model is found by that extension)")
        }
        var versions: [(name: String, url: URL)] = []
        var current: String
        var isDirectory: ObjCBool = false
        let isFolder = FileManager.default.fileExists(atPath: source.path, isDirectory: &isDirectory) && isDirectory.boolValue
        let folders = isFolder ? try XcodeModelReader.versionFolders(in: source) : []
        if isFolder, source.pathExtension != "xcdatamodel", !folders.isEmpty {
            versions = folders.map { ($0.deletingPathExtension().lastPathComponent, $0) }
            current = try XcodeModelReader.currentVersion(in: source).deletingPathExtension().lastPathComponent
        } else {
            let folder = source.lastPathComponent == "contents" ? source.deletingLastPathComponent() : source
            current = folder.deletingPathExtension().lastPathComponent
            versions = [(current, source)]
        }
        var warnings: [String] = []
        var hashes: [String: [String: Data]] = [:]
        var files: [(String, Data)] = []
        for version in versions {
            let model = try NSManagedObjectModel(validatingContentsOf: version.url)
            let problems = model.consistencyProblems()
            let errors = problems.filter { $0.hasPrefix("error:") }
            if !errors.isEmpty {
                throw ModelLoadError(file: version.url, line: nil, problem: "the model has errors:\n" + errors.joined(separator: "\n"))
            }
            warnings += problems.map { "\(version.name): \($0)" }
            hashes[version.name] = model.entityVersionHashesByName
            var writer = BinaryWriter(formatVersion: UInt8(formatVersion))
            record(model).write(to: &writer)
            files.append(("\(version.name).\(fileExtension)", Data(writer.bytes)))
        }
        try replaceCompiledFolder(destination) { folder in
            for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
            let info: [String: Any] = [
                "NSManagedObjectModel_CurrentVersionName": current,
                "NSManagedObjectModel_VersionHashes": hashes,
                "OCDCompiledModelFormatVersion": formatVersion,
            ]
            try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0)
                .write(to: folder.appendingPathComponent("VersionInfo.plist"))
        }
        return warnings
    }

    /// Writes a compiled model into a new folder beside `destination`, then moves it into place. An existing
    /// `destination` is replaced only if it is a compiled model folder (a `.momd` holding nothing but
    /// `VersionInfo.plist`, `.ocdmodel`, `.mom` and `.omo` files): compiling never deletes anything else.
    private static func replaceCompiledFolder(_ destination: URL, write: (URL) throws -> Void) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: destination.path, isDirectory: &isDirectory) {
            let contents = (try? manager.contentsOfDirectory(atPath: destination.path)) ?? []
            let compiledOnly = contents.allSatisfy { $0 == "VersionInfo.plist" || [fileExtension, "mom", "omo"].contains(($0 as NSString).pathExtension) }
            guard isDirectory.boolValue, destination.pathExtension == "momd", compiledOnly else {
                throw ModelLoadError(file: destination, line: nil, problem: "the output exists and is not a compiled model folder (.momd); refusing to replace it")
            }
        }
        let staging = destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent)-\(UUID().uuidString)")
        try manager.createDirectory(at: staging, withIntermediateDirectories: true)
        do {
            try write(staging)
            if manager.fileExists(atPath: destination.path) { try manager.removeItem(at: destination) }
            try manager.moveItem(at: staging, to: destination)
        } catch {
            try? manager.removeItem(at: staging)
            throw error
        }
    }

    static func record(_ model: NSManagedObjectModel) -> File {
        File(
            format: formatName,
            formatVersion: formatVersion,
            versionIdentifiers: model.versionIdentifiers.compactMap { $0.base as? String }.sorted(),
            entities: model.entities.map(record),
            configurations: model.configurations.map { Configuration(name: $0, entities: (model.entities(forConfigurationName: $0) ?? []).compactMap(\.name)) },
            fetchRequests: model.fetchRequestTemplatesByName.sorted { $0.key < $1.key }.map { name, request in
                var encoded = record(request)
                encoded.name = name
                return encoded
            },
            localization: model.localizationDictionary)
    }

    static func record(_ entity: NSEntityDescription) -> Entity {
        Entity(
            name: entity.name ?? "",
            className: entity.managedObjectClassName ?? "NSManagedObject",
            parent: entity.superentity?.name ?? entity.superentityName,
            abstract: entity.isAbstract,
            userInfo: stringDictionary(entity.userInfo),
            versionHashModifier: entity.versionHashModifier,
            renamingIdentifier: entity.explicitRenamingIdentifier,
            properties: entity.ownProperties.map(record),
            uniquenessConstraints: entity.uniquenessConstraints.map { $0.map { "\($0)" } },
            compoundIndexes: entity.compoundIndexes.map { $0.map { "\($0)" } },
            indexes: entity.indexes.map { index in
                Index(name: index.name,
                      elements: index.elements.map { IndexElement(property: $0.propertyName ?? "", rTree: $0.collationType == .rTree, ascending: $0.isAscending) },
                      partialIndexPredicate: index.partialIndexPredicate?.predicateFormat)
            })
    }

    static func record(_ property: NSPropertyDescription) -> Property {
        var encoded = Property(
            kind: "property", name: property.name, optional: property.isOptional, transient: property.isTransient,
            indexed: property.isIndexed, spotlight: property.isIndexedBySpotlight, userInfo: stringDictionary(property.userInfo),
            versionHashModifier: property.versionHashModifier, renamingIdentifier: property.explicitRenamingIdentifier,
            validation: zip(property.validationPredicates, property.validationWarnings).map { predicate, warning in
                Validation(predicate: predicate.predicateFormat, warningCode: warning as? Int, warning: warning is Int ? nil : "\(warning)")
            })
        switch property {
        case let relationship as NSRelationshipDescription:
            encoded.kind = "relationship"
            encoded.destination = relationship.destinationEntity?.name ?? relationship.destinationEntityName ?? ""
            encoded.inverse = relationship.inverseRelationship?.name ?? relationship.inverseRelationshipName
            encoded.minCount = relationship.minCount
            encoded.maxCount = relationship.maxCount
            encoded.deleteRule = relationship.deleteRule.rawValue
            encoded.ordered = relationship.isOrdered
        case let fetched as NSFetchedPropertyDescription:
            encoded.kind = "fetched"
            encoded.fetchRequest = fetched.fetchRequest.map(record)
        case let attribute as NSAttributeDescription:
            encoded.kind = attribute is NSDerivedAttributeDescription ? "derived" : attribute is NSCompositeAttributeDescription ? "composite" : "attribute"
            encoded.attributeType = attribute.attributeType.rawValue
            encoded.defaultValue = attribute.defaultValue.map(defaultValue)
            if let className = attribute.attributeValueClassName, className != attribute.attributeType.attributeValueClassName {
                encoded.valueClassName = className
            }
            encoded.valueTransformerName = attribute.valueTransformerName
            encoded.externalStorage = attribute.allowsExternalBinaryDataStorage
            encoded.preserveAfterDeletion = attribute.preservesValueInHistoryOnDeletion
            encoded.cloudEncryption = attribute.allowsCloudEncryption
            encoded.scalar = attribute.usesScalarValueType
            encoded.derivation = (attribute as? NSDerivedAttributeDescription)?.derivationExpression?.description
            encoded.elements = (attribute as? NSCompositeAttributeDescription)?.elements.map(record)
        default:
            break
        }
        return encoded
    }

    static func record(_ request: NSFetchRequest<NSFetchRequestResult>) -> FetchRequest {
        FetchRequest(
            name: nil, entity: request.entityName ?? "", predicate: request.predicate?.predicateFormat,
            sortDescriptors: (request.sortDescriptors ?? []).compactMap { descriptor in
                descriptor.selector.map { SortDescriptor(key: descriptor.key, ascending: descriptor.ascending, selector: $0.name) }
            },
            fetchLimit: request.fetchLimit, fetchOffset: request.fetchOffset, fetchBatchSize: request.fetchBatchSize,
            relationshipKeyPathsForPrefetching: request.relationshipKeyPathsForPrefetching ?? [],
            shouldRefreshRefetchedObjects: request.shouldRefreshRefetchedObjects, resultType: request.resultType.rawValue,
            includesSubentities: request.includesSubentities, includesPropertyValues: request.includesPropertyValues,
            includesPendingChanges: request.includesPendingChanges, returnsObjectsAsFaults: request.returnsObjectsAsFaults,
            returnsDistinctResults: request.returnsDistinctResults)
    }

    static func defaultValue(_ value: Any) -> DefaultValue {
        switch value {
        case let decimal as Decimal: return DefaultValue(kind: "decimal", value: "\(decimal)")
        case let uuid as UUID: return DefaultValue(kind: "uuid", value: uuid.uuidString)
        case let url as URL: return DefaultValue(kind: "url", value: url.absoluteString)
        case let bool as Bool: return DefaultValue(kind: "bool", value: bool ? "1" : "0")
        case let int as Int: return DefaultValue(kind: "int", value: String(int))
        case let double as Double: return DefaultValue(kind: "double", value: "\(double)")
        case let date as Date: return DefaultValue(kind: "date", value: "\(date.timeIntervalSinceReferenceDate)")
        case let data as Data: return DefaultValue(kind: "data", value: data.base64EncodedString())
        default: return DefaultValue(kind: "string", value: "\(value)")
        }
    }

    private static func stringDictionary(_ info: [AnyHashable: Any]?) -> [String: String]? {
        guard let info else { return nil }
        var result: [String: String] = [:]
        for (key, value) in info { result["\(key.base)"] = "\(value)" }
        return result
    }

    // MARK: Reading

    /// Reads the current version of a compiled `.momd` folder (or one `.ocdmodel` file) into `model`.
    static func read(_ url: URL, into model: NSManagedObjectModel) throws {
        var file = url
        if url.pathExtension != fileExtension {
            let infoURL = url.appendingPathComponent("VersionInfo.plist")
            let info = (try? Data(contentsOf: infoURL)).flatMap { try? PropertyLists.propertyList(from: $0) } as? [String: Any]
            guard let current = info?["NSManagedObjectModel_CurrentVersionName"] as? String else {
                throw ModelLoadError(file: infoURL, line: nil, problem: "no NSManagedObjectModel_CurrentVersionName: not a compiled model folder")
            }
            // A version of this folder only: not a path out of it.
            guard !current.isEmpty, !current.contains("/"), current != ".", current != ".." else {
                throw ModelLoadError(file: infoURL, line: nil, problem: "the current version name '\(current)' is not a version of this folder")
            }
            file = url.appendingPathComponent("\(current).\(fileExtension)")
            guard FileManager.default.fileExists(atPath: file.path) else {
                let apple = url.appendingPathComponent("\(current).mom")
                if FileManager.default.fileExists(atPath: apple.path) {
                    try AppleCompiledModel.read(apple, into: model)
                    return
                }
                throw ModelLoadError(file: url, line: nil, problem: "the current version '\(current)' has neither a .\(fileExtension) nor a .mom file")
            }
        }
        let decoded: File
        do {
            var reader = try BinaryReader(Data(contentsOf: file))
            guard reader.formatVersion <= formatVersion else {
                throw BinaryReader.Malformed(reason: "compiled with a newer format (\(reader.formatVersion)); recompile with this version of cdtool")
            }
            decoded = try File(from: &reader)
            guard reader.isAtEnd else { throw BinaryReader.Malformed(reason: "unexpected bytes after the model") }
        } catch let error as BinaryReader.Malformed {
            throw ModelLoadError(file: file, line: nil, problem: "not a compiled model: \(error.reason)")
        } catch {
            throw ModelLoadError(file: file, line: nil, problem: "cannot read the file: \(error.localizedDescription)")
        }
        try Decoder(file: file).decode(decoded, into: model)
    }

    private struct Decoder {
        let file: URL

        func fail(_ problem: String) -> ModelLoadError { ModelLoadError(file: file, line: nil, problem: problem) }

        func decode(_ root: File, into model: NSManagedObjectModel) throws {
            guard root.format == formatName else { throw fail("not an OpenCoreData compiled model") }
            guard root.formatVersion <= formatVersion else {
                throw fail("compiled with a newer format (\(root.formatVersion)); recompile with this version of cdtool")
            }
            model.versionIdentifiers = Set(root.versionIdentifiers.map(AnyHashable.init))
            try model.setReadEntities(root.entities.map(entity)) { fail($0.reason) }
            let byName = model.entitiesByName
            for configuration in root.configurations {
                model.setEntities(configuration.entities.compactMap { byName[$0] }, forConfigurationName: configuration.name)
            }
            for encoded in root.fetchRequests {
                guard let name = encoded.name else { throw fail("a fetch request template without a name") }
                let request = try fetchRequest(encoded)
                request.entity = request.entityName.flatMap { byName[$0] }
                model.setFetchRequestTemplate(request, forName: name)
            }
            model.localizationDictionary = root.localization
        }

        func entity(_ encoded: Entity) throws -> NSEntityDescription {
            guard !encoded.name.isEmpty else { throw fail("an entity without a name") }
            let entity = NSEntityDescription()
            entity.name = encoded.name
            entity.managedObjectClassName = encoded.className
            entity.isAbstract = encoded.abstract
            entity.superentityName = encoded.parent
            entity.userInfo = encoded.userInfo
            entity.versionHashModifier = encoded.versionHashModifier
            entity.renamingIdentifier = encoded.renamingIdentifier
            let properties = try encoded.properties.map(property)
            if Set(properties.map(\.name)).count != properties.count {
                throw fail("the entity '\(encoded.name)' has two properties with one name")
            }
            entity.properties = properties
            entity.uniquenessConstraints = encoded.uniquenessConstraints.map { $0 as [Any] }
            entity.compoundIndexes = encoded.compoundIndexes.map { $0 as [Any] }
            entity.indexes = try encoded.indexes.map { index in
                let elements = index.elements.map { element -> NSFetchIndexElementDescription in
                    let description = NSFetchIndexElementDescription(propertyName: element.property, collationType: element.rTree ? .rTree : .binary, ascending: element.ascending)
                    description.property = properties.first { $0.name == element.property }
                    return description
                }
                let description = NSFetchIndexDescription(name: index.name, elements: elements)
                description.partialIndexPredicate = try index.partialIndexPredicate.map(predicate)
                return description
            }
            return entity
        }

        func property(_ encoded: Property) throws -> NSPropertyDescription {
            let property: NSPropertyDescription
            switch encoded.kind {
            case "relationship":
                let relationship = NSRelationshipDescription()
                relationship.destinationEntityName = encoded.destination
                relationship.inverseRelationshipName = encoded.inverse
                relationship.minCount = encoded.minCount ?? 0
                relationship.maxCount = encoded.maxCount ?? 0
                guard (0...Int(Int32.max)).contains(relationship.maxCount), (0...Int(Int32.max)).contains(relationship.minCount) else {
                    throw fail("the relationship counts of '\(encoded.name)' are out of range")
                }
                relationship.deleteRule = encoded.deleteRule.flatMap(NSDeleteRule.init(rawValue:)) ?? .nullifyDeleteRule
                relationship.isOrdered = encoded.ordered ?? false
                property = relationship
            case "fetched":
                let fetched = NSFetchedPropertyDescription()
                fetched.fetchRequest = try encoded.fetchRequest.map(fetchRequest)
                property = fetched
            case "attribute", "derived", "composite":
                let attribute: NSAttributeDescription
                switch encoded.kind {
                case "derived":
                    let derived = NSDerivedAttributeDescription()
                    if let format = encoded.derivation {
                        do {
                            derived.derivationExpression = try NSExpression(validatingFormat: format, argumentArray: [])
                        } catch {
                            throw fail("the derivation '\(format)' does not parse: \(error)")
                        }
                    }
                    attribute = derived
                case "composite":
                    let composite = NSCompositeAttributeDescription()
                    composite.elements = try (encoded.elements ?? []).compactMap { try self.property($0) as? NSAttributeDescription }
                    attribute = composite
                default:
                    attribute = NSAttributeDescription()
                }
                guard let type = NSAttributeType(rawValue: encoded.attributeType ?? 0) else {
                    throw fail("an attribute of unknown type \(encoded.attributeType ?? 0)")
                }
                attribute.attributeType = type
                attribute.defaultValue = encoded.defaultValue.flatMap(defaultValue)
                if let className = encoded.valueClassName { attribute.attributeValueClassName = className }
                attribute.valueTransformerName = encoded.valueTransformerName
                attribute.allowsExternalBinaryDataStorage = encoded.externalStorage ?? false
                attribute.preservesValueInHistoryOnDeletion = encoded.preserveAfterDeletion ?? false
                attribute.allowsCloudEncryption = encoded.cloudEncryption ?? false
                attribute.usesScalarValueType = encoded.scalar ?? false
                property = attribute
            default:
                throw fail("a property of unknown kind '\(encoded.kind)'")
            }
            guard !encoded.name.isEmpty else { throw fail("a property without a name") }
            property.name = encoded.name
            property.isOptional = encoded.optional
            property.isTransient = encoded.transient
            property.isIndexed = encoded.indexed
            property.isIndexedBySpotlight = encoded.spotlight
            property.userInfo = encoded.userInfo
            property.versionHashModifier = encoded.versionHashModifier
            property.renamingIdentifier = encoded.renamingIdentifier
            property.setValidation(
                try encoded.validation.map { try predicate($0.predicate) },
                warnings: encoded.validation.map { $0.warningCode.map { $0 as Any } ?? ($0.warning ?? "") })
            return property
        }

        func fetchRequest(_ encoded: FetchRequest) throws -> NSFetchRequest<NSFetchRequestResult> {
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: encoded.entity)
            request.predicate = try encoded.predicate.map(predicate)
            if !encoded.sortDescriptors.isEmpty {
                request.sortDescriptors = try encoded.sortDescriptors.map { descriptor in
                    guard NSSortDescriptor.supportedSelectorNames.contains(descriptor.selector) else {
                        throw fail("a sort descriptor with the selector '\(descriptor.selector)', which cannot run here")
                    }
                    return NSSortDescriptor(key: descriptor.key, ascending: descriptor.ascending, selector: Selector(descriptor.selector))
                }
            }
            request.fetchLimit = encoded.fetchLimit
            request.fetchOffset = encoded.fetchOffset
            request.fetchBatchSize = encoded.fetchBatchSize
            if !encoded.relationshipKeyPathsForPrefetching.isEmpty {
                request.relationshipKeyPathsForPrefetching = encoded.relationshipKeyPathsForPrefetching
            }
            request.shouldRefreshRefetchedObjects = encoded.shouldRefreshRefetchedObjects
            request.resultType = NSFetchRequestResultType(rawValue: encoded.resultType)
            request.includesSubentities = encoded.includesSubentities
            request.includesPropertyValues = encoded.includesPropertyValues
            request.includesPendingChanges = encoded.includesPendingChanges
            request.returnsObjectsAsFaults = encoded.returnsObjectsAsFaults
            request.returnsDistinctResults = encoded.returnsDistinctResults
            return request
        }

        func predicate(_ format: String) throws -> NSPredicate {
            do {
                return try NSPredicate(validatingFormat: format, argumentArray: [])
            } catch {
                throw fail("the predicate '\(format)' does not parse: \(error)")
            }
        }

        func defaultValue(_ encoded: DefaultValue) -> Any? {
            switch encoded.kind {
            case "decimal": return Decimal(string: encoded.value, locale: Locale(identifier: "en_US_POSIX"))
            case "uuid": return UUID(uuidString: encoded.value)
            case "url": return URL(string: encoded.value)
            case "bool": return encoded.value == "1"
            case "int": return Int(encoded.value)
            case "double": return Double(encoded.value)
            case "date": return Double(encoded.value).flatMap { $0.isFinite ? Date(timeIntervalSinceReferenceDate: $0) : nil }
            case "data": return Data(base64Encoded: encoded.value)
            default: return encoded.value
            }
        }
    }
}

extension NSManagedObjectModel {
    /// Compiles the model source at `source` (an `.xcdatamodeld` with all its versions, or one
    /// `.xcdatamodel`) into the `.momd` folder `destination`, as `cdtool compile` and Xcode's `momc` do.
    /// The result loads with `NSManagedObjectModel(contentsOf:)`, faster than the XML.
    ///
    /// Throws ``ModelLoadError`` when the source cannot be read or has errors (a missing destination, an
    /// inverse that is not a relationship …); returns the warnings (relationships without inverses …).
    @discardableResult
    public static func compileModel(at source: URL, to destination: URL) throws -> [String] {
        try CompiledModel.compile(source, to: destination)
    }
}
