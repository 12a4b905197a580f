import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSPredicate

// A predicate selects the same objects whether the store evaluates it in memory or translates it to
// SQL (this file runs on both stores: Tests/OCDSQLiteConformanceTests links it). Each case here once
// answered differently in SQL.

@Suite("Fetching: predicates agree on both stores")
struct PredicateAgreementTests {
    /// The names of the saved Employees matching `format`, fetched by a fresh context (so from the store).
    private func names(_ stack: TestStack, _ format: String, _ arguments: Any...) throws -> [String] {
        let reader = stack.newContext()
        return try withExtendedLifetime(reader) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: format, argumentArray: arguments)
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try reader.fetch(request).compactMap { $0.string("name") }
        }
    }

    private func employees(_ rows: [(String, Int?)]) throws -> TestStack {
        let stack = try TestStack()
        for (name, age) in rows {
            let employee = stack.insert("Employee", ["name": name])
            employee.setValue(age.map { NSNumber(value: $0) }, forKey: "age")
        }
        try stack.context.save()
        return stack
    }

    @Test func fractionalConstantsCompareByValueWithIntegers() throws {
        let stack = try employees([("a", 2), ("b", 3)])
        #expect(try names(stack, "age < %@", 2.5) == ["a"])
        #expect(try names(stack, "age == %@", 2.5) == [])
        #expect(try names(stack, "age != %@", 2.5) == ["a", "b"])
        #expect(try names(stack, "age >= %@", 2.5) == ["b"])
        #expect(try names(stack, "age BETWEEN %@", [1.5, 2.5]) == ["a"])
        #expect(try names(stack, "age IN %@", [2.5, 3]) == ["b"])
        #expect(try names(stack, "age < %@", 1e20) == ["a", "b"])
        #expect(try names(stack, "age == %@", 3.0) == ["b"])
    }

    @Test func stringsAndNumbersAreNeverEqual() throws {
        let stack = try employees([("5", 30), ("x", 31)])
        #expect(try names(stack, "name == %@", 5) == [])
        #expect(try names(stack, "name != %@", 5) == ["5", "x"])
        #expect(try names(stack, "age == %@", "30") == [])
        #expect(try names(stack, "age IN {'30', 31}") == ["x"])
        #expect(try names(stack, "name == %@", "5") == ["5"])
    }

    /// BETWEEN bounds of another kind than the attribute fail the fetch, as an ordering comparison of
    /// them does in memory (SQLite's column affinity turned '25' into 25 and matched).
    @Test func betweenBoundsOfAnotherKindFailTheFetch() throws {
        let stack = try employees([("a", 30)])
        #expect(throws: (any Error).self) { try names(stack, "age BETWEEN %@", ["25", "35"]) }
        #expect(try names(stack, "age BETWEEN %@", [25, 35]) == ["a"])
    }

    /// A URI attribute equals a URL, never a string, as in memory (its text matched in SQL).
    @Test func aURIAttributeIsNeverEqualToAString() throws {
        let stack = try TestStack(model: TestModel.make { entities, _ in
            let homepage = NSAttributeDescription()
            homepage.name = "homepage"
            homepage.attributeType = .URIAttributeType
            homepage.isOptional = true
            let employee = entities["Employee"]!
            employee.properties = employee.properties + [homepage]
        })
        stack.insert("Employee", ["name": "Ann", "homepage": URL(string: "https://x.com")!])
        stack.insert("Employee", ["name": "Bob"])
        try stack.context.save()
        #expect(try names(stack, "homepage == %@", "https://x.com") == [])
        #expect(try names(stack, "homepage != %@", "https://x.com") == ["Ann", "Bob"])
        #expect(try names(stack, "homepage == %@", URL(string: "https://x.com")!) == ["Ann"])
    }

    @Test func localeSensitiveComparisonsUseTheLocale() throws {
        let stack = try employees([("B", 1), ("a", 2)])
        // Byte order puts "B" before "a"; the locale's order does not.
        #expect(try names(stack, "name <[l] %@", "a") == [])
        #expect(try names(stack, "name < %@", "a") == ["B"])
    }

    @Test func anObjectOfAnotherEntityMatchesNoRow() throws {
        let stack = try TestStack()
        let department = stack.insert("Department", ["name": "R&D"])
        let ann = stack.insert("Employee", ["name": "Ann"])
        try stack.context.save()
        // Both may have key 1: keys are numbered per root entity.
        #expect(try names(stack, "SELF == %@", department) == [])
        #expect(try names(stack, "SELF != %@", department) == ["Ann"])
        #expect(try names(stack, "SELF IN %@", [department, ann]) == ["Ann"])
        #expect(try names(stack, "SELF == %@", ann) == ["Ann"])
    }

    @Test func theAverageOfAnEmptyRelationshipIsZero() throws {
        let stack = try TestStack()
        stack.insert("Department", ["name": "Empty"])
        let young = stack.insert("Department", ["name": "Young"])
        let ann = stack.insert("Employee", ["name": "Ann", "age": 20])
        ann.setValue(young, forKey: "department")
        try stack.context.save()
        let reader = stack.newContext()
        let found = try withExtendedLifetime(reader) {
            try stack.fetch("Department", "employees.@avg.age < 30", sortedBy: "name", in: reader).compactMap { $0.string("name") }
        }
        #expect(found == ["Empty", "Young"])
    }

    /// A Float attribute holds a Float whether set or read back, so a predicate that matched the stored
    /// row still matches once the context judges the changed object in memory.
    @Test func floatValuesMatchTheSameInMemoryAndInSQL() throws {
        let stack = try TestStack(model: TestModel.make { entities, _ in
            let score = NSAttributeDescription()
            score.name = "score"
            score.attributeType = .floatAttributeType
            entities["Badge"]!.properties.append(score)
        })
        let badge = stack.insert("Badge", ["number": 1, "score": 0.1])
        #expect(badge.value(forKey: "score") as? Float == 0.1)
        try stack.context.save()
        let reader = stack.newContext()
        try withExtendedLifetime(reader) {
            let stored = try stack.fetch("Badge", "score == %@", NSNumber(value: Float(0.1)), in: reader)
            #expect(stored.count == 1)
            let fetched = try #require(stored.first)
            #expect(fetched.value(forKey: "score") as? Float == 0.1)
            fetched.setValue(2, forKey: "number")
            #expect(try stack.fetch("Badge", "score == %@", NSNumber(value: Float(0.1)), in: reader).count == 1, "judged again in memory")
        }
    }

    /// Dictionary results sort with the descriptor's selector, as object results do.
    @Test func dictionaryResultsSortWithTheSelector() throws {
        let stack = try employees([("amy", 1), ("Bob", 2), ("Carl", 3)])
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name"]
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true, selector: .caseInsensitiveCompare)]
        #expect(try stack.context.fetch(request).map { $0["name"] as? String } == ["amy", "Bob", "Carl"])
    }

    /// A comparator sorts in memory; SQL cannot run it, so the SQLite store refuses it (as Apple's does)
    /// rather than sorting with `compare:`.
    @Test func aComparatorSortRunsInMemoryOnly() throws {
        let stack = try employees([("a", 1), ("b", 2), ("c", 3)])
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true) { a, b in
            // Reversed.
            (b as! String).compare(a as! String)
        }]
        #if OCD_SQLITE_CONFORMANCE
        #expect(throws: NSError.self) { try stack.context.fetch(request) }
        #else
        #expect(try stack.context.fetch(request).compactMap { $0.string("name") } == ["c", "b", "a"])
        #endif
    }

    /// propertiesToFetch holds attributes, to-one relationships and expressions: a to-many is an error.
    @Test func aToManyInPropertiesToFetchIsAnError() throws {
        let stack = try employees([("a", 1)])
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "projects"]
        #expect(throws: NSError.self) { try stack.context.fetch(request) }
    }

    @Test func aNilElementOfAnInsensitiveInListMatchesNothing() throws {
        let stack = try TestStack()
        stack.insert("Employee", ["name": "Ann", "email": "a@x"])
        stack.insert("Employee", ["name": "Bob"])
        try stack.context.save()
        #expect(try names(stack, "email IN[c] %@", ["A@X", NSNull()]) == ["Ann"])
        #expect(try names(stack, "email IN[c] %@", [NSNull()]) == [])
    }
}
