import CDToolKit
import Foundation
import Testing

@Suite("JSON conventions of the predicate corpus")
struct JSONValueTests {
    @Test func numbersKeepIntegerOrDoubleAsWritten() throws {
        #expect(try JSONValue.parse("1") == .integer(1))
        #expect(try JSONValue.parse("1.0") == .double(1))
        #expect(try JSONValue.parse("-2e3") == .double(-2000))
        #expect(try PredicateJSON.value(.integer(1)) as? Int == 1)
    }

    @Test func specialObjectsBecomeFoundationValues() throws {
        #expect(try PredicateJSON.value(JSONValue.parse(#"{"$date": 5}"#)) as? Date == Date(timeIntervalSinceReferenceDate: 5))
        #expect(try PredicateJSON.value(JSONValue.parse(#"{"$decimal": "1.50"}"#)) as? Decimal == Decimal(string: "1.5"))
        #expect(try PredicateJSON.value(JSONValue.parse(#"{"$nil": true}"#)) == nil)
        #expect(try PredicateJSON.value(JSONValue.parse("null")) is NSNull)
        #expect((try PredicateJSON.value(JSONValue.parse(#"{"$set": [1, 2, 2]}"#)) as? Set<AnyHashable>)?.count == 2)
        #expect((try PredicateJSON.value(JSONValue.parse(#"{"$set": [{"$decimal": "5"}, 5.5]}"#)) as? Set<AnyHashable>)?.count == 2)
        #expect(throws: PredicateJSON.ConventionError.self) { try PredicateJSON.value(JSONValue.parse(#"{"$set": [[1]]}"#)) }
        #expect(throws: PredicateJSON.ConventionError.self) { try PredicateJSON.value(JSONValue.parse(#"{"$expr": "a"}"#)) }
    }

    /// The special objects are read strictly: `Decimal(string:)` alone reads "1.5abc" as 1.5, and `$nil`
    /// took any value.
    @Test func specialObjectsAreStrict() throws {
        for text in [#""1.5abc""#, #"" 2""#, #""1.2.3""#, #""1e""#, #""-""#, #"".5""#, "1.5"] {
            #expect(throws: PredicateJSON.ConventionError.self, "\(text)") { try PredicateJSON.value(JSONValue.parse(#"{"$decimal": "# + text + "}")) }
        }
        #expect(try PredicateJSON.value(JSONValue.parse(#"{"$decimal": "-12.5e2"}"#)) as? Decimal == Decimal(-1250))
        #expect(throws: PredicateJSON.ConventionError.self) { try PredicateJSON.value(JSONValue.parse(#"{"$nil": false}"#)) }
        #expect(throws: PredicateJSON.ConventionError.self) { try PredicateJSON.value(JSONValue.parse(#"{"$nil": 0}"#)) }
        #expect(throws: PredicateJSON.ConventionError.self) {
            try PredicateJSON.evaluationInput(JSONValue.parse(#"{"$object": {}, "$binding": {"a": 1}}"#))
        }
        #expect(CDTool.run(["predicate", "evaluate", "x == 1.5", "--object", #"{"x": {"$decimal": "1.5xyz"}}"#]).status == 1)
    }

    /// A high surrogate not followed by a low one, or a `\u` without four hex digits, is a parse error
    /// (the first once trapped on an overflow).
    @Test func badUnicodeEscapesAreParseErrors() throws {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#""\ud800\u0041""#) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#""\ud800\ue000""#) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#""\u+041""#) }
        #expect(try JSONValue.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(CDTool.run(["predicate", "evaluate", "x == 1", "--object", #""\ud800\u0041""#]).status == 1)
    }

    @Test func malformedJSONReportsWhere() {
        #expect { try JSONValue.parse("{a: 1}") } throws: { ($0 as? JSONParseError)?.offset == 1 }
        #expect(throws: JSONParseError.self) { try JSONValue.parse("[1, 2") }
        #expect(throws: JSONParseError.self) { try JSONValue.parse("1 2") }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(String(repeating: "[", count: 1000)) }
    }

    /// RFC 8259's number grammar, as `JSONSerialization` reads it: no leading zeros, no bare point, no
    /// plus sign, digits after a point and in an exponent, nothing that overflows a double. The error
    /// points at the first byte that breaks the grammar.
    @Test func numbersFollowTheJSONGrammar() throws {
        for (text, offset) in [("01", 1), ("-01", 2), (".5", 0), ("1.", 2), ("1.e3", 2), ("+1", 0), ("-", 1), ("1e", 2),
                               ("1e+", 3), ("[1, 00]", 5), ("1e999", 0), ("-1e999", 0), ("--1", 1)] {
            #expect { try JSONValue.parse(text) } throws: { ($0 as? JSONParseError)?.offset == offset }
        }
        #expect(try JSONValue.parse("0") == .integer(0))
        #expect(try JSONValue.parse("-0") == .integer(0))
        #expect(try JSONValue.parse("0.5") == .double(0.5))
        #expect(try JSONValue.parse("-0.5e-2") == .double(-0.005))
        #expect(try JSONValue.parse("1E+2") == .double(100))
        #expect(try JSONValue.parse("[10, 0]") == .array([.integer(10), .integer(0)]))
        // Beyond Int64 an integer is read as a double, as JSONSerialization's NSNumber holds it.
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
    }

    /// Only JSON's escapes are taken, and control characters must be escaped.
    @Test func stringsFollowTheJSONGrammar() throws {
        #expect(try JSONValue.parse(#""a\"b\\c\/d\te""#) == .string("a\"b\\c/d\te"))
        #expect { try JSONValue.parse(#""a\x""#) } throws: { ($0 as? JSONParseError)?.offset == 3 }
        #expect { try JSONValue.parse(#""a\'""#) } throws: { ($0 as? JSONParseError)?.offset == 3 }
        #expect { try JSONValue.parse("\"a\tb\"") } throws: { ($0 as? JSONParseError)?.offset == 2 }
        #expect { try JSONValue.parse("\"a\nb\"") } throws: { ($0 as? JSONParseError)?.offset == 2 }
        #expect(CDTool.run(["predicate", "evaluate", "x == 1", "--object", #"{"x": 01}"#]).status == 1)
    }

    @Test func unicodeEscapesDecode() throws {
        #expect(try JSONValue.parse(#""\u00e9\ud83d\ude42""#) == .string("é🙂"))
    }
}
