import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSPredicate

/// A user type read through `PredicateKeyValueCoding`, as managed objects will be.
private final class Employee: PredicateKeyValueCoding {
    let name: String
    let salary: Int
    let manager: Employee?
    let reports: [Employee]

    init(_ name: String, salary: Int, manager: Employee? = nil, reports: [Employee] = []) {
        self.name = name
        self.salary = salary
        self.manager = manager
        self.reports = reports
    }

    func predicateValue(forKey key: String) throws -> Any? {
        switch key {
        case "name": return name
        case "salary": return salary
        case "manager": return manager
        case "reports": return reports
        default: throw PredicateEvaluationError.unknownKey(key, in: self)
        }
    }
}

@Suite("Evaluation semantics")
struct EvaluationTests {
    func holds(_ format: String, _ object: Any?, _ arguments: Any?...) throws -> Bool {
        try NSPredicate(validatingFormat: format, argumentArray: arguments.map { $0 as Any }).evaluateThrowing(with: object)
    }

    /// A NaN orders before every number and the same as a NaN, as CFNumberCompare (Apple's NSNumber
    /// `compare:`) orders it, in comparisons, sorts and aggregates; before, ordering one threw, and the
    /// non-throwing APIs stopped the process.
    @Test func aNaNOrdersBeforeEveryNumber() throws {
        let nan = ["price": Double.nan] as [String: Any]
        #expect(try holds("price < 5", nan))
        #expect(try !holds("price > 5", nan))
        #expect(try holds("price <= %@", nan, Double.nan))
        #expect(NSPredicate(format: "price > -1e300").evaluate(with: nan) == false)
        let rows: [[String: Any]] = [["price": 3.0], ["price": Double.nan], ["price": 1.0]]
        let sorted = rows.sorted(using: [NSSortDescriptor(key: "price", ascending: true)])
        #expect(sorted.map { ($0["price"] as? Double).map { $0.isNaN ? -1 : $0 } } == [-1, 1, 3])
        #expect((NSExpression(format: "@max.price").expressionValue(with: rows, context: nil) as? Double) == 3)
    }

    @Test func keyPathsReadUserObjectsThroughTheProtocol() throws {
        let boss = Employee("Ada", salary: 300)
        let staff = Employee("Alan", salary: 120, manager: boss)
        let team = Employee("Grace", salary: 200, reports: [staff, Employee("Edsger", salary: 90)])
        #expect(try holds("manager.name == 'Ada'", staff))
        #expect(try holds("ANY reports.salary > 100", team))
        #expect(try holds("ALL reports.salary < 150", team))
        #expect(try holds("reports.@sum.salary == 210", team))
        #expect(try holds("SUBQUERY(reports, $r, $r.salary < salary).@count == 2", team))
        #expect(try holds("manager == nil", boss))
    }

