import CSQLiteTwin
import Foundation
import OpenCoreDataRuntime

// The store workloads' harness (issue 6): each workload runs on three or four sides in the same process,
// interleaved — OpenCoreData, the raw-SQLite C twin, GRDB's fastest API and GRDB's records. A side has an
// untimed set-up and tear-down around every timed run (a fresh copy of the store file where the workload
// writes), and a check of every run's outcome (count, first, last, checksum; for writes also what the file
// then holds, read by the C twin on its own connection).

/// One side of a store workload.
final class StoreSide {
    /// "ocd", "c", "grdb" or "grdb_record" (the JSON suffixes).
    let key: String
    let description: String
    let setUp: () throws -> Void
    let run: () throws -> Outcome
    let tearDown: () throws -> Void
    /// Given the index of the run (0 = the warm-up) and its outcome: nil when right, else what is wrong.
    let check: (Int, Outcome) -> String?
    fileprivate(set) var runs = 0

    init(_ key: String, _ description: String, setUp: @escaping () throws -> Void = {}, run: @escaping () throws -> Outcome,
         tearDown: @escaping () throws -> Void = {}, check: @escaping (Int, Outcome) -> String?) {
        self.key = key
        self.description = description
        self.setUp = setUp
        self.run = run
        self.tearDown = tearDown
        self.check = check
    }

    /// The usual check: the run's outcome equals `expected(run index)`.
    static func expecting(_ expected: @escaping (Int) -> Outcome) -> (Int, Outcome) -> String? {
        { index, outcome in
            let want = expected(index)
            return outcome == want ? nil : "run \(index): got \(outcome), expected \(want)"
        }
    }

    /// The check of a write: the run's outcome equals `run`, then the file (read by `summary` on its own
    /// connection) holds `file`.
    static func expecting(_ run: Outcome, thenFile url: URL, holds file: Outcome, read summary: @escaping (URL) -> Outcome) -> (Int, Outcome) -> String? {
        { index, outcome in
            if outcome != run { return "run \(index): got \(outcome), expected \(run)" }
            let held = summary(url)
            return held == file ? nil : "run \(index): the file holds \(held), expected \(file)"
        }
    }

    static let sideNames = ["ocd": "OpenCoreData", "c": "C twin", "grdb": "GRDB", "grdb_record": "GRDB records"]
}

struct StoreWorkload {
    var key: String
    /// What one operation is ("object", "save", "lookup", "count").
    var unit: String
    var operations: Int
    var summary: String
    /// OpenCoreData first, the C twin second.
    var sides: [StoreSide]
    /// Whether a run leaves its sides as it found them, so a sample may repeat it (fast workloads).
    var repeatable = false
    /// The OpenCoreData store, for counting its statements during the warm-up (after `setUp`).
    var ocdStore: () -> SQLiteStore? = { nil }
    /// Bytes per object of OpenCoreData's result, measured once untimed (mallinfo2 before and after).
    var memoryProbe: (() throws -> Double)?
}

struct StoreResult {
    var workload: StoreWorkload
    var samples: [String: SideSamples] = [:]
    var iterations: [String: Int] = [:]
    var statements: Int?
    var bytesPerObject: Double?
    /// Nanoseconds per operation OpenCoreData spent inside SQLite running statements, from one extra
    /// untimed run with a measuring ``SQLStatementLog`` (nil without an OpenCoreData store).
    var sqliteNanoseconds: Double?

    /// OpenCoreData's median less its time inside SQLite, over the C twin's median: what OpenCoreData's
    /// own work costs if SQLite cost it nothing (> 1: that alone misses a 1× figure). Wall medians, as the
    /// time inside SQLite is read from the monotonic clock (a thread's CPU clock is a system call per
    /// read); with `synchronous = OFF` they are the CPU medians within a few percent.
    var outsideSQLiteRatio: Double? {
        guard let ocd = median("ocd", wall: true), let sqlite = sqliteNanoseconds, let c = median("c", wall: true) else { return nil }
        return max(0, ocd - sqlite) / c
    }

    func median(_ side: String, wall: Bool = false) -> Double? {
        guard let samples = samples[side], !samples.allCPU.isEmpty else { return nil }
        return OCDBenchmarks_median(wall ? samples.allWall : samples.allCPU)
    }

    /// OpenCoreData / `side`.
    func ratio(to side: String, wall: Bool = false) -> Double? {
        guard let ocd = median("ocd", wall: wall), let other = median(side, wall: wall) else { return nil }
        return ocd / other
    }

    func roundRatios(to side: String) -> [Double] {
        guard let ocd = samples["ocd"], let other = samples[side] else { return [] }
        return zip(ocd.cpu, other.cpu).map { OCDBenchmarks_median($0) / OCDBenchmarks_median($1) }
    }
}

