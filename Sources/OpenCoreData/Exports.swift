// The module users import. It re-exports Foundation and every layer of OpenCoreData (through
// OpenCoreDataRuntime) and declares the macros (Macros.swift), so that `import OpenCoreData` is all Core
// Data code needs on Linux.
//
// Decision D1 (Documentation/Architecture.md): the clashing class names are imported by name here too, so
// that they shadow Linux Foundation's in every file that imports OpenCoreData, in either import order.

@_exported import OpenCoreDataRuntime

@_exported import class OCDPredicate.NSPredicate
@_exported import class OCDPredicate.NSComparisonPredicate
@_exported import class OCDPredicate.NSCompoundPredicate
@_exported import class OCDPredicate.NSExpression
@_exported import class OCDPredicate.NSSortDescriptor
@_exported import struct OCDPredicate.Selector
