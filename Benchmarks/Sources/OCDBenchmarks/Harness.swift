import Foundation

// The harness: clocks, one workload = an OpenCoreData side and a plain-Swift baseline side, interleaved
// timing, medians, the table and the JSON line. Workload groups (Workloads/*.swift) only build `Workload`s.

// MARK: Configuration

/// How big and how long a run is.
struct BenchmarkConfiguration {
    /// Objects in the evaluate and sort workloads.
    var count: Int
    /// Timed samples of each side per round (after the warm-up).
    var repetitions: Int
    /// Rounds; every workload gets its samples in each round, so a workload's samples are spread over the run.
    var rounds: Int
    /// Each sample repeats its closure until it has run at least this long (calibrated during warm-up), so
    /// that fast closures are not timed at the clock's resolution.
    var minimumSampleSeconds: Double

    static let full = BenchmarkConfiguration(count: 100_000, repetitions: 5, rounds: 3, minimumSampleSeconds: 0.02)
    static let quick = BenchmarkConfiguration(count: 2_000, repetitions: 5, rounds: 3, minimumSampleSeconds: 0.002)
}

// MARK: Clocks

/// CPU time of the whole process and monotonic wall time, both in nanoseconds.
struct ClockReading {
    var cpu: UInt64
    var wall: UInt64

    static func now() -> ClockReading {
        ClockReading(cpu: read(CLOCK_PROCESS_CPUTIME_ID), wall: read(CLOCK_MONOTONIC))
    }

