import Foundation
import OCDPredicate
import OCDTestSupport
import Testing
@testable import OCDModel
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Inputs a review found crashing or mishandled; each test failed (or crashed) before its fix.
@Suite("Model review regressions")
struct ModelReviewRegressionTests {
    func loadError(_ body: String) throws -> ModelLoadError? {
        do {
            _ = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML(body)))
            return nil
        } catch let error as ModelLoadError {
            return error
        }
    }

    @Test func aCompositeContainingItselfIsAnError() throws {
        let error = try loadError("""
            <composite name="X"><attribute name="inner" attributeType="Composite" composite="X"/></composite>
            <entity name="A"><attribute name="c" attributeType="Composite" composite="X"/></entity>
            """)
        #expect(error?.problem.contains("the composite 'X' contains itself") == true)
    }

    @Test func hugeOrNonFiniteNumbersAreErrorsNotTraps() throws {
        #expect(try loadError(#"<entity name="A"><attribute name="n" attributeType="Integer 64" defaultValueString="1e300"/></entity>"#) != nil)
        #expect(try loadError(#"<entity name="A"><attribute name="s" attributeType="String" minValueString="nan"/></entity>"#) != nil)
        #expect(try loadError(#"<entity name="A"><attribute name="b" attributeType="Binary" maxValueString="1e20"/></entity>"#) != nil)
        #expect(try loadError(#"<entity name="A"><relationship name="r" toMany="YES" maxCount="99999999999" destinationEntity="A"/></entity>"#)?.problem.contains("is not a count") == true)
    }

    /// A text default on an attribute whose type has none (a date's is `defaultDateTimeInterval`) is an
    /// error with the file's line, not a String that makes every new object fail to save.
    @Test func aTextDefaultOfADateOrDataAttributeIsAnError() throws {
        for type in ["Date", "Binary", "Transformable"] {
            let error = try loadError(#"<entity name="A"><attribute name="d" attributeType="\#(type)" defaultValueString="12/4/2013"/></entity>"#)
            #expect(error?.problem.contains("cannot have the text default '12/4/2013'") == true, "\(type)")
            #expect(error?.line != nil)
        }
        #expect(try loadError(#"<entity name="A"><attribute name="d" attributeType="Date" defaultDateTimeInterval="0"/></entity>"#) == nil)
        #expect(try loadError(#"<entity name="A"><attribute name="s" attributeType="String" defaultValueString="12/4/2013"/></entity>"#) == nil)
    }

    /// A date default that is not a number of seconds (NaN, an infinity) is an error: Linux Foundation
    /// stops the process describing such a date.
    @Test func aDateDefaultThatIsNoNumberOfSecondsIsAnError() throws {
        for interval in ["nan", "inf", "-inf"] {
            let error = try loadError(#"<entity name="A"><attribute name="d" attributeType="Date" defaultDateTimeInterval="\#(interval)"/></entity>"#)
            #expect(error?.problem.contains("is not a number of seconds") == true, "\(interval)")
        }
    }

    /// A byte that is not UTF-8 in an element's or attribute's name stopped Linux Foundation's XMLParser;
    /// the file is refused with the line of the byte.
    @Test func aByteThatIsNotUTF8IsAnErrorWithItsLine() throws {
        for body in [Data("<entity name=\"A\">\n<a".utf8) + [0xD5] + Data("b/></entity>".utf8),
                     Data("<entity n".utf8) + [0xD5] + Data("m=\"A\"/>".utf8)] {
            // Declared as Xcode writes it, with spaces around '=', as UTF-16 without a byte order mark
            // (libxml2 reads that as UTF-8 too), or not at all.
            for declaration in [#"encoding="UTF-8""#, #"encoding = 'utf-8'"#, #"encoding= "UTF-8""#, #"encoding="UTF-16""#, ""] {
                let folder = try temporaryModel("")
                var xml = Data(modelXML("").replacingOccurrences(of: #"encoding="UTF-8""#, with: declaration).utf8)
                xml.replaceSubrange(xml.range(of: Data("</model>".utf8))!, with: body + Data("</model>".utf8))
                try xml.write(to: folder.appendingPathComponent("contents"))
                do {
                    _ = try NSManagedObjectModel(validatingContentsOf: folder)
                    Issue.record("loaded with \(declaration)")
                } catch let error as ModelLoadError {
                    #expect(error.problem.contains("not UTF-8"), "\(declaration): \(error)")
                    #expect(error.line != nil)
                }
            }
        }
        // A single-byte encoding's bytes are all characters: such a file is the parser's to read.
        let latin = try temporaryModel("")
        var xml = Data(modelXML(#"<entity name="A"><attribute name="n" attributeType="String" defaultValueString="caf"#).replacingOccurrences(of: #"encoding="UTF-8""#, with: #"encoding="ISO-8859-1""#).utf8)
        xml.append(contentsOf: [0xE9] + Array(#""/></entity></model>"#.utf8))
        xml.replaceSubrange(xml.range(of: Data("\n</model>".utf8))!, with: Data())
        try xml.write(to: latin.appendingPathComponent("contents"))
        let model = try NSManagedObjectModel(validatingContentsOf: latin)
        #expect((model.entitiesByName["A"]?.attributesByName["n"]?.defaultValue as? String) == "café")
    }

    /// Composites nested beyond 64 levels are an error in the XML reader and in the compiled-model
    /// reader: each level is a call, and a few thousand overflowed the stack.
    @Test func compositesNestedTooDeepAreAnError() throws {
        var xml = #"<composite name="C0"><attribute name="leaf" attributeType="String"/></composite>"#
        for level in 1...80 {
            xml += #"<composite name="C\#(level)"><attribute name="e" attributeType="Composite" composite="C\#(level - 1)"/></composite>"#
        }
        xml += #"<entity name="A"><attribute name="c" attributeType="Composite" composite="C80"/></entity>"#
        #expect(try loadError(xml)?.problem.contains("nested more than 64 deep") == true)

        let model = NSManagedObjectModel()
        let entity = NSEntityDescription()
        entity.name = "A"
        var innermost: NSAttributeDescription = {
            let leaf = NSAttributeDescription()
            leaf.name = "leaf"
            leaf.attributeType = .stringAttributeType
            return leaf
        }()
        for _ in 0..<80 {
            let composite = NSCompositeAttributeDescription()
            composite.name = "e"
            composite.elements = [innermost]
            innermost = composite
        }
        innermost.name = "c"
        entity.properties = [innermost]
        model.entities = [entity]
        var writer = BinaryWriter(formatVersion: 1)
        CompiledModel.record(model).write(to: &writer)
        let file = ScratchFiles.path("Deep.ocdmodel")
        try Data(writer.bytes).write(to: file)
        do {
            _ = try NSManagedObjectModel(validatingContentsOf: file)
            Issue.record("loaded")
        } catch let error as ModelLoadError {
            #expect(error.problem.contains("nested more than 64 deep"), "\(error)")
        }
    }

    /// A compiled model folder's VersionInfo.plist names a version of the folder, not a path out of it.
    @Test func aCompiledFoldersCurrentVersionStaysInTheFolder() throws {
        let folder = ScratchFiles.path("Escape.momd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["../Elsewhere", "..", ""] {
            let info = try PropertyListSerialization.data(fromPropertyList: ["NSManagedObjectModel_CurrentVersionName": name], format: .xml, options: 0)
            try info.write(to: folder.appendingPathComponent("VersionInfo.plist"))
            do {
                _ = try NSManagedObjectModel(validatingContentsOf: folder)
                Issue.record("loaded '\(name)'")
            } catch let error as ModelLoadError {
                #expect(error.problem.contains("is not a version of this folder"), "\(name): \(error)")
            }
        }
    }

    @Test func currentVersionMustBeAVersionOfTheBundle() throws {
        let root = ScratchFiles.path("Loop.xcdatamodeld")
        let version = root.appendingPathComponent("Loop.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(modelXML(#"<entity name="A"/>"#).utf8).write(to: version.appendingPathComponent("contents"))
        for name in [".", "..", "../Other.xcdatamodel", "Missing.xcdatamodel"] {
            let marker = try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": name], format: .xml, options: 0)
            try marker.write(to: root.appendingPathComponent(".xccurrentversion"))
            #expect { try NSManagedObjectModel(validatingContentsOf: root) } throws: {
                ($0 as? ModelLoadError)?.problem.contains("is not a version in the bundle") == true
            }
        }
    }

    @Test func cyclesInsideArchivesAreErrors() throws {
        let b = ArchiveBuilder()
        // A compound predicate whose subpredicates contain itself, as a validation predicate.
        let compound = b.reference(1)
        b.objects.append("x")
        b.objects[1] = ["$class": b.classReference("NSCompoundPredicate", []), "NSCompoundPredicateType": 1,
                        "NSSubpredicates": b.array([compound])] as [String: Any]
        let attribute = b.object("NSAttributeDescription", ["NSPropertyName": b.string("a"), "NSAttributeType": 700,
                                                            "NSValidationPredicates": b.array([compound]), "NSValidationWarnings": b.array([b.add(1)])])
        let entity = b.object("NSEntityDescription", ["NSEntityName": b.string("E"), "NSProperties": b.dictionary([("a", attribute)])])
        let root = b.object("NSManagedObjectModel", ["NSEntities": b.dictionary([("E", entity)])])
        let file = ScratchFiles.path("Model.mom")
        try b.data(root: root).write(to: file)
        #expect { try NSManagedObjectModel(validatingContentsOf: file) } throws: {
            ($0 as? ModelLoadError)?.problem.contains("nested more than 100 deep") == true
        }
    }

    @Test func relationshipsDefaultToUnboundedToManyAsOnApplePlatforms() {
        let relationship = NSRelationshipDescription()
        #expect(relationship.maxCount == 0 && relationship.isToMany)
        #expect(relationship.minCount == 0 && relationship.deleteRule == .nullifyDeleteRule && relationship.isOptional)
    }

    @Test func clearingAnInverseInCodeStaysCleared() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="A"><relationship name="b" maxCount="1" destinationEntity="B" inverseName="a" inverseEntity="B"/></entity>
            <entity name="B"><relationship name="a" maxCount="1" destinationEntity="A" inverseName="b" inverseEntity="A"/></entity>
            """)))
        let before = model.entitiesByName["A"]!.versionHash
        let relationship = try #require(model.entitiesByName["A"]?.relationshipsByName["b"])
        relationship.inverseRelationship = nil
        #expect(model.entitiesByName["A"]!.versionHash != before, "the hash no longer includes the inverse")
        model.entities = model.entities
        #expect(relationship.inverseRelationship == nil, "setting the entities again does not bring the inverse back")
    }

    @Test func copiedIndexesPointAtTheCopysProperties() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="A"><attribute name="x" attributeType="String"/><fetchIndex name="byX"><fetchIndexElement property="x" type="Binary" order="ascending"/></fetchIndex></entity>
            """)))
        let copy = try #require(model.copy() as? NSManagedObjectModel)
        let element = try #require(copy.entitiesByName["A"]?.indexes.first?.elements.first)
        #expect(element.property === copy.entitiesByName["A"]?.propertiesByName["x"])
    }

    @Test func mergingUnitesConfigurationsOfTheSameName() throws {
        let a = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML(#"<entity name="A"/><configuration name="Shared"><memberEntity name="A"/></configuration>"#)))
        let b = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML(#"<entity name="B"/><configuration name="Shared"><memberEntity name="B"/></configuration>"#)))
        let merged = try NSManagedObjectModel(validatingMerging: [a, b])
        #expect(merged.entities(forConfigurationName: "Shared")?.compactMap(\.name) == ["A", "B"])
    }

    @Test func aConfigurationNamedDefaultIsTheModelsOwn() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML(#"<entity name="A"/><entity name="B"/><configuration name="Default"><memberEntity name="A"/></configuration>"#)))
        #expect(model.entities(forConfigurationName: "Default")?.compactMap(\.name) == ["A"])
        #expect(model.entities(forConfigurationName: nil)?.count == 2)
    }

    @Test func mergedModelFromBundlesReadsCompiledModels() throws {
        guard let stores = Fixtures.stores else { return }
        let bundleRoot = ScratchFiles.newFolder()
        try FileManager.default.createDirectory(at: bundleRoot, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: stores.appendingPathComponent("compiled-models/alemar11__CoreDataPlus/SampleModel3/Fixtures/SampleModel3.momd"),
                                         to: bundleRoot.appendingPathComponent("SampleModel3.momd"))
        let bundle = try #require(Bundle(path: bundleRoot.path))
        #expect(NSManagedObjectModel.mergedModel(from: [bundle])?.entitiesByName["User"] != nil)
    }

    @Test func compiledTemplatesKeepSortsOffsetsAndPrefetching() throws {
        let source = try temporaryModel(modelXML(#"<entity name="A"><attribute name="x" attributeType="String"/></entity><fetchRequest name="T" entity="A" predicateString="x != nil"/>"#))
        let model = try NSManagedObjectModel(validatingContentsOf: source)
        let template = try #require(model.fetchRequestTemplate(forName: "T"))
        template.sortDescriptors = [NSSortDescriptor(key: "x", ascending: false, selector: .localizedStandardCompare)]
        template.fetchOffset = 3
        template.relationshipKeyPathsForPrefetching = ["y"]
        template.shouldRefreshRefetchedObjects = true
        var writer = BinaryWriter(formatVersion: 1)
        CompiledModel.record(model).write(to: &writer)
        let file = ScratchFiles.path("Model.ocdmodel")
        try Data(writer.bytes).write(to: file)
        let loaded = try #require(try NSManagedObjectModel(validatingContentsOf: file).fetchRequestTemplate(forName: "T"))
        #expect(loaded.sortDescriptors == template.sortDescriptors)
        #expect(loaded.fetchOffset == 3 && loaded.relationshipKeyPathsForPrefetching == ["y"] && loaded.shouldRefreshRefetchedObjects)
    }
}

/// Once a coordinator uses a model, nothing in it may change, templates and indexes included
/// (coredata-behaviours.md, "Model"); the copies a template hands out stay editable.
@Suite("Everything in a model in use is frozen")
struct FrozenModelTests {
    static func frozenModel() -> NSManagedObjectModel {
        let model = try! NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <composite name="Point"><attribute name="x" attributeType="Double"/></composite>
            <entity name="A"><attribute name="name" attributeType="String"/><attribute name="p" attributeType="Composite" composite="Point"/>
              <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex></entity>
            <fetchRequest name="ByName" entity="A" predicateString="name == $NAME"/>
            """)))
        model.markInUse()
        return model
    }

    @Test func aStoredTemplateCannotChange() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = FrozenModelTests.frozenModel()
            withExtendedLifetime(model) { model.fetchRequestTemplate(forName: "ByName")?.fetchLimit = 3 }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("NSManagedObjectModel: Can't modify an immutable model."), "stopped with another message: \(output)")
    }

    @Test func anIndexCannotChange() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = FrozenModelTests.frozenModel()
            withExtendedLifetime(model) { model.entitiesByName["A"]?.indexes.first?.elements.first?.isAscending = false }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("NSManagedObjectModel: Can't modify an immutable model."), "stopped with another message: \(output)")
    }

    @Test func anEntityOfAModelInUseCannotBecomeASubentity() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = FrozenModelTests.frozenModel()
            let parent = NSEntityDescription()
            parent.name = "Parent"
            withExtendedLifetime(model) { parent.subentities = [model.entitiesByName["A"]!] }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("NSManagedObjectModel: Can't modify an immutable model."), "stopped with another message: \(output)")
    }

    /// Apple raises "Can't use an entity in two models": the entity would leave the model in use, its
    /// relationships resolved again against the other one.
    @Test func anEntityOfAModelCannotJoinAnotherModel() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = FrozenModelTests.frozenModel()
            withExtendedLifetime(model) { NSManagedObjectModel().entities = [model.entitiesByName["A"]!] }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Can't use an entity in two models"), "stopped with another message: \(output)")
        // A copy can join: it belongs to no model.
        let model = FrozenModelTests.frozenModel()
        let other = NSManagedObjectModel()
        other.entities = [model.entitiesByName["A"]!.copy() as! NSEntityDescription]
        #expect(other.entitiesByName["A"]?.managedObjectModel === other)
        #expect(model.entitiesByName["A"]?.managedObjectModel === model)
    }

    /// As on Apple platforms, a subentity's `properties` lists the inherited ones (the superentity's own
    /// objects) first, then its own; setting it sets its own, leaving inherited ones read back alone.
    @Test func aSubentitysPropertiesIncludeTheInheritedOnes() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="Car"><attribute name="plate" optional="YES" attributeType="String"/></entity>
            <entity name="SportCar" parentEntity="Car"><attribute name="topSpeed" optional="YES" attributeType="Double"/></entity>
            """)))
        let car = try #require(model.entitiesByName["Car"]), sport = try #require(model.entitiesByName["SportCar"])
        #expect(sport.properties.map(\.name) == ["plate", "topSpeed"])
        #expect(sport.properties.first === car.attributesByName["plate"])
        #expect(car.properties.map(\.name) == ["plate"])
        let wheels = NSAttributeDescription()
        wheels.name = "wheels"
        wheels.attributeType = .integer16AttributeType
        sport.properties.append(wheels)
        #expect(sport.properties.map(\.name) == ["plate", "topSpeed", "wheels"])
        #expect(car.attributesByName["plate"]?.entity === car)
        #expect(sport.ownProperties.map(\.name) == ["topSpeed", "wheels"])
    }

    /// An index over an expression's value loads as a model Xcode wrote: the index is left out, the
    /// model is not refused, and the other indexes stay.
    @Test func anExpressionIndexDoesNotStopTheModel() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
            <entity name="A"><attribute name="name" optional="YES" attributeType="String"/>
              <fetchIndex name="byCanonicalName"><fetchIndexElement expression="canonical:(name)" expressionType="String" type="Binary" order="ascending"/></fetchIndex>
              <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex></entity>
            """)))
        #expect(model.entitiesByName["A"]?.indexes.map(\.name) == ["byName"])
        #expect(throws: (any Error).self) {
            try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML("""
                <entity name="A"><attribute name="name" optional="YES" attributeType="String"/>
                  <fetchIndex name="broken"><fetchIndexElement type="Binary" order="ascending"/></fetchIndex></entity>
                """)))
        }
    }

    /// Apple: unset, a renaming identifier "will return the entity's name" (the property's name); a
    /// compiled model writes only one the model gave.
    @Test func renamingIdentifiersDefaultToTheName() throws {
        let attribute = NSAttributeDescription()
        attribute.name = "title"
        let entity = NSEntityDescription()
        entity.name = "Note"
        entity.properties = [attribute]
        #expect(attribute.renamingIdentifier == "title")
        #expect(entity.renamingIdentifier == "Note")
        attribute.renamingIdentifier = "heading"
        #expect(attribute.renamingIdentifier == "heading")
        attribute.renamingIdentifier = nil
        #expect(attribute.renamingIdentifier == "title")
        let copy = try #require(entity.copy() as? NSEntityDescription)
        #expect(copy.explicitRenamingIdentifier == nil && copy.renamingIdentifier == "Note")
    }

    @Test func aCompositeElementCannotChange() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = FrozenModelTests.frozenModel()
            withExtendedLifetime(model) {
                let composite = model.entitiesByName["A"]?.attributesByName["p"] as? NSCompositeAttributeDescription
                composite?.elements.first?.isOptional = true
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("NSManagedObjectModel: Can't modify an immutable model."), "stopped with another message: \(output)")
    }

    @Test func aTemplatesSubstitutedCopyCanChange() throws {
        let model = Self.frozenModel()
        let request = try #require(model.fetchRequestFromTemplate(withName: "ByName", substitutionVariables: ["NAME": "x"]))
        request.fetchLimit = 3
        #expect(request.fetchLimit == 3)
        #expect(model.fetchRequestTemplate(forName: "ByName")?.fetchLimit == 0)
    }
}
