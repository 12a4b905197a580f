import Foundation

/// Locates `../shared` (beside the project root) for tests that read the spec corpus and fixtures; they skip
/// with a printed reason when it is absent (a user's clone).
enum SharedSpec {
    static let directory: URL? = {
        var url = URL(fileURLWithPath: #filePath)
        while url.pathComponents.count > 1 {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                let shared = url.deletingLastPathComponent().appendingPathComponent("shared")
                return FileManager.default.fileExists(atPath: shared.path) ? shared : nil
            }
        }
        return nil
    }()

    /// One row of `spec/predicate-cases.tsv`.
    struct PredicateCase: CustomTestStringConvertible, Sendable {
        let id, format, arguments, expectedFormat, object, expectedResult, source: String
        let verified: Bool
        var testDescription: String { "\(id): \(format)" }
    }

    static func predicateCases() -> [PredicateCase] {
        guard let url = directory?.appendingPathComponent("spec/predicate-cases.tsv"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            print("note: ../shared/spec/predicate-cases.tsv is absent; the corpus tests are skipped")
            return []
        }
        return text.split(separator: "\n", omittingEmptySubsequences: true).dropFirst().map { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return PredicateCase(id: f[0], format: f[1], arguments: f[2], expectedFormat: f[3], object: f[4],
                                 expectedResult: f[5], source: f[6], verified: f[7] == "yes")
        }
    }
}

import Testing
