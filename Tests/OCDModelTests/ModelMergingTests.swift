import Foundation
import OCDTestSupport
import Testing
@testable import OCDModel

final class ResolvableRun: NSObject {}

@Suite("Merging models, localization files, entity classes")
struct ModelMergingTests {
    func model(_ body: String) throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: temporaryModel(modelXML(body)))
    }

    @Test func mergingCombinesEntitiesTemplatesAndConfigurations() throws {
        let a = try model("""
            <entity name="Author"><relationship name="books" toMany="YES" destinationEntity="Book" inverseName="author" inverseEntity="Book"/></entity>
            <entity name="Book"><relationship name="author" maxCount="1" destinationEntity="Author" inverseName="books" inverseEntity="Author"/></entity>
            <fetchRequest name="All" entity="Author"/>
            """)
        let b = try model("""
            <entity name="Shelf"><attribute name="label" attributeType="String"/></entity>
            <configuration name="Local"><memberEntity name="Shelf"/></configuration>
            """)
        let merged = try #require(NSManagedObjectModel(byMerging: [a, b]))
        #expect(merged.entities.compactMap(\.name) == ["Author", "Book", "Shelf"])
        #expect(merged.entityVersionHashesByName == a.entityVersionHashesByName.merging(b.entityVersionHashesByName) { x, _ in x })
        let books = try #require(merged.entitiesByName["Author"]?.relationshipsByName["books"])
        #expect(books.destinationEntity === merged.entitiesByName["Book"], "references point into the merged model, not the sources")
        #expect(books.inverseRelationship === merged.entitiesByName["Book"]?.relationshipsByName["author"])
        #expect(merged.fetchRequestTemplate(forName: "All")?.entity === merged.entitiesByName["Author"])
        #expect(merged.entities(forConfigurationName: "Local")?.compactMap(\.name) == ["Shelf"])
        #expect(NSManagedObjectModel(byMerging: []) == nil)
    }

    /// Templates of one name merge when they are the same and are an error when they differ; the first
    /// one won silently.
    @Test func differentTemplatesWithOneNameAreAnError() throws {
        let first = try model(#"<entity name="Note"/><fetchRequest name="Recent" entity="Note" predicateString="TRUEPREDICATE"/>"#)
        let same = try model(#"<entity name="Note"/><fetchRequest name="Recent" entity="Note" predicateString="TRUEPREDICATE"/>"#)
        let different = try model(#"<entity name="Note"/><fetchRequest name="Recent" entity="Note" predicateString="FALSEPREDICATE"/>"#)
        #expect(try NSManagedObjectModel(validatingMerging: [first, same]).fetchRequestTemplatesByName.count == 1)
        #expect {
            try NSManagedObjectModel(validatingMerging: [first, different])
        } throws: { ($0 as? ModelMergeError)?.reason == "Can't merge models with two different fetch request templates named 'Recent'" }
    }

    @Test func identicalEntitiesMergeButDifferentOnesWithOneNameAreAnError() throws {
        let first = try model(#"<entity name="Note"><attribute name="text" attributeType="String"/></entity>"#)
        let same = try model(#"<entity name="Note"><attribute name="text" attributeType="String"/></entity>"#)
        let different = try model(#"<entity name="Note"><attribute name="body" attributeType="String"/></entity>"#)
        #expect(try NSManagedObjectModel(validatingMerging: [first, same]).entities.count == 1)
        #expect {
            try NSManagedObjectModel(validatingMerging: [first, different])
        } throws: { ($0 as? ModelMergeError)?.reason == "Can't merge models with two different entities named 'Note'" }
    }

    @Test func mergingForStoreMetadataPicksTheVersionsTheStoreWasMadeWith() throws {
        guard let models = Fixtures.models, let stores = Fixtures.stores else { return }
        let folder = models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel")
        let versions = try ["SampleModel", "SampleModel2", "SampleModel3"].map {
            try NSManagedObjectModel(validatingContentsOf: folder.appendingPathComponent("\($0).xcdatamodel"))
        }
        let metadata = try Fixtures.storeMetadata(stores.appendingPathComponent("alemar11__CoreDataPlus__SampleModel_V2.sqlite"))
        let model = try #require(NSManagedObjectModel(byMerging: versions, forStoreMetadata: metadata))
        #expect(model.entityVersionHashesByName == versions[1].entityVersionHashesByName)
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(NSManagedObjectModel(byMerging: [versions[2]], forStoreMetadata: metadata) == nil)
    }

    @Test func mergedModelFromBundlesFindsTheirModels() throws {
        let root = ScratchFiles.newFolder()
        for (name, entity) in [("One", "A"), ("Two", "B")] {
            let folder = root.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(modelXML("<entity name=\"\(entity)\"/>").utf8).write(to: folder.appendingPathComponent("contents"))
        }
        let bundle = try #require(Bundle(path: root.path))
        #expect(NSManagedObjectModel.mergedModel(from: [bundle])?.entities.compactMap(\.name).sorted() == ["A", "B"])
        // A broken model beside them is left out, as Apple's Core Data leaves it out; it made the result nil.
        let broken = root.appendingPathComponent("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try Data("not a model".utf8).write(to: broken.appendingPathComponent("contents"))
        #expect(NSManagedObjectModel.mergedModel(from: [bundle])?.entities.compactMap(\.name).sorted() == ["A", "B"])
        let empty = try #require(Bundle(path: FileManager.default.temporaryDirectory.path))
        #expect(NSManagedObjectModel.mergedModel(from: [empty]) == nil)
    }

    /// Apple's compiled model whose current version is not the store's: every version of the `.momd` is
    /// searched, as `mergedModel(from:forStoreMetadata:)` does on Apple platforms.
    @Test func mergedModelForStoreMetadataSearchesEveryVersionOfABundle() throws {
        guard let stores = Fixtures.stores else { return }
        let metadata = try Fixtures.storeMetadata(stores.appendingPathComponent("alemar11__CoreDataPlus__SampleModel_V2.sqlite"))
        let bundle = try #require(Bundle(path: stores.appendingPathComponent("compiled-models/alemar11__CoreDataPlus/SampleModel/Fixtures").path))
        // The current version (SampleModel) is not the one the store was made with.
        let current = try #require(NSManagedObjectModel.mergedModel(from: [bundle]))
        #expect(!current.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let model = try #require(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: metadata))
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: ["NSStoreModelVersionHashes": ["Nope": Data([1])]]) == nil)
    }

    @Test func stringsFileBesideTheModelBecomesItsLocalizationDictionary() throws {
        let folder = try temporaryModel(modelXML("<entity name=\"Run\"><attribute name=\"processID\" attributeType=\"Integer 32\"/></entity>"), name: "Runs")
        let strings = """
            /* Localized names */
            "Entity/Run" = "Lauf";
            "Property/processID/Entity/Run" = "Prozess-ID";
            """
        try Data(strings.utf8).write(to: folder.deletingLastPathComponent().appendingPathComponent("RunsModel.strings"))
        let model = try NSManagedObjectModel(validatingContentsOf: folder)
        #expect(model.localizationDictionary?["Entity/Run"] == "Lauf")
        #expect(model.localizationDictionary?["Property/processID/Entity/Run"] == "Prozess-ID")
    }

    @Test func stringsFileInAnLprojFolderIsFoundAndABrokenOneIsAnError() throws {
        let folder = try temporaryModel(modelXML("<entity name=\"Run\"/>"), name: "Runs")
        let lproj = folder.deletingLastPathComponent().appendingPathComponent("Base.lproj")
        try FileManager.default.createDirectory(at: lproj, withIntermediateDirectories: true)
        try Data(#""Entity/Run" = "Course";"#.utf8).write(to: lproj.appendingPathComponent("RunsModel.strings"))
        #expect(try NSManagedObjectModel(validatingContentsOf: folder).localizationDictionary?["Entity/Run"] == "Course")
        try Data(#""Entity/Run" = "#.utf8).write(to: lproj.appendingPathComponent("RunsModel.strings"))
        #expect { try NSManagedObjectModel(validatingContentsOf: folder) } throws: {
            ($0 as? ModelLoadError)?.problem.hasPrefix("not a .strings file") == true
        }
    }

    @Test func entityClassesResolveByRegistrationOrModuleQualifiedName() throws {
        let entity = NSEntityDescription()
        entity.managedObjectClassName = "OCDModelTests.ResolvableRun"
        #expect(entity.resolvedManagedObjectClass == ResolvableRun.self)
        entity.managedObjectClassName = ".RegisteredRunForTest"
        #expect(entity.resolvedManagedObjectClass == nil)
        NSManagedObjectModel.registerManagedObjectClass(ResolvableRun.self, forName: "RegisteredRunForTest")
        #expect(entity.resolvedManagedObjectClass == ResolvableRun.self)
        entity.managedObjectClassName = "NSManagedObject"
        #expect(entity.resolvedManagedObjectClass == nil)
    }
}

@Suite("Localized names for error messages")
struct LocalizedNameTests {
    @Test func namesComeFromTheLocalizationDictionaryWithFallbacks() {
        let model = ModelTests.listing3()
        model.localizationDictionary?["Entity/Run"] = "Lauf"
        model.localizationDictionary?["Property/date"] = "Datum"
        model.localizationDictionary?["Property/note"] = "Notiz"
        #expect(model.localizedName(ofEntity: "Run") == "Lauf")
        #expect(model.localizedName(ofEntity: "Walk") == "Walk")
        #expect(model.localizedName(ofProperty: "processID", inEntity: "Run") == "Process ID")
        #expect(model.localizedName(ofProperty: "date", inEntity: "Run") == "Date", "the entity-specific key wins")
        #expect(model.localizedName(ofProperty: "note", inEntity: "Run") == "Notiz")
        #expect(model.localizedName(ofProperty: "other", inEntity: "Run") == "other")
        #expect(model.localizedErrorString("Process ID < 0") == "Process ID must not be less than 0")
        #expect(model.localizedErrorString("Unknown") == "Unknown")
    }
}
