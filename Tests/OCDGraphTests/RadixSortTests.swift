import OCDStore
import OCDTestSupport
import Testing

/// The radix sorts that put a save's objects in address order and the SQLite store's writes in
/// primary-key order agree with the standard library's sort.
@Suite struct RadixSortTests {
    @Test(arguments: [0, 1, 2, 3, 255, 256, 257, 5_000])
    func wordsComeOutAscendingAsSortWouldHaveThem(count: Int) {
        for words in Self.samples(count: count) {
            #expect(RadixSort.sorted(words) == words.sorted())
        }
    }

    @Test func equalWordsAndTheExtremesStay() {
        #expect(RadixSort.sorted([5, 5, 5]) == [5, 5, 5])
        #expect(RadixSort.sorted([.max, 0, 1, .max - 1]) == [0, 1, .max - 1, .max])
    }

    @Test(arguments: [2, 3, 255, 256, 257, 5_000])
    func anOrderIsTheStableSortsPermutation(count: Int) {
        for keys in Self.samples(count: count) {
            // Positions sorted by key, equal keys by position: what a stable sort gives.
            let expected = keys.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }
            let order = RadixSort.order(of: keys)
            if expected == Array(keys.indices) {
                #expect(order == nil)
            } else {
                #expect(order == expected)
            }
        }
    }

    @Test func keysInOrderNeedNoPermutation() {
        #expect(RadixSort.order(of: []) == nil)
        #expect(RadixSort.order(of: [7]) == nil)
        #expect(RadixSort.order(of: [1, 2, 2, 9, 1 << 40]) == nil)
        #expect(RadixSort.order(of: [2, 1]) == [1, 0])
        #expect(RadixSort.order(of: [3, 1, 3, 1]) == [1, 3, 0, 2])
    }

    /// Heap-like words (shared high bits, 16-byte aligned), words differing anywhere, and a few repeated
    /// ones, as primary keys of a table repeat none but share their high bits.
    private static func samples(count: Int) -> [[UInt]] {
        var random = SplitMix64(seed: UInt64(count) &+ 17)
        let heapLike = (0..<count).map { _ in UInt(0x7F00_0000_0000) + UInt(random.next() % (1 << 30)) << 4 }
        let anywhere = (0..<count).map { _ in UInt(random.next()) }
        let repeated = (0..<count).map { _ in UInt(random.next() % 7) << 60 | 0x1000 }
        return [heapLike, anywhere, repeated]
    }
}
