import Foundation
import OCDTestSupport
import Testing
import OCDGraph
import OCDModel
import OCDStore

// The registry's open-addressing table (decision D21): linear probing and backward-shift deletion, tested
// where they can go wrong, with IDs whose hashes are chosen to collide, to cluster and to wrap around the
// end of the table. A lookup stops at the first empty entry, so a deletion that leaves a hole inside a
// cluster makes the entries after it unreachable: every check below is a lookup.

/// The IDs of tests' object pointers, which point to no object: the registry's tables (IDTable,
/// ObjectTable) read an entry's ID from here.
final class PointerNames: IDTableKeys {
    /// Pointer `number`, a fake address.
    static func pointer(_ number: Int) -> ObjectPointer {
        ObjectPointer(raw: UnsafeMutableRawPointer(bitPattern: (number + 1) * 16)!)
    }

    private var ids: [UnsafeMutableRawPointer: NSManagedObjectID] = [:]
    /// Pointer `number`, stored under `id`.
    func pointer(_ number: Int, for id: NSManagedObjectID) -> ObjectPointer {
        let pointer = Self.pointer(number)
        ids[pointer.raw] = id
        return pointer
    }
    func entry(_ pointer: ObjectPointer, isFor id: NSManagedObjectID) -> Bool { ids[pointer.raw]! == id }
}

/// What the table tests ask of the registry's two tables alike.
protocol PointerTableUnderTest {
    subscript(id: NSManagedObjectID) -> ObjectPointer? { get }
    mutating func updateValue(_ pointer: ObjectPointer, forKey id: NSManagedObjectID) -> ObjectPointer?
    mutating func removeValue(forKey id: NSManagedObjectID) -> ObjectPointer?
    mutating func removeValue(forKey id: NSManagedObjectID, ifItIs pointer: ObjectPointer) -> Bool
    var count: Int { get }
    var values: [ObjectPointer] { get }
}
extension IDTable: PointerTableUnderTest {}
extension ObjectTable: PointerTableUnderTest {}

/// A table checked against a `Dictionary` of the pointer numbers it should hold, operation by operation.
struct TableAgainstDictionary<Table: PointerTableUnderTest> {
    var table: Table
    let names: PointerNames
    private(set) var expected: [NSManagedObjectID: Int] = [:]

    init(_ table: Table, names: PointerNames) {
        self.table = table
        self.names = names
    }

    /// Step `step` on `id`: `choice` below `insertBelow` inserts or replaces (pointer `step`), below 5
    /// removes, 5 removes if the entry holds a pointer (its own on even steps, another on odd ones: an
    /// object leaving from its deinit after its ID went to another), otherwise looks up; every answer
    /// and the count must agree with the dictionary.
    mutating func apply(step: Int, to id: NSManagedObjectID, choice: UInt64, insertBelow: UInt64) {
        if choice < insertBelow {
            #expect(table.updateValue(names.pointer(step, for: id), forKey: id) == expected[id].map { PointerNames.pointer($0) })
            expected[id] = step
        } else if choice < 5 {
            #expect(table.removeValue(forKey: id) == expected[id].map { PointerNames.pointer($0) })
            expected[id] = nil
        } else if choice == 5 {
            let held = expected[id]
            let asked = held.map { step % 2 == 0 ? $0 : $0 + 1_000_000 } ?? step
            #expect(table.removeValue(forKey: id, ifItIs: PointerNames.pointer(asked)) == (held == asked))
            if held == asked { expected[id] = nil }
        } else {
            #expect(table[id] == expected[id].map { PointerNames.pointer($0) })
        }
        #expect(table.count == expected.count)
    }

