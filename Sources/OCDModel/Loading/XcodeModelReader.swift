import Foundation
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Reads Xcode's model source format (spec/sqlite-store-format.md §10): an `.xcdatamodeld` folder (its
/// current version), one `.xcdatamodel` folder, or its `contents` XML file.
enum XcodeModelReader {
    static func read(_ url: URL, into model: NSManagedObjectModel) throws {
        let file = try contentsFile(for: url)
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ModelLoadError(file: file, line: nil, problem: "cannot read the file: \(error.localizedDescription)")
        }
        let root = try ModelXMLElement.parse(data, file: file)
        try ModelBuilder(file: file).build(root, into: model)
    }

    /// The `contents` file a model URL stands for.
    static func contentsFile(for url: URL) throws -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelLoadError(file: url, line: nil, problem: "no such file or folder")
        }
        guard isDirectory.boolValue else { return url }
        switch url.pathExtension {
        case "xcdatamodeld":
            return try contentsFile(for: currentVersion(in: url))
        default:
            let contents = url.appendingPathComponent("contents")
            if FileManager.default.fileExists(atPath: contents.path) { return contents }
            // A folder of versions without the .xcdatamodeld extension (as copied out of a project) is a bundle.
            if try !versionFolders(in: url).isEmpty {
                return try contentsFile(for: currentVersion(in: url))
            }
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("elements").path) {
                throw ModelLoadError(file: url, line: nil, problem: "the legacy Xcode 3 model format (an 'elements' archive) is not supported; open and save the model in a current Xcode to convert it")
            }
            throw ModelLoadError(file: url, line: nil, problem: "not a model: no 'contents' file in the folder")
        }
    }

    /// The version `.xccurrentversion` names, or the only version when it names none (no file, or an empty
    /// one, as some repositories have).
    static func currentVersion(in bundle: URL) throws -> URL {
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        if let data = FileManager.default.contents(atPath: marker.path) {
            let plist: Any
            do {
                plist = try PropertyLists.propertyList(from: data)
            } catch {
                throw ModelLoadError(file: marker, line: nil, problem: "not a property list: \(error.localizedDescription)")
            }
            if let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String {
                // Only a version folder of this bundle: not ".", "..", or a path out of it.
                guard let version = try versionFolders(in: bundle).first(where: { $0.lastPathComponent == name }) else {
                    throw ModelLoadError(file: marker, line: nil, problem: "the current version '\(name)' is not a version in the bundle")
                }
                return version
            }
        }
        let versions = try versionFolders(in: bundle)
        guard versions.count == 1, let only = versions.first else {
            throw ModelLoadError(file: bundle, line: nil, problem: versions.isEmpty ? "the bundle has no .xcdatamodel version" : "the bundle has \(versions.count) versions and no current version (.xccurrentversion names none): load one version's .xcdatamodel")
        }
        return only
    }

    /// The `.xcdatamodel` folders of a bundle, by name.
    static func versionFolders(in bundle: URL) throws -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: bundle.path)) ?? []
        return names.filter { $0.hasSuffix(".xcdatamodel") }.sorted().map { bundle.appendingPathComponent($0) }
    }
}

/// The checks every model reader makes before handing entities to a model, whose setters stop on these
/// problems (as Apple's raise): duplicate names, unknown parents, and inheritance cycles, which would
/// otherwise recurse forever in version hashes and `isKindOf(entity:)`.
enum EntityGraph {
    struct Problem: Error {
        /// The entity at fault.
        let entity: String
        let reason: String
    }

    static func check(_ entities: [NSEntityDescription]) throws {
        var parents: [String: String?] = [:]
        for entity in entities {
            let name = entity.name ?? ""
            if parents[name] != nil { throw Problem(entity: name, reason: "a second entity named '\(name)'") }
            parents[name] = entity.superentityName
            var propertyNames = Set<String>()
            for property in entity.ownProperties where !propertyNames.insert(property.name).inserted {
                throw Problem(entity: name, reason: "the entity '\(name)' has two properties named '\(property.name)'")
            }
        }
        for entity in entities {
            let name = entity.name ?? ""
            if let parent = entity.superentityName, parents[parent] == nil {
                throw Problem(entity: name, reason: "the entity '\(name)' has the parent entity '\(parent)', which is not in the model")
            }
            var seen: Set<String> = []
            var current: String? = name
            while let step = current {
                if !seen.insert(step).inserted {
                    throw Problem(entity: name, reason: "the entity '\(name)' inherits from itself through \(seen.sorted().joined(separator: ", "))")
                }
                current = parents[step] ?? nil
            }
        }
    }
}

