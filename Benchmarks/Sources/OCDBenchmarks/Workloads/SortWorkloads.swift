import OpenCoreDataRuntime

// Sorting by sort descriptors: `Array.sorted(using: [NSSortDescriptor])`, as an in-memory fetch's sort.

enum SortWorkloads {
    static func make(_ people: People) -> [Workload] {
        let descriptors = [NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: true)]
        let structs = people.structs
        let dictionaries = people.dictionaries

        let overDictionaries = Workload(
            key: "sort",
            unit: "element",
            operationsPerCall: dictionaries.count,
            subjectDescription: "sorted(using: [NSSortDescriptor(key: \"age\", ascending: true), NSSortDescriptor(key: \"name\", ascending: true)]) of \(dictionaries.count) [String: Any]",
            baselineDescription: "`sorted { ($0.age, $0.name) < ($1.age, $1.name) }` of the same people as structs",
            resultsMustMatch: true,
            subject: { dictionaries.sorted(using: descriptors).count },
            baseline: { structs.sorted { ($0.age, $0.name) < ($1.age, $1.name) }.count },
            checks: [
                Check(name: "same order of (age, name) as the closure") {
                    let ours = dictionaries.sorted(using: descriptors).map { ($0["age"] as? Int ?? -1, $0["name"] as? String ?? "") }
                    let theirs = structs.sorted { ($0.age, $0.name) < ($1.age, $1.name) }.map { ($0.age, $0.name) }
                    guard ours.count == theirs.count else { return "\(ours.count) elements instead of \(theirs.count)" }
                    for index in ours.indices where ours[index] != theirs[index] {
                        return "element \(index) is \(ours[index]), the closure has \(theirs[index])"
                    }
                    return nil
                },
                Check(name: "equal keys keep their original order (stable)") {
                    // Tag each dictionary with its position; within equal (age, name) the positions must rise.
                    // The first 10,000 have plenty of equal keys (16 names x 63 ages) and keep the check short.
                    let tagged = dictionaries.prefix(10_000).enumerated().map { offset, element in
                        element.merging(["position": offset]) { old, _ in old }
                    }
                    let sorted = tagged.sorted(using: descriptors)
                    for (a, b) in zip(sorted, sorted.dropFirst()) {
                        guard a["age"] as? Int == b["age"] as? Int, a["name"] as? String == b["name"] as? String else { continue }
                        if let x = a["position"] as? Int, let y = b["position"] as? Int, x > y {
                            return "positions \(x) and \(y) of equal keys came out reversed"
                        }
                    }
                    return nil
                },
            ])
        return [overDictionaries]
    }
}
