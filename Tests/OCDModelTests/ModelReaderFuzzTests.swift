import Foundation
import OCDTestSupport
import Testing
@testable import OCDModel

/// Mutated and truncated real model files: the reader must return a model or a `ModelLoadError`, never
/// crash (a model file is input a user may not control).
@Suite("Model reader fuzzing")
struct ModelReaderFuzzTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    @Test func mutatedFixtureModelsLoadOrFailCleanly() throws {
        let sources = Fixtures.modelVersionFolders()
            .map { $0.appendingPathComponent("contents") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
            .prefix(40)
        guard !sources.isEmpty else { return }
        let snippets = ["<entity name=\"A\">", "</entity>", "parentEntity=\"A\"", "attributeType=\"Bogus\"", "<", "\"", "&",
                        "toMany=\"YES\"", "maxCount=\"-1\"", "predicateString=\"a ==\"", "derived=\"YES\"", "composite=\"X\""]
        var random = Generator(state: 7)
        var loaded = 0, refused = 0
        for source in sources {
            let original = Array(try Data(contentsOf: source))
            for _ in 0..<12 {
                var bytes = original
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
                case 1:
                    let at = Int.random(in: 0...bytes.count, using: &random)
                    bytes.insert(contentsOf: Array(snippets.randomElement(using: &random)!.utf8), at: at)
                default:
                    for _ in 0..<4 where !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 32...126, using: &random) }
                }
                let folder = try temporaryModel(String(decoding: bytes, as: UTF8.self))
                do {
                    _ = try NSManagedObjectModel(validatingContentsOf: folder)
                    loaded += 1
                } catch is ModelLoadError {
                    refused += 1
                }
            }
        }
        #expect(loaded + refused == sources.count * 12)
        #expect(refused > 0)
    }
}

/// Damaged compiled models: ours (`.ocdmodel`) and Apple's (`.mom`) must load or fail with a
/// `ModelLoadError`, never crash.
@Suite("Compiled model fuzzing")
struct CompiledModelFuzzTests {
    func loadOrFail(_ data: Data, extension pathExtension: String) throws -> Bool {
        let file = ScratchFiles.path("Model.\(pathExtension)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            _ = try NSManagedObjectModel(validatingContentsOf: file)
            return true
        } catch is ModelLoadError {
            return false
        }
    }

    @Test func damagedOCDModelFilesLoadOrFailCleanly() throws {
        guard let models = Fixtures.models else { return }
        let momd = ScratchFiles.path("M.momd")
        try NSManagedObjectModel.compileModel(at: models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel/SampleModel.xcdatamodel"), to: momd)
        let original = Array(try Data(contentsOf: momd.appendingPathComponent("SampleModel.ocdmodel")))
        #expect(try loadOrFail(Data(original), extension: "ocdmodel"))
        var random = ModelReaderFuzzTests.Generator(state: 11)
        var refused = 0
        for round in 0..<400 {
            var bytes = original
            if round % 4 == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            } else {
                for _ in 0..<(1 + round % 3) { bytes[Int.random(in: 5..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            }
            if try !loadOrFail(Data(bytes), extension: "ocdmodel") { refused += 1 }
        }
        #expect(refused > 100)
    }

    @Test func damagedAppleMomFilesLoadOrFailCleanly() throws {
        guard let stores = Fixtures.stores else { return }
        let mom = stores.appendingPathComponent("compiled-models/alemar11__CoreDataPlus/SampleModel/Fixtures/SampleModel.momd/SampleModel.mom")
        let plist = try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: mom), format: nil) as? [String: Any])
        // Structural damage: swap object slots, drop keys, retype values, then write the archive back.
        var random = ModelReaderFuzzTests.Generator(state: 5)
        var loaded = 0
        for _ in 0..<150 {
            var objects = plist["$objects"] as! [Any]
            for _ in 0..<3 {
                let i = Int.random(in: 1..<objects.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    objects.swapAt(i, Int.random(in: 1..<objects.count, using: &random))
                case 1:
                    if var dictionary = objects[i] as? [String: Any], let key = dictionary.keys.randomElement(using: &random) {
                        dictionary.removeValue(forKey: key)
                        objects[i] = dictionary
                    }
                default:
                    objects[i] = ["Person", 42, true, "$null", Data([1, 2])].randomElement(using: &random)!
                }
            }
            var damaged = plist
            damaged["$objects"] = objects
            guard let data = try? PropertyListSerialization.data(fromPropertyList: damaged, format: .binary, options: 0) else { continue }
            if try loadOrFail(data, extension: "mom") { loaded += 1 }
        }
        #expect(loaded < 150)
    }

    @Test func inheritanceCyclesAndDuplicateNamesInArchivesAreErrors() throws {
        let b = ArchiveBuilder()
        let entityA = b.reference(1); b.objects.append("a")
        let entityB = b.reference(2); b.objects.append("b")
        for (index, name, parent) in [(1, "A", entityB), (2, "B", entityA)] {
            b.objects[index] = ["$class": b.classReference("NSEntityDescription", []), "NSEntityName": b.string(name),
                                "NSSuperentity": parent, "NSProperties": b.dictionary([]), "NSSubentities": b.dictionary([])] as [String: Any]
        }
        let cyclic = b.object("NSManagedObjectModel", ["NSEntities": b.dictionary([("A", entityA), ("B", entityB)])])
        #expect { try NSManagedObjectModel(validatingContentsOf: self.write(b.data(root: cyclic))) } throws: {
            ($0 as? ModelLoadError)?.problem.contains("inherits from itself") == true
        }
        let d = ArchiveBuilder()
        let twin = { d.object("NSEntityDescription", ["NSEntityName": d.string("Same"), "NSProperties": d.dictionary([])]) }
        let duplicate = d.object("NSManagedObjectModel", ["NSEntities": d.dictionary([("One", twin()), ("Two", twin())])])
        #expect { try NSManagedObjectModel(validatingContentsOf: self.write(d.data(root: duplicate))) } throws: {
            ($0 as? ModelLoadError)?.problem.contains("a second entity named 'Same'") == true
        }
    }

    func write(_ data: Data) throws -> URL {
        let file = ScratchFiles.path("Model.mom")
        try data.write(to: file)
        return file
    }
}