    @Test func unknownKeyOnAnObjectIsAnErrorButOnADictionaryIsNil() throws {
        #expect {
            try holds("nickname == 'x'", Employee("Ada", salary: 1))
        } throws: { error in
            let error = error as? PredicateEvaluationError
            return error?.code == .unknownKey && error?.message.contains("not key value coding-compliant for the key nickname") == true
        }
        #expect(try holds("nickname == nil", ["name": "Ada"]))
    }

    @Test func nilMatchesOnlyNil() throws {
        #expect(try holds("x == nil", ["x": NSNull()]))
        #expect(try !holds("x > 1", [String: Any]()))
        #expect(try !holds("x < 1", [String: Any]()))
        #expect(try !holds("x LIKE 'a'", [String: Any]()))
        #expect(try !holds("x BEGINSWITH 'a'", [String: Any]()))
        #expect(try !holds("x IN {1}", [String: Any]()))
        #expect(try holds("x != 42", [String: Any]()))
    }

    @Test func numbersCompareByValueAcrossKinds() throws {
        #expect(try holds("x == 1", ["x": 1.0]))
        #expect(try holds("x == 1", ["x": true]))
        #expect(try holds("x == %@", ["x": Int16(7)], Decimal(7)))
        #expect(try holds("x == %@", ["x": NSNumber(value: 2.5)], 2.5))
        #expect(try holds("x < 9007199254740993", ["x": 9007199254740992.0]))
        #expect(try holds("x > 9007199254740992", ["x": Int64(9007199254740993)]))
        #expect(try !holds("x == '1'", ["x": 1]))
    }

    @Test func orderingStringsWithNumbersIsAnError() throws {
        #expect(throws: PredicateEvaluationError.self) { try holds("x < '42'", ["x": 41]) }
        #expect(throws: PredicateEvaluationError.self) { try holds("x < %@", ["x": "a"], Date()) }
    }

    @Test func datesCompareInTimeOrder() throws {
        let now = Date()
        #expect(try holds("d > %@", ["d": now], now.addingTimeInterval(-1)))
        #expect(try holds("d BETWEEN %@", ["d": now], [now.addingTimeInterval(-1), now.addingTimeInterval(1)]))
    }

    @Test func stringOptionsFoldCaseAndDiacritics() throws {
        #expect(try holds("name ==[c] 'ADA'", ["name": "ada"]))
        #expect(try !holds("name == 'ADA'", ["name": "ada"]))
        #expect(try holds("name ==[d] 'resume'", ["name": "résumé"]))
        #expect(try holds("name CONTAINS[cd] 'CAFE'", ["name": "Café con leche"]))
        #expect(try holds("name BEGINSWITH[c] 'ÉCOLE'", ["name": "école primaire"]))
        #expect(try holds("name ENDSWITH[cd] 'E'", ["name": "café"]))
        #expect(try holds("name <[c] 'b'", ["name": "A"]))
        #expect(try holds("name IN[c] {'ann', 'bob'}", ["name": "BOB"]))
        #expect(try holds("name ==[n] 'x'", ["name": "x"]))
    }

    @Test func substringOperatorsRejectNonStrings() throws {
        #expect {
            try holds("name BEGINSWITH 5", ["name": "5x"])
        } throws: { error in
            (error as? PredicateEvaluationError)?.message.hasPrefix("Can't do a substring operation with something that isn't a string") == true
        }
    }

    @Test func likeIsAWholeStringGlob() throws {
        #expect(try holds("SELF LIKE 'a*c'", "abbbc"))
        #expect(try holds("SELF LIKE 'a?c'", "abc"))
        #expect(try !holds("SELF LIKE 'a?c'", "ac"))
        #expect(try holds("SELF LIKE %@", "a.b", "a.b"))
        #expect(try !holds("SELF LIKE %@", "axb", "a.b"))
        #expect(try holds("SELF LIKE %@", "a*b", "a\\*b"))
        #expect(try holds("SELF LIKE[c] 'A*'", "abc"))
        #expect(try holds("SELF LIKE '*'", ""))
        #expect(try !holds("SELF LIKE '*a*a*a*a*a*a*b'", String(repeating: "a", count: 200)))
    }

    @Test func matchesAnchorsTheWholeString() throws {
        #expect(try holds("SELF MATCHES 't.*t'", "test"))
        #expect(try !holds("SELF MATCHES 't.*t'", "testy"))
        #expect(try holds("SELF MATCHES 'a|ab'", "ab"))
        #expect(try holds("SELF MATCHES[c] 'ABC'", "abc"))
        #expect {
            try holds("SELF MATCHES '(unclosed'", "x")
        } throws: { error in
            let error = error as? PredicateEvaluationError
            return error?.code == .invalidRegularExpression && error?.message.hasPrefix("Can't do regex matching, reason:") == true
        }
    }

    @Test func anyAndAllNeedACollection() throws {
        #expect {
            try holds("ANY age > 5", ["age": 7])
        } throws: { error in
            (error as? PredicateEvaluationError)?.message == "The left hand side for an ALL or ANY operator must be either an NSArray or an NSSet."
        }
        #expect(try holds("ALL tags == 'x'", ["tags": [String]()]))
        #expect(try !holds("ANY tags == 'x'", ["tags": [String]()]))
        #expect(try holds("ANY tags == 'x'", ["tags": Set(["x", "y"])]))
    }

    @Test func inAndContainsWorkOnCollectionsStringsAndDictionaries() throws {
        #expect(try holds("x IN %@", ["x": 2], [1, 2, 3]))
        #expect(try holds("x IN %@", ["x": 2], Set([1, 2])))
        #expect(try holds("'v' IN d", ["d": ["k": "v"]]))
        #expect(try holds("'BBB' IN 'AABBBAA'", nil))
        #expect(try holds("list CONTAINS 'a'", ["list": ["a", "b"]]))
        #expect(try !holds("'' IN 'abc'", nil))
        #expect(throws: PredicateEvaluationError.self) { try holds("x IN 3", ["x": 3]) }
    }

    @Test func betweenNeedsTwoBounds() throws {
        #expect(try holds("x BETWEEN {1, 3}", ["x": 3]))
        #expect(try holds("SELF BETWEEN {'b', 'c'}", "c"))
        #expect(throws: PredicateEvaluationError.self) { try holds("x BETWEEN {1, 2, 3}", ["x": 2]) }
        #expect(throws: PredicateEvaluationError.self) { try holds("x BETWEEN 3", ["x": 2]) }
    }

    @Test func utiConformanceWalksTheTypeTree() throws {
        #expect(try holds("SELF UTI-CONFORMS-TO 'public.data'", "com.adobe.pdf"))
        #expect(try holds("SELF UTI-CONFORMS-TO 'public.item'", "public.jpeg"))
        #expect(try !holds("SELF UTI-CONFORMS-TO 'public.image'", "com.adobe.pdf"))
        #expect(try holds("SELF UTI-EQUALS 'public.png'", "public.png"))
        NSPredicate.registerUniformType("com.example.note", conformsTo: ["public.plain-text"])
        #expect(try holds("SELF UTI-CONFORMS-TO 'public.text'", "com.example.note"))
    }

    @Test func subqueryKeyPathsReferToTheOuterObject() throws {
        let object: [String: Any] = ["age": 36, "friends": [["age": 41], ["age": 30]]]
        #expect(try holds("SUBQUERY(friends, $f, $f.age > age).@count == 1", object))
        #expect(try holds("SUBQUERY(friends, $f, SUBQUERY(friends, $g, $g.age < $f.age).@count == 1).@count == 1", object))
    }

    @Test func nonThrowingEvaluateAgreesWithTheThrowingOne() throws {
        let predicate = NSPredicate(format: "a > 1 AND b CONTAINS 'x'")
        for object: [String: Any] in [["a": 2, "b": "xy"], ["a": 0, "b": "xy"], ["a": 2, "b": "y"]] {
            #expect(predicate.evaluate(with: object) == (try? predicate.evaluateThrowing(with: object)))
        }
    }

    @Test func arraysFilterWithPredicates() throws {
        let names = ["Ada", "Alan", "Grace"]
        #expect(names.filtered(using: NSPredicate(format: "SELF BEGINSWITH 'A'")) == ["Ada", "Alan"])
        #expect((names as NSArray).filtered(using: NSPredicate(format: "length > 3")) as? [String] == ["Alan", "Grace"])
    }
}