func OCDBenchmarks_median(_ values: [Double]) -> Double { median(values) }

/// Bytes the allocator has handed out (small and mmapped blocks).
func allocatedBytes() -> Int { Int(twin_allocated_bytes()) }

struct StoreHarness {
    let rounds: Int
    let repetitions: Int
    let minimumSampleSeconds: Double
    private(set) var failures: [String] = []

    init(rounds: Int, repetitions: Int, minimumSampleSeconds: Double) {
        self.rounds = rounds
        self.repetitions = repetitions
        self.minimumSampleSeconds = minimumSampleSeconds
    }

    /// One run of one side, set-up and tear-down untimed; the outcome checked. Returns CPU and wall ns,
    /// and whether `log` was given to an OpenCoreData store.
    private mutating func sample(_ workload: StoreWorkload, _ side: StoreSide, iterations: Int, log: SQLStatementLog? = nil)
        -> (cpu: Double, wall: Double, logged: Bool) {
        do {
            try side.setUp()
        } catch {
            failures.append("\(workload.key) [\(side.key)]: set-up failed: \(error)")
            return (.nan, .nan, false)
        }
        var logged = false
        if let log, let store = workload.ocdStore() {
            store.statementLog = log
            logged = true
        }
        var outcomes: [(Int, Outcome)] = []
        outcomes.reserveCapacity(iterations)
        var thrown: Error?
        let start = ClockReading.now()
        for _ in 0..<iterations {
            do {
                outcomes.append((side.runs, try side.run()))
            } catch {
                thrown = error
                break
            }
            side.runs += 1
        }
        let end = ClockReading.now()
        if log != nil { workload.ocdStore()?.statementLog = nil }
        do {
            try side.tearDown()
        } catch {
            failures.append("\(workload.key) [\(side.key)]: tear-down failed: \(error)")
        }
        if let thrown {
            failures.append("\(workload.key) [\(side.key)]: \(thrown)")
        }
        for (index, outcome) in outcomes {
            if let problem = side.check(index, outcome) {
                failures.append("\(workload.key) [\(side.key)]: \(problem)")
                break
            }
        }
        return (Double(end.cpu - start.cpu), Double(end.wall - start.wall), logged)
    }

    mutating func measure(_ workloads: [StoreWorkload], progress: (String) -> Void) -> [StoreResult] {
        var results = workloads.map { StoreResult(workload: $0) }
        // Warm-up (with OpenCoreData's statements counted), calibration of repeatable workloads, memory.
        for index in results.indices {
            let workload = results[index].workload
            let before = failures.count
            for side in workload.sides {
                let log = side.key == "ocd" ? SQLStatementLog() : nil
                let (_, wall, _) = sample(workload, side, iterations: 1, log: log)
                if let log { results[index].statements = log.statements.count }
                var iterations = 1
                if workload.repeatable && wall.isFinite {
                    let (_, again, _) = sample(workload, side, iterations: 1)
                    let target = minimumSampleSeconds * 1e9
                    if again < target { iterations = max(1, Int((target / max(again, 1)).rounded(.up))) }
                }
                results[index].iterations[side.key] = iterations
            }
            // Where OpenCoreData's time goes: one more run, untimed by the figures, that adds up the time
            // spent inside SQLite (the clock reads per statement would distort a timed sample).
            if let ocd = workload.sides.first(where: { $0.key == "ocd" }) {
                let timing = SQLStatementLog(measuringSQLiteTime: true)
                if sample(workload, ocd, iterations: 1, log: timing).logged {
                    results[index].sqliteNanoseconds = Double(timing.sqliteNanoseconds) / Double(max(workload.operations, 1))
                }
            }
            if let probe = workload.memoryProbe {
                do { results[index].bytesPerObject = try probe() } catch { failures.append("\(workload.key): memory probe: \(error)") }
            }
            progress("warmed up \(workload.key)\(failures.count > before ? " (FAILED)" : "")")
        }
        for round in 0..<rounds {
            for index in results.indices {
                let workload = results[index].workload
                var perSide: [String: (cpu: [Double], wall: [Double])] = [:]
                for repetition in 0..<repetitions {
                    let shift = (repetition + round) % workload.sides.count
                    let order = Array(workload.sides[shift...] + workload.sides[..<shift])
                    for side in order {
                        let iterations = results[index].iterations[side.key] ?? 1
                        let (cpu, wall, _) = sample(workload, side, iterations: iterations)
                        let per = Double(iterations * workload.operations)
                        perSide[side.key, default: ([], [])].cpu.append(cpu / per)
                        perSide[side.key, default: ([], [])].wall.append(wall / per)
                    }
                }
                for (key, values) in perSide {
                    results[index].samples[key, default: SideSamples()].cpu.append(values.cpu)
                    results[index].samples[key, default: SideSamples()].wall.append(values.wall)
                }
            }
            progress("round \(round + 1) of \(rounds) done")
        }
        return results
    }
}

