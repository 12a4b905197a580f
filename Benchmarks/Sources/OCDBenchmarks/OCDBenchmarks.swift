import CSQLiteTwin
import OpenCoreDataRuntime

// Entry point: `OCDBenchmarks [--quick] [--only parse,sort]`. Builds the workloads, checks them, times them
// against their baselines, prints a table and, as the last line, one JSON object with every ratio. Exits 1 when
// a correctness check fails (that workload is then not timed), 2 on a bad argument.

@main
struct OCDBenchmarks {
    static func main() {
        // Line by line even into a pipe or file, so a long run shows where it is.
        twin_line_buffered_stdout()
        var quick = false
        var durable = false
        var storeCount: Int64?
        var storeRepetitions: Int?
        var graphBooks: Int64?
        var importCount: Int64?
        var only: Set<String>?
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--quick":
                quick = true
            case "--store-n":
                guard let value = arguments.popFirst().flatMap({ Int64($0) }), value > 0 else { usage("--store-n needs a positive number") }
                storeCount = value
            case "--store-repetitions":
                guard let value = arguments.popFirst().flatMap({ Int($0) }), value > 0 else { usage("--store-repetitions needs a positive number") }
                storeRepetitions = value
            case "--graph-n":
                guard let value = arguments.popFirst().flatMap({ Int64($0) }), value >= 10, value % 10 == 0 else { usage("--graph-n needs a multiple of 10") }
                graphBooks = value
            case "--import-n":
                guard let value = arguments.popFirst().flatMap({ Int64($0) }), value > 0 else { usage("--import-n needs a positive number") }
                importCount = value
            case "--durable":
                durable = true
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
        // The store group (issue 6): OpenCoreData, the C twin and GRDB on the same SQLite files.
        var sizes = quick ? StoreSizes(n: 2_000, smallSaves: 500) : StoreSizes(n: 100_000, smallSaves: 10_000)
        if let storeCount { sizes.n = storeCount }
        let storeFiles: StoreFiles
        let allStoreWorkloads: [StoreWorkload]
        do {
            storeFiles = try StoreFiles(synchronous: "OFF")
            allStoreWorkloads = try StoreWorkloads.make(files: storeFiles, sizes: sizes, durable: durable)
                + GraphWorkloads.make(files: storeFiles, books: graphBooks ?? max(10, sizes.n / 100 * 10))
        } catch {
            print("cannot prepare the store workloads: \(error)")
            exit(1)
        }
        let allKeys: [String] = allWorkloads.map { $0.key } + allStoreWorkloads.map { $0.key } + ["import"]
        if let only, let unknown = only.subtracting(allKeys).first {
            usage("no workload named \(unknown); there are \(allKeys.joined(separator: ", "))")
        }
        let storeWorkloads = allStoreWorkloads.filter { only?.contains($0.key) ?? true }
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
        let results = checked.isEmpty ? [] : harness.measure(checked)
        if !results.isEmpty {
            print("")
            print(Report.table(results, configuration: configuration))
        }
        print("")

        let storeRepetitionCount = storeRepetitions ?? configuration.repetitions
        var storeHarness = StoreHarness(rounds: configuration.rounds, repetitions: storeRepetitionCount,
                                        minimumSampleSeconds: configuration.minimumSampleSeconds)
        var storeResults: [StoreResult] = []
        if !storeWorkloads.isEmpty {
            print("OpenCoreData store benchmarks: N = \(sizes.n) Items, small_saves = \(sizes.smallSaves), WAL, synchronous = OFF\(durable ? " (durable variants: FULL)" : ""), sides interleaved")
            let started = ClockReading.now()
            storeResults = storeHarness.measure(storeWorkloads) { message in
                let seconds = Double(ClockReading.now().wall - started.wall) / 1e9
                print(String(format: "  [%6.1f s] ", seconds) + message)
            }
            print("")
            print(StoreReport.table(storeResults, rounds: configuration.rounds, repetitions: storeRepetitionCount, synchronous: "OFF"))
            print("")
        }
        var importReport = ImportReport()
        if only?.contains("import") ?? true {
            let total = importCount ?? (quick ? 20_000 : 1_000_000)
            let chunk = max(1, total / 100)
            let started = ClockReading.now()
            importReport = ImportBenchmark.run(files: storeFiles, total: total, chunk: chunk) { message in
                let seconds = Double(ClockReading.now().wall - started.wall) / 1e9
                print(String(format: "  [%6.1f s] ", seconds) + message)
            }
            print("")
            importReport.lines.forEach { print($0) }
            print("")
        }
        let allFailures = harness.failures + storeHarness.failures + importReport.failures
        if allFailures.isEmpty {
            print("correctness: all \(checkCount) predicate checks held; where the two sides' results are comparable, they were equal in every sample; every store run's outcome (count, first, last, checksum, and the file after writes) was as expected on every side")
        } else {
            print("correctness: \(allFailures.count) failure(s):")
            for failure in allFailures { print("  FAILED \(failure)") }
        }
        let json = Report.json(results, configuration: configuration, checksFailed: allFailures.count)
        let storeFields = StoreReport.jsonFields(storeResults) + (storeResults.isEmpty ? [] : ["\"store_n\": \(sizes.n)"]) + importReport.json
        print(storeFields.isEmpty ? json : "{" + storeFields.joined(separator: ", ") + ", " + json.dropFirst())
        storeFiles.removeAll()
        exit(allFailures.isEmpty ? 0 : 1)
    }

    private static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("OCDBenchmarks: \(problem)\nusage: OCDBenchmarks [--quick] [--durable] [--store-n N] [--store-repetitions R] [--graph-n BOOKS] [--import-n N] [--only workload,workload...]\n".utf8))
        exit(2)
    }
}
