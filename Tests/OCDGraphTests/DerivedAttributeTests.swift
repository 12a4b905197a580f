import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDPredicate
import OCDStore
import OCDTestSupport
import class OCDPredicate.NSExpression

/// Derived attributes (`NSDerivedAttributeDescription`): recomputed by the store during the save (Core
/// Data's SQLite store does it with triggers), and held by the objects once the save returns (Apple's
/// header: "recomputed values will not be reflected in a managed object's property until after a save").
@Suite struct DerivedAttributeTests {
    /// Author ⇄ books (to-many) / Book.author; Book ⇄ pages (to-many, cascade) / Page.book; Note.owner
    /// (to-one Author, no inverse). Derived: Author.bookCount = books.@count; Book.searchTitle =
    /// canonical:(title), shout = uppercase:(title), authorName = author.name, pageCount = pages.@count,
    /// words = pages.words.@sum, touched = now(); Note.ownerName = lowercase:(owner.name); Essay (a
    /// subentity of Book) inherits them.
    static func model(_ extra: (([String: NSEntityDescription]) -> Void)? = nil) -> NSManagedObjectModel {
        let derived = DerivedModels.derived
        func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule = .nullifyDeleteRule) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.maxCount = toMany ? 0 : 1
            relationship.deleteRule = rule
            return relationship
        }
        let author = TestModel.entity("Author"), book = TestModel.entity("Book"), essay = TestModel.entity("Essay")
        let page = TestModel.entity("Page"), note = TestModel.entity("Note")
        book.subentities = [essay]
        let books = relationship("books", book, toMany: true), bookAuthor = relationship("author", author, toMany: false)
        books.inverseRelationship = bookAuthor
        bookAuthor.inverseRelationship = books
        let pages = relationship("pages", page, toMany: true, rule: .cascadeDeleteRule), pageBook = relationship("book", book, toMany: false)
        pages.inverseRelationship = pageBook
        pageBook.inverseRelationship = pages
        author.properties = [TestModel.attribute("name", .stringAttributeType), TestModel.attribute("code", .UUIDAttributeType),
                             derived("bookCount", .integer64AttributeType, "books.@count"), books]
        book.properties = [
            TestModel.attribute("title", .stringAttributeType), TestModel.attribute("year", .integer32AttributeType),
            derived("searchTitle", .stringAttributeType, "canonical:(title)"), derived("shout", .stringAttributeType, "uppercase:(title)"),
            derived("authorName", .stringAttributeType, "author.name"), derived("pageCount", .integer16AttributeType, "pages.@count"),
            derived("words", .integer64AttributeType, "pages.words.@sum"), derived("touched", .dateAttributeType, "now()"),
            derived("authorCode", .UUIDAttributeType, "author.code"), bookAuthor, pages,
        ]
        essay.properties = [TestModel.attribute("topic", .stringAttributeType)]
        page.properties = [TestModel.attribute("words", .integer32AttributeType), pageBook]
        note.properties = [TestModel.attribute("text", .stringAttributeType), derived("ownerName", .stringAttributeType, "lowercase:(owner.name)"),
                           relationship("owner", author, toMany: false)]
        let model = NSManagedObjectModel()
        model.entities = [author, book, essay, page, note]
        extra?(model.entitiesByName)
        return model
    }

    /// A book by `author` with pages of the given word counts, saved.
    private func seed(_ stack: TestStack, title: String = "Les Misérables", author name: String = "Victor Hugo", pages words: [Int] = [100, 250]) throws -> NSManagedObject {
        let author = stack.insert("Author", ["name": name])
        let book = stack.insert("Book", ["title": title, "author": author])
        for count in words { stack.insert("Page", ["words": count, "book": book]) }
        try stack.context.save()
        return book
    }

    @Test func insertedObjectsGetTheirValuesDuringTheSaveAndTheStoreKeepsThem() throws {
        let stack = try TestStack(model: Self.model())
        let author = stack.insert("Author", ["name": "Victor Hugo"])
        let book = stack.insert("Book", ["title": "Les Misérables", "author": author])
        for count in [100, 250] { stack.insert("Page", ["words": count, "book": book]) }
        // Not before the save.
        #expect(book.value(forKey: "searchTitle") == nil && book.value(forKey: "touched") == nil)
        let before = Date()
        try stack.context.save()
        #expect(book.value(forKey: "searchTitle") as? String == "les miserables")
        #expect(book.value(forKey: "shout") as? String == "LES MISÉRABLES")
        #expect(book.value(forKey: "authorName") as? String == "Victor Hugo")
        #expect(book.value(forKey: "pageCount") as? Int16 == 2)
        #expect(book.value(forKey: "words") as? Int64 == 350)
        #expect(author.value(forKey: "bookCount") as? Int64 == 1)
        let touched = try #require(book.value(forKey: "touched") as? Date)
        #expect(touched >= before && touched <= Date())
        // Saved with the object, with nothing left to save.
        #expect(!stack.context.hasChanges && !book.hasChanges)

        let other = stack.newContext()
        let stored = other.object(with: book.objectID)
        #expect(stored.value(forKey: "searchTitle") as? String == "les miserables")
        #expect(stored.value(forKey: "words") as? Int64 == 350)
        #expect(stored.value(forKey: "pageCount") as? Int16 == 2)
        #expect((stored.value(forKey: "touched") as? Date).map { abs($0.timeIntervalSince(touched)) < 0.001 } == true)
        // Fetchable by the derived value, which is what derived attributes are for.
        #expect(try stack.fetch("Book", "searchTitle == %@", "les miserables", in: other).count == 1)
    }

    @Test func aChangedInputIsRecomputedAndAnUnchangedObjectIsLeftAlone() throws {
        let stack = try TestStack(model: Self.model())
        let book = try seed(stack)
        let touched = try #require(book.value(forKey: "touched") as? Date)
        let author = try #require(book.value(forKey: "author") as? NSManagedObject)
        let authorRow = try #require(author.value(forKey: "bookCount") as? Int64)

        Thread.sleep(forTimeInterval: 0.002)
        book.setValue("Notre-Dame de Paris", forKey: "title")
        try stack.context.save()
        #expect(book.value(forKey: "searchTitle") as? String == "notre-dame de paris")
        #expect(book.value(forKey: "shout") as? String == "NOTRE-DAME DE PARIS")
        #expect((book.value(forKey: "touched") as? Date).map { $0 > touched } == true)
        // The author did not change: no save of it, its value as it was.
        #expect(author.value(forKey: "bookCount") as? Int64 == authorRow)

        // A change the derivations do not read still moves now().
        let retouched = try #require(book.value(forKey: "touched") as? Date)
        Thread.sleep(forTimeInterval: 0.002)
        book.setValue(1831, forKey: "year")
        try stack.context.save()
        #expect((book.value(forKey: "touched") as? Date).map { $0 > retouched } == true)
        #expect(book.value(forKey: "searchTitle") as? String == "notre-dame de paris")
    }

    @Test func aDestinationsChangeReachesTheObjectsThatReadItThroughTheInverse() throws {
        let stack = try TestStack(model: Self.model())
        let bookID = try seed(stack).objectID
        // Another context where the book is only a fault: renaming the author must still reach it.
        let other = stack.newContext()
        let book = other.object(with: bookID)
        let authorID = try #require((stack.context.object(with: bookID).value(forKey: "author") as? NSManagedObject)?.objectID)
        let author = other.object(with: authorID)
        author.setValue("V. Hugo", forKey: "name")
        try other.save()
        #expect(book.value(forKey: "authorName") as? String == "V. Hugo")
        let third = stack.newContext()
        #expect(third.object(with: bookID).value(forKey: "authorName") as? String == "V. Hugo")

        // A page's words: the book's sum follows.
        let page = try #require((book.value(forKey: "pages") as? Set<NSManagedObject>)?.first { $0.value(forKey: "words") as? Int32 == 100 })
        page.setValue(120, forKey: "words")
        try other.save()
        #expect(book.value(forKey: "words") as? Int64 == 370)
        let fourth = stack.newContext()
        #expect(fourth.object(with: bookID).value(forKey: "words") as? Int64 == 370)
    }

    @Test func membershipChangesRecountAndResumBothSides() throws {
        let stack = try TestStack(model: Self.model())
        let first = try seed(stack, title: "A", pages: [10, 20, 30])
        let second = try seed(stack, title: "B", pages: [])
        #expect(second.value(forKey: "pageCount") as? Int16 == 0 && second.value(forKey: "words") as? Int64 == 0)
        let pages = try #require(first.value(forKey: "pages") as? Set<NSManagedObject>)
        let moved = try #require(pages.first { $0.value(forKey: "words") as? Int32 == 30 })
        let deleted = try #require(pages.first { $0.value(forKey: "words") as? Int32 == 10 })
        moved.setValue(second, forKey: "book")
        stack.context.delete(deleted)
        stack.insert("Page", ["words": 5, "book": second])
        try stack.context.save()
        #expect(first.value(forKey: "pageCount") as? Int16 == 1 && first.value(forKey: "words") as? Int64 == 20)
        #expect(second.value(forKey: "pageCount") as? Int16 == 2 && second.value(forKey: "words") as? Int64 == 35)
        let other = stack.newContext()
        #expect(other.object(with: first.objectID).value(forKey: "words") as? Int64 == 20)
        #expect(other.object(with: second.objectID).value(forKey: "pageCount") as? Int16 == 2)

        // The author's count follows a deleted book (nullified from its books).
        let author = try #require(first.value(forKey: "author") as? NSManagedObject)
        #expect(author.value(forKey: "bookCount") as? Int64 == 1)
        stack.context.delete(first)
        try stack.context.save()
        #expect(author.value(forKey: "bookCount") as? Int64 == 0)
    }

    @Test func aRelationshipWithoutInverseIsFollowedToo() throws {
        let stack = try TestStack(model: Self.model())
        let author = stack.insert("Author", ["name": "Émile Zola"])
        let note = stack.insert("Note", ["text": "J'accuse", "owner": author])
        try stack.context.save()
        #expect(note.value(forKey: "ownerName") as? String == "émile zola")
        // Renamed in another context, where the note is not even registered.
        let other = stack.newContext()
        other.object(with: author.objectID).setValue("Zola", forKey: "name")
        try other.save()
        let third = stack.newContext()
        #expect(third.object(with: note.objectID).value(forKey: "ownerName") as? String == "zola")
    }

    @Test func aSubentityKeepsItsSuperentitysDerivedAttributes() throws {
        let stack = try TestStack(model: Self.model())
        let essay = stack.insert("Essay", ["title": "Ça ira", "topic": "revolution"])
        stack.insert("Page", ["words": 7, "book": essay])
        try stack.context.save()
        #expect(essay.value(forKey: "searchTitle") as? String == "ca ira")
        #expect(essay.value(forKey: "words") as? Int64 == 7)
        #expect(essay.value(forKey: "authorName") == nil)
    }

    /// A value the store moved because another object changed is the store's, not an edit: the object
    /// is not saved, not listed as changed or saved, and has no changes afterwards.
    @Test func aValueMovedByAnotherObjectsChangeIsNoChangeOfItsOwn() throws {
        let stack = try TestStack(model: Self.model())
        let book = try seed(stack)
        let author = try #require(book.value(forKey: "author") as? NSManagedObject)
        let touched = book.value(forKey: "touched") as? Date
        author.setValue("Hugo", forKey: "name")
        stack.context.processPendingChanges()
        let recorder = NotificationRecorder([.NSManagedObjectContextDidSave, .NSManagedObjectContextObjectsDidChange], object: stack.context)
        try stack.context.save()
        #expect(book.value(forKey: "authorName") as? String == "Hugo")
        // now() follows the row's own changes, not those of what it reads.
        #expect(book.value(forKey: "touched") as? Date == touched)
        #expect(!book.hasChanges && !stack.context.hasChanges && book.changedValues().isEmpty)
        #expect(recorder.named(.NSManagedObjectContextObjectsDidChange).isEmpty)
        let info = try #require(recorder.named(.NSManagedObjectContextDidSave).last?.userInfo)
        #expect((info[NSUpdatedObjectsKey] as? Set<NSManagedObject>) == [author])
        // Its committed values are the new ones too: a later edit of it saves without a conflict.
        #expect(book.committedValues(forKeys: ["authorName"])["authorName"] as? String == "Hugo")
        book.setValue("Les Mis", forKey: "title")
        try stack.context.save()
        #expect(book.value(forKey: "searchTitle") as? String == "les mis")
    }

    /// Two contexts editing different members of one owner: the owner's sum takes both, and neither save
    /// conflicts on the owner, which neither edited (the store adds up, as Apple's triggers do).
    @Test func contextsEditingDifferentMembersDoNotConflictOnTheirOwner() throws {
        let stack = try TestStack(model: Self.model())
        let bookID = try seed(stack, pages: [10, 20]).objectID
        let first = stack.newContext(), second = stack.newContext()
        func pages(in context: NSManagedObjectContext) throws -> [NSManagedObject] {
            let book = context.object(with: bookID)
            _ = book.value(forKey: "words")
            return try #require(book.value(forKey: "pages") as? Set<NSManagedObject>).sorted { ($0.value(forKey: "words") as? Int32 ?? 0) < ($1.value(forKey: "words") as? Int32 ?? 0) }
        }
        let firstPages = try pages(in: first), secondPages = try pages(in: second)
        firstPages[0].setValue(11, forKey: "words")
        try first.save()
        secondPages[1].setValue(22, forKey: "words")
        try second.save()
        #expect(second.object(with: bookID).value(forKey: "words") as? Int64 == 33)
        let third = stack.newContext()
        #expect(third.object(with: bookID).value(forKey: "words") as? Int64 == 33)
    }

    /// A deleted destination: the to-one is nullified, and the value read through it with it.
    @Test func aDeletedDestinationClearsTheValueReadThroughIt() throws {
        let stack = try TestStack(model: Self.model())
        let book = try seed(stack)
        let author = try #require(book.value(forKey: "author") as? NSManagedObject)
        stack.context.delete(author)
        try stack.context.save()
        #expect(book.value(forKey: "authorName") == nil)
        let other = stack.newContext()
        #expect(other.object(with: book.objectID).value(forKey: "authorName") == nil)
    }

    /// A page another context moved to a second book, moved by this (stale) context to a third: the
    /// second book's count follows, though neither context saves it here.
    @Test func anOwnerLeftBehindByAStaleMoveIsRecounted() throws {
        let stack = try TestStack(model: Self.model())
        let first = try seed(stack, title: "A", pages: [1])
        let second = try seed(stack, title: "B", pages: [])
        let third = try seed(stack, title: "C", pages: [])
        let page = try #require((first.value(forKey: "pages") as? Set<NSManagedObject>)?.first)
        let other = stack.newContext()
        other.object(with: page.objectID).setValue(other.object(with: second.objectID), forKey: "book")
        try other.save()
        stack.context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        page.setValue(third, forKey: "book")
        try stack.context.save()
        let check = stack.newContext()
        #expect([first, second, third].map { check.object(with: $0.objectID).value(forKey: "pageCount") as? Int16 } == [0, 0, 1])
    }

    /// A value the object set on a derived attribute is not the store's: after the save the object holds
    /// what the store keeps (nil for a NULL source, the count for a count).
    @Test func aValueSetOnADerivedAttributeGivesWayToTheStoresAfterTheSave() throws {
        let stack = try TestStack(model: Self.model())
        let untitled = stack.insert("Book", [:])
        untitled.setValue("placeholder", forKey: "searchTitle")
        try stack.context.save()
        #expect(untitled.value(forKey: "searchTitle") == nil)
        let book = try seed(stack)
        book.setValue(99, forKey: "pageCount")
        try stack.context.save()
        #expect(book.value(forKey: "pageCount") as? Int16 == 2)
        let other = stack.newContext()
        #expect(other.object(with: book.objectID).value(forKey: "pageCount") as? Int16 == 2)
    }

    /// A copied value of any type reaches the objects that read it (a UUID here, a blob in SQL).
    @Test func aCopiedUUIDFollowsItsSource() throws {
        let stack = try TestStack(model: Self.model())
        let book = try seed(stack)
        let author = try #require(book.value(forKey: "author") as? NSManagedObject)
        let code = UUID()
        author.setValue(code, forKey: "code")
        try stack.context.save()
        #expect(book.value(forKey: "authorCode") as? UUID == code)
    }

    /// Siblings sharing their parent's table (single-table inheritance), each with a derived attribute of
    /// the same name (two columns): each object gets its own.
    @Test func siblingsInOneTableKeepTheirOwnDerivedValues() throws {
        func derived(_ format: String) -> NSDerivedAttributeDescription { DerivedModels.derived("shout", .stringAttributeType, format) }
        let media = TestModel.entity("Media"), film = TestModel.entity("Film"), song = TestModel.entity("Song")
        media.subentities = [film, song]
        film.properties = [TestModel.attribute("title", .stringAttributeType), derived("uppercase:(title)")]
        song.properties = [TestModel.attribute("title", .stringAttributeType), derived("lowercase:(title)")]
        let model = NSManagedObjectModel()
        model.entities = [media, film, song]
        let stack = try TestStack(model: model)
        let movie = stack.insert("Film", ["title": "Metropolis"])
        let tune = stack.insert("Song", ["title": "Metropolis"])
        try stack.context.save()
        #expect(movie.value(forKey: "shout") as? String == "METROPOLIS")
        #expect(tune.value(forKey: "shout") as? String == "metropolis")
        tune.setValue("Trans-Europa", forKey: "title")
        try stack.context.save()
        let other = stack.newContext()
        #expect(other.object(with: movie.objectID).value(forKey: "shout") as? String == "METROPOLIS")
        #expect(other.object(with: tune.objectID).value(forKey: "shout") as? String == "trans-europa")
    }

    /// A tree: `parent.name` and `children.@count` through a relationship of the entity to itself.
    @Test func aTreeReadsItsParentAndCountsItsChildren() throws {
        let stack = try TestStack(model: DerivedModels.tree())
        let root = stack.insert("Node", ["name": "root"])
        let a = stack.insert("Node", ["name": "a", "parent": root])
        let b = stack.insert("Node", ["name": "b", "parent": root])
        let leaf = stack.insert("Node", ["name": "leaf", "parent": a])
        try stack.context.save()
        #expect([root, a, b, leaf].map { $0.value(forKey: "childCount") as? Int64 } == [2, 1, 0, 0])
        #expect([root, a, b, leaf].map { $0.value(forKey: "parentName") as? String } == [nil, "root", "root", "a"])
        leaf.setValue(b, forKey: "parent")
        root.setValue("top", forKey: "name")
        try stack.context.save()
        #expect([root, a, b, leaf].map { $0.value(forKey: "childCount") as? Int64 } == [2, 0, 1, 0])
        #expect([a, b, leaf].map { $0.value(forKey: "parentName") as? String } == ["top", "top", "b"])
    }

    @Test(arguments: [
        ("author.books.@count", "multi-step keypath"),
        ("author.bookCount", "derived attribute found in dependency chain"),
        ("canonical:(year)", "needs a string attribute"),
        ("pages.@avg.words", "unsupported function"),
        ("abs:(year)", "unsupported function 'abs:'"),
        ("missing", "has no property 'missing'"),
        ("author", "is a relationship where an attribute must be"),
        ("pages.@count", "cannot hold what the expression gives"),
    ])
    func aDerivationCoreDataCannotKeepStopsTheStoreBeingAdded(_ format: String, _ reason: String) throws {
        let model = Self.model { entities in
            let attribute = NSDerivedAttributeDescription()
            attribute.name = "bad"
            attribute.attributeType = .stringAttributeType
            attribute.derivationExpression = NSExpression(format: format)
            entities["Book"]!.properties.append(attribute)
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect {
            try coordinator.addPersistentStore(ofType: TestStack.storeType, configurationName: nil, at: TestStack.newStoreURL())
        } throws: { error in
            let error = error as NSError
            let description = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
            return error.domain == NSCocoaErrorDomain && error.code == 134097 && description.contains("Book.bad") && description.contains(reason)
        }
        #expect(coordinator.persistentStores.isEmpty)
    }

    /// A real model (delawaremathguy/CoreDataCloudKitShare): Tag.photoCount = photos.@count over a
    /// many-to-many relationship.
    @Test func aFixtureModelsCountOverAManyToManyRelationship() throws {
        guard let models = Fixtures.models else { return }
        let folder = models.appendingPathComponent("delawaremathguy__CoreDataCloudKitShare__CoreDataCloudKitShare/CoreDataCloudKitShare.xcdatamodel")
        let model = try NSManagedObjectModel(validatingContentsOf: folder)
        let stack = try TestStack(model: model)
        let red = stack.insert("Tag", ["name": "red"]), blue = stack.insert("Tag", ["name": "blue"])
        let photos = (0..<3).map { stack.insert("Photo", ["displayName": "p\($0)"]) }
        for photo in photos { photo.mutableSetValue(forKey: "tags").add(red) }
        photos[0].mutableSetValue(forKey: "tags").add(blue)
        try stack.context.save()
        #expect(red.value(forKey: "photoCount") as? Int64 == 3 && blue.value(forKey: "photoCount") as? Int64 == 1)
        photos[1].mutableSetValue(forKey: "tags").remove(red)
        stack.context.delete(photos[0])
        try stack.context.save()
        #expect(red.value(forKey: "photoCount") as? Int64 == 1 && blue.value(forKey: "photoCount") as? Int64 == 0)
        let other = stack.newContext()
        #expect(other.object(with: red.objectID).value(forKey: "photoCount") as? Int64 == 1)
    }

    @Test func aMandatoryDerivedAttributeIsValidatedBeforeItIsComputed() throws {
        // fatbobman's report of Core Data: a non-optional derived attribute fails an insert with 1570
        // unless a value is set first (it is overwritten by the save).
        let model = Self.model { entities in
            (entities["Author"]!.propertiesByName["bookCount"] as! NSAttributeDescription).isOptional = false
        }
        let stack = try TestStack(model: model)
        let author = stack.insert("Author", ["name": "Hugo"])
        #expect { try stack.context.save() } throws: { ($0 as NSError).code == NSValidationMissingMandatoryPropertyError }
        author.setPrimitiveValue(99, forKey: "bookCount")
        try stack.context.save()
        #expect(author.value(forKey: "bookCount") as? Int64 == 0)
    }
}