enum StoreReport {
    static let others = ["c", "grdb", "grdb_record"]

    static func table(_ results: [StoreResult], rounds: Int, repetitions: Int, synchronous: String) -> String {
        var lines: [String] = []
        let header = ["workload", "unit", "OCD ns/op", "C ns/op", "GRDB ns/op", "records ns/op", "CPU vs C", "wall vs C",
                      "CPU vs GRDB", "CPU vs records", "vs C per round", "SQL stmts", "OCD in SQLite ns/op", "rest vs C", "bytes/obj"]
        var rows: [[String]] = []
        func cell(_ value: Double?, suffix: String = "") -> String { value.map { Report.format($0) + suffix } ?? "-" }
        for result in results {
            rows.append([
                result.workload.key, result.workload.unit,
                cell(result.median("ocd")), cell(result.median("c")), cell(result.median("grdb")), cell(result.median("grdb_record")),
                cell(result.ratio(to: "c"), suffix: "x"), cell(result.ratio(to: "c", wall: true), suffix: "x"),
                cell(result.ratio(to: "grdb"), suffix: "x"), cell(result.ratio(to: "grdb_record"), suffix: "x"),
                result.roundRatios(to: "c").map { Report.format($0) }.joined(separator: " / "),
                result.statements.map(String.init) ?? "-",
                cell(result.sqliteNanoseconds), cell(result.outsideSQLiteRatio, suffix: "x"),
                cell(result.bytesPerObject),
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
        lines.append("ns/op: median CPU time per operation over \(rounds) rounds x \(repetitions) samples per side, set-up untimed; synchronous = \(synchronous) unless the key says durable (FULL).")
        lines.append("ratios: OpenCoreData / the other side (higher = OpenCoreData slower). SQL stmts: statements OpenCoreData executed in one run. bytes/obj: allocator growth per object held.")
        lines.append("OCD in SQLite: OpenCoreData's time inside sqlite3_step and sqlite3_exec per operation (monotonic clock, one extra untimed run; preparing, binding and reading columns not counted, SQL functions OpenCoreData registers counted).")
        lines.append("rest vs C: (OCD wall ns/op - OCD in SQLite) / C wall ns/op, OpenCoreData's own work against the twin's whole run: where it is above a figure, SQLite is not what misses it.")
        lines.append("")
        for result in results {
            let workload = result.workload
            lines.append("\(workload.key): \(workload.summary)")
            for side in workload.sides {
                let iterations = result.iterations[side.key] ?? 1
                lines.append("  \((StoreSide.sideNames[side.key] ?? side.key).padding(toLength: 13, withPad: " ", startingAt: 0)) \(side.description)\(iterations > 1 ? " (\(iterations) runs per sample)" : "")")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `<key>_cpu_ratio_c`, `<key>_wall_ratio_c`, the same for `grdb` and `grdb_record`, `<key>_statements`,
    /// `<key>_bytes_per_object`, `<key>_ocd_sqlite_ns`, `<key>_outside_sqlite_ratio_c`.
    static func jsonFields(_ results: [StoreResult]) -> [String] {
        var fields: [String] = []
        func number(_ value: Double) -> String { value.isFinite ? String(format: "%.3f", value) : "null" }
        for result in results {
            let key = result.workload.key
            for other in others {
                guard let cpu = result.ratio(to: other), let wall = result.ratio(to: other, wall: true) else { continue }
                fields.append("\"\(key)_cpu_ratio_\(other)\": \(number(cpu))")
                fields.append("\"\(key)_wall_ratio_\(other)\": \(number(wall))")
            }
            if let ocd = result.median("ocd") { fields.append("\"\(key)_ocd_cpu_ns\": \(number(ocd))") }
            if let statements = result.statements { fields.append("\"\(key)_statements\": \(statements)") }
            if let bytes = result.bytesPerObject { fields.append("\"\(key)_bytes_per_object\": \(number(bytes))") }
            if let sqlite = result.sqliteNanoseconds { fields.append("\"\(key)_ocd_sqlite_ns\": \(number(sqlite))") }
            if let rest = result.outsideSQLiteRatio { fields.append("\"\(key)_outside_sqlite_ratio_c\": \(number(rest))") }
        }
        return fields
    }
}