extension NSManagedObjectModel {
    /// Sets the entities a reader built, after `EntityGraph.check`; `failure` turns a problem into the
    /// reader's own error (the XML reader adds the line).
    func setReadEntities(_ entities: [NSEntityDescription], failure: (EntityGraph.Problem) -> Error) throws {
        do {
            try EntityGraph.check(entities)
        } catch let problem as EntityGraph.Problem {
            throw failure(problem)
        }
        self.entities = entities
        dropIdenticalRedeclarations()
        // What Core Data would refuse once the model is used is a fault of the file, reported now.
        if let problem = usageProblems().first {
            throw failure(EntityGraph.Problem(entity: problem.entity, reason: problem.reason))
        }
    }
}

/// Builds descriptions from the parsed XML of one model file.
private struct ModelBuilder {
    let file: URL

    func error(_ element: ModelXMLElement?, _ problem: String) -> ModelLoadError {
        ModelLoadError(file: file, line: element?.line, problem: problem)
    }

    func build(_ root: ModelXMLElement, into model: NSManagedObjectModel) throws {
        guard root.name == "model" else {
            throw error(root, "the root element is <\(root.name)>, not <model>: not a Core Data model")
        }
        // Present but empty is still an identifier: Apple's stores of such models record `[""]`.
        if let identifier = root["userDefinedModelVersionIdentifier"] {
            model.versionIdentifiers = [identifier]
        }
        var composites: [String: ModelXMLElement] = [:]
        for composite in root.children(named: "composite") {
            guard let name = composite["name"] else { throw error(composite, "a <composite> without a name") }
            composites[name] = composite
        }
        var entities: [NSEntityDescription] = []
        var entityElements: [String: ModelXMLElement] = [:]
        for element in root.children(named: "entity") {
            let entity = try buildEntity(element, composites: composites)
            if let name = entity.name, entityElements[name] != nil {
                throw error(element, "a second entity named '\(name)'")
            }
            entityElements[entity.name ?? ""] = element
            entities.append(entity)
        }
        try model.setReadEntities(entities) { error(entityElements[$0.entity], $0.reason) }
        let byName = model.entitiesByName

        for element in root.children(named: "configuration") {
            guard let name = element["name"] else { throw error(element, "a <configuration> without a name") }
            var members: [NSEntityDescription] = []
            for member in element.children(named: "memberEntity") {
                guard let memberName = member["name"], let entity = byName[memberName] else {
                    throw error(member, "the configuration '\(name)' names the entity '\(member["name"] ?? "")', which is not in the model")
                }
                members.append(entity)
            }
            model.setEntities(members, forConfigurationName: name)
        }
        for element in root.children(named: "fetchRequest") {
            guard let name = element["name"] else { throw error(element, "a fetch request template without a name") }
            let request = try buildFetchRequest(element)
            request.entity = request.entityName.flatMap { byName[$0] }
            model.setFetchRequestTemplate(request, forName: name)
        }
    }

    // MARK: Entities

    func buildEntity(_ element: ModelXMLElement, composites: [String: ModelXMLElement]) throws -> NSEntityDescription {
        guard let name = element["name"], !name.isEmpty else { throw error(element, "an <entity> without a name") }
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = element["representedClassName"] ?? "NSManagedObject"
        entity.superentityName = element["parentEntity"]
        entity.isAbstract = element.flag("isAbstract")
        entity.renamingIdentifier = element["elementID"]
        entity.versionHashModifier = element["versionHashModifier"]
        entity.userInfo = userInfo(element)

        var properties: [NSPropertyDescription] = []
        var names = Set<String>()
        for child in element.children {
            let property: NSPropertyDescription
            switch child.name {
            case "attribute": property = try buildAttribute(child, composites: composites)
            case "relationship": property = try buildRelationship(child)
            case "fetchedProperty": property = try buildFetchedProperty(child)
            default: continue
            }
            if !names.insert(property.name).inserted {
                throw error(child, "the entity '\(name)' has two properties named '\(property.name)'")
            }
            properties.append(property)
        }
        entity.properties = properties

        entity.uniquenessConstraints = element.child(named: "uniquenessConstraints")?.children(named: "uniquenessConstraint").map { constraint in
            constraint.children(named: "constraint").compactMap { $0["value"] }
        } ?? []
        entity.compoundIndexes = element.child(named: "compoundIndexes")?.children(named: "compoundIndex").map { index in
            index.children(named: "index").compactMap { $0["value"] }
        } ?? []
        entity.indexes = try element.children(named: "fetchIndex").compactMap { index in
            guard let indexName = index["name"] else { throw error(index, "a <fetchIndex> without a name") }
            // An element indexing an expression (`expression="canonical:(name)"`), which Xcode writes for
            // an index on a function's value: such an index is left out (an index only speeds fetches up)
            // rather than the model refused.
            if index.children(named: "fetchIndexElement").contains(where: { $0["property"] == nil && $0["expression"] != nil }) { return nil }
            let elements = try index.children(named: "fetchIndexElement").map { item -> NSFetchIndexElementDescription in
                guard let property = item["property"] else { throw error(item, "a <fetchIndexElement> without a property") }
                let type: NSFetchIndexElementDescription.CollationType = item["type"] == "RTree" ? .rTree : .binary
                let element = NSFetchIndexElementDescription(propertyName: property, collationType: type, ascending: item["order"] != "descending")
                element.property = properties.first { $0.name == property }
                return element
            }
            return NSFetchIndexDescription(name: indexName, elements: elements)
        }
        return entity
    }

