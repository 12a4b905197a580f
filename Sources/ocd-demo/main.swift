// The README's demo: a small program on OpenCoreData's stack. A model built in code, managed object
// subclasses with @Managed properties, insert, save, fetch with a predicate, a to-many relationship and a
// cascade delete, on an SQLite store that a second container reopens.
#if canImport(CoreData)
import CoreData
#else
import OpenCoreData
#endif

@ManagedObject
final class Author: NSManagedObject {
    @Managed var name: String
    @Managed var books: Set<Book>
}

@ManagedObject
final class Book: NSManagedObject {
    @Managed var title: String
    @Managed var year: Int16
    @Managed var author: Author?
}

func makeModel() -> NSManagedObjectModel {
    NSManagedObjectModel.registerManagedObjectClass(Author.self, forName: "Author")
    NSManagedObjectModel.registerManagedObjectClass(Book.self, forName: "Book")
    let author = NSEntityDescription()
    author.name = "Author"
    author.managedObjectClassName = "Author"
    let book = NSEntityDescription()
    book.name = "Book"
    book.managedObjectClassName = "Book"

    let name = NSAttributeDescription()
    name.name = "name"
    name.attributeType = .stringAttributeType
    name.isOptional = false
    let title = NSAttributeDescription()
    title.name = "title"
    title.attributeType = .stringAttributeType
    title.isOptional = false
    let year = NSAttributeDescription()
    year.name = "year"
    year.attributeType = .integer16AttributeType

    let books = NSRelationshipDescription()
    books.name = "books"
    books.destinationEntity = book
    books.maxCount = 0
    books.deleteRule = .cascadeDeleteRule
    let bookAuthor = NSRelationshipDescription()
    bookAuthor.name = "author"
    bookAuthor.destinationEntity = author
    bookAuthor.maxCount = 1
    books.inverseRelationship = bookAuthor
    bookAuthor.inverseRelationship = books

    author.properties = [name, books]
    book.properties = [title, year, bookAuthor]
    let model = NSManagedObjectModel()
    model.entities = [author, book]
    return model
}

// An SQLite store in Core Data's file format, in a fresh temporary folder.
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-demo-\(ProcessInfo.processInfo.processIdentifier)")
try? FileManager.default.removeItem(at: folder)
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let storeURL = folder.appendingPathComponent("Library.sqlite")
let model = makeModel()

func loadContainer() -> NSPersistentContainer {
    let container = NSPersistentContainer(name: "Library", managedObjectModel: model)
    container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: storeURL)]
    container.loadPersistentStores { _, error in
        if let error { fatalError("could not load the store: \(error)") }
    }
    return container
}

let container = loadContainer()

let context = container.newBackgroundContext()
try context.performAndWait {
    let le_guin = Author(context: context)
    le_guin.name = "Ursula K. Le Guin"
    for (title, year) in [("A Wizard of Earthsea", 1968), ("The Left Hand of Darkness", 1969), ("The Dispossessed", 1974)] {
        let book = Book(context: context)
        book.title = title
        book.year = Int16(year)
        le_guin.addToBooks(book)
    }
    let herbert = Author(context: context)
    herbert.name = "Frank Herbert"
    let dune = Book(context: context)
    dune.title = "Dune"
    dune.year = 1965
    dune.author = herbert
    try context.save()
    print("saved \(le_guin.books.count + herbert.books.count) books by 2 authors")

    let request = NSFetchRequest<Book>(entityName: "Book")
    request.predicate = NSPredicate(format: "year < %d AND author.name BEGINSWITH %@", 1970, "Ursula")
    request.sortDescriptors = [NSSortDescriptor(keyPath: \Book.year, ascending: true)]
    for book in try context.fetch(request) {
        print("  \(book.year) \(book.title) by \(book.author?.name ?? "?")")
    }

    context.delete(le_guin)
    try context.save()
    let remaining = try context.fetch(NSFetchRequest<Book>(entityName: "Book"))
    print("after deleting \(le_guin.isFault ? "the author" : "?"): \(remaining.map(\.title)) (books cascade-deleted)")
}

// The file outlives the container: a new one opens it and finds what was saved.
let reopened = loadContainer()
try reopened.viewContext.performAndWait {
    let books = try reopened.viewContext.fetch(NSFetchRequest<Book>(entityName: "Book"))
    let authors = try reopened.viewContext.count(for: NSFetchRequest<Author>(entityName: "Author"))
    print("reopened \(storeURL.lastPathComponent): \(books.map(\.title)) by \(authors) author")
}
