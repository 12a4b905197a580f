import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSComparisonPredicate

@Suite("Parse errors carry the offset, the expected token and a snippet")
struct ParseErrorTests {
    func parseError(_ format: String, _ arguments: Any?...) -> PredicateParseError? {
        do {
            _ = try NSPredicate(validatingFormat: format, argumentArray: arguments.map { $0 as Any })
            return nil
        } catch {
            return error as? PredicateParseError
        }
    }

    @Test func trailingTokensAreReportedWhereTheyStart() throws {
        let error = try #require(parseError("a == 1 b == 2"))
        #expect(error.offset == 7)
        #expect(error.found == "'b'")
        #expect(error.description.hasPrefix("Unable to parse the format string \"a == 1 b == 2\""))
        #expect(error.snippet == "    a == 1 b == 2\n           ^")
    }

    @Test func missingOperatorNamesWhatWasExpected() throws {
        let error = try #require(parseError("anyCol CONATINS 0"))
        #expect(error.offset == 7)
        #expect(error.expected.contains("comparison operator"))
    }

    @Test func unterminatedStringPointsAtItsOpeningQuote() throws {
        let error = try #require(parseError("name == 'abc"))
        #expect(error.offset == 8)
        #expect(error.found == "the end of the string")
    }

    @Test func offsetsCountCharactersNotBytes() throws {
        let error = try #require(parseError("name == 'é' ?"))
        #expect(error.offset == 12)
    }

    @Test func bareExpressionIsNotAPredicate() throws {
        for format in ["age", "1", "TRUE", "age * 25", "", ","] {
            #expect(parseError(format) != nil, "\(format) must not parse")
        }
    }

    @Test func notInIsExplainedAsUnsupported() throws {
        let error = try #require(parseError("season NOT IN %@", ["x"]))
        #expect(error.expected.contains("NOT (x IN y)"))
    }

    @Test func tooFewArgumentsIsAnError() throws {
        let error = try #require(parseError("a == %d AND b == %@", 1))
        #expect(error.expected.contains("%@"))
        #expect(error.offset == 17)
    }

    @Test func extraArgumentsAreIgnoredAsApplesAre() {
        #expect(parseError("%K like '%@'", "firstName", "Adam") == nil)
    }

    @Test func lowercaseKDirectiveIsRejected() {
        #expect(parseError("%k like %@", "firstName", "Adam") != nil)
    }

    @Test func numericDirectiveRejectsAString() throws {
        let error = try #require(parseError("a == %d", "x"))
        #expect(error.expected.contains("number"))
    }

    /// A decimal argument beyond Int64 for `%d` is an error, as a double beyond it is: it wrapped.
    @Test func integerDirectiveRejectsADecimalBeyondInt64() throws {
        let error = try #require(parseError("a == %d", NSDecimalNumber(string: "1e30")))
        #expect(error.expected.contains("an integer"))
        #expect(parseError("a == %d", NSDecimalNumber(string: "42")) == nil)
    }

    @Test func aPredicateArgumentForPercentAtIsRejected() throws {
        let error = try #require(parseError("a == %@", NSPredicate(value: true)))
        #expect(error.expected.contains("not an entire predicate"))
    }

    @Test func unknownFunctionUsesApplesReason() throws {
        let error = try #require(parseError("factorial(3) == 6"))
        #expect(error.found.contains("Unable to parse function name 'factorial:' into supported selector"))
    }

    @Test func wrongArgumentCountForAFunctionIsAnError() {
        #expect(parseError("add:to:(1) == 1") != nil)
    }

    @Test func subqueryNeedsADollarVariable() {
        #expect(parseError("SUBQUERY(items, x, x.price > 1).@count > 0") != nil)
    }

    @Test func unknownOptionLetterIsAnError() {
        #expect(parseError("a LIKE[x] 'b'") != nil)
        #expect(parseError("a LIKE[cd] 'b'") == nil)
    }

    @Test func fetchIsRejectedOnThisPlatform() {
        #expect(parseError("FETCH(a, b, NO) == 1") != nil)
    }

    @Test func deepNestingIsRefusedNotACrash() throws {
        let format = String(repeating: "(", count: 5000) + "a == 1" + String(repeating: ")", count: 5000)
        let error = try #require(parseError(format))
        #expect(error.expected.contains("levels of nesting"))
        let moderate = String(repeating: "(", count: 100) + "a == 1" + String(repeating: ")", count: 100)
        #expect(parseError(moderate) == nil)
    }

    @Test func expressionFormatRejectsPredicates() {
        #expect(throws: PredicateParseError.self) { try NSExpression(validatingFormat: "12.845 == 12.845") }
        #expect(throws: PredicateParseError.self) { try NSExpression(validatingFormat: "TRUEPREDICATE") }
    }

    @Test func unicodeEscapesAreUTF16UnitsAndSurrogatePairsCombine() throws {
        let pair = NSPredicate(format: #"name == "\uD83D\uDE00 \u00e9""#)
        #expect(pair.evaluate(with: ["name": "😀 é"]))
        let scalar = try #require((pair as? NSComparisonPredicate)?.rightExpression.constantValue as? String)
        #expect(scalar.unicodeScalars.map(\.value) == [0x1F600, 0x20, 0xE9])
    }

    @Test func loneSurrogatesAndSignedDigitsAreErrorsAtTheEscape() throws {
        let lone = try #require(parseError(#"name == "a\uD83D b""#))
        #expect(lone.offset == 12)
        #expect(lone.expected.contains("surrogate pair"))
        let lowFirst = try #require(parseError(#"name == "\uDE00\uD83D""#))
        #expect(lowFirst.expected.contains("surrogate pair"))
        let signed = try #require(parseError(#"name == "\u+0041""#))
        #expect(signed.offset == 11)
        #expect(signed.expected.contains("hexadecimal digits"))
        #expect(parseError(#"name == "\x+1""#) != nil)
    }
}
