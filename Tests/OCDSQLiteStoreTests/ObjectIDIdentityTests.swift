import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore

// A permanent object ID is its store's identifier, its entity's name and its primary key: equal IDs
// made by different store objects (two coordinators on one file) hash alike, and an ID keeps the
// identifier its store had when it was made.
@Suite("Object IDs: equality and hashing across store objects")
struct ObjectIDIdentityTests {
    @Test func idsOfOneFileFromTwoCoordinatorsAreEqualAndHashAlike() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make()
        let first = try SQLiteStack(model: model, url: url)
        let second = try SQLiteStack(model: model, url: url)
        try withExtendedLifetime((first.context, second.context)) {
            for index in 0..<50 { first.insert("Company", ["name": "C\(index)"]) }
            try first.context.save()
            let mine = try first.fetch("Company").map(\.objectID)
            let theirs = try second.fetch("Company").map(\.objectID)
            #expect(mine.count == 50)
            #expect(Set(mine) == Set(theirs))
            let byTheirs = Dictionary(uniqueKeysWithValues: theirs.map { ($0, $0) })
            for id in mine {
                let other = try #require(byTheirs[id])
                #expect(other !== id)
                #expect(other.hash == id.hash)
                #expect(other.uriRepresentation() == id.uriRepresentation())
                #expect(second.store.primaryKey(of: id) == first.store.primaryKey(of: id))
            }
            // Distinct keys, distinct hashes: consecutive primary keys do not collide.
            #expect(Set(mine.map(\.hash)).count == mine.count)
        }
    }

    /// A store identifier is any string a file's metadata holds (Z_UUID): one a URL cannot hold as it is
    /// (spaces, `%`, braces, quotes) is percent-encoded in the ID's URI, which still resolves to the ID.
    /// Building such a URI crashed before (a force-unwrapped `URL(string:)`), and with it every
    /// description of the ID.
    @Test func anIdentifierAURLCannotHoldIsPercentEncodedInTheURI() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        try withExtendedLifetime(stack.context) {
            stack.store.identifier = "my store {%zz} \"x\""
            let company = stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
            let id = company.objectID
            let uri = id.uriRepresentation()
            #expect(uri.absoluteString == "x-coredata://my%20store%20%7B%25zz%7D%20%22x%22/Company/p\(try #require(stack.store.primaryKey(of: id)))")
            #expect(stack.coordinator.managedObjectID(forURIRepresentation: uri) == id)
            #expect("\(id)".contains("Company"))
            // A UUID, as Core Data makes them, is left as it is.
            let plain = UUID().uuidString
            stack.store.identifier = plain
            let other = stack.insert("Company", ["name": "Other"])
            try stack.context.save()
            #expect(other.objectID.uriRepresentation().absoluteString.hasPrefix("x-coredata://\(plain)/Company/p"))
        }
    }

    /// Two stores of one model in two files, and two of its entities (the folder holds the files).
    private struct TwoStores {
        let folder = TemporaryFolder()
        let one: SQLiteStack, two: SQLiteStack
        let company: NSEntityDescription, project: NSEntityDescription

        init() throws {
            let model = TestModel.make()
            one = try SQLiteStack(model: model, url: folder.file("One.sqlite"))
            two = try SQLiteStack(model: model, url: folder.file("Two.sqlite"))
            company = try #require(model.entitiesByName["Company"])
            project = try #require(model.entitiesByName["Project"])
        }
    }

    @Test func theSameKeyOfAnotherEntityOrStoreIsAnotherID() throws {
        let stores = try TwoStores()
        let (one, two, company, project) = (stores.one, stores.two, stores.company, stores.project)
        let a = one.store.objectID(for: company, primaryKey: 7)
        #expect(a == one.store.objectID(for: company, primaryKey: 7))
        #expect(a.hash == one.store.objectID(for: company, primaryKey: 7).hash)
        #expect(a != one.store.objectID(for: company, primaryKey: 8))
        #expect(a != one.store.objectID(for: project, primaryKey: 7))
        #expect(a != two.store.objectID(for: company, primaryKey: 7))
        #expect(two.store.primaryKey(of: a) == nil)
        #expect(one.store.primaryKey(of: a) == 7)
    }

    /// A store reading the keys of many IDs (rows, relationships, a save's rows) checks each new scope
    /// once and takes later IDs of it without the check; an ID of another store or entity in between is
    /// still checked, and one of another store still refused.
    @Test func aKeyReaderChecksEachScopeOnceAndStillRefusesOtherStores() throws {
        let stores = try TwoStores()
        let (one, two, company, project) = (stores.one, stores.two, stores.company, stores.project)
        let ids = [one.store.objectID(for: company, primaryKey: 1), one.store.objectID(for: company, primaryKey: 2),
                   two.store.objectID(for: company, primaryKey: 3), one.store.objectID(for: company, primaryKey: 4),
                   one.store.objectID(for: project, primaryKey: 5), two.store.objectID(for: project, primaryKey: 6),
                   NSManagedObjectID(temporaryFor: company)]
        var reader = NSPersistentStore.PrimaryKeyReader()
        #expect(ids.map { reader.primaryKey(of: $0, in: one.store) } == [1, 2, nil, 4, 5, nil, nil])
        var other = NSPersistentStore.PrimaryKeyReader()
        #expect(ids.map { other.primaryKey(of: $0, in: two.store) } == [nil, nil, 3, nil, nil, 6, nil])
        #expect(ids.map { one.store.primaryKey(of: $0) } == [1, 2, nil, 4, 5, nil, nil])
    }

    @Test func anIDKeepsTheIdentifierItsStoreHadWhenItWasMade() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let company = try #require(stack.model.entitiesByName["Company"])
        let before = stack.store.objectID(for: company, primaryKey: 3)
        let oldIdentifier = try #require(stack.store.identifier)
        #expect(before.persistentStore === stack.store)
        #expect(before.uriRepresentation().host == oldIdentifier)

        stack.store.identifier = UUID().uuidString
        let after = stack.store.objectID(for: company, primaryKey: 3)
        #expect(after.uriRepresentation().host == stack.store.identifier)
        #expect(after != before)
        #expect(stack.store.primaryKey(of: after) == 3)
        #expect(stack.store.primaryKey(of: before) == nil)
    }
}
