// swift-tools-version: 6.1
// OpenCoreData: Apple's Core Data API and file formats, for Linux and every platform Swift runs on.
//
// Targets are the layers of Documentation/Architecture.md; dependencies point down only.
// Layer targets that later issues fill (model, store API, SQL, stores, object graph, macros) are added
// with their first code, so that no empty module stands in for a missing one.
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    products: [
        // What users import: `import OpenCoreData`.
        .library(name: "OpenCoreData", targets: ["OpenCoreData"]),
        // The model and store tool.
        .executable(name: "cdtool", targets: ["cdtool"]),
        // Every layer without the macros (no swift-syntax to build): what the benchmarks use.
        .library(name: "OpenCoreDataRuntime", targets: ["OpenCoreDataRuntime"]),
        // The README's demo program.
        .executable(name: "ocd-demo", targets: ["ocd-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1"),
    ],
    targets: [
        // Predicate layer: NSPredicate, NSExpression, NSSortDescriptor. Foundation only.
        .target(name: "OCDPredicate"),
        // Model layer: NSManagedObjectModel and its descriptions, Xcode model files, version hashes.
        .target(name: "OCDModel", dependencies: ["OCDPredicate", "CSwiftRuntime"]),
        // Store API: object IDs, rows, fetch plans, save requests, the store base class and type registry.
        .target(name: "OCDStore", dependencies: ["OCDModel", "OCDPredicate", "CSwiftRuntime"]),
        // NSInMemoryStoreType: rows in memory, predicates through the predicate layer's evaluator.
        .target(name: "OCDInMemoryStore", dependencies: ["OCDStore", "OCDModel", "OCDPredicate"]),
        // NSSQLiteStoreType: Core Data's SQLite file format, predicates translated to SQL (decisions D4, D5, D19).
        .target(name: "OCDSQLiteStore", dependencies: ["OCDStore", "OCDModel", "OCDPredicate", "CSQLite"]),
        // Object graph: managed objects, contexts, the coordinator, the container.
        .target(name: "OCDGraph", dependencies: ["OCDStore", "OCDModel", "OCDPredicate", "CSwiftRuntime"]),
        // Macros: @Managed and @ManagedObject, expanded by the compiler; only the umbrella uses them (decision D3).
        .macro(
            name: "OCDMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // Umbrella: re-exports every layer under Apple's names (decision D1) and declares the macros (D2).
        .target(name: "OpenCoreData", dependencies: ["OpenCoreDataRuntime", "OCDPredicate", "OCDMacros"]),
        // Every layer without the macros, for code that must not build swift-syntax (benchmarks, D3).
        .target(name: "OpenCoreDataRuntime", dependencies: ["OCDPredicate", "OCDModel", "OCDStore", "OCDGraph", "OCDInMemoryStore", "OCDSQLiteStore"]),
        // cdtool's commands as a library, so tests run them in-process.
        .target(
            name: "CDToolKit",
            dependencies: [
                "OCDPredicate",
                "OCDModel",
                // `cdtool store`: inspect reads the file with SQLite; dump reads objects through the real store.
                "OCDStore",
                "OCDGraph",
                "OCDSQLiteStore",
                "CSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "cdtool", dependencies: ["CDToolKit"]),
        // The kill test's writer: saves to an SQLite store in a loop until a test kills it.
        .executableTarget(name: "ocd-kill-writer", dependencies: ["OCDGraph", "OCDSQLiteStore", "OCDModel", "OCDStore", "OCDPredicate", "OCDTestSupport"]),
        // The README's demo: a small program on the whole stack (`swift run ocd-demo`).
        .executableTarget(name: "ocd-demo", dependencies: ["OpenCoreData"]),

        // The system SQLite: the SQLite store's engine; tests also read fixture stores with it directly.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Declares swift_tryRetain for the context's object registry (decision D21) and finds a loaded
        // library's hidden functions (D25). A C target, so that its feature macros stay out of its header.
        .target(name: "CSwiftRuntime"),
        // Test helpers: the shared fixtures (real models and stores from Apple platforms).
        .target(name: "OCDTestSupport", dependencies: ["CSQLite", "OCDModel", "OCDPredicate"]),

        .testTarget(name: "OCDPredicateTests", dependencies: ["OCDPredicate", "CDToolKit", "OCDTestSupport"]),
        .testTarget(name: "OCDModelTests", dependencies: ["OCDModel", "OCDTestSupport"]),
        // Compiles the client shape of decision D1: `import Foundation` + `import OpenCoreData`, both orders.
        .testTarget(name: "OpenCoreDataTests", dependencies: ["OpenCoreData"]),
        .testTarget(name: "CDToolKitTests", dependencies: ["CDToolKit", "OCDTestSupport", "CSQLite", "OCDGraph", "OCDModel", "OCDStore", "OCDSQLiteStore"]),
        // The object graph on the in-memory store: managed objects, contexts, coordinator, container.
        .testTarget(name: "OCDGraphTests", dependencies: ["OCDGraph", "OCDInMemoryStore", "OCDStore", "CSwiftRuntime", "OCDTestSupport"]),
        // The SQLite store: file format, fixture stores, SQL translation, locking, bad files.
        .testTarget(name: "OCDSQLiteStoreTests", dependencies: ["OCDGraph", "OCDSQLiteStore", "OCDInMemoryStore", "OCDStore", "OCDTestSupport", "CSQLite"]),
        // The store conformance suite: OCDGraphTests' files (symbolic links) run again on an SQLite store.
        .testTarget(
            name: "OCDSQLiteConformanceTests",
            dependencies: ["OCDGraph", "OCDInMemoryStore", "OCDSQLiteStore", "OCDStore", "CSwiftRuntime", "OCDTestSupport"],
            swiftSettings: [.define("OCD_SQLITE_CONFORMANCE")]
        ),
        // The macros' expansions and diagnostics, as text.
        .testTarget(
            name: "OCDMacrosTests",
            dependencies: [
                "OCDMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
            ]
        ),
    ]
)
