import Foundation
import OCDTestSupport
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSPredicate

/// Random and mutated format strings: the parser must answer every one with a predicate or a
/// `PredicateParseError`, never crash or hang, and whatever parses must print to a format that parses back
/// to an equal predicate.
@Suite("Parser fuzzing")
struct ParserFuzzTests {
    static let seeds: [String] = {
        var formats = SharedSpec.predicateCases().map(\.format)
        formats += [
            "a == 1 AND (b < 2 OR NOT c BEGINSWITH[cd] 'x')", "ANY items.price BETWEEN {1, 5}",
            "SUBQUERY(a, $x, $x.b == TERNARY(c > 1, 'y', \"z\")).@count > 0", "x[FIRST] + 2 ** -3 * (y - 1) != {1, 2}[SIZE]",
            "$v := 3 == 3", "FUNCTION(a, 'b:', 1, 2) == 1", "a UNION b INTERSECT c == {}", "sum:(x) == add:to:(1, 2)",
        ]
        return formats
    }()

    static let fragments = [
        "(", ")", "[", "]", "{", "}", ",", ".", "'", "\"", "\\", "$", "#", "@", "%", "%@", "%K", "%d", "==", "=", "<",
        "<=", ">", "!=", "<>", "!", "&&", "||", "+", "-", "*", "/", "**", ":=", ":", "AND", "OR", "NOT", "ANY", "ALL",
        "NONE", "SOME", "IN", "LIKE", "[cd]", "MATCHES", "BETWEEN", "SUBQUERY", "TERNARY", "FUNCTION", "CAST", "SELF",
        "nil", "TRUEPREDICATE", "FIRST", "SIZE", "a", "b.c", "@count", "1", "2.5", "0x1F", "1e-3", "'s'", "$x", " ",
        "é", "🙂", "\u{0}", "\n", "\t", "UTI-CONFORMS-TO", "sum:", "(", "((((",
    ]

    static func check(_ format: String) {
        let arguments: [Any] = ["k", 1, 2.5, "s", [1, 2], "x"]
        do {
            let predicate = try NSPredicate(validatingFormat: format, argumentArray: arguments)
            let printed = predicate.predicateFormat
            guard !printed.contains("$single"), !printed.contains("\u{0}") else { return }
            // Keys from %K are not re-tokenised, so a printed key can be any text; only real key names round-trip.
            if let reparsed = try? NSPredicate(validatingFormat: printed) {
                #expect(reparsed == predicate, "\(format) printed \(printed), which parses to \(reparsed.predicateFormat)")
            } else if !format.contains("%K") {
                Issue.record("\(format) printed \(printed), which does not parse")
            }
        } catch is PredicateParseError {
        } catch {
            Issue.record("\(format) threw \(error), not a PredicateParseError")
        }
    }

    @Test func randomFragmentSequencesNeverCrash() {
        var random = SplitMix64(seed: 0x5EED)
        for _ in 0..<4000 {
            let count = Int.random(in: 1...14, using: &random)
            let format = (0..<count).map { _ in Self.fragments.randomElement(using: &random)! }.joined(separator: Bool.random(using: &random) ? " " : "")
            Self.check(format)
        }
    }

    @Test func mutatedValidFormatsNeverCrash() {
        var random = SplitMix64(seed: 0xC0FFEE)
        for _ in 0..<4000 {
            var characters = Array(Self.seeds.randomElement(using: &random)!)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = characters.isEmpty ? 0 : Int.random(in: 0..<characters.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0 where !characters.isEmpty: characters.remove(at: position)
                case 1: characters.insert(contentsOf: Self.fragments.randomElement(using: &random)!, at: position)
                default: if !characters.isEmpty { characters[position] = Character(UnicodeScalar(UInt8.random(in: 32...126, using: &random))) }
                }
            }
            Self.check(String(characters))
        }
    }

    @Test func randomBytesNeverCrash() {
        var random = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            Self.check(String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test func pathologicalInputsFinish() {
        for format in [
            String(repeating: "(", count: 300), String(repeating: "NOT ", count: 300) + "a == 1",
            String(repeating: "-", count: 300) + "1 == 1", String(repeating: "a.", count: 2000) + "b == 1",
            String(repeating: "{", count: 300), "a == " + String(repeating: "1 + ", count: 3000) + "1",
            String(repeating: "(TERNARY(", count: 60) + "a",
            "SELF LIKE '" + String(repeating: "*a", count: 200) + "b'",
        ] {
            Self.check(format)
        }
        #expect(!NSPredicate(format: "SELF LIKE '" + String(repeating: "*a", count: 50) + "b'").evaluate(with: String(repeating: "a", count: 500)))
    }

    /// The deepest trees the parser accepts must still print, compare and evaluate without exhausting a
    /// thread's stack (the parser's depth limit exists for exactly this).
    @Test func deepestAcceptedTreesPrintCompareAndEvaluate() throws {
        let shapes: [(Int) -> String] = [
            { "a == " + String(repeating: "1 + ", count: $0) + "1" },
            { String(repeating: "NOT ", count: $0) + "a == 1" },
            { "a == " + String(repeating: "(", count: $0) + "1" + String(repeating: ")", count: $0) },
            { "a == " + String(repeating: "TERNARY(a == 1, ", count: $0 / 2) + "1" + String(repeating: ", 2)", count: $0 / 2) },
            { "a == " + String(repeating: "{", count: $0) + String(repeating: "}", count: $0) + "[SIZE]" },
        ]
        for shape in shapes {
            var size = 400
            var accepted: NSPredicate?
            while accepted == nil, size > 0 {
                accepted = try? NSPredicate(validatingFormat: shape(size))
                size -= 10
            }
            let predicate = try #require(accepted, "no size of \(shape(3)) parses")
            let reparsed = try NSPredicate(validatingFormat: predicate.predicateFormat)
            #expect(reparsed == predicate)
            _ = try? predicate.evaluateThrowing(with: ["a": 1])
        }
    }
}