    // MARK: Properties

    func configureProperty(_ property: NSPropertyDescription, _ element: ModelXMLElement) throws {
        guard let name = element["name"], !name.isEmpty else { throw error(element, "a <\(element.name)> without a name") }
        property.name = name
        property.isOptional = element.flag("optional")
        property.isTransient = element.flag("transient")
        property.isIndexed = element.flag("indexed")
        property.isIndexedBySpotlight = element.flag("spotlightIndexingEnabled")
        property.renamingIdentifier = element["elementID"]
        property.versionHashModifier = element["versionHashModifier"]
        property.userInfo = userInfo(element)
    }

    func buildAttribute(_ element: ModelXMLElement, composites: [String: ModelXMLElement], within: Set<String> = []) throws -> NSAttributeDescription {
        let type: NSAttributeType
        if let typeName = element["attributeType"] {
            guard let known = NSAttributeType(modelFileName: typeName) else {
                throw error(element, "the attribute '\(element["name"] ?? "")' has the unknown type '\(typeName)'")
            }
            type = known
        } else {
            type = .undefinedAttributeType
        }
        let attribute: NSAttributeDescription
        if element.flag("derived") {
            let derived = NSDerivedAttributeDescription()
            if let format = element["derivationExpression"] {
                do {
                    derived.derivationExpression = try NSExpression(validatingFormat: format, argumentArray: [])
                } catch {
                    throw self.error(element, "the derivation expression of '\(element["name"] ?? "")' does not parse: \(error)")
                }
            }
            attribute = derived
        } else if type == .compositeAttributeType {
            let composite = NSCompositeAttributeDescription()
            guard let compositeName = element["composite"], let definition = composites[compositeName] else {
                throw error(element, "the composite attribute '\(element["name"] ?? "")' names the composite '\(element["composite"] ?? "")', which is not in the model")
            }
            if within.contains(compositeName) {
                throw error(element, "the composite '\(compositeName)' contains itself")
            }
            // Each level is a call: a file's nesting is bounded rather than trusted.
            guard within.count < BinaryReader.deepestNesting else {
                throw error(element, "composites nested more than \(BinaryReader.deepestNesting) deep")
            }
            composite.elements = try definition.children(named: "attribute").map {
                try buildAttribute($0, composites: composites, within: within.union([compositeName]))
            }
            attribute = composite
        } else {
            attribute = NSAttributeDescription()
        }
        try configureProperty(attribute, element)
        attribute.attributeType = type
        attribute.allowsExternalBinaryDataStorage = element.flag("allowsExternalBinaryDataStorage")
        attribute.preservesValueInHistoryOnDeletion = element.flag("preserveAfterDeletion")
        attribute.allowsCloudEncryption = element.flag("allowsCloudEncryption")
        attribute.usesScalarValueType = element.flag("usesScalarValueType")
        attribute.valueTransformerName = element["valueTransformerName"]
        if let className = element["customClassName"] { attribute.attributeValueClassName = className }
        attribute.defaultValue = try defaultValue(element, type: type)
        try setValidation(attribute, element, type: type)
        return attribute
    }

