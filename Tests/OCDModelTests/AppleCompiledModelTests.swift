import Foundation
import OCDTestSupport
import Testing
@testable import OCDModel

/// Builds a keyed archive by hand (references as `{"CF$UID": n}`, as an XML property list writes them), to
/// exercise the parts of Apple's format no fixture `.mom` contains.
final class ArchiveBuilder {
    var objects: [Any] = ["$null"]
    private var classes: [String: [String: Any]] = [:]

    func reference(_ index: Int) -> [String: Any] { ["CF$UID": index] }
    let null: [String: Any] = ["CF$UID": 0]

    @discardableResult
    func add(_ object: Any) -> [String: Any] {
        objects.append(object)
        return reference(objects.count - 1)
    }

    func classReference(_ name: String, _ hierarchy: [String]) -> [String: Any] {
        if let existing = classes[name] { return existing }
        let reference = add(["$classname": name, "$classes": [name] + hierarchy + ["NSObject"]])
        classes[name] = reference
        return reference
    }

    func object(_ className: String, _ fields: [String: Any]) -> [String: Any] {
        var fields = fields
        fields["$class"] = classReference(className, [])
        return add(fields)
    }

    func string(_ text: String) -> [String: Any] { add(text) }

    func array(_ elements: [[String: Any]]) -> [String: Any] {
        object("NSArray", ["NS.objects": elements])
    }

    func dictionary(_ pairs: [(String, [String: Any])]) -> [String: Any] {
        object("NSDictionary", ["NS.keys": pairs.map { string($0.0) }, "NS.objects": pairs.map(\.1)])
    }

    func data(root: [String: Any]) throws -> Data {
        let archive: [String: Any] = ["$archiver": "NSKeyedArchiver", "$version": 100000, "$top": ["root": root], "$objects": objects]
        return try PropertyListSerialization.data(fromPropertyList: archive, format: .xml, options: 0)
    }
}

@Suite("Xcode-compiled models (.mom, .momd)")
struct AppleCompiledModelTests {
    static let compiledModels: [URL] = {
        guard let stores = Fixtures.stores else { return [] }
        let enumerator = FileManager.default.enumerator(at: stores.appendingPathComponent("compiled-models"), includingPropertiesForKeys: nil)
        var files: [URL] = []
        while let url = enumerator?.nextObject() as? URL { if url.pathExtension == "mom" { files.append(url) } }
        return files.sorted { $0.path < $1.path }
    }()

    @Test("Each fixture .mom has the hashes momc recorded beside it", arguments: compiledModels)
    func momHashesMatchVersionInfo(_ mom: URL) throws {
        let info = try #require(NSDictionary(contentsOf: mom.deletingLastPathComponent().appendingPathComponent("VersionInfo.plist")) as? [String: Any])
        let versions = try #require(info["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        let version = mom.deletingPathExtension().lastPathComponent
        let model = try NSManagedObjectModel(validatingContentsOf: mom)
        #expect(model.entityVersionHashesByName == versions[version])
    }

    @Test("Each fixture .mom describes the same model as its Xcode source", arguments: compiledModels)
    func momMatchesItsSource(_ mom: URL) throws {
        guard let models = Fixtures.models else { return }
        let version = mom.deletingPathExtension().lastPathComponent
        let folder = mom.path.contains("SampleModel3/") ? "alemar11__CoreDataPlus__SampleModel3" : "alemar11__CoreDataPlus__SampleModel"
        let source = try NSManagedObjectModel(validatingContentsOf: models.appendingPathComponent("\(folder)/\(version).xcdatamodel"))
        let compiled = try NSManagedObjectModel(validatingContentsOf: mom)
        #expect(Set(compiled.entitiesByName.keys) == Set(source.entitiesByName.keys))
        for (name, entity) in source.entitiesByName {
            let other = try #require(compiled.entitiesByName[name])
            #expect(other.superentity?.name == entity.superentity?.name)
            #expect(other.isAbstract == entity.isAbstract)
            #expect(other.managedObjectClassName == entity.managedObjectClassName)
            for property in entity.properties {
                let counterpart = try #require(other.propertiesByName[property.name], "\(name).\(property.name)")
                #expect(type(of: counterpart) == type(of: property))
                #expect(counterpart.isOptional == property.isOptional && counterpart.isTransient == property.isTransient)
                if let attribute = property as? NSAttributeDescription {
                    #expect((counterpart as? NSAttributeDescription)?.attributeType == attribute.attributeType)
                    #expect((counterpart as? NSAttributeDescription)?.valueTransformerName == attribute.valueTransformerName)
                }
                if let relationship = property as? NSRelationshipDescription, let other = counterpart as? NSRelationshipDescription {
                    #expect(other.destinationEntity?.name == relationship.destinationEntity?.name)
                    #expect(other.inverseRelationship?.name == relationship.inverseRelationship?.name)
                    #expect(other.deleteRule == relationship.deleteRule && other.maxCount == relationship.maxCount && other.isOrdered == relationship.isOrdered)
                }
            }
            #expect(other.uniquenessConstraints.map { $0.map { "\($0)" } } == entity.uniquenessConstraints.map { $0.map { "\($0)" } })
            #expect(other.indexes.map(\.name) == entity.indexes.map(\.name))
        }
    }

