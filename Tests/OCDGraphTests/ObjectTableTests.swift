import Foundation
import OCDTestSupport
import Testing
import OCDGraph
import OCDModel
import OCDStore

// The registry's table (ObjectTable, decision D32): IDs with dense keys go into an array per scope (an
// entity and store, or an entity's temporary IDs), the rest into the hashed IDTable. Every check is a lookup, a replacement or a
// removal through the table's API, so an ID left in two places, or in neither, shows.

@Suite("Object registry: runs of dense keys beside the hashed table")
struct ObjectTableTests {
    /// A stack (kept alive by the caller), and the scopes of Employee and Department in its store.
    private func scopes() throws -> (TestStack, employees: NSManagedObjectID.Scope, departments: NSManagedObjectID.Scope) {
        let stack = try TestStack()
        let employee = try #require(stack.model.entitiesByName["Employee"])
        let department = try #require(stack.model.entitiesByName["Department"])
        return (stack, NSManagedObjectID.Scope(entity: employee, store: stack.store, identifier: stack.store.identifier),
                NSManagedObjectID.Scope(entity: department, store: stack.store, identifier: stack.store.identifier))
    }

    @Test func consecutiveKeysFillOneRunInEitherOrder() throws {
        let (stack, employees, departments) = try scopes()
        let names = PointerNames()
        var table = ObjectTable(keys: names)
        let ascending = (1...1000).map { NSManagedObjectID(scope: employees, primaryKey: Int64($0)) }
        let descending = (1...1000).reversed().map { NSManagedObjectID(scope: departments, primaryKey: Int64($0)) }
        for (number, id) in ascending.enumerated() { #expect(table.updateValue(names.pointer(number, for: id), forKey: id) == nil) }
        for (number, id) in descending.enumerated() { #expect(table.updateValue(names.pointer(5000 + number, for: id), forKey: id) == nil) }
        #expect(table.countInRuns == 2000)
        #expect(table.countHashed == 0)
        #expect(table.count == 2000)
        for (number, id) in ascending.enumerated() { #expect(table[id] == PointerNames.pointer(number)) }
        for (number, id) in descending.enumerated() { #expect(table[id] == PointerNames.pointer(5000 + number)) }
        // Each run's array doubled as it grew, upwards for one and downwards for the other.
        let up = try #require(table.runKeys(of: ascending[0]))
        let down = try #require(table.runKeys(of: descending[0]))
        #expect(up.contains(1) && up.contains(1000) && up.count <= 2048)
        #expect(down.contains(1) && down.contains(1000) && down.count <= 2048)
        #expect(Set(table.values.map(\.raw)).count == 2000)
        _ = stack
    }

    @Test func aKeyFarFromItsRunIsHashedAndStaysReachableOnceTheRunReachesIt() throws {
        let (stack, employees, _) = try scopes()
        let names = PointerNames()
        var table = ObjectTable(keys: names)
        let id = { (key: Int64) in NSManagedObjectID(scope: employees, primaryKey: key) }
        for key in 1...10 { _ = table.updateValue(names.pointer(Int(key), for: id(Int64(key))), forKey: id(Int64(key))) }
        let far = id(500)
        #expect(table.updateValue(names.pointer(500, for: far), forKey: far) == nil)
        #expect(table.countHashed == 1, "500 is far from 1...10: the run would be mostly empty")
        #expect(table[far] == PointerNames.pointer(500))
        // The run grows through 500 as keys arrive in order: the entry in the hashed table is still the
        // one found, replaced and removed, never doubled by one in the run.
        for key in 11...700 where key != 500 {
            #expect(table.updateValue(names.pointer(key, for: id(Int64(key))), forKey: id(Int64(key))) == nil)
        }
        #expect(try #require(table.runKeys(of: far)).contains(500))
        #expect(table.countHashed == 1)
        #expect(table[id(500)] == PointerNames.pointer(500))
        #expect(table.updateValue(names.pointer(9500, for: far), forKey: far) == PointerNames.pointer(500))
        #expect(table.countHashed == 1)
        #expect(table.count == 700)
        #expect(table.removeValue(forKey: id(500)) == PointerNames.pointer(9500))
        #expect(table[far] == nil)
        #expect(table.removeValue(forKey: far) == nil, "removed twice")
        #expect(table.count == 699)
        _ = stack
    }

    @Test func anEqualIDOfAnotherScopeObjectFindsTheEntry() throws {
        let (stack, employees, _) = try scopes()
        let names = PointerNames()
        var table = ObjectTable(keys: names)
        let twinScope = NSManagedObjectID.Scope(entity: employees.entity, store: stack.store, identifier: stack.store.identifier)
        let id = NSManagedObjectID(scope: employees, primaryKey: 7)
        let twin = NSManagedObjectID(scope: twinScope, primaryKey: 7)
        #expect(twin == id && twin.scope !== id.scope)
        #expect(table.updateValue(names.pointer(1, for: id), forKey: id) == nil)
        #expect(table[twin] == PointerNames.pointer(1))
        #expect(table.updateValue(names.pointer(2, for: twin), forKey: twin) == PointerNames.pointer(1))
        #expect(table.count == 1)
        // A neighbour made through the other scope object joins the same run.
        let neighbour = NSManagedObjectID(scope: twinScope, primaryKey: 8)
        #expect(table.updateValue(names.pointer(3, for: neighbour), forKey: neighbour) == nil)
        #expect(table.countInRuns == 2)
        #expect(table.removeValue(forKey: id) == PointerNames.pointer(2))
        #expect(table[twin] == nil)
        _ = stack
    }

    @Test func negativeAndHugeKeysAreHashed() throws {
        let (stack, employees, _) = try scopes()
        let names = PointerNames()
        var table = ObjectTable(keys: names)
        let ids = [NSManagedObjectID(scope: employees, primaryKey: -3), NSManagedObjectID(scope: employees, primaryKey: .max),
                   NSManagedObjectID(scope: employees, primaryKey: 1 << 62)]
        for (number, id) in ids.enumerated() { #expect(table.updateValue(names.pointer(number, for: id), forKey: id) == nil) }
        #expect(table.countHashed == 3)
        #expect(table.countInRuns == 0)
        for (number, id) in ids.enumerated() { #expect(table[id] == PointerNames.pointer(number)) }
        _ = stack
    }

    @Test func temporaryIDsMadeTogetherShareARunOfTheirOwn() throws {
        let (stack, employees, _) = try scopes()
        let names = PointerNames()
        var table = ObjectTable(keys: names)
        let ids = (0..<300).map { _ in NSManagedObjectID(temporaryFor: employees.entity) }
        for (number, id) in ids.enumerated() { #expect(table.updateValue(names.pointer(number, for: id), forKey: id) == nil) }
        // Numbers are counted in the whole process: tests running meanwhile may leave gaps that send some
        // IDs to the hashed table, but the first starts a run and its neighbours join it.
        #expect(table.countInRuns > 0)
        #expect(table.countInRuns + table.countHashed == 300)
        for (number, id) in ids.enumerated() { #expect(table[id] == PointerNames.pointer(number)) }
        // A temporary ID never finds the entry of a permanent one with the same number, nor the reverse.
        let permanent = NSManagedObjectID(scope: employees, primaryKey: ids[0].rawKey)
        #expect(table[permanent] == nil)
        #expect(table.updateValue(names.pointer(1000, for: permanent), forKey: permanent) == nil)
        #expect(table[permanent] == PointerNames.pointer(1000))
        #expect(table[ids[0]] == PointerNames.pointer(0))
        // Moved to permanent IDs, as a save does: the temporary run empties and goes.
        for (number, id) in ids.enumerated() { #expect(table.removeValue(forKey: id) == PointerNames.pointer(number)) }
        #expect(table.count == 1)
        #expect(table.runKeys(of: ids[0]) == nil)
        _ = stack
    }

    /// A table holding Employee keys 1…4000 (pointer k - 1 for key k) in one run.
    private func tableWithKeysUpTo4000(_ employees: NSManagedObjectID.Scope) -> (ObjectTable<PointerNames>, PointerNames, [NSManagedObjectID]) {
        let names = PointerNames()
        var table = ObjectTable(keys: names)
        let ids = (1...4000).map { NSManagedObjectID(scope: employees, primaryKey: Int64($0)) }
        for (number, id) in ids.enumerated() { _ = table.updateValue(names.pointer(number, for: id), forKey: id) }
        return (table, names, ids)
    }

    @Test func aThinnedRunIsLaidOutAgainOverItsLiveKeysAndAnEmptyOneDropped() throws {
        let (stack, employees, departments) = try scopes()
        let (filled, names, ids) = tableWithKeysUpTo4000(employees)
        var table = filled
        let department = NSManagedObjectID(scope: departments, primaryKey: 1)
        _ = table.updateValue(names.pointer(9999, for: department), forKey: department)
        #expect(try #require(table.runKeys(of: ids[0])).count == 4096)
        // Released in key order, all but the last 100: the run shrinks to the keys still alive.
        for (number, id) in ids.enumerated().prefix(3900) { #expect(table.removeValue(forKey: id) == PointerNames.pointer(number)) }
        let keys = try #require(table.runKeys(of: ids[3999]))
        #expect(keys.contains(3901) && keys.contains(4000) && keys.count <= 512, "laid out again over \(keys)")
        for (number, id) in ids.enumerated() { #expect(table[id] == (number >= 3900 ? PointerNames.pointer(number) : nil)) }
        #expect(table.count == 101)
        // The first of two runs empties: it goes, and the other keeps its entry.
        for id in ids[3900...] { _ = table.removeValue(forKey: id) }
        #expect(table.runKeys(of: ids[0]) == nil, "an empty run is dropped")
        #expect(table[department] == PointerNames.pointer(9999))
        #expect(table.count == 1)
        // A new run starts wherever keys start again.
        let later = NSManagedObjectID(scope: employees, primaryKey: 90_000)
        #expect(table.updateValue(names.pointer(1, for: later), forKey: later) == nil)
        #expect(table.countInRuns == 2)
        _ = stack
    }

    @Test func aRunWhoseLiveKeysStaySpreadOutKeepsItsArrayAndItsEntries() throws {
        let (stack, employees, _) = try scopes()
        let (filled, _, ids) = tableWithKeysUpTo4000(employees)
        var table = filled
        // Every 40th stays: 100 keys over the whole range, too spread out for a smaller array.
        for (number, id) in ids.enumerated() where number % 40 != 0 { _ = table.removeValue(forKey: id) }
        #expect(try #require(table.runKeys(of: ids[0])).count == 4096)
        for (number, id) in ids.enumerated() { #expect(table[id] == (number % 40 == 0 ? PointerNames.pointer(number) : nil)) }
        for (number, id) in ids.enumerated() where number % 40 == 0 { #expect(table.removeValue(forKey: id) == PointerNames.pointer(number)) }
        #expect(table.count == 0)
        #expect(table.runKeys(of: ids[0]) == nil)
        // The run was scanned for its live keys each time its count halved, not on every removal.
        #expect(table.compactionScans <= 12, "\(table.compactionScans) scans")
        _ = stack
    }

    @Test func scopesOfEqualIDsMatchByEntityNameAcrossModels() throws {
        let (stack, employees, departments) = try scopes()
        let otherModel = TestModel.make()
        let otherEmployee = try #require(otherModel.entitiesByName["Employee"])
        #expect(otherEmployee !== employees.entity)
        let otherScope = NSManagedObjectID.Scope(entity: otherEmployee, store: stack.store, identifier: stack.store.identifier)
        // A scope of another entity that shares the first's hash is still another run.
        let sameHash = NSManagedObjectID.Scope(entity: departments.entity, store: stack.store, identifier: stack.store.identifier,
                                               baseHash: employees.baseHash)
        let names = PointerNames()
        var table = ObjectTable(keys: names)
        let id = NSManagedObjectID(scope: employees, primaryKey: 5)
        #expect(table.updateValue(names.pointer(1, for: id), forKey: id) == nil)
        #expect(table[NSManagedObjectID(scope: otherScope, primaryKey: 5)] == PointerNames.pointer(1))
        let impostor = NSManagedObjectID(scope: sameHash, primaryKey: 5)
        #expect(impostor != id)
        #expect(table[impostor] == nil)
        #expect(table.updateValue(names.pointer(2, for: impostor), forKey: impostor) == nil)
        #expect(table[id] == PointerNames.pointer(1) && table[impostor] == PointerNames.pointer(2))
        #expect(table.countInRuns == 2)
        _ = stack
    }

    @Test func keysFromTwoToTheSixtySecondAreHashed() throws {
        let (stack, employees, departments) = try scopes()
        let names = PointerNames()
        var table = ObjectTable(keys: names)
        let largest = NSManagedObjectID(scope: employees, primaryKey: (1 << 62) - 1)
        let tooLarge = NSManagedObjectID(scope: departments, primaryKey: 1 << 62)
        #expect(table.updateValue(names.pointer(1, for: largest), forKey: largest) == nil)
        #expect(table.updateValue(names.pointer(2, for: tooLarge), forKey: tooLarge) == nil)
        #expect(table.countInRuns == 1)
        #expect(table.countHashed == 1)
        #expect(table.runKeys(of: largest)?.contains((1 << 62) - 1) == true)
        #expect(table[largest] == PointerNames.pointer(1) && table[tooLarge] == PointerNames.pointer(2))
        // Far from the run at 2^62 - 1, a small key of the same entity is hashed.
        let small = NSManagedObjectID(scope: employees, primaryKey: 3)
        #expect(table.updateValue(names.pointer(3, for: small), forKey: small) == nil)
        #expect(table.countHashed == 2)
        #expect(table[small] == PointerNames.pointer(3))
        _ = stack
    }

    /// Random insertions, replacements, removals and lookups over keys that are mostly dense, with some
    /// far away, in two entities, through two scope objects of one of them, and temporary IDs, checked
    /// against a `Dictionary` after each step and in full every few hundred.
    @Test func randomOperationsAgreeWithADictionary() throws {
        let (stack, employees, departments) = try scopes()
        let twinScope = NSManagedObjectID.Scope(entity: employees.entity, store: stack.store, identifier: stack.store.identifier)
        var random = SplitMix64(seed: 0x0CD_2611)
        var ids: [NSManagedObjectID] = []
        for key in 1...600 {
            let scope = key % 3 == 0 ? departments : (key % 7 == 0 ? twinScope : employees)
            ids.append(NSManagedObjectID(scope: scope, primaryKey: Int64(key)))
        }
        for _ in 0..<60 { ids.append(NSManagedObjectID(scope: employees, primaryKey: Int64(random.next() % 1_000_000))) }
        for _ in 0..<40 { ids.append(NSManagedObjectID(temporaryFor: employees.entity)) }
        // Equal IDs made through the other scope object: the same entries.
        for key in stride(from: 1, through: 600, by: 11) where key % 3 != 0 {
            ids.append(NSManagedObjectID(scope: key % 7 == 0 ? employees : twinScope, primaryKey: Int64(key)))
        }
        let names = PointerNames()
        var model = TableAgainstDictionary(ObjectTable(keys: names), names: names)
        var sawHashed = false, sawRuns = false
        for step in 0..<40_000 {
            // Sweeps through the keys in order, as fetches do, and single random picks.
            let id = ids[step % 4 < 2 ? (step / 4) % ids.count : Int(random.next() % UInt64(ids.count))]
            model.apply(step: step, to: id, choice: random.next() % 8, insertBelow: 4)
            sawHashed = sawHashed || model.table.countHashed > 0
            sawRuns = sawRuns || model.table.countInRuns > 100
            if step % 500 == 499 { model.checkAll(ids) }
        }
        #expect(sawHashed && sawRuns)
        _ = stack
    }
}
