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
