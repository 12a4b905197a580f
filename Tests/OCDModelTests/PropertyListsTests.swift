import Foundation
import Testing
@testable import OCDModel

/// Binary property lists that Linux Foundation would crash on are refused before it reads them.
@Suite struct PropertyListsTests {
    /// `{"k": set(...)}`: a dictionary whose value is a set (marker 0xC1), 52 bytes. Linux Foundation's
    /// reader dereferenced a null pointer on it.
    static let dictionaryHoldingASet = Data([
        0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0xD1, 0x01, 0x02, 0x51, 0x6B, 0xC1, 0x03, 0x50,
        0x08, 0x0B, 0x0D, 0x0F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x10,
    ])

    @Test func aBinaryPropertyListHoldingASetIsRefused() {
        #expect(throws: PropertyLists.Malformed.self) { try PropertyLists.propertyList(from: Self.dictionaryHoldingASet) }
        do {
            try PropertyLists.check(Self.dictionaryHoldingASet)
            Issue.record("accepted")
        } catch {
            #expect("\(error)".contains("holding a set"))
        }
        // A keyed archive whose property list holds one reads as nothing.
        #expect(KeyedArchives.rootObject(of: Self.dictionaryHoldingASet) == nil)
    }

    @Test func wellFormedPropertyListsAreRead() throws {
        let value: [String: Any] = ["name": "Ann", "ages": [1, 2, 3], "nested": ["flag": true], "data": Data([1, 2])]
        for format in [PropertyListSerialization.PropertyListFormat.binary, .xml] {
            let data = try PropertyListSerialization.data(fromPropertyList: value, format: format, options: 0)
            let read = try #require(try PropertyLists.propertyList(from: data) as? [String: Any])
            #expect(read["name"] as? String == "Ann")
            #expect(read["ages"] as? [Int] == [1, 2, 3])
        }
    }

    /// A trailer or offset table that does not hold together is refused rather than followed.
    @Test func aBinaryPropertyListWithABrokenTableIsRefused() throws {
        let good = try PropertyListSerialization.data(fromPropertyList: ["a": "b"], format: .binary, options: 0)
        #expect(throws: PropertyLists.Malformed.self) { try PropertyLists.check(good.prefix(20)) }
        var badTable = good
        // The offset table's position (the trailer's last eight bytes) past the end.
        badTable.replaceSubrange((badTable.count - 8)..<badTable.count, with: [0x7F, 0, 0, 0, 0, 0, 0, 0])
        #expect(throws: PropertyLists.Malformed.self) { try PropertyLists.check(badTable) }
        var badOffset = good
        // The first object's offset pointing into the header.
        let table = Int(badOffset[badOffset.count - 1])
        badOffset[table] = 2
        #expect(throws: PropertyLists.Malformed.self) { try PropertyLists.check(badOffset) }
        // An eight-byte offset beyond Int.max (the reader compared it as an Int, and stopped).
        var huge = Array("bplist00".utf8) + [0x08]
        huge += [UInt8](repeating: 0xFF, count: 8)
        huge += [0, 0, 0, 0, 0, 0, 8, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 0, 0, 0, 0, 9]
        #expect(throws: PropertyLists.Malformed.self) { try PropertyLists.check(Data(huge)) }
        // Not a binary property list: left to the reader to judge.
        try PropertyLists.check(Data("<plist><string>x</string></plist>".utf8))
        try PropertyLists.check(Data([1, 2, 3]))
    }

    /// A date that is no number of seconds (NaN) is refused: Linux Foundation stops describing it.
    @Test func aBinaryPropertyListHoldingANaNDateIsRefused() throws {
        var data = try PropertyListSerialization.data(fromPropertyList: ["when": Date(timeIntervalSinceReferenceDate: 1.5)], format: .binary, options: 0)
        try PropertyLists.check(data)
        let marker = try #require(data.firstIndex(of: 0x33))
        data.replaceSubrange((marker + 1)..<(marker + 9), with: withUnsafeBytes(of: Double.nan.bitPattern.bigEndian) { Data($0) })
        #expect(throws: PropertyLists.Malformed.self) { try PropertyLists.check(data) }
    }
}
