import CSQLiteTwin
import Foundation
import OpenCoreDataRuntime

// Issue 6's import: 1,000,000 Items (--quick: 20,000), saving and resetting the context every 10,000
// (--quick: 2,000), OpenCoreData and the C twin chunk by chunk, interleaved. One run, not samples: what it
// shows is the shape (memory flat, time per chunk constant), and the total ratio.

struct ImportReport {
    var lines: [String] = []
    var json: [String] = []
    var failures: [String] = []
}

enum ImportBenchmark {
    static func run(files: StoreFiles, total: Int64, chunk: Int64, progress: (String) -> Void) -> ImportReport {
        var report = ImportReport()
        let ocdURL = files.file("import-ocd.sqlite"), cURL = files.file("import-c.sqlite")
        let stack: OCDStack
        let twin: OpaquePointer
        do {
            try files.copy(files.empty, to: ocdURL)
            try files.copy(files.empty, to: cURL)
            stack = try OCDStack(model: files.model, url: ocdURL, synchronous: files.synchronous)
            guard let opened = twin_open(cURL.path, files.synchronous) else { throw BenchmarkError("cannot open \(cURL.path)") }
            twin = opened
        } catch {
            report.failures.append("import: set-up failed: \(error)")
            return report
        }
        defer { twin_close(twin); stack.close() }
        let context = stack.context
        var ocdCPU: [Double] = [], ocdWall: [Double] = [], cCPU: [Double] = [], cWall: [Double] = []
        var memory: [Int] = []
        let chunks = Int(total / chunk)
        for index in 0..<chunks {
            let first = Int64(index) * chunk
            let start = ClockReading.now()
            do {
                for k in first..<(first + chunk) {
                    let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    let base = k * 16
                    for j in 0..<10 { object.setValue(base + Int64(j), forKey: Items.keys[j]) }
                }
                try context.save()
                context.reset()
            } catch {
                report.failures.append("import [ocd]: chunk \(index): \(error)")
                return report
            }
            let middle = ClockReading.now()
            let outcome = Outcome(twin_insert_items(twin, first, chunk))
            let end = ClockReading.now()
            if outcome.count != chunk {
                report.failures.append("import [c]: chunk \(index): \(String(cString: twin_error(twin)))")
                return report
            }
            ocdCPU.append(Double(middle.cpu - start.cpu)); ocdWall.append(Double(middle.wall - start.wall))
            cCPU.append(Double(end.cpu - middle.cpu)); cWall.append(Double(end.wall - middle.wall))
            memory.append(allocatedBytes())
            if (index + 1) % max(1, chunks / 10) == 0 {
                progress("import: \(Int64(index + 1) * chunk) of \(total) (OpenCoreData \(format(ocdCPU.last! / Double(chunk))) ns/object this chunk, allocated \(memory.last! / 1024) KiB)")
            }
        }
        let expected = Items.fullRead(total)
        for (name, url) in [("ocd", ocdURL), ("c", cURL)] {
            let held = files.summary(of: url)
            if held != expected { report.failures.append("import [\(name)]: the file holds \(held), expected \(expected)") }
        }
        // Shape: the mean chunk time of the last tenth over the first tenth (the first chunk, a warm-up, left
        // out), and the allocator's growth from after the first chunk to after the last.
        let tenth = max(1, chunks / 10)
        func mean(_ values: ArraySlice<Double>) -> Double { values.reduce(0, +) / Double(max(values.count, 1)) }
        let early = mean(ocdCPU.dropFirst().prefix(tenth)), late = mean(ocdCPU.suffix(tenth))
        let growth = late / early
        let memoryGrowth = (memory.last ?? 0) - (memory.first ?? 0)
        let perObject = ocdCPU.reduce(0, +) / Double(total), cPerObject = cCPU.reduce(0, +) / Double(total)
        let ratio = ocdCPU.reduce(0, +) / cCPU.reduce(0, +), wallRatio = ocdWall.reduce(0, +) / cWall.reduce(0, +)
        let flat = memoryGrowth <= 4 << 20, linear = growth <= 1.25
        report.lines = [
            "import: \(total) Items in \(chunks) saves of \(chunk), context.reset() after each (C twin: a transaction per chunk), interleaved chunk by chunk",
            "  OpenCoreData \(format(perObject)) ns/object CPU, C twin \(format(cPerObject)) ns/object: \(format(ratio))x CPU, \(format(wallRatio))x wall",
            "  time per chunk, last tenth / first tenth: \(format(growth)) (\(linear ? "linear" : "NOT linear"); ≤ 1.25 counts as linear)",
            "  allocated memory from the first chunk to the last: \(memoryGrowth / 1024) KiB (\(flat ? "flat" : "NOT flat"); ≤ 4 MiB counts as flat, SQLite's page cache alone may take 2 MiB)",
        ]
        report.json = [
            "\"import_cpu_ratio_c\": \(String(format: "%.3f", ratio))", "\"import_wall_ratio_c\": \(String(format: "%.3f", wallRatio))",
            "\"import_ocd_cpu_ns\": \(String(format: "%.3f", perObject))", "\"import_time_growth\": \(String(format: "%.3f", growth))",
            "\"import_memory_growth_bytes\": \(memoryGrowth)", "\"import_n\": \(total)",
        ]
        return report
    }

    private static func format(_ value: Double) -> String { Report.format(value) }
}