    /// Every ID of `ids` finds what the dictionary holds, and the table's values are the dictionary's, once each.
    func checkAll(_ ids: [NSManagedObjectID]) {
        for id in ids { #expect(table[id] == expected[id].map { PointerNames.pointer($0) }) }
        #expect(Set(table.values.map(\.raw)) == Set(expected.values.map { PointerNames.pointer($0).raw }))
        #expect(table.values.count == expected.count)
    }
}

@Suite("Object registry: the ID table under collisions and wrap-around")
struct IDTableTests {
    private static let golden: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// The inverse of the golden multiplier modulo 2^64 (Newton's iteration; the multiplier is odd).
    private static let goldenInverse: UInt64 = {
        var inverse = golden
        for _ in 0..<6 { inverse = inverse &* (2 &- golden &* inverse) }
        return inverse
    }()

    /// IDs of one entity and store whose `cachedHash` is chosen by the test.
    private struct Maker {
        let entity: NSEntityDescription
        let store: NSPersistentStore
        var nextKey: Int64 = 1

        /// A new ID (a new primary key) with the hash `hash`.
        mutating func id(hash: Int) -> NSManagedObjectID {
            let key = nextKey
            nextKey += 1
            let keyHash = Int(bitPattern: UInt(bitPattern: Int(key)) &* UInt(IDTableTests.golden))
            let id = NSManagedObjectID(entity: entity, store: store, identifier: store.identifier, baseHash: hash ^ keyHash, primaryKey: key)
            precondition(id.cachedHash == hash)
            return id
        }

        /// A hash whose probe starts at `home` in a table of `capacity` entries (a power of two).
        static func hash(home: Int, capacity: Int, noise: UInt64 = 0) -> Int {
            let shift = UInt64(64 - capacity.trailingZeroBitCount)
            let product = (UInt64(home) << shift) | (noise & ((1 << shift) - 1))
            return Int(bitPattern: UInt(product &* IDTableTests.goldenInverse))
        }
    }


    private func maker() throws -> (TestStack, Maker) {
        let stack = try TestStack()
        let entity = try #require(stack.model.entitiesByName["Employee"])
        return (stack, Maker(entity: entity, store: stack.store))
    }

