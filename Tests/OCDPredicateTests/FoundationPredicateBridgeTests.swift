import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSPredicate

struct BridgeBook: KeyPathNaming, PredicateKeyValueCoding {
    var title: String
    var pages: Int
    var tags: [String]
    var subtitle: String?

    static func keyName(for keyPath: AnyKeyPath) -> String? {
        [\BridgeBook.title: "title", \BridgeBook.pages: "pages", \BridgeBook.tags: "tags", \BridgeBook.subtitle: "subtitle"][keyPath]
    }

    func predicateValue(forKey key: String) throws -> Any? {
        switch key {
        case "title": return title
        case "pages": return pages
        case "tags": return tags
        case "subtitle": return subtitle
        default: throw PredicateEvaluationError.unknownKey(key, in: self)
        }
    }
}

struct BridgeUnnamed { var x: Int }

struct BridgeLimits: Codable, Sendable { var minimumPages: Int; var words: [String] }

@Suite("Foundation.Predicate (#Predicate) converts to NSPredicate")
struct FoundationPredicateBridgeTests {
    let books = [
        BridgeBook(title: "Swift", pages: 300, tags: ["code"], subtitle: nil),
        BridgeBook(title: "Core Data", pages: 150, tags: ["code", "data"], subtitle: "Objects"),
        BridgeBook(title: "Poems", pages: 80, tags: [], subtitle: "Verse"),
    ]

    /// The converted predicate must select exactly what the Swift predicate selects.
    func agrees(_ predicate: Predicate<BridgeBook>) throws -> NSPredicate {
        let converted = try NSPredicate(converting: predicate)
        for book in books {
            #expect(try converted.evaluateThrowing(with: book) == predicate.evaluate(book), "\(converted) on \(book.title)")
        }
        return converted
    }

