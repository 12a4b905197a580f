import Foundation
import OpenCoreData
import Testing

// The macros compiled and run for real: `@Managed` accessors and mutators, and the key table of
// `@ManagedObject` (key path names, custom accessors, validate<Key> methods).

/// A value of the app's own type, kept in a transformable attribute as a set.
struct MacroSticker: Hashable {
    var name: String
}

@ManagedObject
final class MacroShelf: NSManagedObject {
    @Managed var label: String?
    @Managed var books: Set<MacroBook>
    /// A set of values, not of managed objects: the macro's mutators change the attribute.
    @Managed var stickers: Set<MacroSticker>?
    @Managed var ordered: NSOrderedSet

    /// A custom accessor: `value(forKey: "shout")` dispatches here.
    var shout: String { (label ?? "").uppercased() }
}

@ManagedObject
final class MacroBook: NSManagedObject {
    @Managed var title: String
    @Managed var pages: Int32
    @Managed var rating: Double?
    @Managed var shelf: MacroShelf?

    func validateTitle(_ value: inout Any?) throws {
        if (value as? String)?.isEmpty ?? true {
            throw NSError(domain: "Library", code: 7, userInfo: [NSLocalizedDescriptionKey: "A title is needed."])
        }
    }

    /// A property the class keeps itself, outside the model, with a validate<Key> method.
    var nickname: String?

    func validateNickname(_ value: inout Any?) throws {
        if (value as? String)?.isEmpty == true { throw NSError(domain: "Library", code: 8) }
        if let text = value as? String { value = text.trimmingCharacters(in: .whitespaces) }
    }
}

private func macroStack() throws -> NSManagedObjectContext {
    NSManagedObjectModel.registerManagedObjectClass(MacroShelf.self, forName: "MacroShelf")
    NSManagedObjectModel.registerManagedObjectClass(MacroBook.self, forName: "MacroBook")
    func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        return attribute
    }
    let shelf = NSEntityDescription()
    shelf.name = "Shelf"
    shelf.managedObjectClassName = "MacroShelf"
    let book = NSEntityDescription()
    book.name = "Book"
    book.managedObjectClassName = "MacroBook"
    let books = NSRelationshipDescription()
    books.name = "books"
    books.destinationEntity = book
    books.maxCount = 0
    let ordered = NSRelationshipDescription()
    ordered.name = "ordered"
    ordered.destinationEntity = book
    ordered.maxCount = 0
    ordered.isOrdered = true
    let bookShelf = NSRelationshipDescription()
    bookShelf.name = "shelf"
    bookShelf.destinationEntity = shelf
    bookShelf.maxCount = 1
    books.inverseRelationship = bookShelf
    bookShelf.inverseRelationship = books
    shelf.properties = [attribute("label", .stringAttributeType), books, ordered, attribute("stickers", .transformableAttributeType)]
    book.properties = [attribute("title", .stringAttributeType, optional: false), attribute("pages", .integer32AttributeType),
                       attribute("rating", .doubleAttributeType), bookShelf]
    let model = NSManagedObjectModel()
    model.entities = [shelf, book]
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
    let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    return context
}

@Suite struct ManagedMacroTests {
    /// `Set<MacroSticker>` is spelled like a relationship; its mutators compile and change the set the
    /// attribute holds, with the change recorded as setting it would be.
    @Test func setMutatorsOfAValueSetChangeTheAttribute() throws {
        let context = try macroStack()
        let shelf = MacroShelf(context: context)
        #expect(shelf.stickers == nil)
        try context.save()
        // Removing from nothing changes nothing: still nil, and no update to save.
        shelf.removeFromStickers(MacroSticker(name: "star"))
        #expect(shelf.stickers == nil && !shelf.hasChanges)
        shelf.addToStickers(MacroSticker(name: "star"))
        shelf.addToStickers([MacroSticker(name: "moon"), MacroSticker(name: "sun")])
        #expect(shelf.stickers == [MacroSticker(name: "star"), MacroSticker(name: "moon"), MacroSticker(name: "sun")])
        shelf.removeFromStickers(MacroSticker(name: "moon"))
        shelf.removeFromStickers([MacroSticker(name: "sun"), MacroSticker(name: "comet")])
        #expect(shelf.stickers == [MacroSticker(name: "star")])
        #expect(shelf.changedValues()["stickers"] as? Set<MacroSticker> == [MacroSticker(name: "star")])
        try context.save()
        shelf.addToStickers(MacroSticker(name: "star"))
        #expect(!shelf.hasChanges, "adding a member already there changes nothing")
    }

