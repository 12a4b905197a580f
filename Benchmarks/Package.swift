// swift-tools-version: 6.1
// OpenCoreData's benchmarks: a package of their own, so that users of OpenCoreData never build benchmark
// dependencies. It depends on the main package by path.
//
//     swift run -c release --package-path Benchmarks OCDBenchmarks           # full run, N = 100,000
//     swift run -c release --package-path Benchmarks OCDBenchmarks --quick   # smoke run, N = 2,000
//
// Every workload is timed against a plain Swift baseline doing the same work in the same process, and the
// output is ratios (README.md). Workload groups live one per file in Sources/OCDBenchmarks/Workloads/.
import PackageDescription

let package = Package(
    name: "OpenCoreDataBenchmarks",
    dependencies: [
        .package(name: "OpenCoreData", path: ".."),
        // The third side of the store workloads (issue 6): GRDB's fastest API and its record API.
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "OCDBenchmarks",
            dependencies: [
                .product(name: "OpenCoreDataRuntime", package: "OpenCoreData"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "CSQLiteTwin",
            ]
        ),
        // The raw-SQLite twin of the store workloads: plain C on the system SQLite, prepared statements,
        // the same schema (read from a store OpenCoreData created) and the same pragmas.
        .target(
            name: "CSQLiteTwin",
            cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