    func defaultValue(_ element: ModelXMLElement, type: NSAttributeType) throws -> Any? {
        if type == .dateAttributeType, let interval = element["defaultDateTimeInterval"] {
            guard let seconds = Double(interval), seconds.isFinite else { throw error(element, "the default date '\(interval)' is not a number of seconds") }
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        guard let text = element["defaultValueString"] else { return nil }
        func invalid() -> ModelLoadError {
            error(element, "the default value '\(text)' of '\(element["name"] ?? "")' is not a valid \(type.modelFileName)")
        }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            if let int = Int(text) { return int }
            // Real models (Wire's) give integer attributes "NO"/"YES" defaults, which momc reads as 0/1.
            if let bool = Self.booleanWord(text) { return bool ? 1 : 0 }
            // Xcode accepts "0.0" in an integer field; Core Data rounds it.
            guard let double = Double(text), let int = Int(exactly: double.rounded(.towardZero)) else { throw invalid() }
            return int
        case .doubleAttributeType, .floatAttributeType:
            if let bool = Self.booleanWord(text) { return bool ? 1.0 : 0.0 }
            guard let double = Double(text) else { throw invalid() }
            return double
        case .decimalAttributeType:
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw invalid() }
            return decimal
        case .booleanAttributeType:
            guard let bool = Self.booleanWord(text) ?? Int(text).map({ $0 != 0 }) else { throw invalid() }
            return bool
        case .UUIDAttributeType:
            guard let uuid = UUID(uuidString: text) else { throw invalid() }
            return uuid
        case .URIAttributeType:
            guard let url = URL(string: text) else { throw invalid() }
            return url
        case .stringAttributeType, .undefinedAttributeType:
            return text
        default:
            // Dates (whose defaults are `defaultDateTimeInterval`), binary data, transformable values and
            // object IDs have no default written as text: taking the string would make every new object
            // fail to save.
            throw error(element, "'\(element["name"] ?? "")' is a \(type.modelFileName) attribute, which cannot have the text default '\(text)'")
        }
    }

    static func booleanWord(_ text: String) -> Bool? {
        switch text.uppercased() {
        case "YES", "TRUE": return true
        case "NO", "FALSE": return false
        default: return nil
        }
    }

    /// Xcode's min/max and pattern fields become validation predicates with Core Data's error codes as
    /// warnings, as `momc` compiles them.
    func setValidation(_ attribute: NSAttributeDescription, _ element: ModelXMLElement, type: NSAttributeType) throws {
        var predicates: [NSPredicate] = []
        var warnings: [Any] = []
        func add(_ format: String, _ argument: Any, code: Int) {
            predicates.append(NSPredicate(format: format, argument))
            warnings.append(code)
        }
        func number(_ key: String) throws -> Double? {
            guard let text = element[key] else { return nil }
            guard let value = Double(text), value.isFinite else { throw error(element, "the \(key) '\(text)' of '\(element["name"] ?? "")' is not a number") }
            return value
        }
        func length(_ key: String) throws -> Int? {
            guard let value = try number(key) else { return nil }
            guard let length = Int(exactly: value.rounded(.towardZero)), length >= 0 else {
                throw error(element, "the \(key) '\(element[key] ?? "")' of '\(element["name"] ?? "")' is not a length")
            }
            return length
        }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .decimalAttributeType,
             .doubleAttributeType, .floatAttributeType:
            if let min = try number("minValueString") { add("SELF >= %@", min, code: 1620) }
            if let max = try number("maxValueString") { add("SELF <= %@", max, code: 1610) }
        case .stringAttributeType:
            if let min = try length("minValueString") { add("length >= %@", min, code: 1670) }
            if let max = try length("maxValueString") { add("length <= %@", max, code: 1660) }
            if let pattern = element["regularExpressionString"] { add("SELF MATCHES %@", pattern, code: 1680) }
        case .binaryDataAttributeType:
            if let min = try length("minValueString") { add("length >= %@", min, code: 1670) }
            if let max = try length("maxValueString") { add("length <= %@", max, code: 1660) }
        case .dateAttributeType:
            if let min = try number("minDateTimeInterval") { add("SELF >= %@", Date(timeIntervalSinceReferenceDate: min), code: 1640) }
            if let max = try number("maxDateTimeInterval") { add("SELF <= %@", Date(timeIntervalSinceReferenceDate: max), code: 1630) }
        default:
            break
        }
        attribute.setValidation(predicates, warnings: warnings)
    }

    func buildRelationship(_ element: ModelXMLElement) throws -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        try configureProperty(relationship, element)
        relationship.destinationEntityName = element["destinationEntity"]
        relationship.inverseRelationshipName = element["inverseName"]
        if let rule = element["deletionRule"] {
            guard let deleteRule = NSDeleteRule(modelFileName: rule) else {
                throw error(element, "the relationship '\(relationship.name)' has the unknown deletion rule '\(rule)'")
            }
            relationship.deleteRule = deleteRule
        }
        let toMany = element.flag("toMany")
        relationship.isOrdered = element.flag("ordered")
        func count(_ key: String, default value: Int) throws -> Int {
            guard let text = element[key] else { return value }
            guard let count = Int(text), count >= 0, count <= Int(Int32.max) else { throw error(element, "the \(key) '\(text)' of '\(relationship.name)' is not a count") }
            return count
        }
        relationship.maxCount = try count("maxCount", default: toMany ? 0 : 1)
        relationship.minCount = try count("minCount", default: 0)
        return relationship
    }

    func buildFetchedProperty(_ element: ModelXMLElement) throws -> NSFetchedPropertyDescription {
        let property = NSFetchedPropertyDescription()
        try configureProperty(property, element)
        if let request = element.child(named: "fetchRequest") {
            property.fetchRequest = try buildFetchRequest(request)
        }
        return property
    }

    func buildFetchRequest(_ element: ModelXMLElement) throws -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: element["entity"] ?? "")
        if let format = element["predicateString"] {
            do {
                request.predicate = try NSPredicate(validatingFormat: format, argumentArray: [])
            } catch {
                throw self.error(element, "the predicate of the fetch request '\(element["name"] ?? "")' does not parse: \(error)")
            }
        }
        func integer(_ key: String) throws -> Int? {
            guard let text = element[key] else { return nil }
            guard let value = Int(text) else { throw error(element, "the \(key) '\(text)' is not a number") }
            return value
        }
        if let limit = try integer("fetchLimit") { request.fetchLimit = limit }
        if let batch = try integer("fetchBatchSize") { request.fetchBatchSize = batch }
        if let type = try integer("resultType") { request.resultType = NSFetchRequestResultType(rawValue: UInt(max(0, type))) }
        if let value = element["includeSubentities"] { request.includesSubentities = value == "YES" }
        if let value = element["includePropertyValues"] { request.includesPropertyValues = value == "YES" }
        if let value = element["includesPendingChanges"] { request.includesPendingChanges = value == "YES" }
        if let value = element["returnObjectsAsFaults"] { request.returnsObjectsAsFaults = value == "YES" }
        if let value = element["returnDistinctResults"] { request.returnsDistinctResults = value == "YES" }
        return request
    }

    func userInfo(_ element: ModelXMLElement) -> [AnyHashable: Any]? {
        guard let info = element.child(named: "userInfo") else { return nil }
        var result: [AnyHashable: Any] = [:]
        for entry in info.children(named: "entry") {
            if let key = entry["key"] { result[key] = entry["value"] ?? "" }
        }
        return result
    }
}

