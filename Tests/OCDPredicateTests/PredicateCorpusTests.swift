import CDToolKit
import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSExpression

/// Every row of ../shared/spec/predicate-cases.tsv: parse, print, evaluate, or fail as the row says.
///
/// Rows marked verified were observed on Apple's Foundation; the others are claims of compatible
/// implementations, followed unless Apple's documentation says otherwise. `deliberateDifferences` lists the
/// rows we differ from on purpose, each with the reason; they are checked to still differ, so the list
/// cannot go stale.
@Suite("Predicate corpus (spec/predicate-cases.tsv)")
struct PredicateCorpusTests {
    static let cases = SharedSpec.predicateCases()

    /// Rows whose expectation we deliberately do not follow, and why.
    static let deliberateDifferences: [String: String] = [:]

    @Test("Each corpus row behaves as specified", arguments: cases)
    func corpusRow(_ row: SharedSpec.PredicateCase) throws {
        if let reason = Self.deliberateDifferences[row.id] {
            #expect(throws: (any Error).self, "row \(row.id) is listed as a deliberate difference (\(reason)) but now passes; remove it from the list") {
                try Self.check(row)
            }
            return
        }
        try Self.check(row)
    }

    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    static func check(_ row: SharedSpec.PredicateCase) throws {
        let arguments = try PredicateJSON.arguments(row.arguments.isEmpty ? "[]" : row.arguments)
        let parseOnlyFailure = row.expectedResult == "error" && row.object.isEmpty
        let predicate: NSPredicate
        do {
            predicate = try NSPredicate(validatingFormat: row.format, argumentArray: arguments)
        } catch let error as PredicateParseError {
            if parseOnlyFailure { return }
            throw Mismatch(description: "\(row.id): unexpected parse error: \(error)")
        }
        if parseOnlyFailure {
            throw Mismatch(description: "\(row.id): parsed as \(predicate.predicateFormat) but must be a parse error")
        }

        var evaluated = predicate
        var input: PredicateJSON.EvaluationInput?
        if !row.object.isEmpty {
            input = try PredicateJSON.evaluationInput(JSONValue.parse(row.object))
            if let substitute = input?.substitute {
                evaluated = try predicate.withSubstitutionVariablesThrowing(substitute)
            }
        }
        if !row.expectedFormat.isEmpty, evaluated.predicateFormat != row.expectedFormat {
            throw Mismatch(description: "\(row.id): printed \(evaluated.predicateFormat) but Apple prints \(row.expectedFormat)")
        }
        // Printing must round-trip: the canonical form parses back to an equal predicate.
        if let reparsed = try? NSPredicate(validatingFormat: evaluated.predicateFormat), reparsed != evaluated, Self.roundTrips(evaluated) {
            throw Mismatch(description: "\(row.id): \(evaluated.predicateFormat) parses back to a different predicate")
        }
        guard let input else { return }
        let outcome: String
        do {
            outcome = try evaluated.evaluateThrowing(with: input.object, substitutionVariables: input.bindings) ? "true" : "false"
        } catch let error as PredicateEvaluationError {
            outcome = "error"
            if row.expectedResult != "error" {
                throw Mismatch(description: "\(row.id): evaluation failed: \(error)")
            }
        }
        if outcome != row.expectedResult {
            throw Mismatch(description: "\(row.id): evaluated to \(outcome), expected \(row.expectedResult)")
        }
    }

    /// Printing loses what cannot be written back: a key that is not an identifier (`%K` with "$single").
    static func roundTrips(_ predicate: NSPredicate) -> Bool {
        !predicate.predicateFormat.contains("$single")
    }

    @Test func corpusIsPresentOrSkippedWithAReason() {
        if Self.cases.isEmpty {
            print("note: corpus rows skipped: ../shared is not beside the project")
        } else {
            #expect(Self.cases.count > 300)
            #expect(Self.cases.contains { $0.verified })
        }
    }
}