    @Test func aClusterWrappingAroundTheEndStaysReachableAsItsEntriesAreRemoved() throws {
        let (stack, made) = try maker()
        var maker = made
        let names = PointerNames()
        var table = IDTable(keys: names)
        #expect(table.capacity == 16)
        let last = (0..<5).map { maker.id(hash: Maker.hash(home: 15, capacity: 16, noise: UInt64($0) * 7919)) }
        let first = maker.id(hash: Maker.hash(home: 0, capacity: 16, noise: 12345))
        for id in last { #expect(table.homeIndex(ofHash: id.cachedHash) == 15) }
        #expect(table.homeIndex(ofHash: first.cachedHash) == 0)
        for (number, id) in last.enumerated() { #expect(table.updateValue(names.pointer(number, for: id), forKey: id) == nil) }
        #expect(table.updateValue(names.pointer(99, for: first), forKey: first) == nil)
        // The cluster runs 15, 0, 1, 2, 3 and the entry homed at 0 comes after it.
        #expect(last.map { table.position(of: $0) } == [15, 0, 1, 2, 3])
        #expect(table.position(of: first) == 4)

        // Removing the entry at the end shifts every later one back across the wrap.
        #expect(table.removeValue(forKey: last[0]) == PointerNames.pointer(0))
        #expect(last.dropFirst().map { table.position(of: $0) } == [15, 0, 1, 2])
        #expect(table.position(of: first) == 3)
        #expect(table[last[0]] == nil)
        // Removing one from the middle: the entry homed at 0 moves back, but never before its home.
        #expect(table.removeValue(forKey: last[2]) == PointerNames.pointer(2))
        #expect([last[1], last[3], last[4]].map { table.position(of: $0) } == [15, 0, 1])
        #expect(table.position(of: first) == 2)
        #expect(table.removeValue(forKey: last[1]) == PointerNames.pointer(1))
        #expect([last[3], last[4]].map { table.position(of: $0) } == [15, 0])
        #expect(table.position(of: first) == 1)
        // The entry homed at 0 reaches its home...
        #expect(table.removeValue(forKey: last[3]) == PointerNames.pointer(3))
        #expect(table.position(of: last[4]) == 15)
        #expect(table.position(of: first) == 0)
        #expect(table[last[4]] == PointerNames.pointer(4))
        #expect(table.count == 2)
        #expect(table.removeValue(forKey: last[3]) == nil, "removed twice")
        // ...and, once there, does not move back across the wrap into a hole before it.
        #expect(table.removeValue(forKey: last[4]) == PointerNames.pointer(4))
        #expect(table.position(of: first) == 0)
        #expect(table[first] == PointerNames.pointer(99))
        #expect(table.count == 1)
        _ = stack
    }

    @Test func identicalHashesAreToldApartByEquality() throws {
        let (stack, made) = try maker()
        var maker = made
        let names = PointerNames()
        var table = IDTable(keys: names)
        let hash = Maker.hash(home: 14, capacity: 16)
        let ids = (0..<40).map { _ in maker.id(hash: hash) }
        for (number, id) in ids.enumerated() { #expect(table.updateValue(names.pointer(number, for: id), forKey: id) == nil) }
        #expect(table.capacity == 64, "grown twice, rehashing 40 entries of one hash")
        for (number, id) in ids.enumerated() { #expect(table[id] == PointerNames.pointer(number)) }
        // An equal ID that is another instance finds the entry.
        let twin = NSManagedObjectID(entity: ids[7].entity, store: maker.store, identifier: maker.store.identifier,
                                     baseHash: hash ^ Int(bitPattern: UInt(bitPattern: 8) &* UInt(Self.golden)), primaryKey: 8)
        #expect(twin == ids[7] && twin !== ids[7])
        #expect(table[twin] == PointerNames.pointer(7))
        #expect(table.updateValue(names.pointer(700, for: twin), forKey: twin) == PointerNames.pointer(7))
        for (number, id) in ids.enumerated() where number % 2 == 0 { #expect(table.removeValue(forKey: id) != nil) }
        for (number, id) in ids.enumerated() {
            #expect(table[id] == (number % 2 == 0 ? nil : PointerNames.pointer(number == 7 ? 700 : number)))
        }
        #expect(table.count == 20)
        _ = stack
    }

    /// Random insertions, replacements, removals and lookups, checked against a `Dictionary` after each
    /// step and in full every few hundred; hashes come from a few values shared by many IDs, from
    /// homes at the end of the table, and at random.
    @Test func randomOperationsAgreeWithADictionary() throws {
        let (stack, made) = try maker()
        var maker = made
        var random = SplitMix64(seed: 0x0CD_2026)
        let hot = (0..<4).map { Maker.hash(home: 60 + $0, capacity: 64, noise: random.next()) }
        let ids: [NSManagedObjectID] = (0..<300).map { number in
            switch number % 10 {
            case 0..<4: return maker.id(hash: hot[Int(random.next() % 4)])
            case 4..<7: return maker.id(hash: Maker.hash(home: 62 + Int(random.next() % 2), capacity: 64, noise: random.next()))
            default: return maker.id(hash: Int(bitPattern: UInt(random.next())))
            }
        }
        let names = PointerNames()
        var model = TableAgainstDictionary(IDTable(keys: names), names: names)
        var wrapped = 0
        for step in 0..<30_000 {
            let id = ids[Int(random.next() % UInt64(ids.count))]
            model.apply(step: step, to: id, choice: random.next() % 8, insertBelow: 3)
            if step % 500 == 499 {
                model.checkAll(ids)
                for id in model.expected.keys {
                    if let position = model.table.position(of: id), position < model.table.homeIndex(ofHash: id.cachedHash) { wrapped += 1 }
                }
            }
        }
        // The run did exercise clusters crossing the end of the table.
        #expect(wrapped > 0)
        _ = stack
    }
}
