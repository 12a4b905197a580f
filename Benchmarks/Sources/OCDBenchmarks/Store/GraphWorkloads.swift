import CSQLiteTwin
import Foundation
import OpenCoreDataRuntime

// Issue 6's Graph: Author 1-N Book N-M Tag. Author.books cascades; Book.author nullifies; Book.tags and
// Tag.books are a many-to-many pair (Core Data's join table). Sizes: `books` books, 10 per author, 100 tags,
// 3 tags per book (see CSQLiteTwin.h for the values).

enum GraphModel {
    static let booksPerAuthor: Int64 = 10
    static let tags: Int64 = 100

    static func entities(attribute: (String, NSAttributeType) -> NSAttributeDescription,
                         entity: (String, [NSPropertyDescription]) -> NSEntityDescription) -> [NSEntityDescription] {
        func relationship(_ name: String, toMany: Bool, rule: NSDeleteRule) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOptional = true
            relationship.deleteRule = rule
            return relationship
        }
        let authorBooks = relationship("books", toMany: true, rule: .cascadeDeleteRule)
        let bookAuthor = relationship("author", toMany: false, rule: .nullifyDeleteRule)
        let bookTags = relationship("tags", toMany: true, rule: .nullifyDeleteRule)
        let tagBooks = relationship("books", toMany: true, rule: .nullifyDeleteRule)
        let author = entity("Author", [attribute("name", .stringAttributeType), authorBooks])
        let book = entity("Book", [attribute("title", .stringAttributeType), attribute("year", .integer64AttributeType), bookAuthor, bookTags])
        let tag = entity("Tag", [attribute("name", .stringAttributeType), attribute("rank", .integer64AttributeType), tagBooks])
        authorBooks.destinationEntity = book
        bookAuthor.destinationEntity = author
        bookTags.destinationEntity = tag
        tagBooks.destinationEntity = book
        authorBooks.inverseRelationship = bookAuthor
        bookAuthor.inverseRelationship = authorBooks
        bookTags.inverseRelationship = tagBooks
        tagBooks.inverseRelationship = bookTags
        return [author, book, tag]
    }

    /// Visiting every (author, book, tag): visits, authors, 0, sum of year + rank.
    static func traversal(books: Int64) -> Outcome {
        var checksum: Int64 = 0
        for b in 0..<books {
            for m in 0..<Int64(3) { checksum += 1900 + b % 120 + (b + m * 31) % tags }
        }
        return Outcome(count: books * 3, first: books / booksPerAuthor, last: 0, checksum: checksum)
    }

    /// The cascade delete's outcome, and the file after it (books, authors, join rows, tags).
    static func cascade(books: Int64) -> (run: Outcome, file: Outcome) {
        let authors = books / booksPerAuthor
        return (Outcome(count: books, first: authors, last: books, checksum: books + authors),
                Outcome(count: 0, first: 0, last: 0, checksum: tags))
    }
}

extension StoreFiles {
    /// A template holding the graph of `books` books.
    func template(graphBooks books: Int64) throws -> URL {
        try template(named: "graph-\(books)") { twin in
            twin_insert_graph(twin, books / GraphModel.booksPerAuthor, GraphModel.booksPerAuthor, GraphModel.tags).count == books
        }
    }

    func graphSummary(of url: URL) -> Outcome {
        guard let twin = twin_open(url.path, synchronous) else { return .failedTwin }
        defer { twin_close(twin) }
        return Outcome(twin_graph_summary(twin))
    }
}

