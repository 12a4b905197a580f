// Expansion assertions for the macro tests: swift-syntax's generic assertion, reporting to Swift Testing.

import OCDMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The macros under test, by the names Sources/OpenCoreData/Macros.swift declares.
let macroSpecs: [String: MacroSpec] = [
    "Managed": MacroSpec(type: ManagedMacro.self),
    "ManagedObject": MacroSpec(type: ManagedObjectMacro.self),
]

/// `@ManagedObject` alone, so that tests of the class macro show the `@Managed` attributes it reads.
let managedObjectOnly: [String: MacroSpec] = [
    "ManagedObject": MacroSpec(type: ManagedObjectMacro.self),
]

/// Expands the macros in `source` and records an issue when the result or the diagnostics differ.
func assertExpansion(
    _ source: String,
    expandsTo expandedSource: String,
    diagnostics: [DiagnosticSpec] = [],
    macros: [String: MacroSpec] = macroSpecs,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
) {
    assertMacroExpansion(
        source,
        expandedSource: expandedSource,
        diagnostics: diagnostics,
        macroSpecs: macros,
        failureHandler: { failure in
            Issue.record(
                Comment(rawValue: failure.message),
                sourceLocation: SourceLocation(
                    fileID: failure.location.fileID,
                    filePath: failure.location.filePath,
                    line: failure.location.line,
                    column: failure.location.column
                )
            )
        },
        fileID: fileID,
        filePath: filePath,
        line: line,
        column: column
    )
}
