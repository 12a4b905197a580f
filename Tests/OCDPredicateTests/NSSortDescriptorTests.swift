import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSSortDescriptor

private struct Person: KeyPathNaming {
    var name: String
    var age: Int
    static func keyName(for keyPath: AnyKeyPath) -> String? {
        [\Person.name: "name", \Person.age: "age"][keyPath]
    }
}

@Suite("NSSortDescriptor")
struct NSSortDescriptorTests {
    let people: [[String: Any]] = [
        ["name": "bob", "age": 30], ["name": "Ann", "age": 25], ["name": "carl", "age": 30], ["name": "Dee"],
    ]

    func names(_ sorted: [[String: Any]]) -> [String] { sorted.map { $0["name"] as! String } }

    @Test func sortsByKeysInPrecedenceWithMissingValuesFirst() {
        let sorted = people.sorted(using: [NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: false)])
        #expect(names(sorted) == ["Dee", "Ann", "carl", "bob"])
    }

    @Test func compareIsByCodeUnitAndCaseInsensitiveCompareFolds() {
        #expect(names(people.sorted(using: [NSSortDescriptor(key: "name", ascending: true)])) == ["Ann", "Dee", "bob", "carl"])
        let folded = NSSortDescriptor(key: "name", ascending: true, selector: .caseInsensitiveCompare)
        #expect(names(people.sorted(using: [folded])) == ["Ann", "bob", "carl", "Dee"])
    }

    @Test func localizedStandardCompareOrdersNumbersByValue() {
        let files: [[String: Any]] = [["name": "File 10"], ["name": "file 2"], ["name": "File 1"]]
        let sorted = files.sorted(using: [NSSortDescriptor(key: "name", ascending: true, selector: Selector("localizedStandardCompare:"))])
        #expect(names(sorted) == ["File 1", "file 2", "File 10"])
    }

    @Test func equalElementsKeepTheirOrder() {
        let sorted = people.sorted(using: [NSSortDescriptor(key: "age", ascending: false)])
        #expect(names(sorted) == ["bob", "carl", "Ann", "Dee"])
    }

    @Test func reversedDescriptorFlipsTheDirection() throws {
        let descriptor = NSSortDescriptor(key: "age", ascending: true, selector: .compare)
        let reversed = try #require(descriptor.reversedSortDescriptor as? NSSortDescriptor)
        #expect(!reversed.ascending && reversed.key == "age" && reversed.selector == .compare)
        #expect(descriptor.compare(["age": 1], to: ["age": 2]) == .orderedAscending)
        #expect(reversed.compare(["age": 1], to: ["age": 2]) == .orderedDescending)
    }

    @Test func comparatorDescriptorsUseTheClosure() {
        let byLength = NSSortDescriptor(key: "name", ascending: true) { a, b in
            let (x, y) = ((a as! String).count, (b as! String).count)
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
        #expect(names(people.sorted(using: [byLength])) == ["bob", "Ann", "Dee", "carl"])
        #expect(byLength.selector == nil)
    }

    @Test func keyPathInitializerUsesTheTypesKeyNames() {
        let descriptor = NSSortDescriptor(keyPath: \Person.age, ascending: false)
        #expect(descriptor.key == "age")
        #expect(descriptor.description == "(age, descending, compare:)")
    }

    @Test func keyPathExpressionsUseTheTypesKeyNames() {
        #expect(OCDPredicate.NSExpression(forKeyPath: \Person.name).keyPath == "name")
    }

    @Test func incomparableValuesThrowInTheThrowingForm() {
        let mixed: [[String: Any]] = [["v": 1], ["v": "x"]]
        #expect(throws: PredicateEvaluationError.self) { try mixed.sortedThrowing(using: [NSSortDescriptor(key: "v", ascending: true)]) }
    }

    @Test func equalDescriptorsAreEqual() {
        #expect(NSSortDescriptor(key: "a", ascending: true) == NSSortDescriptor(key: "a", ascending: true, selector: .compare))
        #expect(NSSortDescriptor(key: "a", ascending: true) != NSSortDescriptor(key: "a", ascending: false))
    }

    @Test func nsArraySortsWithDescriptors() {
        let sorted = (people as NSArray).sortedArray(using: [NSSortDescriptor(key: "name", ascending: true, selector: .caseInsensitiveCompare)])
        #expect(sorted.compactMap { ($0 as? [String: Any])?["name"] as? String } == ["Ann", "bob", "carl", "Dee"])
    }
}