    private static func read(_ clock: clockid_t) -> UInt64 {
        var spec = timespec()
        guard clock_gettime(clock, &spec) == 0 else { fatalError("clock_gettime(\(clock)) failed: errno \(errno)") }
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

// MARK: Workloads

/// One thing measured: the OpenCoreData side and the baseline side, each returning a result that the
/// harness keeps (so the optimizer cannot drop the work) and, where `resultsMustMatch`, compares.
struct Workload {
    /// Short key, used in the table and as the JSON prefix (`parse` → `parse_cpu_ratio`).
    var key: String
    /// What one operation is, for the ns/op columns ("format", "object", "element").
    var unit: String
    /// Operations done by one call of either side.
    var operationsPerCall: Int
    /// What the OpenCoreData side does, in words.
    var subjectDescription: String
    /// What the baseline does, in words: the table prints it so the ratio can be judged.
    var baselineDescription: String
    /// Whether both sides must return the same result on every call (e.g. the number of matches).
    var resultsMustMatch: Bool
    var subject: () -> Int
    var baseline: () -> Int
    /// Correctness checks, run once before timing: a message per failure, empty when all hold.
    var checks: [Check]
}

/// A named correctness check; `run` returns nil when it holds, else what went wrong.
struct Check {
    var name: String
    var run: () -> String?
}

/// Samples of one side of one workload: ns per operation, per round.
struct SideSamples {
    var cpu: [[Double]] = []
    var wall: [[Double]] = []

    var allCPU: [Double] { cpu.flatMap { $0 } }
    var allWall: [Double] { wall.flatMap { $0 } }
}

struct WorkloadResult {
    var workload: Workload
    var subject = SideSamples()
    var baseline = SideSamples()
    var subjectIterations = 1
    var baselineIterations = 1

    var cpuRatio: Double { median(subject.allCPU) / median(baseline.allCPU) }
    var wallRatio: Double { median(subject.allWall) / median(baseline.allWall) }
    /// The CPU ratio of each round's medians: their spread says how much to trust `cpuRatio`.
    var roundCPURatios: [Double] { zip(subject.cpu, baseline.cpu).map { median($0) / median($1) } }
}

func median(_ values: [Double]) -> Double {
    precondition(!values.isEmpty, "median of no samples")
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

// MARK: Running

struct Harness {
    let configuration: BenchmarkConfiguration
    private(set) var failures: [String] = []

    init(configuration: BenchmarkConfiguration) {
        self.configuration = configuration
    }

    /// Runs every check of `workload`; failures are kept (and printed by the caller). Returns whether all held.
    mutating func runChecks(of workload: Workload) -> Bool {
        var passed = true
        for check in workload.checks {
            if let problem = check.run() {
                failures.append("\(workload.key): \(check.name): \(problem)")
                passed = false
            }
        }
        return passed
    }

    /// Warm-up and calibration, then `rounds` rounds in each of which every workload takes `repetitions`
    /// samples of each side, alternating which side goes first.
    mutating func measure(_ workloads: [Workload]) -> [WorkloadResult] {
        var results = workloads.map { WorkloadResult(workload: $0) }
        for index in results.indices {
            let workload = results[index].workload
            results[index].subjectIterations = calibrate(workload.subject)
            results[index].baselineIterations = calibrate(workload.baseline)
        }
        for round in 0..<configuration.rounds {
            for index in results.indices {
                var result = results[index]
                let workload = result.workload
                var subjectCPU: [Double] = [], subjectWall: [Double] = []
                var baselineCPU: [Double] = [], baselineWall: [Double] = []
                for repetition in 0..<configuration.repetitions {
                    let subjectFirst = (repetition + round) % 2 == 0
                    var subjectValue = 0, baselineValue = 0
                    for side in subjectFirst ? [true, false] : [false, true] {
                        if side {
                            let (cpu, wall, value) = sample(workload.subject, iterations: result.subjectIterations)
                            subjectCPU.append(cpu / Double(result.subjectIterations * workload.operationsPerCall))
                            subjectWall.append(wall / Double(result.subjectIterations * workload.operationsPerCall))
                            subjectValue = value
                        } else {
                            let (cpu, wall, value) = sample(workload.baseline, iterations: result.baselineIterations)
                            baselineCPU.append(cpu / Double(result.baselineIterations * workload.operationsPerCall))
                            baselineWall.append(wall / Double(result.baselineIterations * workload.operationsPerCall))
                            baselineValue = value
                        }
                    }
                    if workload.resultsMustMatch && subjectValue != baselineValue {
                        failures.append("\(workload.key): round \(round + 1): OpenCoreData returned \(subjectValue), the baseline \(baselineValue)")
                    }
                }
                result.subject.cpu.append(subjectCPU)
                result.subject.wall.append(subjectWall)
                result.baseline.cpu.append(baselineCPU)
                result.baseline.wall.append(baselineWall)
                results[index] = result
            }
        }
        return results
    }

    /// Runs `body` once to warm it up, then times it to choose how many calls make one sample last at least
    /// `minimumSampleSeconds`. A body whose warm-up call alone lasts several samples' worth is not run again.
    private func calibrate(_ body: () -> Int) -> Int {
        let target = configuration.minimumSampleSeconds * 1e9
        let (_, warmUp, _) = sample(body, iterations: 1)
        if warmUp >= 4 * target { return 1 }
        let (_, wall, _) = sample(body, iterations: 1)
        guard wall < target else { return 1 }
        return max(1, Int((target / max(wall, 1)).rounded(.up)))
    }

    /// Total CPU and wall nanoseconds of `iterations` calls, and the last call's result.
    private func sample(_ body: () -> Int, iterations: Int) -> (cpu: Double, wall: Double, value: Int) {
        var value = 0
        let start = ClockReading.now()
        for _ in 0..<iterations {
            value = body()
        }
        let end = ClockReading.now()
        return (Double(end.cpu - start.cpu), Double(end.wall - start.wall), value)
    }
}

// MARK: Report

enum Report {
    static func table(_ results: [WorkloadResult], configuration: BenchmarkConfiguration) -> String {
        var lines: [String] = []
        let header = ["workload", "unit", "OCD ns/op", "base ns/op", "CPU ratio", "wall ratio", "CPU ratio per round"]
        var rows: [[String]] = []
        for result in results {
            let subject = median(result.subject.allCPU)
            let baseline = median(result.baseline.allCPU)
            rows.append([
                result.workload.key,
                result.workload.unit,
                format(subject),
                format(baseline),
                format(result.cpuRatio) + "x",
                format(result.wallRatio) + "x",
                result.roundCPURatios.map { format($0) }.joined(separator: " / "),
            ])
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func render(_ row: [String]) -> String {
            row.enumerated().map { column, cell in
                column < 2 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                           : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ")
        }
        lines.append(render(header))
        lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        lines += rows.map(render)
        lines.append("")
        lines.append("ns/op: median CPU time (CLOCK_PROCESS_CPUTIME_ID) per operation over \(configuration.rounds) rounds x \(configuration.repetitions) samples.")
        lines.append("ratio: OpenCoreData / baseline (higher = OpenCoreData slower); wall ratio from CLOCK_MONOTONIC medians.")
        lines.append("")
        for result in results {
            let workload = result.workload
            lines.append("\(workload.key):")
            lines.append("  OpenCoreData: \(workload.subjectDescription)")
            lines.append("  baseline:     \(workload.baselineDescription)")
            lines.append("  calls per sample: OpenCoreData \(result.subjectIterations), baseline \(result.baselineIterations); \(workload.operationsPerCall) \(workload.unit)(s) per call")
        }
        return lines.joined(separator: "\n")
    }

    /// One JSON object: `<key>_cpu_ratio` and `<key>_wall_ratio` for every workload, plus the run's shape.
    static func json(_ results: [WorkloadResult], configuration: BenchmarkConfiguration, checksFailed: Int) -> String {
        var fields: [String] = []
        for result in results {
            fields.append("\"\(result.workload.key)_cpu_ratio\": \(jsonNumber(result.cpuRatio))")
            fields.append("\"\(result.workload.key)_wall_ratio\": \(jsonNumber(result.wallRatio))")
        }
        fields.append("\"n\": \(configuration.count)")
        fields.append("\"checks_failed\": \(checksFailed)")
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// Three significant digits, never exponent notation.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "nan" }
        let magnitude = abs(value)
        let decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3
        return String(format: "%.\(decimals)f", value)
    }

    private static func jsonNumber(_ value: Double) -> String {
        value.isFinite ? String(format: "%.3f", value) : "null"
    }
}
