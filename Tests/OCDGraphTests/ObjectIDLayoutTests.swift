import Foundation
import OCDGraph
import OCDModel
import OCDStore
import Testing
import OCDTestSupport

/// An ID holds its key in one word, temporary or permanent as its scope says (issue 6's memory per
/// object): these pin what that must not change.
@Suite("Object IDs: one word of key, told apart by their scope")
struct ObjectIDLayoutTests {
    let entity = TestModel.make().entitiesByName["Company"]!

    @Test func aTemporaryIDIsNeverEqualToAPermanentOneWithTheSameNumber() {
        let temporary = NSManagedObjectID(temporaryFor: entity)
        // A scope with no store, as the temporary scope has: only its being temporary tells them apart.
        let permanent = NSManagedObjectID(scope: NSManagedObjectID.Scope(entity: entity, store: nil, identifier: nil), primaryKey: temporary.rawKey)
        #expect(temporary.isTemporaryID && !permanent.isTemporaryID)
        #expect(temporary != permanent && permanent != temporary)
        #expect(!temporary.isEqual(permanent))
        #expect(temporary.primaryKey == nil && permanent.primaryKey == temporary.rawKey)
        #expect(permanent.key == .permanent(temporary.rawKey))
    }

    @Test func temporaryIDsAreDistinctAndKeepTheirUUID() throws {
        let ids = (0..<100).map { _ in NSManagedObjectID(temporaryFor: entity) }
        #expect(Set(ids).count == ids.count)
        #expect(Set(ids.map { $0.uriRepresentation() }).count == ids.count)
        for id in ids {
            #expect(id == id.copy() as? NSManagedObjectID)
            let uri = id.uriRepresentation().absoluteString
            // x-coredata:///Company/t<UUID>, the same each time it is asked.
            #expect(uri.hasPrefix("x-coredata:///Company/t"))
            #expect(UUID(uuidString: String(uri.dropFirst("x-coredata:///Company/t".count))) != nil, "\(uri)")
            #expect(uri == id.uriRepresentation().absoluteString)
            guard case .temporary(let uuid) = id.key else { Issue.record("\(id) has no temporary key"); continue }
            #expect(uri.hasSuffix(uuid.uuidString))
        }
    }

    /// Three words after the object header: the allocator's 48-byte size class (usable 40 bytes), where the
    /// two-case key of a UUID made it 64.
    @Test func anIDIsAFortyByteObject() throws {
        let temporary = NSManagedObjectID(temporaryFor: entity)
        let permanent = NSManagedObjectID(scope: NSManagedObjectID.Scope(entity: entity, store: nil, identifier: nil), primaryKey: 1)
        for id in [temporary, permanent] {
            guard let size = allocationUsableSize(of: id) else { return }
            #expect(size <= 40, "an ID takes \(size) usable bytes")
        }
    }
}