enum GraphWorkloads {
    static func make(files: StoreFiles, books: Int64) throws -> [StoreWorkload] {
        let sync = files.synchronous
        let template = try files.template(graphBooks: books)
        var workloads: [StoreWorkload] = []

        // MARK: graph_traverse / graph_traverse_prefetch: one read-only copy per side.
        let ocdURL = files.file("graph-read-ocd.sqlite"), cURL = files.file("graph-read-c.sqlite")
        try files.copy(template, to: ocdURL)
        try files.copy(template, to: cURL)
        let ocd = try OCDStack(model: files.model, url: ocdURL, synchronous: sync)
        guard let twin = twin_open(cURL.path, sync) else { throw BenchmarkError("cannot open \(cURL.path)") }
        let expected = SQLiteSideCheck.expect(GraphModel.traversal(books: books))
        for prefetch in [false, true] {
            workloads.append(StoreWorkload(
                key: prefetch ? "graph_traverse_prefetch" : "graph_traverse", unit: "visit", operations: Int(books * 3),
                summary: "fetch \(books / GraphModel.booksPerAuthor) authors in a new context and visit author.books and each book's tags, reading year and rank (\(books * 3) visits)\(prefetch ? ", prefetching books and books.tags" : ", faults firing as touched")",
                sides: [
                    StoreSide("ocd", prefetch
                              ? "fetch Author (relationshipKeyPathsForPrefetching = [\"books\", \"books.tags\"]); value(forKey:) along books and tags"
                              : "fetch Author; value(forKey: \"books\"), then \"tags\" of each book: each to-many fault fires as it is touched",
                              setUp: { ocd.newContext() },
                              run: {
                                  let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
                                  request.returnsObjectsAsFaults = false
                                  if prefetch { request.relationshipKeyPathsForPrefetching = ["books", "books.tags"] }
                                  let authors = try ocd.context.fetch(request)
                                  var outcome = Outcome(count: 0, first: Int64(authors.count), last: 0, checksum: 0)
                                  for author in authors {
                                      for book in author.value(forKey: "books") as? Set<NSManagedObject> ?? [] {
                                          let year = int64Value(book.value(forKey: "year"))
                                          for tag in book.value(forKey: "tags") as? Set<NSManagedObject> ?? [] {
                                              outcome.count += 1
                                              outcome.checksum += year + int64Value(tag.value(forKey: "rank"))
                                          }
                                      }
                                  }
                                  return outcome
                              },
                              tearDown: { ocd.newContext() }, check: expected),
                    StoreSide("c", prefetch
                              ? "three bulk SELECTs (authors, books, join rows with tags), rows into structs (strings copied), then the walk"
                              : "SELECT authors; per author SELECT its books; per book SELECT its tags through the join table",
                              run: { Outcome(twin_traverse_graph(twin, prefetch ? 1 : 0)) }, check: expected),
                ],
                ocdStore: { ocd.store }))
        }

        // MARK: graph_cascade_delete: a fresh copy per sample.
        let (run, file) = GraphModel.cascade(books: books)
        let urls = ["ocd", "c"].map { files.file("graph-delete-\($0).sqlite") }
        var stack: OCDStack?
        var deleteTwin: OpaquePointer?
        // The file's summary is (books, authors, join rows, tags).
        func check(_ url: URL) -> (Int, Outcome) -> String? {
            StoreSide.expecting(run, thenFile: url, holds: file, read: files.graphSummary(of:))
        }
        workloads.append(StoreWorkload(
            key: "graph_cascade_delete", unit: "book", operations: Int(books),
            summary: "delete the \(books / GraphModel.booksPerAuthor) authors; the cascade deletes their \(books) books and \(books * 3) tag links; save",
            sides: [
                StoreSide("ocd", "default fetch of Author (faults); context.delete(_:) of each (Author.books cascades); save()",
                          setUp: { try files.copy(template, to: urls[0]); stack = try OCDStack(model: files.model, url: urls[0], synchronous: sync) },
                          run: {
                              let context = stack!.context
                              let authors = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Author"))
                              for author in authors { context.delete(author) }
                              context.processPendingChanges()
                              let books = Int64(context.deletedObjects.count - authors.count)
                              try context.save()
                              let count = Int64(authors.count)
                              return Outcome(count: books, first: count, last: books, checksum: books + count)
                          },
                          tearDown: { stack?.close(); stack = nil }, check: check(urls[0])),
                StoreSide("c", "one transaction: per author SELECT its books, DELETE their join rows and rows (WHERE Z_PK AND Z_OPT), DELETE the author; tags' Z_OPT raised",
                          setUp: { try files.copy(template, to: urls[1]); deleteTwin = twin_open(urls[1].path, sync) },
                          run: { Outcome(twin_cascade_delete_graph(deleteTwin)) },
                          tearDown: { twin_close(deleteTwin); deleteTwin = nil }, check: check(urls[1])),
            ],
            ocdStore: { stack?.store }))
        return workloads
    }
}
