import OpenCoreDataRuntime

// Entry point: `OCDBenchmarks [--quick] [--only parse,sort]`. Builds the workloads, checks them, times them
// against their baselines, prints a table and, as the last line, one JSON object with every ratio. Exits 1 when
// a correctness check fails (that workload is then not timed), 2 on a bad argument.

@main
struct OCDBenchmarks {
    static func main() {
        var quick = false
        var only: Set<String>?
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--quick":
                quick = true
            case "--only":
                guard let keys = arguments.popFirst() else { usage("--only needs a comma-separated list of workloads") }
                only = Set(keys.split(separator: ",").map(String.init))
            default:
                usage("unknown argument \(argument)")
            }
        }
        let configuration: BenchmarkConfiguration = quick ? .quick : .full
        #if DEBUG
        let build = "debug build (numbers are not meaningful: use -c release)"
        #else
        let build = "release build"
        #endif

        let people = People(count: configuration.count)
        // One group per file in Workloads/; a new group adds its `make` here.
        let allWorkloads = FormatWorkloads.make() + EvaluateWorkloads.make(people) + SortWorkloads.make(people) + ModelWorkloads.make()
        if let only, let unknown = only.subtracting(allWorkloads.map(\.key)).first {
            usage("no workload named \(unknown); there are \(allWorkloads.map(\.key).joined(separator: ", "))")
        }
        let workloads = allWorkloads.filter { only?.contains($0.key) ?? true }
        print("OpenCoreData predicate benchmarks: \(quick ? "quick" : "full") run, N = \(configuration.count), \(configuration.rounds) rounds x \(configuration.repetitions) samples per side, \(build)")

        var harness = Harness(configuration: configuration)
        var checked: [Workload] = []
        var checkCount = 0
        for workload in workloads {
            checkCount += workload.checks.count
            if harness.runChecks(of: workload) {
                checked.append(workload)
            } else {
                print("skipping \(workload.key): a correctness check failed")
            }
        }
        let results = harness.measure(checked)
        print("")
        print(Report.table(results, configuration: configuration))
        print("")
        if harness.failures.isEmpty {
            print("correctness: all \(checkCount) checks held; where the two sides' results are comparable, they were equal in every sample")
        } else {
            print("correctness: \(harness.failures.count) failure(s):")
            for failure in harness.failures { print("  FAILED \(failure)") }
        }
        print(Report.json(results, configuration: configuration, checksFailed: harness.failures.count))
        exit(harness.failures.isEmpty ? 0 : 1)
    }

    private static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("OCDBenchmarks: \(problem)\nusage: OCDBenchmarks [--quick] [--only workload,workload...]\n".utf8))
        exit(2)
    }
}
