import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate

/// The Apple-named entry points stop where Apple raises an exception, and say why as precisely as the
/// throwing twins do. Each test runs in a child process (a Swift Testing exit test) and reads its stderr.
@Suite("Apple-compatible entry points stop with a precise message")
struct TrapMessageTests {
    @Test func malformedFormatStopsWithTheParseErrorMessage() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = NSPredicate(format: "a == 1 b == 2")
        }
        let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(stderr.contains(#"Unable to parse the format string "a == 1 b == 2": expected the end of the format"#))
        #expect(stderr.contains("at offset 7"))
    }

    @Test func evaluationErrorStopsWithApplesReason() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = NSPredicate(format: "ANY age > 5").evaluate(with: ["age": 7])
        }
        let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("The left hand side for an ALL or ANY operator must be either an NSArray or an NSSet."))
    }

    @Test func unknownFunctionStopsWithApplesReason() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = NSExpression(forFunction: "factorial:", arguments: [3])
        }
        let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("Unable to parse function name 'factorial:' into supported selector"))
    }
}
