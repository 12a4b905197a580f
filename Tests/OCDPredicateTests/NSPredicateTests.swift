import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSComparisonPredicate
import class OCDPredicate.NSCompoundPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate

@Suite("NSPredicate, NSComparisonPredicate, NSCompoundPredicate")
struct NSPredicateTests {
    @Test func formatReturnsTheConcreteSubclassAsApplesClassClusterDoes() {
        #expect(NSPredicate(format: "a == 1") is NSComparisonPredicate)
        #expect(NSPredicate(format: "a == 1 AND b == 2") is NSCompoundPredicate)
        #expect(NSPredicate(format: "TRUEPREDICATE") == NSPredicate(value: true))
    }

    @Test func subclassFormatInitializerRejectsAFormatOfAnotherKind() {
        #expect(throws: PredicateParseError.self) { try NSComparisonPredicate(validatingFormat: "a == 1 OR b == 2") }
        let comparison = try? NSComparisonPredicate(validatingFormat: "a == 1")
        #expect(comparison?.predicateOperatorType == .equalTo)
    }

    @Test func comparisonExposesItsParts() throws {
        let predicate = try #require(NSPredicate(format: "ANY employees.name LIKE[cd] %@", "j*") as? NSComparisonPredicate)
        #expect(predicate.comparisonPredicateModifier == .any)
        #expect(predicate.predicateOperatorType == .like)
        #expect(predicate.options == [.caseInsensitive, .diacriticInsensitive])
        #expect(predicate.leftExpression.keyPath == "employees.name")
        #expect(predicate.rightExpression.constantValue as? String == "j*")
        #expect(predicate.customSelector == nil)
    }

    @Test func noneIsNotAnyBecauseThereIsNoNoneModifier() throws {
        let predicate = try #require(NSPredicate(format: "NONE tags == 'x'") as? NSCompoundPredicate)
        #expect(predicate.compoundPredicateType == .not)
        let inner = try #require(predicate.subpredicates.first as? NSComparisonPredicate)
        #expect(inner.comparisonPredicateModifier == .any)
        #expect(predicate.predicateFormat == "NOT ANY tags == \"x\"")
    }

    @Test func customSelectorComparisonCallsTheRegisteredMethod() throws {
        let predicate = try #require(NSPredicate(format: "SELF isKindOfClass: %@", "NSNumber") as? NSComparisonPredicate)
        #expect(predicate.predicateOperatorType == .customSelector)
        #expect(predicate.customSelector == Selector("isKindOfClass:"))
        #expect(predicate.evaluate(with: 3))
        #expect(!predicate.evaluate(with: "3"))
        #expect(throws: PredicateEvaluationError.self) { try NSPredicate(format: "SELF unknownSelector: 1").evaluateThrowing(with: 1) }
        NSPredicate.registerComparisonSelector("isMultipleOf:") { lhs, rhs in
            guard let a = lhs as? Int, let b = rhs as? Int, b != 0 else { return false }
            return a % b == 0
        }
        #expect(NSPredicate(format: "SELF isMultipleOf: 3").evaluate(with: 9))
    }

    /// `isKindOfClass:` takes a class, as Apple's `%@` of `[NSNumber class]` passes it (spec §7.9), and
    /// nil is of no class.
    @Test func isKindOfClassTakesAClassObject() throws {
        let numbers = NSPredicate(format: "SELF isKindOfClass: %@", NSNumber.self)
        #expect(numbers.evaluate(with: 5))
        #expect(!numbers.evaluate(with: "5"))
        #expect(NSPredicate(format: "SELF isKindOfClass: %@", NSString.self).evaluate(with: "5"))
        #expect(!NSPredicate(format: "SELF isKindOfClass: %@", "NSObject").evaluate(with: nil))
        #expect(!NSPredicate(format: "SELF isKindOfClass: %@", "NSNull").evaluate(with: nil))
        #expect(NSPredicate(format: "SELF isKindOfClass: %@", "NSNull").evaluate(with: NSNull()))
    }

