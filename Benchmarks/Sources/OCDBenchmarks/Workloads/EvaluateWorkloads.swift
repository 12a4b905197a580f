import OpenCoreDataRuntime

// Evaluating a predicate against many objects: `evaluate(with:)`, as an in-memory fetch or
// `filtered(using:)` does.

enum EvaluateWorkloads {
    static let format = "age > 30 AND name == \"Jane\""

    static func make(_ people: People) -> [Workload] {
        let predicate = NSPredicate(format: format)
        let structs = people.structs
        let dictionaries = people.dictionaries
        let objects = people.objects
        let test: (Person) -> Bool = { $0.age > 30 && $0.name == "Jane" }
        let testDictionary: ([String: Any]) -> Bool = {
            guard let age = $0["age"] as? Int, let name = $0["name"] as? String else { return false }
            return age > 30 && name == "Jane"
        }
        let expected = structs.lazy.filter(test).count

        func sameAnswers(_ answer: (Int) -> Bool) -> String? {
            for index in structs.indices where answer(index) != test(structs[index]) {
                return "object \(index) (\(structs[index])): evaluate(with:) says \(answer(index)), the closure \(test(structs[index]))"
            }
            if expected == 0 || expected == structs.count { return "the data make the predicate trivial (\(expected) matches)" }
            return nil
        }

        let overDictionaries = Workload(
            key: "evaluate_dict",
            unit: "object",
            operationsPerCall: dictionaries.count,
            subjectDescription: "NSPredicate(format: \(format.debugDescription)).evaluate(with:) over \(dictionaries.count) [String: Any] (4 keys each)",
            baselineDescription: "closure over the same dictionaries: `$0[\"age\"] as? Int` > 30 && `$0[\"name\"] as? String` == \"Jane\"",
            resultsMustMatch: true,
            subject: {
                var matches = 0
                for dictionary in dictionaries where predicate.evaluate(with: dictionary) { matches += 1 }
                return matches
            },
            baseline: {
                var matches = 0
                for dictionary in dictionaries where testDictionary(dictionary) { matches += 1 }
                return matches
            },
            checks: [
                Check(name: "same answer as the closure for every dictionary") {
                    sameAnswers { predicate.evaluate(with: dictionaries[$0]) }
                },
            ])

        let overObjects = Workload(
            key: "evaluate_object",
            unit: "object",
            operationsPerCall: objects.count,
            subjectDescription: "the same predicate's evaluate(with:) over \(objects.count) objects of a final class adopting PredicateKeyValueCoding",
            baselineDescription: "closure `{ $0.age > 30 && $0.name == \"Jane\" }` over the same people as structs",
            resultsMustMatch: true,
            subject: {
                var matches = 0
                for object in objects where predicate.evaluate(with: object) { matches += 1 }
                return matches
            },
            baseline: {
                var matches = 0
                for person in structs where test(person) { matches += 1 }
                return matches
            },
            checks: [
                Check(name: "same answer as the closure for every object") {
                    sameAnswers { predicate.evaluate(with: objects[$0]) }
                },
            ])
        return [overDictionaries, overObjects]
    }
}
