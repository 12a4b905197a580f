/// Sorting of machine words by value, for putting a save's objects in address order.
///
/// The standard library's `sort()` (a merge sort) took about 490 instructions per object for the few
/// thousand objects of a save, several percent of saving deletes; a least-significant-digit radix
/// sort over the bits in which the words differ takes a few tens.
package enum AddressSort {
    /// `words` in ascending order.
    package static func sorted(_ words: [UInt]) -> [UInt] {
        guard words.count > 1 else { return words }
        // Only the bits in which some word differs from the first need passes: heap addresses share
        // their high bits and, aligned, their low ones.
        let first = words[0]
        var differing: UInt = 0
        for word in words { differing |= word ^ first }
        if differing == 0 { return words }
        let low = differing.trailingZeroBitCount
        let high = UInt.bitWidth - differing.leadingZeroBitCount
        let digitBits = 8, radix = 1 << digitBits
        var source = words
        var target = [UInt](repeating: 0, count: words.count)
        var counts = [Int](repeating: 0, count: radix)
        var shift = low
        while shift < high {
            counts.withUnsafeMutableBufferPointer { counts in
                for index in counts.indices { counts[index] = 0 }
                source.withUnsafeBufferPointer { source in
                    target.withUnsafeMutableBufferPointer { target in
                        for word in source { counts[Int((word >> UInt(shift)) & UInt(radix - 1))] += 1 }
                        var start = 0
                        for digit in 0..<radix {
                            let count = counts[digit]
                            counts[digit] = start
                            start += count
                        }
                        for word in source {
                            let digit = Int((word >> UInt(shift)) & UInt(radix - 1))
                            target[counts[digit]] = word
                            counts[digit] += 1
                        }
                    }
                }
            }
            swap(&source, &target)
            shift += digitBits
        }
        return source
    }
}
