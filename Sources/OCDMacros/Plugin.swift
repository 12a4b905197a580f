// The compiler plugin that serves OpenCoreData's macros. The declarations users see are in
// Sources/OpenCoreData/Macros.swift; this module is loaded by the compiler only (decision D3).

import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct OCDMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        ManagedMacro.self,
        ManagedObjectMacro.self,
    ]
}
