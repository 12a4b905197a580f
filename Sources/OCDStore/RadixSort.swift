/// Least-significant-digit radix sorts of machine words, for the orders a save works in: the graph puts
/// a save's objects in address order (so that each pass over them touches memory in order), the SQLite
/// store writes rows in primary-key order (so that each write finds its B-tree page in the cache).
///
/// The standard library's `sort()` (a merge sort) took about 490 instructions per object for the few
/// thousand objects of a save, several percent of saving deletes; a radix sort over the bits in which
/// the words differ takes a few tens.
package enum RadixSort {
    /// `words` in ascending order.
    package static func sorted(_ words: [UInt]) -> [UInt] {
        guard words.count > 1 else { return words }
        var keys = words
        var positions: [UInt32] = []
        sort(&keys, carrying: &positions)
        return keys
    }

    /// The positions of `keys` in ascending order of their keys, equal keys in their given order; nil
    /// when the keys already ascend (the common case of a save of objects made or fetched in order).
    package static func order(of keys: [UInt]) -> [Int]? {
        guard keys.count > 1 else { return nil }
        var ascending = true
        var previous = keys[0]
        for key in keys {
            if key < previous { ascending = false; break }
            previous = key
        }
        if ascending { return nil }
        // Positions are carried as UInt32s; beyond them, the standard library's (stable) sort.
        guard keys.count <= Int(UInt32.max) else {
            return keys.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }
        }
        var sortedKeys = keys
        var positions = (0..<UInt32(keys.count)).map { $0 }
        sort(&sortedKeys, carrying: &positions)
        return positions.map { Int($0) }
    }

    /// Sorts `keys`, moving `payload` (empty, or one element per key) along with them; stable.
    private static func sort(_ keys: inout [UInt], carrying payload: inout [UInt32]) {
        // Only the bits in which some key differs from the first need passes: heap addresses share
        // their high bits and, aligned, their low ones; primary keys of one save share their high bits.
        let first = keys[0]
        var differing: UInt = 0
        for key in keys { differing |= key ^ first }
        if differing == 0 { return }
        let low = differing.trailingZeroBitCount
        let high = UInt.bitWidth - differing.leadingZeroBitCount
        let digitBits = 8, radix = 1 << digitBits
        let carries = !payload.isEmpty
        var targetKeys = [UInt](repeating: 0, count: keys.count)
        var targetPayload = [UInt32](repeating: 0, count: carries ? keys.count : 0)
        var counts = [Int](repeating: 0, count: radix)
        var shift = low
        while shift < high {
            counts.withUnsafeMutableBufferPointer { counts in
                for index in counts.indices { counts[index] = 0 }
                keys.withUnsafeBufferPointer { source in
                    targetKeys.withUnsafeMutableBufferPointer { target in
                        payload.withUnsafeBufferPointer { sourcePayload in
                            targetPayload.withUnsafeMutableBufferPointer { targetPayload in
                                for key in source { counts[Int((key >> UInt(shift)) & UInt(radix - 1))] += 1 }
                                var start = 0
                                for digit in 0..<radix {
                                    let count = counts[digit]
                                    counts[digit] = start
                                    start += count
                                }
                                for index in source.indices {
                                    let key = source[index]
                                    let digit = Int((key >> UInt(shift)) & UInt(radix - 1))
                                    target[counts[digit]] = key
                                    if carries { targetPayload[counts[digit]] = sourcePayload[index] }
                                    counts[digit] += 1
                                }
                            }
                        }
                    }
                }
            }
            swap(&keys, &targetKeys)
            if carries { swap(&payload, &targetPayload) }
            shift += digitBits
        }
    }
}
