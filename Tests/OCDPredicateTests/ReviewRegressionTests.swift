import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Behaviours outside the corpus that a review found wrong; each test failed before its fix.
@Suite("Review regressions")
struct ReviewRegressionTests {
    func holds(_ format: String, _ object: Any?, _ arguments: Any?...) throws -> Bool {
        try NSPredicate(validatingFormat: format, argumentArray: arguments.map { $0 as Any }).evaluateThrowing(with: object)
    }

    func roundTrips(_ format: String) throws -> Bool {
        let predicate = try NSPredicate(validatingFormat: format)
        return try NSPredicate(validatingFormat: predicate.predicateFormat) == predicate
    }

    /// A parsed `FUNCTION(x, 'valueForKey:', key)` calls key-value coding, as the message does on Apple
    /// platforms (it failed: no method registered), and prints as it was written.
    @Test func functionValueForKeyReadsTheKey() throws {
        #expect(try holds("FUNCTION(SELF, 'valueForKey:', 'name') == 'x'", ["name": "x"]))
        #expect(try holds("FUNCTION(SELF, 'valueForKeyPath:', 'a.b') == 'x'", ["a": ["b": "x"]]))
        #expect(try !holds("FUNCTION(SELF, 'valueForKey:', 'name') == 'y'", ["name": "x"]))
        #expect(try roundTrips("FUNCTION(SELF, 'valueForKey:', 'name') == 'x'"))
    }

    @Test func infiniteDoublesBecomingDecimalsDoNotTrap() throws {
        #expect(try !holds("CAST(1e999, 'NSDecimalNumber') == 1", nil))
        #expect(try !holds("average:({%@, 1e999}) == 1", nil, Decimal(1)))
        #expect(try !holds("CAST(a / b, 'NSDecimalNumber') == 1", ["a": 1.0, "b": 0]))
    }

    @Test func nestedSetOperationsKeepTheirGrouping() throws {
        let predicate = NSPredicate(format: "a UNION (b INTERSECT c) == x")
        #expect(predicate.predicateFormat == "a UNION (b INTERSECT c) == x")
        #expect(try roundTrips("a UNION (b INTERSECT c) == x"))
        #expect(NSPredicate(format: "(a UNION b) INTERSECT c == x").predicateFormat == "a UNION b INTERSECT c == x")
    }

    @Test func compositionsAndNegativeOperandsKeepTheirParentheses() throws {
        #expect(NSPredicate(format: "a.(b + c) == 1").predicateFormat == "a.(b + c) == 1")
        #expect(try roundTrips("a.(b + c) == 1"))
        #expect(NSPredicate(format: "(-5).foo == 1").predicateFormat == "(-5).foo == 1")
        #expect(try roundTrips("(-5).foo == 1"))
        #expect(try roundTrips("a.d[0] == 1"))
    }

    @Test func stringsOrderByUTF16CodeUnits() throws {
        #expect(try !holds("a > %@", ["a": "😀"], "\u{FF61}"))
        #expect(try holds("a < %@", ["a": "😀"], "\u{FF61}"))
        #expect(Comparison.codeUnitOrder("ab", "abc") == .orderedAscending)
    }

    @Test func equalityWithoutOptionsIsLiteral() throws {
        #expect(try !holds("a == %@", ["a": "e\u{301}"], "\u{E9}"))
        #expect(try holds("a ==[d] %@", ["a": "e"], "\u{E9}"))
    }

    @Test func matchesAcceptsPatternsThatCannotBeWrapped() throws {
        #expect(try holds(#"a MATCHES "\\Qabc""#, ["a": "abc"]))
        #expect(try holds("a MATCHES '(?x)abc # comment'", ["a": "abc"]))
        #expect(try !holds(#"a MATCHES "\\Qab""#, ["a": "abc"]))
    }

    @Test func integralNumbersOfAnyKindIndexArrays() throws {
        #expect(try holds("a[1.0] == 2", ["a": [1, 2]]))
        #expect(try holds("a[%@] == 2", ["a": [1, 2]], Decimal(1)))
        #expect(throws: PredicateEvaluationError.self) { try holds("a[0.5] == 2", ["a": [1, 2]]) }
    }

    @Test func decimalModulusWorksBeyondInt64Quotients() throws {
        // The quotient (1.4e29) overflows Int64 but fits Decimal's 38 digits.
        let remainder = try NSExpression(format: "modulus:by:(%@, %@)", Decimal(string: "1e30")!, Decimal(7)).expressionValueThrowing(with: nil)
        #expect(remainder as? Decimal == 1)
        let negative = try NSExpression(format: "modulus:by:(%@, %@)", Decimal(-7), Decimal(2)).expressionValueThrowing(with: nil)
        #expect(negative as? Decimal == -1)
    }

    @Test func keywordsMatchOnlyASCIILetters() {
        #expect(NSPredicate(format: "ſelf == 1").predicateFormat == "ſelf == 1")
        #expect(NSPredicate(format: "sElF == 1").predicateFormat == "SELF == 1")
    }

    @Test func reservedIteratorVariablesPrintEscaped() throws {
        let predicate = NSPredicate(format: "SUBQUERY(a, $#in, $#in > 1).@count > 0")
        #expect(predicate.predicateFormat == "SUBQUERY(a, $#in, $#in > 1).@count > 0")
        #expect(try roundTrips(predicate.predicateFormat))
    }

    @Test func sortKeysAreReadOncePerElement() {
        final class Counting: PredicateKeyValueCoding, @unchecked Sendable {
            nonisolated(unsafe) static var reads = 0
            let v: Int
            init(_ v: Int) { self.v = v }
            func predicateValue(forKey key: String) throws -> Any? {
                Counting.reads += 1
                return v
            }
        }
        let objects = (0..<64).map { Counting((($0 * 37) % 64)) }
        Counting.reads = 0
        let sorted = objects.sorted(using: [NSSortDescriptor(key: "v", ascending: true)])
        #expect(sorted.map(\.v) == Array(0..<64))
        #expect(Counting.reads == 64)
    }

    @Test func bindingsAreReadOnlyWhenUsed() throws {
        final class Exploding: @unchecked Sendable {}
        // An unused binding is never converted; a used one is.
        #expect(try NSPredicate(format: "$A == 1").evaluateThrowing(with: nil, substitutionVariables: ["A": 1, "B": Exploding()]))
    }
}
