import Foundation
import OCDPredicate
import Testing
@testable import OCDModel
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSComparisonPredicate
import OCDTestSupport

/// Writes a model file to a temporary folder and returns the `.xcdatamodel` folder.
func temporaryModel(_ xml: String, name: String = "Model") throws -> URL {
    let folder = ScratchFiles.path("\(name).xcdatamodel")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
    return folder
}

func modelXML(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
    \(body)
    </model>
    """
}

@Suite("NSManagedObjectModel built in code and loaded from files")
struct ModelTests {
    /// Listing 3 of the Core Data Programming Guide ("Creating a managed object model in code").
    static func listing3() -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        let run = NSEntityDescription()
        run.name = "Run"
        run.managedObjectClassName = "Run"
        model.entities = [run]

        let date = NSAttributeDescription()
        date.name = "date"
        date.attributeType = .dateAttributeType
        date.isOptional = false

        let processID = NSAttributeDescription()
        processID.name = "processID"
        processID.attributeType = .integer32AttributeType
        processID.isOptional = false
        processID.defaultValue = 0
        let validation = NSComparisonPredicate(
            leftExpression: NSExpression.expressionForEvaluatedObject(), rightExpression: NSExpression(forConstantValue: 0),
            modifier: .direct, type: .greaterThanOrEqualTo, options: [])
        processID.setValidationPredicates([validation], withValidationWarnings: ["Process ID < 0"])

        run.properties = [date, processID]
        model.localizationDictionary = [
            "Property/date/Entity/Run": "Date",
            "Property/processID/Entity/Run": "Process ID",
            "ErrorString/Process ID < 0": "Process ID must not be less than 0",
        ]
        return model
    }

    @Test func listing3BuiltInCodeEqualsTheSameModelLoadedFromAFile() throws {
        let built = Self.listing3()
        let loaded = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="Run" representedClassName="Run" syncable="YES">
                <attribute name="date" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="processID" attributeType="Integer 32" minValueString="0" defaultValueString="0" usesScalarValueType="YES"/>
            </entity>
            """)))
        #expect(built.entityVersionHashesByName == loaded.entityVersionHashesByName)
        let builtID = try #require(built.entitiesByName["Run"]?.attributesByName["processID"])
        let loadedID = try #require(loaded.entitiesByName["Run"]?.attributesByName["processID"])
        #expect(builtID.attributeType == loadedID.attributeType)
        #expect(builtID.isOptional == loadedID.isOptional)
        #expect(builtID.defaultValue as? Int == loadedID.defaultValue as? Int)
        #expect(builtID.validationPredicates.first?.evaluate(with: -1) == loadedID.validationPredicates.first?.evaluate(with: -1))
        #expect(builtID.validationPredicates.first?.evaluate(with: 5) == true)
        #expect(builtID.validationWarnings.first as? String == "Process ID < 0")
        #expect(loadedID.validationWarnings.first as? Int == 1620, "momc stores NSValidationNumberTooSmallError as the warning")
        #expect(built.localizationDictionary?["Property/processID/Entity/Run"] == "Process ID")
    }

    /// Every derivation form of the NSDerivedAttributeDescription reference, as Xcode's editor writes it,
    /// loads and is understood (`canonical:` is not one of NSExpression's documented functions, and a
    /// model with it once failed to load).
    @Test func derivedAttributesOfEveryFormLoad() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="List" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="searchTitle" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(title)"/>
                <attribute name="loud" optional="YES" attributeType="String" derived="YES" derivationExpression="uppercase:(title)"/>
                <attribute name="count" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="items.@count" usesScalarValueType="YES"/>
                <attribute name="total" optional="YES" attributeType="Double" derived="YES" derivationExpression="items.price.@sum" usesScalarValueType="YES"/>
                <attribute name="updated" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()" usesScalarValueType="NO"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Item" inverseName="list" inverseEntity="Item"/>
            </entity>
            <entity name="Item" syncable="YES">
                <attribute name="price" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="listTitle" optional="YES" attributeType="String" derived="YES" derivationExpression="lowercase:(list.title)"/>
                <relationship name="list" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="List" inverseName="items" inverseEntity="List"/>
            </entity>
            """)))
        let list = try #require(model.entitiesByName["List"]), item = try #require(model.entitiesByName["Item"])
        func derivation(_ entity: NSEntityDescription, _ name: String) throws -> Derivation {
            let attribute = try #require(entity.attributesByName[name] as? NSDerivedAttributeDescription, "\(name)")
            return try attribute.derivation(in: entity)
        }
        #expect(list.attributesByName["searchTitle"].flatMap { ($0 as? NSDerivedAttributeDescription)?.derivationExpression?.description } == "canonical:(title)")
        guard case .attribute("title", .canonical?) = try derivation(list, "searchTitle") else { Issue.record("searchTitle"); return }
        guard case .attribute("title", .uppercase?) = try derivation(list, "loud") else { Issue.record("loud"); return }
        guard case .count("items") = try derivation(list, "count") else { Issue.record("count"); return }
        guard case .sum("items", "price") = try derivation(list, "total") else { Issue.record("total"); return }
        guard case .now = try derivation(list, "updated") else { Issue.record("updated"); return }
        guard case .toOne("list", "title", .lowercase?) = try derivation(item, "listTitle") else { Issue.record("listTitle"); return }
    }

    @Test func lookupsIncludeInheritedProperties() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="Car" isAbstract="YES">
                <attribute name="model" attributeType="String"/>
                <relationship name="owner" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
            </entity>
            <entity name="SportCar" parentEntity="Car">
                <attribute name="topSpeed" optional="YES" attributeType="Integer 16"/>
            </entity>
            <entity name="Person">
                <relationship name="cars" toMany="YES" deletionRule="Cascade" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
            </entity>
            """)))
        let car = try #require(model.entitiesByName["Car"])
        let sport = try #require(model.entitiesByName["SportCar"])
        let person = try #require(model.entitiesByName["Person"])
        #expect(sport.superentity === car)
        #expect(car.subentitiesByName["SportCar"] === sport)
        #expect(Set(sport.propertiesByName.keys) == ["model", "owner", "topSpeed"])
        #expect(Set(sport.attributesByName.keys) == ["model", "topSpeed"])
        #expect(sport.relationshipsByName["owner"]?.destinationEntity === person)
        #expect(sport.isKindOf(entity: car) && !car.isKindOf(entity: sport))
        #expect(car.isAbstract)
        let cars = try #require(person.relationshipsByName["cars"])
        #expect(cars.isToMany && cars.maxCount == 0 && cars.deleteRule == .cascadeDeleteRule)
        #expect(cars.inverseRelationship === car.relationshipsByName["owner"])
        #expect(person.relationships(forDestination: car).map(\.name) == ["cars"])
        #expect(sport.relationships(forDestination: person).map(\.name) == ["owner"])
        #expect(sport.attributesByName["topSpeed"]?.isOptional == true)
        #expect(car.attributesByName["model"]?.isOptional == false)
        #expect(person.managedObjectClassName == "NSManagedObject")
    }

    @Test func hashesChangeWithSchemaButNotWithValidationDefaultsOrClassNames() throws {
        func hash(_ attributes: String) throws -> Data? {
            let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("<entity name=\"E\">\(attributes)</entity>")))
            return model.entityVersionHashesByName["E"]
        }
        let base = try hash(#"<attribute name="a" attributeType="String"/>"#)
        #expect(try hash(#"<attribute name="a" attributeType="String"/><attribute name="b" attributeType="String"/>"#) != base)
        #expect(try hash(#"<attribute name="a" attributeType="Integer 64"/>"#) != base)
        #expect(try hash(#"<attribute name="a" optional="YES" attributeType="String"/>"#) != base)
        #expect(try hash(#"<attribute name="a" attributeType="String" versionHashModifier="v2"/>"#) != base)
        #expect(try hash(#"<attribute name="a" attributeType="String" minValueString="1" defaultValueString="x"/>"#) == base)
        #expect(try hash(#"<attribute name="a" attributeType="String" elementID="old" usesScalarValueType="NO"/>"#) == base)
        #expect(try hash(#"<attribute name="a" attributeType="String"/><attribute name="t" optional="YES" transient="YES"/>"#) == base)
    }

    @Test func fetchRequestTemplatesSubstituteEveryVariable() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="Author"><attribute name="firstName" attributeType="String"/><attribute name="born" optional="YES" attributeType="Date"/></entity>
            <fetchRequest name="ByName" entity="Author" predicateString="firstName like[cd] $FIRST_NAME AND born == $BORN" fetchLimit="10"/>
            """)))
        let template = try #require(model.fetchRequestTemplate(forName: "ByName"))
        #expect(template.entity === model.entitiesByName["Author"])
        #expect(template.fetchLimit == 10)
        let request = try #require(model.fetchRequestFromTemplate(withName: "ByName", substitutionVariables: ["FIRST_NAME": "Ann*", "BORN": NSNull()]))
        #expect(request.predicate?.predicateFormat == #"firstName LIKE[cd] "Ann*" AND born == <null>"#)
        #expect(request.fetchLimit == 10)
        #expect(template.predicate?.predicateFormat == "firstName LIKE[cd] $FIRST_NAME AND born == $BORN")
        #expect(throws: PredicateEvaluationError.self) {
            try model.fetchRequestFromTemplateThrowing(withName: "ByName", substitutionVariables: ["FIRST_NAME": "x"])
        }
        #expect(model.fetchRequestFromTemplate(withName: "Missing", substitutionVariables: [:]) == nil)
        #expect(Set(model.fetchRequestTemplatesByName.keys) == ["ByName"])
    }

    @Test func configurationsGroupEntities() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="A"><attribute name="x" attributeType="String"/></entity>
            <entity name="B"><attribute name="y" attributeType="String"/></entity>
            <configuration name="Cloud"><memberEntity name="A"/></configuration>
            <configuration name="Empty"/>
            """)))
        #expect(model.configurations == ["Cloud", "Empty"])
        #expect(model.entities(forConfigurationName: "Cloud")?.compactMap(\.name) == ["A"])
        #expect(model.entities(forConfigurationName: "Empty")?.isEmpty == true)
        #expect(model.entities(forConfigurationName: nil)?.count == 2)
        #expect(model.entities(forConfigurationName: "Nope") == nil)
        let metadata: [String: Any] = ["NSStoreModelVersionHashes": ["A": model.entitiesByName["A"]!.versionHash]]
        #expect(model.isConfiguration(withName: "Cloud", compatibleWithStoreMetadata: metadata))
        #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    @Test func malformedFilesNameTheFileLineAndProblem() throws {
        let cases: [(String, Int?, String)] = [
            (modelXML("<entity name=\"A\">\n<attribute name=\"x\" attributeType=\"Integer 128\"/>\n</entity>"), 4, "unknown type 'Integer 128'"),
            (modelXML("<entity name=\"A\" parentEntity=\"Missing\"/>"), 3, "parent entity 'Missing'"),
            (modelXML("<entity name=\"A\"/>\n<entity name=\"A\"/>"), 4, "a second entity named 'A'"),
            (modelXML("<entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"/><attribute name=\"x\" attributeType=\"String\"/></entity>"), 3, "two properties named 'x'"),
            (modelXML("<fetchRequest name=\"F\" entity=\"A\" predicateString=\"a ==\"/>"), 3, "does not parse"),
            (modelXML("<entity name=\"A\"><attribute name=\"x\""), nil, "malformed XML"),
            ("<plist/>", 1, "not a Core Data model"),
        ]
        for (xml, line, problem) in cases {
            let folder = try temporaryModel(xml)
            #expect {
                try NSManagedObjectModel(validatingContentsOf: folder)
            } throws: { error in
                guard let error = error as? ModelLoadError else { return false }
                return error.problem.contains(problem) && (line == nil || error.line == line) && error.file.lastPathComponent == "contents"
            }
            #expect(NSManagedObjectModel(contentsOf: folder) == nil)
        }
    }

    @Test func versionedBundlesLoadTheirCurrentVersion() throws {
        let root = ScratchFiles.path("Model.xcdatamodeld")
        for (version, entity) in [("Model", "Old"), ("Model 2", "New")] {
            let folder = root.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(modelXML("<entity name=\"\(entity)\"/>").utf8).write(to: folder.appendingPathComponent("contents"))
        }
        let marker = try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "Model 2.xcdatamodel"], format: .xml, options: 0)
        try marker.write(to: root.appendingPathComponent(".xccurrentversion"))
        #expect(NSManagedObjectModel(contentsOf: root)?.entitiesByName.keys.sorted() == ["New"])
        try FileManager.default.removeItem(at: root.appendingPathComponent(".xccurrentversion"))
        #expect { try NSManagedObjectModel(validatingContentsOf: root) } throws: {
            ($0 as? ModelLoadError)?.problem.contains("2 versions") == true
        }
    }

    @Test func copiesAreIndependentAndEditable() throws {
        let model = Self.listing3()
        model.markInUse()
        #expect(!model.isEditable)
        let copy = try #require(model.copy() as? NSManagedObjectModel)
        #expect(copy.isEditable)
        #expect(copy.entityVersionHashesByName == model.entityVersionHashesByName)
        copy.entitiesByName["Run"]?.name = "Race"
        #expect(model.entitiesByName["Run"] != nil)
    }

    /// Saves ask it before looking at any row for uniqueness constraints.
    @Test func aModelInUseKnowsWhetherAnyEntityDeclaresUniquenessConstraints() {
        let plain = ModelTests.listing3()
        #expect(plain.declaresUniquenessConstraints == nil, "an editable model may still gain one")
        plain.markInUse()
        #expect(plain.declaresUniquenessConstraints == false)

        let constrained = ModelTests.listing3()
        #expect(constrained.declaresUniquenessConstraints == nil)
        constrained.entitiesByName["Run"]!.uniquenessConstraints = [["date"]]
        constrained.markInUse()
        #expect(constrained.declaresUniquenessConstraints == true)
        #expect(constrained.declaresUniquenessConstraints == true, "the answer kept is the same")
    }

    @Test func modelInUseRefusesEdits() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = ModelTests.listing3()
            model.markInUse()
            model.entitiesByName["Run"]?.attributesByName["date"]?.isOptional = true
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("NSManagedObjectModel: Can't modify an immutable model."), "stopped with another message: \(output)")
    }

    @Test func versionIdentifiersComeFromTheModelFile() throws {
        let xml = modelXML("<entity name=\"A\"/>").replacingOccurrences(of: #"userDefinedModelVersionIdentifier="""#, with: #"userDefinedModelVersionIdentifier="2.1""#)
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(xml))
        #expect(model.versionIdentifiers == ["2.1"])
    }

    /// Xcode writes `userDefinedModelVersionIdentifier=""` when the field is left blank, and Apple's
    /// stores of such models (LoopKit's, CoreDataStack's in the fixtures) record `[""]`; without the
    /// attribute there is none.
    @Test func anEmptyVersionIdentifierIsOneAndAMissingOneIsNone() throws {
        let empty = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("<entity name=\"A\"/>")))
        #expect(empty.versionIdentifiers == [""])
        let xml = modelXML("<entity name=\"A\"/>").replacingOccurrences(of: #" userDefinedModelVersionIdentifier="""#, with: "")
        let none = try NSManagedObjectModel(validatingContentsOf: temporaryModel(xml))
        #expect(none.versionIdentifiers.isEmpty)
    }
}