    /// Values that are not managed objects cannot join a relationship: the call stops, naming the key.
    @Test func valuesAddedToARelationshipStop() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let shelf = MacroShelf(context: try macroStack())
            let stickers: Set<MacroSticker> = [MacroSticker(name: "star")]
            shelf.managedAdd(stickers, forKey: "books")
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("addToBooks: books of the entity Shelf is not an attribute"))
    }

    @Test func managedPropertiesReadAndWriteTheModeledValues() throws {
        let context = try macroStack()
        let book = MacroBook(context: context)
        book.title = "Dune"
        book.pages = 412
        #expect(book.value(forKey: "title") as? String == "Dune")
        #expect(book.value(forKey: "pages") as? Int == 412)
        #expect(book.rating == nil)
        book.setValue(4.5, forKey: "rating")
        #expect(book.rating == 4.5)
    }

    @Test func generatedMutatorsMaintainTheInverse() throws {
        let context = try macroStack()
        let shelf = MacroShelf(context: context)
        let book = MacroBook(context: context)
        book.title = "Dune"
        shelf.addToBooks(book)
        #expect(book.shelf === shelf)
        shelf.removeFromBooks(book)
        #expect(book.shelf == nil)
        book.shelf = shelf
        #expect(shelf.books == [book])
        shelf.addToOrdered(book)
        shelf.insertIntoOrdered(MacroBook(context: context), at: 0)
        #expect(shelf.ordered.count == 2)
        #expect(shelf.ordered.lastObject as? MacroBook === book)
    }

    @Test func theKeyTableNamesKeyPathsAndRoutesCustomAccessors() throws {
        let context = try macroStack()
        let shelf = MacroShelf(context: context)
        shelf.label = "fiction"
        #expect(MacroShelf.keyName(for: \MacroShelf.label) == "label")
        #expect(shelf.value(forKey: "shout") as? String == "FICTION")
        var labels: [String?] = []
        let token = shelf.observe(\.label, options: [.new]) { _, change in labels.append(change.newValue ?? nil) }
        shelf.label = "poetry"
        token.invalidate()
        #expect(labels == ["poetry"])
    }

    @Test func validateKeyMethodsRunAtSave() throws {
        let context = try macroStack()
        let book = MacroBook(context: context)
        book.title = ""
        #expect(throws: NSError.self) { try context.save() }
        do {
            try context.save()
        } catch let error as NSError {
            #expect(error.domain == "Library" && error.code == 7)
        }
        book.title = "Dune"
        try context.save()
        #expect(!book.objectID.isTemporaryID)
    }

    /// `validateValue(_:forKey:)` of a key outside the model runs the class's validate<Key> method, as
    /// key-value coding's validation does, and finds any other key valid (it stopped the process).
    @Test func validateValueOfAKeyOutsideTheModelRunsTheClasssMethod() throws {
        let context = try macroStack()
        let book = MacroBook(context: context)
        var empty: Any? = ""
        #expect(throws: NSError.self) { try book.validateValue(&empty, forKey: "nickname") }
        var padded: Any? = " Ace "
        try book.validateValue(&padded, forKey: "nickname")
        #expect(padded as? String == "Ace")
        var anything: Any? = 3
        try book.validateValue(&anything, forKey: "unknownKey")
        #expect(anything as? Int == 3)
    }

    @Test func fetchRequestsUseTypedResultsAndKeyPathSorts() throws {
        let context = try macroStack()
        for (title, pages) in [("B", 200), ("A", 100), ("C", 300)] {
            let book = MacroBook(context: context)
            book.title = title
            book.pages = Int32(pages)
        }
        try context.save()
        let request = NSFetchRequest<MacroBook>(entityName: "Book")
        request.predicate = NSPredicate(format: "pages >= %d", 200)
        request.sortDescriptors = [NSSortDescriptor(keyPath: \MacroBook.title, ascending: false)]
        #expect(try context.fetch(request).map(\.title) == ["C", "B"])
    }

    @Test func foundationPredicatesConvertThroughManagedKeyPathNames() throws {
        let context = try macroStack()
        let book = MacroBook(context: context)
        book.title = "Dune"
        book.pages = 412
        let predicate = try #require(NSPredicate(#Predicate<MacroBook> { $0.pages > 400 }))
        #expect(predicate.predicateFormat == "pages > 400")
        #expect(predicate.evaluate(with: book))
    }
}
