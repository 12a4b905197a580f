// Every layer of OpenCoreData without the macros: what `OpenCoreData` re-exports, and what code that must
// not build swift-syntax (the benchmarks, decision D3) imports instead.
//
// Decision D1 (Documentation/Architecture.md): Linux Foundation declares classes named NSPredicate,
// NSComparisonPredicate, NSCompoundPredicate, NSSortDescriptor and NSExpression that cannot do what Core Data
// needs. Importing our classes by name (`import class`) makes them shadow Foundation's in every file that
// imports this module, whatever the order of the imports, so `NSPredicate(format:)` means ours.

@_exported import Foundation
@_exported import OCDPredicate
@_exported import OCDModel
@_exported import OCDStore
@_exported import OCDGraph
// Linked so that the coordinator finds NSInMemoryStoreType and NSSQLiteStoreType by name (decision D16).
import OCDInMemoryStore
@_exported import OCDSQLiteStore

@_exported import class OCDPredicate.NSPredicate
@_exported import class OCDPredicate.NSComparisonPredicate
@_exported import class OCDPredicate.NSCompoundPredicate
@_exported import class OCDPredicate.NSExpression
@_exported import class OCDPredicate.NSSortDescriptor
@_exported import struct OCDPredicate.Selector
