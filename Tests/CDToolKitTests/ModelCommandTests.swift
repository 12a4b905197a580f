import CDToolKit
import Foundation
import OCDTestSupport
import Testing

private func writeModel(_ entities: String) throws -> String {
    let folder = ScratchFiles.path("M.xcdatamodel")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">\(entities)</model>
        """
    try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
    return folder.path
}

@Suite("cdtool model")
struct ModelCommandTests {
    @Test func hashesAreWhatTheStoreRecorded() throws {
        guard let models = Fixtures.models, let stores = Fixtures.stores else { return }
        let run = CDTool.run(["model", "hashes", models.appendingPathComponent("LoopKit__LoopKit__Model/Model.xcdatamodel").path])
        #expect(run.status == 0)
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: String])
        let metadata = try Fixtures.storeMetadata(stores.appendingPathComponent("LoopKit__LoopKit__Model.sqlite.v1.original.sqlite"))
        let stored = try #require(metadata["NSStoreModelVersionHashes"] as? [String: Data])
        #expect(printed == stored.mapValues { $0.base64EncodedString() })
    }

    @Test func hashesOfANamedVersion() throws {
        guard let models = Fixtures.models else { return }
        let bundle = models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel").path
        let run = CDTool.run(["model", "hashes", bundle, "--version", "SampleModel2"])
        #expect(run.status == 0)
        #expect(run.output.contains("\"LuxuryCar\""))
    }

    @Test func inspectPrintsEntitiesAsTextOrJSON() throws {
        let path = try writeModel("""
            <entity name="Author"><attribute name="name" attributeType="String"/>
              <relationship name="books" toMany="YES" deletionRule="Cascade" destinationEntity="Book" inverseName="author" inverseEntity="Book"/></entity>
            <entity name="Book"><relationship name="author" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/></entity>
            <fetchRequest name="Named" entity="Author" predicateString="name == $NAME"/>
            """)
        let text = CDTool.run(["model", "inspect", path])
        #expect(text.output.contains("entity Author\n  name: String\n  books: to-many Book, inverse author, cascade"))
        #expect(text.output.contains("fetch request Named: Author where name == $NAME"))
        let json = CDTool.run(["model", "inspect", path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let entities = try #require(object["entities"] as? [[String: Any]])
        #expect(entities.compactMap { $0["name"] as? String } == ["Author", "Book"])
        #expect((object["fetchRequestTemplates"] as? [String: Any])?["Named"] != nil)
    }

    @Test func validateReportsEachKindOfProblem() throws {
        let path = try writeModel("""
            <entity name="A">
              <attribute name="untyped"/>
              <relationship name="lonely" maxCount="1" destinationEntity="B"/>
              <relationship name="missing" maxCount="1" destinationEntity="Nowhere"/>
              <relationship name="wrongInverse" maxCount="1" destinationEntity="B" inverseName="nope" inverseEntity="B"/>
            </entity>
            <entity name="B"><attribute name="x" attributeType="String"/></entity>
            """)
        let run = CDTool.run(["model", "validate", path])
        #expect(run.status == 1)
        #expect(run.output.contains("error: A.untyped: a stored attribute needs a type"))
        #expect(run.output.contains("warning: A.lonely: no inverse relationship"))
        #expect(run.output.contains("error: A.missing: the destination entity 'Nowhere' is not in the model"))
        #expect(run.output.contains("error: A.wrongInverse: the inverse 'nope' is not a relationship of B"))
        #expect(run.error.contains("4 problems"))
    }

    /// What Core Data refuses once a model is used (a uniqueness constraint on no property) is an error of
    /// the file: the model does not load, and the error names the entity's line and Apple's reason.
    @Test func validateReportsAConstraintOnNoPropertyAsALoadError() throws {
        let path = try writeModel("""
            <entity name="A">
              <attribute name="x" attributeType="String"/>
              <uniquenessConstraints><uniquenessConstraint><constraint value="ghost"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            """)
        let run = CDTool.run(["model", "validate", path])
        #expect(run.status != 0)
        #expect(run.error.contains("Can't find property named 'ghost' for a uniqueness constraint of entity 'A'"))
    }

    /// Composite attributes: an element Core Data refuses is an error; a constraint on an element's
    /// dotted name is not.
    @Test func validateChecksCompositeElements() throws {
        let path = try writeModel("""
            <entity name="Place">
              <attribute name="location" optional="YES" attributeType="Composite" composite="Spot"/>
              <uniquenessConstraints><uniquenessConstraint><constraint value="location.lat"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            <composite name="Spot">
              <attribute name="lat" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
              <attribute name="photo" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
            </composite>
            """)
        let run = CDTool.run(["model", "validate", path])
        #expect(run.status == 1)
        #expect(run.output.contains("error: Place.location.photo: a composite cannot hold"))
        #expect(!run.output.contains("location.lat'"))
        #expect(run.error.contains("1 problem"))
    }

    @Test func validateAcceptsAConsistentModel() throws {
        let path = try writeModel("""
            <entity name="A"><relationship name="b" maxCount="1" deletionRule="Nullify" destinationEntity="B" inverseName="a" inverseEntity="B"/></entity>
            <entity name="B"><relationship name="a" maxCount="1" deletionRule="Nullify" destinationEntity="A" inverseName="b" inverseEntity="A"/></entity>
            """)
        let run = CDTool.run(["model", "validate", path])
        #expect(run.status == 0)
        #expect(run.output == "ok: 2 entities, no problems\n")
    }

    @Test func diagramsShowCardinalityAndInheritance() throws {
        let path = try writeModel("""
            <entity name="Vehicle" isAbstract="YES"><attribute name="wheels" attributeType="Integer 16"/></entity>
            <entity name="Car" parentEntity="Vehicle"><relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/></entity>
            <entity name="Person"><relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/></entity>
            """)
        let mermaid = CDTool.run(["model", "diagram", path, "--format", "mermaid"]).output
        #expect(mermaid.hasPrefix("classDiagram"))
        #expect(mermaid.contains("Vehicle <|-- Car"))
        #expect(mermaid.contains("Person --> \"0..*\" Car : cars"))
        #expect(mermaid.contains("Car --> \"0..1\" Person : owner"))
        #expect(mermaid.contains("<<abstract>>"))
        let dot = CDTool.run(["model", "diagram", path, "--format", "dot"]).output
        #expect(dot.hasPrefix("digraph Model {"))
        #expect(dot.contains("\"Car\" -> \"Vehicle\" [arrowhead=empty, style=dashed];"))
        #expect(dot.contains("\"Person\" -> \"Car\" [label=\"cars 0..*\", arrowhead=crow];"))
        #expect(dot.contains("wheels: Integer 16\\l"))
    }

    @Test func unreadableModelsExitOneWithFileAndLine() throws {
        let path = try writeModel("<entity name=\"A\"><attribute name=\"x\" attributeType=\"Nope\"/></entity>")
        let run = CDTool.run(["model", "inspect", path])
        #expect(run.status == 1)
        #expect(run.error.contains("contents:2: the attribute 'x' has the unknown type 'Nope'"))
    }
}
