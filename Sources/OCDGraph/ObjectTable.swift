import OCDStore

/// The registry's object pointers by ID. An ID goes into an array of its scope (a run: an entity and
/// store, or an entity's temporary IDs), at its key less the run's base, when the run's keys are dense,
/// as SQLite stores' `Z_PK`s are (they count up from 1 per entity) and as the temporary IDs of objects
/// inserted together are (numbers counted up in the process). Other IDs (negative keys, and keys far
/// from the rest of their run) go into an ``IDTable``.
///
/// Why: a hash spreads consecutive keys over the table, so looking up objects in the order they were
/// fetched took one cache miss each (three quarters of `existingObject(with:)` at N = 100,000); in a
/// run, consecutive keys are neighbours. A run also takes 8 bytes per object where the table takes 16
/// at a load of ¾ or less.
///
/// Each ID is in one place at most: an insertion looks in both first. A run's array stays within about
/// twice its live entries plus ``slack``: a key that would stretch it further goes into the table, and a
/// run whose entries thin out is laid out again over the keys it still has (or dropped when empty).
/// Package-visible for its tests (ObjectTableTests).
package struct ObjectTable<Keys: IDTableKeys> {
    private struct Run {
        /// Strong: the scope's entity and store identifier must outlive every ID compared with it.
        let scope: NSManagedObjectID.Scope
        /// The primary key of `slots[0]`.
        var base: Int64
        var slots: [ObjectPointer?]
        var count: Int
        /// The count under which a removal next looks whether the run can be laid out smaller: an eighth
        /// of the slots, then half the count at each look, so that a run whose live keys stay spread
        /// out is not scanned on every removal.
        var compactBelow: Int

        init(scope: NSManagedObjectID.Scope, base: Int64, slots: [ObjectPointer?], count: Int) {
            self.scope = scope
            self.base = base
            self.slots = slots
            self.count = count
            compactBelow = slots.count / 8
        }
    }

    /// How many empty slots a run may have beyond one per live entry.
    package static var slack: Int64 { 64 }
    /// Below this many slots a run is not laid out again as it thins out.
    private static var minimumCompactedCapacity: Int { 256 }
    /// Keys from here up go to the hashed table, so that a run's bounds never overflow.
    private static var largestRunKey: Int64 { 1 << 62 }

    private var runs: [Run] = []
    private var hashed: IDTable<Keys>
    private let keys: Keys

    /// An empty table whose entries' IDs `keys` tells from their pointers.
    package init(keys: Keys) {
        self.keys = keys
        hashed = IDTable(keys: keys)
    }

    package var count: Int { runs.reduce(hashed.count) { $0 + $1.count } }

    /// The index of the run of `scope`: by identity, else by equivalence (an ID of another scope object
    /// can equal one of this run's).
    @inline(__always)
    private func runIndex(of scope: NSManagedObjectID.Scope) -> Int? {
        for index in runs.indices where runs[index].scope === scope { return index }
        // Not by `baseHash` first: a scope made for tests of hashing has its own, equivalent or not.
        for index in runs.indices where runs[index].scope.isEquivalent(to: scope) { return index }
        return nil
    }

    /// `id`'s run and its slot there: the slot is nil when the key lies outside the run's array.
    @inline(__always)
    private func place(of id: NSManagedObjectID) -> (run: Int, slot: Int?)? {
        guard !runs.isEmpty, let run = runIndex(of: id.scope) else { return nil }
        let offset = id.rawKey &- runs[run].base
        return (run, offset >= 0 && offset < Int64(runs[run].slots.count) ? Int(offset) : nil)
    }

    package subscript(id: NSManagedObjectID) -> ObjectPointer? {
        if let (run, slot) = place(of: id), let slot, let pointer = runs[run].slots[slot], keys.entry(pointer, isFor: id) {
            return pointer
        }
        return hashed.count == 0 ? nil : hashed[id]
    }

    /// Sets `id`'s pointer; returns the one it replaced.
    package mutating func updateValue(_ pointer: ObjectPointer, forKey id: NSManagedObjectID) -> ObjectPointer? {
        let place = place(of: id)
        if let (run, slot) = place, let slot, let old = runs[run].slots[slot], keys.entry(old, isFor: id) {
            runs[run].slots[slot] = pointer
            return old
        }
        // A key no run would take goes to the hashed table, whose one search also finds an entry there
        // (keys spread thin, as a predicate's matches are, land here: one search rather than two).
        guard id.rawKey >= 0, id.rawKey < Self.largestRunKey else { return hashed.updateValue(pointer, forKey: id) }
        if let (run, slot) = place {
            // Taken by another ID's entry only if IDs of equivalent scopes could differ with one key: the
            // hashed table then keeps them apart.
            let fits = slot.map { runs[run].slots[$0] == nil } ?? canWiden(run, toTake: id.rawKey)
            guard fits else { return hashed.updateValue(pointer, forKey: id) }
        }
        if hashed.count > 0, hashed[id] != nil { return hashed.updateValue(pointer, forKey: id) }
        guard let (run, slot) = place else {
            var slots = [ObjectPointer?](repeating: nil, count: 16)
            slots[0] = pointer
            runs.append(Run(scope: id.scope, base: id.rawKey, slots: slots, count: 1))
            return nil
        }
        if slot == nil { widen(run, toTake: id.rawKey) }
        runs[run].slots[Int(id.rawKey - runs[run].base)] = pointer
        runs[run].count += 1
        return nil
    }

    /// Removes `id`'s entry; returns its pointer.
    package mutating func removeValue(forKey id: NSManagedObjectID) -> ObjectPointer? {
        if let (run, slot) = place(of: id), let slot, let pointer = runs[run].slots[slot], keys.entry(pointer, isFor: id) {
            runs[run].slots[slot] = nil
            runs[run].count -= 1
            compactIfSparse(run)
            return pointer
        }
        return hashed.count == 0 ? nil : hashed.removeValue(forKey: id)
    }

    /// Removes `id`'s entry if it holds `pointer`, in one search; whether it did. For an object leaving
    /// from its `deinit`, whose ID may name another object by then.
    package mutating func removeValue(forKey id: NSManagedObjectID, ifItIs pointer: ObjectPointer) -> Bool {
        if let (run, slot) = place(of: id), let slot, let held = runs[run].slots[slot], keys.entry(held, isFor: id) {
            guard held == pointer else { return false }
            runs[run].slots[slot] = nil
            runs[run].count -= 1
            compactIfSparse(run)
            return true
        }
        return hashed.count > 0 && hashed.removeValue(forKey: id, ifItIs: pointer)
    }

    /// The pointers of every entry.
    package var values: [ObjectPointer] {
        var values = hashed.values
        for run in runs { values.append(contentsOf: run.slots.lazy.compactMap { $0 }) }
        return values
    }

    /// For tests: how many times removals scanned a run for its live keys.
    package private(set) var compactionScans = 0
    /// For tests: how many entries are in runs and in the hashed table, and the key range of `id`'s run.
    package var countInRuns: Int { runs.reduce(0) { $0 + $1.count } }
    package var countHashed: Int { hashed.count }
    package func runKeys(of id: NSManagedObjectID) -> Range<Int64>? {
        place(of: id).map { runs[$0.run].base ..< runs[$0.run].base + Int64(runs[$0.run].slots.count) }
    }

    /// Whether `run` may be laid out again to take `key`: not when its array would be mostly empty.
    private func canWiden(_ run: Int, toTake key: Int64) -> Bool {
        let base = runs[run].base, end = base + Int64(runs[run].slots.count)
        return max(end, key + 1) - min(base, key) <= 2 * Int64(runs[run].count + 1) + Self.slack
    }

    /// Lays `run` out again to take `key` (``canWiden(_:toTake:)`` said it may), doubling its array at
    /// least, so that keys arriving in order, either way, cost amortized constant time.
    private mutating func widen(_ run: Int, toTake key: Int64) {
        let base = runs[run].base, end = base + Int64(runs[run].slots.count)
        let low = min(base, key), high = max(end, key + 1)
        let capacity = max(2 * Int64(runs[run].slots.count), Self.powerOfTwo(atLeast: high - low))
        // Growing downwards keeps the end, so that keys arriving in descending order double it too.
        relayout(run, base: key < base ? max(0, high - capacity) : low, capacity: Int(capacity))
    }

    /// Drops an empty run; lays a thinned-out one again over the span of its live keys, when that span
    /// is dense enough (a run whose few live keys lie far apart keeps its array, within the bound it
    /// was grown under).
    private mutating func compactIfSparse(_ run: Int) {
        if runs[run].count == 0 {
            runs.remove(at: run)
            return
        }
        let capacity = runs[run].slots.count
        guard capacity > Self.minimumCompactedCapacity, runs[run].count < runs[run].compactBelow else { return }
        runs[run].compactBelow = runs[run].count / 2
        compactionScans += 1
        guard let first = runs[run].slots.firstIndex(where: { $0 != nil }),
              let last = runs[run].slots.lastIndex(where: { $0 != nil }) else { return }
        let span = Int64(last - first + 1)
        guard span <= 2 * Int64(runs[run].count) + Self.slack else { return }
        relayout(run, base: runs[run].base + Int64(first), capacity: Int(Self.powerOfTwo(atLeast: max(span, 16))))
    }

    private mutating func relayout(_ run: Int, base: Int64, capacity: Int) {
        var slots = [ObjectPointer?](repeating: nil, count: capacity)
        let shift = Int(runs[run].base - base)
        for (index, pointer) in runs[run].slots.enumerated() where pointer != nil { slots[index + shift] = pointer }
        runs[run].slots = slots
        runs[run].base = base
        runs[run].compactBelow = capacity / 8
    }

    private static func powerOfTwo(atLeast value: Int64) -> Int64 {
        value <= 1 ? 1 : Int64(1) << (64 - (value - 1).leadingZeroBitCount)
    }
}
