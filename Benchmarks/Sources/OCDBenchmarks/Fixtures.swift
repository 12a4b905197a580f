import OpenCoreDataRuntime

// The data the workloads run on: the same N people as plain structs (for the baselines), as dictionaries
// `[String: Any]` and as objects of a class that adopts `PredicateKeyValueCoding` (for OpenCoreData).
// Deterministic, so that every run measures the same data.

/// A person as plain Swift code would hold it.
struct Person {
    var name: String
    var age: Int
    var salary: Double
    var department: String
}

/// A person that predicates and sort descriptors read by key, as they read an `NSManagedObject`.
final class PersonObject: PredicateKeyValueCoding {
    let name: String
    let age: Int
    let salary: Double
    let department: String

    init(_ person: Person) {
        name = person.name
        age = person.age
        salary = person.salary
        department = person.department
    }

    func predicateValue(forKey key: String) throws -> Any? {
        switch key {
        case "name": return name
        case "age": return age
        case "salary": return salary
        case "department": return department
        default: throw PredicateEvaluationError.unknownKey(key, in: self)
        }
    }
}

struct People {
    let structs: [Person]
    let dictionaries: [[String: Any]]
    let objects: [PersonObject]

    /// `count` people; about 1 in 16 is named Jane, ages are 18...80, so `age > 30 AND name == "Jane"`
    /// matches about 5 %.
    init(count: Int) {
        let names = ["Jane", "John", "Ada", "Alan", "Grace", "Linus", "Barbara", "Ken",
                     "Margaret", "Dennis", "Frances", "Edsger", "Radia", "Donald", "Hedy", "Tim"]
        let departments = ["Engineering", "Sales", "Marketing", "Support", "Research"]
        var random = SplitMix64(seed: 0x0CD_BE4C)
        var structs: [Person] = []
        structs.reserveCapacity(count)
        for _ in 0..<count {
            structs.append(Person(
                name: names[Int(random.next() % UInt64(names.count))],
                age: 18 + Int(random.next() % 63),
                salary: Double(30_000 + random.next() % 90_000),
                department: departments[Int(random.next() % UInt64(departments.count))]))
        }
        self.structs = structs
        self.dictionaries = structs.map {
            ["name": $0.name, "age": $0.age, "salary": $0.salary, "department": $0.department]
        }
        self.objects = structs.map(PersonObject.init)
    }
}

/// A small, fast, seedable generator (Vigna's SplitMix64), so the data does not depend on the platform.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
