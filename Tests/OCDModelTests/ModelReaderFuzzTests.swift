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
