import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

// Orders of value kinds beyond numbers, strings and dates, the same in memory as in SQL.

@Suite("Fetch: UUID order")
struct UUIDOrderTests {
    static func stack() throws -> TestStack {
        let model = NSManagedObjectModel()
        model.entities = [TestModel.entity("Tag", [TestModel.attribute("code", .UUIDAttributeType)])]
        return try TestStack(model: model)
    }

    /// NSUUID has `compare:` (byte by byte, the order of the 16-byte blobs SQLite sorts): a fetch sorted
    /// by a UUID, or comparing one with `>`, works on unsaved objects (judged in memory) as on saved rows.
    @Test func uuidsOrderInMemoryAsInTheStore() throws {
        let stack = try Self.stack()
        let low = UUID(uuidString: "00000000-0000-0000-0000-0000000000FF")!
        let mid = UUID(uuidString: "7F000000-0000-0000-0000-000000000000")!
        let high = UUID(uuidString: "FF000000-0000-0000-0000-000000000000")!
        for code in [high, low, mid] { stack.insert("Tag", ["code": code]) }
        func codes(_ objects: [NSManagedObject]) -> [UUID?] { objects.map { $0.value(forKey: "code") as? UUID } }
        #expect(try codes(stack.fetch("Tag", sortedBy: "code")) == [low, mid, high])
        #expect(try codes(stack.fetch("Tag", "code > %@", low, sortedBy: "code")) == [mid, high])
        try stack.context.save()
        let fresh = stack.newContext()
        #expect(try codes(stack.fetch("Tag", sortedBy: "code", in: fresh)) == [low, mid, high])
        #expect(try codes(stack.fetch("Tag", "code > %@", low, sortedBy: "code", in: fresh)) == [mid, high])
        let sorted = try stack.fetch("Tag", in: fresh).sorted(using: [NSSortDescriptor(key: "code", ascending: false)])
        #expect(codes(sorted) == [high, mid, low])
    }
}
