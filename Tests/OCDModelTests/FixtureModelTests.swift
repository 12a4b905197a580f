import Foundation
import OCDTestSupport
import Testing
@testable import OCDModel

/// The real Xcode models of ../shared/fixtures/models load, and their version hashes are Apple's.
@Suite("Fixture models: loading and version hashes")
struct FixtureModelTests {
    static let versionFolders = Fixtures.modelVersionFolders()

    @Test("Every model version with a contents file loads", arguments: versionFolders.filter {
        FileManager.default.fileExists(atPath: $0.appendingPathComponent("contents").path)
    })
    func modelVersionLoads(_ folder: URL) throws {
        let model = try NSManagedObjectModel(validatingContentsOf: folder)
        #expect(!model.entities.isEmpty || folder.path.contains("ChristianKienle") == false)
        for entity in model.entities {
            if let parent = entity.superentityName { #expect(entity.superentity?.name == parent) }
            for case let relationship as NSRelationshipDescription in entity.properties {
                if let destination = relationship.destinationEntityName, model.entitiesByName[destination] != nil {
                    #expect(relationship.destinationEntity?.name == destination)
                }
            }
        }
    }

    @Test("Legacy Xcode 3 models are refused with a reason", arguments: versionFolders.filter {
        !FileManager.default.fileExists(atPath: $0.appendingPathComponent("contents").path)
    })
    func legacyModelIsRefused(_ folder: URL) {
        #expect {
            try NSManagedObjectModel(validatingContentsOf: folder)
        } throws: { ($0 as? ModelLoadError)?.problem.contains("legacy Xcode 3") == true }
    }

    @Test func everyVersionedBundleLoadsItsCurrentVersion() throws {
        guard let models = Fixtures.models else { return }
        var loaded = 0
        for folder in try FileManager.default.contentsOfDirectory(atPath: models.path).sorted() {
            let bundle = models.appendingPathComponent(folder)
            guard FileManager.default.fileExists(atPath: bundle.appendingPathComponent(".xccurrentversion").path) else { continue }
            let marker = try PropertyListSerialization.propertyList(from: Data(contentsOf: bundle.appendingPathComponent(".xccurrentversion")), format: nil) as? [String: Any]
            if marker?["_XCCurrentVersionName"] == nil, try XcodeModelReader.versionFolders(in: bundle).count > 1 {
                // CoreStore's EvolutionDemo has an empty .xccurrentversion and two versions: no current one.
                #expect { try XcodeModelReader.currentVersion(in: bundle) } throws: {
                    ($0 as? ModelLoadError)?.problem.contains("no current version") == true
                }
                continue
            }
            let current = try XcodeModelReader.currentVersion(in: bundle)
            if FileManager.default.fileExists(atPath: current.appendingPathComponent("contents").path) {
                _ = try NSManagedObjectModel(validatingContentsOf: current)
                loaded += 1
            }
        }
        #expect(loaded > 20)
    }

    @Test func compiledModelsVersionInfoHashesAreReproduced() throws {
        guard let stores = Fixtures.stores, let models = Fixtures.models else { return }
        let cases = [
            ("compiled-models/alemar11__CoreDataPlus/SampleModel/Fixtures/SampleModel.momd", "alemar11__CoreDataPlus__SampleModel"),
            ("compiled-models/alemar11__CoreDataPlus/SampleModel3/Fixtures/SampleModel3.momd", "alemar11__CoreDataPlus__SampleModel3"),
        ]
        var checked = 0
        for (momd, modelFolder) in cases {
            let info = try #require(NSDictionary(contentsOf: stores.appendingPathComponent(momd).appendingPathComponent("VersionInfo.plist")) as? [String: Any])
            let versions = try #require(info["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
            for (version, hashes) in versions {
                let model = try NSManagedObjectModel(validatingContentsOf: models.appendingPathComponent(modelFolder).appendingPathComponent(version + ".xcdatamodel"))
                #expect(model.entityVersionHashesByName == hashes, "\(modelFolder)/\(version)")
                checked += hashes.count
            }
        }
        // SampleModel: 4 + 4 + 5 entities in three versions; SampleModel3: 1 + 2 + 2.
        #expect(checked == 18)
    }

    /// Each store against the model version its SCHEMAS.md entry names, with how many entities match.
    static let storeMatches: [(store: String, model: String, matching: Int, total: Int)] = [
        ("LoopKit__LoopKit__Model.sqlite.v1.original.sqlite", "LoopKit__LoopKit__Model/Model.xcdatamodel", 6, 6),
        ("alemar11__CoreDataPlus__SampleModel3_V1.sqlite", "alemar11__CoreDataPlus__SampleModel3/SampleModel3.xcdatamodel", 1, 1),
        ("alemar11__CoreDataPlus__SampleModel_V1.sqlite", "alemar11__CoreDataPlus__SampleModel/SampleModel.xcdatamodel", 4, 4),
        ("alemar11__CoreDataPlus__SampleModel_V2.sqlite", "alemar11__CoreDataPlus__SampleModel/SampleModel2.xcdatamodel", 4, 4),
        ("bignerdranch__CoreDataStack__TestModel.sqlite", "bignerdranch__CoreDataStack__Sample/TestModel.xcdatamodel", 2, 2),
        // The store has 5 entities; the repository's model kept only one of them unchanged.
        ("duckduckgo__iOS__AppRatingPrompt_v1__Database.sqlite", "duckduckgo__iOS__AppRatingPrompt/AppRatingPrompt.xcdatamodel", 1, 5),
        ("wireapp__wire-ios-data-model__store2-21-1.sqlite", "wireapp__wire-ios-data-model__zmessaging/zmessaging2.21.1.xcdatamodel", 15, 15),
        ("wireapp__wire-ios-data-model__store2-3.sqlite", "wireapp__wire-ios-data-model__zmessaging/zmessaging2.3.xcdatamodel", 14, 14),
        ("wireapp__wire-ios-data-model__store2-54-0.sqlite", "wireapp__wire-ios-data-model__zmessaging/zmessaging2.54.0.xcdatamodel", 18, 18),
        ("wireapp__wire-ios-data-model__store2-80-0.sqlite", "wireapp__wire-ios-data-model__zmessaging/zmessaging2.80.0.xcdatamodel", 23, 23),
    ]

    @Test func storeMetadataHashesMatchTheirModelVersion() throws {
        guard let stores = Fixtures.stores, let models = Fixtures.models else { return }
        for match in Self.storeMatches {
            let metadata = try Fixtures.storeMetadata(stores.appendingPathComponent(match.store))
            let stored = try #require(metadata["NSStoreModelVersionHashes"] as? [String: Data], "\(match.store)")
            let model = try NSManagedObjectModel(validatingContentsOf: models.appendingPathComponent(match.model))
            let computed = model.entityVersionHashesByName
            let matching = stored.filter { computed[$0.key] == $0.value }.count
            #expect(stored.count == match.total, "\(match.store): \(stored.count) entities")
            #expect(matching == match.matching, "\(match.store): \(matching) of \(stored.count) hashes match \(match.model)")
            if match.matching == match.total {
                #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
                if let digest = metadata["NSStoreModelVersionHashesDigest"] as? String {
                    #expect(model.versionHashesDigest == digest, "\(match.store) digest")
                }
            } else {
                #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
            }
        }
    }
}