extension NSManagedObjectModel {
    /// Loads a model: an `.xcdatamodeld` folder (its current version, as `.xccurrentversion` names it), one
    /// `.xcdatamodel` folder, its `contents` file, a `.momd` folder (compiled by Xcode or by `cdtool
    /// compile`), or one Xcode-compiled `.mom` file. Nil if it cannot be loaded;
    /// ``init(validatingContentsOf:)`` says why.
    public convenience init?(contentsOf url: URL) {
        do {
            try self.init(validatingContentsOf: url)
        } catch {
            return nil
        }
    }

    /// Loads an Xcode model, throwing ``ModelLoadError`` (file, line and problem) when it cannot be read.
    ///
    /// A `<Model>Model.strings` file beside the model (or in an `.lproj` folder there, preferred languages
    /// first) becomes the model's `localizationDictionary`.
    public convenience init(validatingContentsOf url: URL) throws {
        self.init()
        if ["momd", CompiledModel.fileExtension].contains(url.pathExtension) {
            try CompiledModel.read(url, into: self)
            return
        }
        if url.pathExtension == "mom" {
            try AppleCompiledModel.read(url, into: self)
            return
        }
        try XcodeModelReader.read(url, into: self)
        if let strings = ModelLocalization.stringsFile(for: url) {
            localizationDictionary = try ModelLocalization.read(strings)
        }
    }
}
