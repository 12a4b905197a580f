import OCDGraph
import OCDTestSupport
import Testing

/// The radix sort that puts a save's objects in address order agrees with the standard library's sort.
@Suite struct AddressSortTests {
    @Test(arguments: [0, 1, 2, 3, 255, 256, 257, 5_000])
    func wordsComeOutAscendingAsSortWouldHaveThem(count: Int) {
        var random = SplitMix64(seed: UInt64(count) &+ 17)
        // Heap-like words (shared high bits, 16-byte aligned), words differing anywhere, and a few
        // repeated ones.
        let heapLike = (0..<count).map { _ in UInt(0x7F00_0000_0000) + UInt(random.next() % (1 << 30)) << 4 }
        let anywhere = (0..<count).map { _ in UInt(random.next()) }
        let repeated = (0..<count).map { _ in UInt(random.next() % 7) << 60 | 0x1000 }
        for words in [heapLike, anywhere, repeated] {
            #expect(AddressSort.sorted(words) == words.sorted())
        }
    }

    @Test func equalWordsAndTheExtremesStay() {
        #expect(AddressSort.sorted([5, 5, 5]) == [5, 5, 5])
        #expect(AddressSort.sorted([.max, 0, 1, .max - 1]) == [0, 1, .max - 1, .max])
    }
}