    @Test func momdFolderLoadsItsCurrentVersion() throws {
        guard let stores = Fixtures.stores else { return }
        let momd = stores.appendingPathComponent("compiled-models/alemar11__CoreDataPlus/SampleModel/Fixtures/SampleModel.momd")
        let model = try NSManagedObjectModel(validatingContentsOf: momd)
        #expect(Set(model.entitiesByName.keys) == ["Car", "ExpensiveSportCar", "Person", "SportCar"])
    }

    @Test func predicatesTemplatesAndPackedFlagsDecode() throws {
        let b = ArchiveBuilder()
        let modelReference = b.reference(1)
        b.objects.append("placeholder-model")
        let entity = b.reference(2)
        b.objects.append("placeholder-entity")
        let utilities = b.object("NSConstantValueExpression", ["NSConstantValueClassName": b.string("_NSPredicateUtilities"), "NSExpressionType": 0])
        let keyPath = { (path: String) in
            b.object("NSKeyPathExpression", ["NSExpressionType": 3, "NSSelectorName": b.string("valueForKeyPath:"),
                                             "NSOperand": b.object("NSSelfExpression", ["NSExpressionType": 1]),
                                             "NSArguments": b.array([b.object("NSKeyPathSpecifierExpression", ["NSKeyPath": b.string(path)])])])
        }
        // name BEGINSWITH[c] $PREFIX
        let beginsWith = b.object("NSComparisonPredicate", [
            "NSLeftExpression": keyPath("name"),
            "NSRightExpression": b.object("NSVariableExpression", ["NSExpressionType": 2, "NSVariable": b.string("PREFIX")]),
            "NSPredicateOperator": b.object("NSSubstringPredicateOperator", ["NSOperatorType": 8, "NSModifier": 0, "NSFlags": 1, "NSPosition": 0]),
        ])
        // length:(name) <= 20
        let short = b.object("NSComparisonPredicate", [
            "NSLeftExpression": b.object("NSFunctionExpression", ["NSExpressionType": 4, "NSSelectorName": b.string("length:"), "NSOperand": utilities, "NSArguments": b.array([keyPath("name")])]),
            "NSRightExpression": b.object("NSConstantValueExpression", ["NSExpressionType": 0, "NSConstantValue": 20]),
            "NSPredicateOperator": b.object("NSComparisonPredicateOperator", ["NSOperatorType": 1, "NSModifier": 0, "NSVariant": 1, "NSOptions": 0]),
        ])
        let both = b.object("NSCompoundPredicate", ["NSCompoundPredicateType": 1, "NSSubpredicates": b.array([beginsWith, short])])
        let template = b.object("NSFetchRequest", [
            "NSEntity": entity, "NSPredicate": both, "NSFetchLimit": 5, "NSHasFetchRequestFlags": true,
            "NSFetchRequestFlags": 0x2 | 0x4 | 0x10, "NSResultType": 2,
            "NSSortDescriptors": b.array([b.object("NSSortDescriptor", ["NSKey": b.string("name"), "NSAscending": true, "NSSelector": b.string("localizedStandardCompare:")])]),
        ])
        // A required, non-transient String attribute with a validation predicate and its warning code.
        let validation = b.object("NSComparisonPredicate", [
            "NSLeftExpression": b.object("NSSelfExpression", ["NSExpressionType": 1]),
            "NSRightExpression": b.object("NSConstantValueExpression", ["NSExpressionType": 0, "NSConstantValue": b.string("a")]),
            "NSPredicateOperator": b.object("NSEqualityPredicateOperator", ["NSOperatorType": 5, "NSModifier": 0, "NSNegate": true, "NSOptions": 0]),
        ])
        let name = b.object("NSAttributeDescription", [
            "NSPropertyName": b.string("name"), "NSEntity": entity, "NSAttributeType": 700, "_P": 0x1 | 0x40 | 0x80,
            "NSValidationPredicates": b.array([validation]), "NSValidationWarnings": b.array([b.add(1680)]),
            "NSDefaultValue": b.string("x"), "NSFlagsKey": 0,
        ])
        // An optional, ordered to-many relationship to itself.
        let children = b.object("NSRelationshipDescription", [
            "NSPropertyName": b.string("children"), "NSEntity": entity, "_P": 0x1 | 0x2 | 0x10 | 0x20 | 0x40 | 0x80 | 0x400,
            "NSMaxCount": 0, "NSMinCount": 0, "NSDeleteRule": 2, "_NSDestinationEntityName": b.string("Node"),
        ])
        b.objects[2] = [
            "$class": b.classReference("NSEntityDescription", []), "NSEntityName": b.string("Node"),
            "NSClassNameForEntity": b.string("Node"), "NSManagedObjectModel": modelReference, "NSSuperentity": b.null,
            "NSProperties": b.dictionary([("name", name), ("children", children)]), "NSSubentities": b.dictionary([]),
            "NSUniqueTuples": b.array([b.array([b.string("name")])]),
        ] as [String: Any]
        b.objects[1] = [
            "$class": b.classReference("NSManagedObjectModel", []),
            "NSEntities": b.dictionary([("Node", entity)]),
            "NSFetchRequestTemplates": b.dictionary([("ByPrefix", template)]),
            "NSVersionIdentifiers": b.object("NSSet", ["NS.objects": [b.string("7")]]),
            "NSConfigurations": b.dictionary([("Cloud", b.object("NSSet", ["NS.objects": [entity]]))]),
        ] as [String: Any]
        let file = ScratchFiles.path("Model.mom")
        try b.data(root: modelReference).write(to: file)

        let model = try NSManagedObjectModel(validatingContentsOf: file)
        let node = try #require(model.entitiesByName["Node"])
        let nameAttribute = try #require(node.attributesByName["name"])
        #expect(!nameAttribute.isOptional && !nameAttribute.isTransient)
        #expect(nameAttribute.defaultValue as? String == "x")
        #expect(nameAttribute.validationPredicates.map(\.predicateFormat) == [#"SELF != "a""#])
        #expect(nameAttribute.validationWarnings.first as? Int == 1680)
        let childRelationship = try #require(node.relationshipsByName["children"])
        #expect(childRelationship.isOptional && childRelationship.isOrdered && childRelationship.isToMany)
        #expect(childRelationship.deleteRule == .cascadeDeleteRule && childRelationship.destinationEntity === node)
        #expect(node.uniquenessConstraints.map { $0.map { "\($0)" } } == [["name"]])
        let request = try #require(model.fetchRequestTemplate(forName: "ByPrefix"))
        #expect(request.predicate?.predicateFormat == "name BEGINSWITH[c] $PREFIX AND length:(name) <= 20")
        #expect(request.entity === node && request.fetchLimit == 5 && request.resultType == .dictionaryResultType)
        #expect(request.includesSubentities && request.includesPropertyValues && request.includesPendingChanges)
        #expect(!request.returnsObjectsAsFaults && !request.returnsDistinctResults)
        #expect(request.sortDescriptors?.first?.selector == .localizedStandardCompare)
        #expect(model.versionIdentifiers == ["7"])
        #expect(model.entities(forConfigurationName: "Cloud")?.first === node)
        let filled = try #require(model.fetchRequestFromTemplate(withName: "ByPrefix", substitutionVariables: ["PREFIX": "ab"]))
        #expect(filled.predicate?.evaluate(with: ["name": "Abc"]) == true)
    }

    @Test func brokenArchivesAreErrors() throws {
        let file = ScratchFiles.path("Model.mom")
        try Data("not a plist".utf8).write(to: file)
        #expect { try NSManagedObjectModel(validatingContentsOf: file) } throws: { ($0 as? ModelLoadError)?.problem.contains("not a compiled model") == true }
        let b = ArchiveBuilder()
        let root = b.object("NSManagedObjectModel", ["NSEntities": b.dictionary([("X", b.object("NSEntityDescription", ["NSProperties": b.dictionary([])]))])])
        try b.data(root: root).write(to: file)
        #expect { try NSManagedObjectModel(validatingContentsOf: file) } throws: { ($0 as? ModelLoadError)?.problem.contains("an entity without a name") == true }
    }
}