    @Test func programmaticComparisonPrintsAsItsFormat() {
        let predicate = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: "name"), rightExpression: NSExpression(forConstantValue: "a*"),
            modifier: .direct, type: .like, options: [.caseInsensitive])
        #expect(predicate.predicateFormat == "name LIKE[c] \"a*\"")
        #expect(predicate == NSPredicate(format: "name like[c] 'a*'"))
    }

    @Test func emptyAndIsTrueAndEmptyOrIsFalse() {
        let and = NSCompoundPredicate(andPredicateWithSubpredicates: [])
        let or = NSCompoundPredicate(orPredicateWithSubpredicates: [])
        #expect(and.evaluate(with: nil))
        #expect(!or.evaluate(with: nil))
        #expect(and.predicateFormat == "TRUEPREDICATE")
        #expect(or.predicateFormat == "FALSEPREDICATE")
    }

    @Test func aCompoundOfOnePrintsAsItsOnlySubpredicate() {
        let single = NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "a == 1")])
        #expect(single.predicateFormat == "a == 1")
    }

    @Test func chainsOfOneOperatorParseIntoOneCompound() throws {
        let predicate = try #require(NSPredicate(format: "a == 1 AND b == 2 AND c == 3") as? NSCompoundPredicate)
        #expect(predicate.subpredicates.count == 3)
        #expect(predicate.predicateFormat == "a == 1 AND b == 2 AND c == 3")
        #expect(predicate == NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSPredicate(format: "a == 1"), NSPredicate(format: "b == 2"), NSPredicate(format: "c == 3"),
        ]))
    }

    @Test func nestedCompoundsArePrintedInParenthesesEvenWithTheSameOperator() {
        let nested = NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "a == 1"), NSPredicate(format: "b == 2")]),
            NSPredicate(format: "c == 3"),
        ])
        #expect(nested.predicateFormat == "(a == 1 AND b == 2) AND c == 3")
        #expect(NSPredicate(format: "NOT (a == 1 OR b == 2) AND c == 3").predicateFormat == "(NOT (a == 1 OR b == 2)) AND c == 3")
    }

    @Test func compoundEvaluationShortCircuits() {
        // The right side would raise (ANY on a number) if it were evaluated.
        #expect(NSPredicate(format: "a == 1 OR ANY a == 2").evaluate(with: ["a": 1]))
        #expect(!NSPredicate(format: "a == 2 AND ANY a == 2").evaluate(with: ["a": 1]))
    }

    @Test func blockPredicateGetsTheObjectAndBindings() {
        let predicate = NSPredicate { object, bindings in
            (object as? Int ?? 0) > (bindings?["MIN"] as? Int ?? 0)
        }
        #expect(predicate.evaluate(with: 5, substitutionVariables: ["MIN": 3]))
        #expect(!predicate.evaluate(with: 2, substitutionVariables: ["MIN": 3]))
        #expect(predicate.predicateFormat.hasPrefix("BLOCKPREDICATE("))
    }

    @Test func substitutionReplacesVariablesWithConstants() {
        let template = NSPredicate(format: "lastName like[c] $LAST_NAME AND age > $AGE")
        let filled = template.withSubstitutionVariables(["LAST_NAME": "Turner", "AGE": 30])
        #expect(filled.predicateFormat == "lastName LIKE[c] \"Turner\" AND age > 30")
        #expect(type(of: filled) == NSCompoundPredicate.self)
        #expect(template.predicateFormat == "lastName LIKE[c] $LAST_NAME AND age > $AGE")
    }

    @Test func substitutingNSNullGivesANullConstant() {
        let filled = NSPredicate(format: "date = $DATE").withSubstitutionVariables(["DATE": NSNull()])
        #expect(filled.predicateFormat == "date == <null>")
        #expect(filled.evaluate(with: [String: Any]()))
    }

    @Test func substitutingAnExpressionInsertsTheExpression() {
        let filled = NSPredicate(format: "a == $X").withSubstitutionVariables(["X": NSExpression(forKeyPath: "b")])
        #expect(filled.predicateFormat == "a == b")
        #expect(filled.evaluate(with: ["a": 2, "b": 2]))
    }

    @Test func missingVariableStaysAVariableAsOnApplePlatforms() {
        let filled = NSPredicate(format: "a == $X AND b == $Y").withSubstitutionVariables(["X": 1])
        #expect(filled.predicateFormat == "a == 1 AND b == $Y")
        #expect(throws: PredicateEvaluationError.self) { try filled.evaluateThrowing(with: ["a": 1, "b": 2]) }
    }

    @Test func throwingSubstitutionNamesTheMissingVariable() {
        #expect {
            try NSPredicate(format: "a == $X AND b == $Y").withSubstitutionVariablesThrowing(["X": 1])
        } throws: { error in
            let error = error as? PredicateEvaluationError
            return error?.code == .unboundVariable && error?.message.hasPrefix("Can't get value for 'Y' in bindings") == true
        }
    }

    @Test func subqueryVariablesAreNotSubstituted() throws {
        let template = NSPredicate(format: "SUBQUERY(items, $x, $x.price > $MIN).@count > 0")
        let filled = try template.withSubstitutionVariablesThrowing(["MIN": 5])
        #expect(filled.predicateFormat == "SUBQUERY(items, $x, $x.price > 5).@count > 0")
    }

    @Test func evaluateWithBindingsDoesNotCopy() {
        let predicate = NSPredicate(format: "age > $MIN")
        #expect(predicate.evaluate(with: ["age": 40], substitutionVariables: ["MIN": 30]))
        #expect(!predicate.evaluate(with: ["age": 20], substitutionVariables: ["MIN": 30]))
    }

    @Test func unboundVariableAtEvaluationIsAnErrorWithApplesReason() {
        #expect {
            try NSPredicate(format: "a == $V").evaluateThrowing(with: ["a": 1], substitutionVariables: ["W": 2])
        } throws: { error in
            (error as? PredicateEvaluationError)?.message == "Can't get value for 'V' in bindings {W = 2}."
        }
    }

    @Test func decodedPredicatesNeedAllowEvaluation() throws {
        let predicate = NSPredicate(format: "a == 1 AND b IN {1, 2}")
        predicate.blockEvaluation()
        #expect {
            try predicate.evaluateThrowing(with: ["a": 1, "b": 1])
        } throws: { ($0 as? PredicateEvaluationError)?.code == .evaluationDisabled }
        predicate.allowEvaluation()
        #expect(try predicate.evaluateThrowing(with: ["a": 1, "b": 1]))
    }

    @Test func equalPredicatesHashAlike() {
        let a = NSPredicate(format: "name == 'x' AND age > 3")
        let b = NSPredicate(format: "name = \"x\" && age > 3")
        #expect(a == b)
        #expect(a.hash == b.hash)
        #expect(a != NSPredicate(format: "name == 'x' AND age > 4"))
        #expect(NSPredicate(format: "a == 1") != NSPredicate(format: "a == '1'"))
    }

    @Test func copyingAnImmutablePredicateReturnsItself() {
        let predicate = NSPredicate(format: "a == 1")
        #expect(predicate.copy() as AnyObject === predicate)
    }

    @Test func descriptionIsThePredicateFormat() {
        let predicate = NSPredicate(format: "this = that")
        #expect(predicate.description == "this == that")
    }
}
