import Foundation

/// Property lists read from files the project does not control (a store's metadata, model files, keyed
/// archives in transformable columns), checked first where Linux Foundation would crash: its binary
/// property list reader dereferences a null pointer on a set object (marker 0xC_), which no writer of
/// these files makes but one flipped byte does, where Apple's Foundation returns a set.
package enum PropertyLists {
    /// Why a binary property list was refused.
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
    }

    /// The property list `data` holds, as `PropertyListSerialization` reads it; throws for data that is not
    /// one, and for a binary property list Linux Foundation cannot read without crashing.
    package static func propertyList(from data: Data) throws -> Any {
        try check(data)
        return try PropertyListSerialization.propertyList(from: data, format: nil)
    }

    /// Throws when `data` is a binary property list (`bplist00`) whose structure does not hold together,
    /// or which holds a set or an ordered set. Other data (XML or text property lists, which cannot hold
    /// sets, or no property list at all) passes, for the reader to judge.
    package static func check(_ data: Data) throws {
        guard data.count >= 8, data.prefix(8).elementsEqual("bplist00".utf8) else { return }
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            guard bytes.count >= 8 + 32 else { throw Malformed(description: "a binary property list too short for its trailer") }
            let trailer = bytes.count - 32
            func integer(at position: Int, size: Int) -> UInt64 {
                var value: UInt64 = 0
                for index in position..<(position + size) { value = value << 8 | UInt64(bytes[index]) }
                return value
            }
            let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
            let count = integer(at: trailer + 8, size: 8), top = integer(at: trailer + 16, size: 8)
            let table = integer(at: trailer + 24, size: 8)
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, top < count,
                  table >= 8, table < UInt64(trailer), count <= (UInt64(trailer) - table) / UInt64(offsetSize) else {
                throw Malformed(description: "a binary property list whose trailer does not describe its object table")
            }
            for index in 0..<Int(count) {
                // Compared before it becomes an Int: an eight-byte offset can exceed Int.max.
                let rawOffset = integer(at: Int(table) + index * offsetSize, size: offsetSize)
                guard rawOffset >= 8, rawOffset < table else {
                    throw Malformed(description: "a binary property list whose object \(index) lies outside its objects")
                }
                let offset = Int(rawOffset)
                let marker = bytes[offset]
                if marker >> 4 == 0xB || marker >> 4 == 0xC {
                    throw Malformed(description: "a binary property list holding a set (object \(index)), which Linux Foundation cannot read")
                }
                // A date is a big-endian double after its marker; one that is no number of seconds stops
                // Linux Foundation when the date is described.
                if marker == 0x33 {
                    guard offset + 9 <= Int(table), Double(bitPattern: integer(at: offset + 1, size: 8)).isFinite else {
                        throw Malformed(description: "a binary property list holding a date that is no number of seconds (object \(index))")
                    }
                }
            }
        }
    }
}