    @Test func comparisonsAndConjunctions() throws {
        let converted = try agrees(#Predicate<BridgeBook> { $0.pages > 100 && $0.title != "Swift" })
        #expect(converted.predicateFormat == #"pages > 100 AND title != "Swift""#)
    }

    @Test func chainsFlattenIntoOneCompound() throws {
        let converted = try agrees(#Predicate<BridgeBook> { $0.pages > 1 || $0.pages < 0 || $0.title == "x" })
        #expect(converted.predicateFormat == #"pages > 1 OR pages < 0 OR title == "x""#)
    }

    @Test func negationAndArithmetic() throws {
        let converted = try agrees(#Predicate<BridgeBook> { !($0.pages * 2 >= 300) })
        #expect(converted.predicateFormat == "NOT pages * 2 >= 300")
    }

    @Test func stringContainsAndSequenceContains() throws {
        #expect(try agrees(#Predicate<BridgeBook> { $0.title.contains("o") }).predicateFormat == #"title CONTAINS "o""#)
        #expect(try agrees(#Predicate<BridgeBook> { $0.tags.contains("data") }).predicateFormat == #""data" IN tags"#)
        #expect(try agrees(#Predicate<BridgeBook> { $0.title.starts(with: "Co") }).predicateFormat == #"title BEGINSWITH "Co""#)
    }

    @Test func containsWhereAndAllSatisfyBecomeSubqueries() throws {
        let any = try agrees(#Predicate<BridgeBook> { $0.tags.contains { $0 == "code" } })
        #expect(any.predicateFormat == #"SUBQUERY(tags, $_local_1, $_local_1 == "code").@count > 0"#)
        let all = try agrees(#Predicate<BridgeBook> { $0.tags.allSatisfy { $0 == "code" } })
        #expect(all.predicateFormat == #"SUBQUERY(tags, $_local_1, NOT $_local_1 == "code").@count == 0"#)
    }

    @Test func countsBecomeLengthAndAtCount() throws {
        #expect(try agrees(#Predicate<BridgeBook> { $0.title.count > 4 }).predicateFormat == "title.length > 4")
        #expect(try agrees(#Predicate<BridgeBook> { $0.tags.count == 0 }).predicateFormat == "tags.@count == 0")
    }

    @Test func optionalsCompareWithNilAndCoalesce() throws {
        #expect(try agrees(#Predicate<BridgeBook> { $0.subtitle == nil }).predicateFormat == "subtitle == nil")
        _ = try agrees(#Predicate<BridgeBook> { ($0.subtitle ?? "") == "Verse" })
        _ = try agrees(#Predicate<BridgeBook> { $0.subtitle.flatMap { $0.count > 5 } == true })
        // A transform that is not a key path keeps nil for nil (Apple's `TERNARY(x != nil, …, nil)`): a
        // comparison or arithmetic of nil gave a value or failed.
        _ = try agrees(#Predicate<BridgeBook> { $0.subtitle.flatMap { $0.count > 5 } ?? true })
        _ = try agrees(#Predicate<BridgeBook> { $0.subtitle.flatMap { $0.count > 5 } == nil })
        _ = try agrees(#Predicate<BridgeBook> { ($0.subtitle.flatMap { $0.count * 2 } ?? -1) > 5 })
    }

    @Test func dictionaryInputsUseSubscriptKeysAsKeyPaths() throws {
        let predicate = #Predicate<[String: Int]> { ($0["a"] ?? 0) > 1 }
        let converted = try NSPredicate(converting: predicate)
        #expect(converted.predicateFormat == "TERNARY(a != nil, a, 0) > 1")
        #expect(converted.evaluate(with: ["a": 2]))
        #expect(!converted.evaluate(with: ["b": 2]))
    }

    @Test func explicitNameTablesNameKeyPaths() throws {
        let predicate = #Predicate<BridgeUnnamed> { $0.x == 3 }
        #expect(NSPredicate(predicate) == nil)
        let converted = try NSPredicate(converting: predicate, keyNames: [\BridgeUnnamed.x: "x"])
        #expect(converted.predicateFormat == "x == 3")
    }

    @Test func unnamedKeyPathsExplainWhatIsMissing() {
        #expect {
            try NSPredicate(converting: #Predicate<BridgeUnnamed> { $0.x == 3 })
        } throws: { error in
            (error as? PredicateConversionError)?.reason.contains("no name") == true
        }
    }

    @Test func isEmptyFirstAndLastConvertAsApplesConversionWritesThem() throws {
        #expect(try agrees(#Predicate<BridgeBook> { $0.title.isEmpty || $0.tags.isEmpty }).predicateFormat
            == "title.length == 0 OR tags.@count == 0")
        #expect(try agrees(#Predicate<BridgeBook> { !$0.tags.isEmpty }).predicateFormat == "NOT tags.@count == 0")
        #expect(try agrees(#Predicate<BridgeBook> { $0.tags.first == "code" }).predicateFormat == #"tags[FIRST] == "code""#)
        #expect(try agrees(#Predicate<BridgeBook> { $0.tags.last == "data" }).predicateFormat == #"tags[LAST] == "data""#)
    }

    @Test func filterBecomesASubqueryExpression() throws {
        let converted = try agrees(#Predicate<BridgeBook> { $0.tags.filter { $0 != "code" }.count > 0 })
        #expect(converted.predicateFormat == #"SUBQUERY(tags, $_local_1, $_local_1 != "code").@count > 0"#)
    }

    @Test func rangesBecomeBetweenOrComparisons() throws {
        #expect(try agrees(#Predicate<BridgeBook> { (100...200).contains($0.pages) }).predicateFormat == "pages BETWEEN {100, 200}")
        #expect(try agrees(#Predicate<BridgeBook> { (80..<150).contains($0.pages) }).predicateFormat == "pages >= 80 AND pages < 150")
        let closed = 150...300
        #expect(try agrees(#Predicate<BridgeBook> { closed.contains($0.pages) }).predicateFormat == "pages BETWEEN {150, 300}")
        let halfOpen = 80..<150
        #expect(try agrees(#Predicate<BridgeBook> { halfOpen.contains($0.pages) }).predicateFormat == "pages >= 80 AND pages < 150")
        let from = 150...
        #expect(try agrees(#Predicate<BridgeBook> { from.contains($0.pages) }).predicateFormat == "pages >= 150")
        let through = ...150
        #expect(try agrees(#Predicate<BridgeBook> { through.contains($0.pages) }).predicateFormat == "pages <= 150")
        let upTo = ..<150
        #expect(try agrees(#Predicate<BridgeBook> { upTo.contains($0.pages) }).predicateFormat == "pages < 150")
    }

    @Test func partsThatDoNotReadTheInputAreConstants() throws {
        // Key paths on captured values have no key name; Apple's conversion evaluates such parts.
        let limits = BridgeLimits(minimumPages: 100, words: ["Swift", "Poems"])
        #expect(try agrees(#Predicate<BridgeBook> { $0.pages > limits.minimumPages }).predicateFormat == "pages > 100")
        #expect(try agrees(#Predicate<BridgeBook> { limits.words.contains($0.title) }).predicateFormat == #"title IN {"Swift", "Poems"}"#)
        // Apple's conversion too reads `@count` of the constant array rather than evaluating the count.
        #expect(try agrees(#Predicate<BridgeBook> { $0.tags.count < limits.words.count }).predicateFormat.hasPrefix("tags.@count < {"))
        // A part that reads the input still needs a name.
        #expect(throws: PredicateConversionError.self) {
            try NSPredicate(converting: #Predicate<BridgeUnnamed> { $0.x > limits.minimumPages })
        }
        // And it is never evaluated: here that would overflow, stopping the process, before the unnamed
        // key path's read failed.
        let largest = Int.max
        #expect(throws: PredicateConversionError.self) {
            try NSPredicate(converting: #Predicate<BridgeUnnamed> { largest + 1 == $0.x })
        }
    }
}
