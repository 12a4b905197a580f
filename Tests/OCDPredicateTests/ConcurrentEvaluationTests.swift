import Foundation
import Synchronization
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Predicates are Sendable: one predicate evaluated from many threads at once must give the answers it
/// gives serially. Covers the shared caches (regular expressions, function and keyword tables) and the
/// Foundation calls evaluation makes (case folding, Decimal arithmetic, dates).
@Suite("Concurrent evaluation")
struct ConcurrentEvaluationTests {
    static let predicates: [NSPredicate] = [
        NSPredicate(format: "age > 30 AND name BEGINSWITH[cd] 'a'"),
        NSPredicate(format: "name MATCHES '[A-Z].*[0-9]'"),
        NSPredicate(format: "ANY tags IN %@ OR amount * 3 > %@", ["x", "z"], Decimal(string: "100.5")!),
        NSPredicate(format: "SUBQUERY(tags, $t, $t LIKE[c] 'Y*').@count > 0"),
        NSPredicate(format: "modulus:by:(amount, %@) == 1 AND born < %@", Decimal(7), Date(timeIntervalSinceReferenceDate: 5_000)),
        NSPredicate(format: "age == $AGE"),
    ]

    static func objects() -> [[String: Any]] {
        (0..<300).map { i -> [String: Any] in
            let name: String = (i % 3 == 0 ? "Ámy" : "bob") + String(i % 10)
            let tags: [String] = i % 4 == 0 ? ["x", "Yes"] : ["w"]
            let amount: Decimal = Decimal(i) + Decimal(string: "0.5")!
            let born = Date(timeIntervalSinceReferenceDate: Double(i * 40))
            return ["age": i % 60, "name": name, "tags": tags, "amount": amount, "born": born]
        }
    }

    /// The fixtures are read-only here; the box only tells the compiler so.
    struct Shared<T>: @unchecked Sendable { let value: T }

    @Test func sharedPredicatesAgreeWithSerialEvaluation() throws {
        let objects = Self.objects()
        let expected = try Self.predicates.map { predicate in
            try objects.map { try predicate.evaluateThrowing(with: $0, substitutionVariables: ["AGE": 42]) }
        }
        let shared = Shared(value: (objects, expected))
        let mismatches = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let (objects, expected) = shared.value
            var local = 0
            for round in 0..<6 {
                for (p, predicate) in Self.predicates.enumerated() {
                    for (o, object) in objects.enumerated() where (o + worker + round) % 2 == 0 {
                        let result = try? predicate.evaluateThrowing(with: object, substitutionVariables: ["AGE": 42])
                        if result != expected[p][o] { local += 1 }
                    }
                }
            }
            mismatches.withLock { $0 += local }
        }
        #expect(mismatches.withLock { $0 } == 0)
    }

    @Test func sharedSortDescriptorsAgreeWithSerialSorting() {
        let objects = Self.objects()
        let descriptors = [NSSortDescriptor(key: "name", ascending: true, selector: .localizedStandardCompare), NSSortDescriptor(key: "age", ascending: false)]
        let expected = objects.sorted(using: descriptors).map { $0["name"] as! String }
        let shared = Shared(value: objects)
        let disagreeing = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if shared.value.sorted(using: descriptors).map({ $0["name"] as! String }) != expected {
                disagreeing.withLock { $0 += 1 }
            }
        }
        #expect(disagreeing.withLock { $0 } == 0)
    }
}
