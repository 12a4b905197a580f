import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
import OCDTestSupport
import Testing
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Objects saved to an SQLite store read back, in a new coordinator, with every kind of value and
/// relationship; the file has Core Data's schema.
@Suite struct RoundTripTests {
    @Test func objectsAndRelationshipsSurviveReopening() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make()
        do {
            let stack = try SQLiteStack(model: model, url: url)
            try withExtendedLifetime(stack.context) {
                let company = stack.insert("Company", ["name": "Acme"])
                let department = stack.insert("Department", ["name": "R&D", "company": company])
                let boss = stack.insert("Manager", ["name": "Ada", "age": 40, "level": 3, "department": department])
                let employee = stack.insert("Employee", ["name": "Bob", "age": 25, "salary": 1234.5, "department": department, "manager": boss])
                let t1 = stack.insert("Task", ["title": "one", "done": true])
                let t2 = stack.insert("Task", ["title": "two"])
                employee.setValue(NSOrderedSet(array: [t2, t1]), forKey: "tasks")
                let p1 = stack.insert("Project", ["title": "Apollo"])
                let p2 = stack.insert("Project", ["title": "Gemini"])
                employee.setValue(Set([p1, p2]), forKey: "projects")
                boss.setValue(Set([p1]), forKey: "projects")
                stack.insert("Badge", ["number": 7, "holder": employee])
                try stack.context.save()
            }
        }
        let stack = try SQLiteStack(model: model, url: url)
        try withExtendedLifetime(stack.context) {
            let employees = try stack.fetch("Employee", sortedBy: "name")
            #expect(employees.map { $0.value(forKey: "name") as? String } == ["Ada", "Bob"])
            #expect(employees[0].entity.name == "Manager")
            let bob = employees[1]
            #expect(bob.value(forKey: "age") as? Int == 25)
            #expect(bob.value(forKey: "salary") as? Double == 1234.5)
            #expect((bob.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") as? String == "R&D")
            #expect((bob.value(forKey: "manager") as? NSManagedObject)?.value(forKey: "name") as? String == "Ada")
            let tasks = bob.value(forKey: "tasks") as? NSOrderedSet
            #expect(tasks?.array.map { ($0 as! NSManagedObject).value(forKey: "title") as? String } == ["two", "one"])
            let projects = (bob.value(forKey: "projects") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "title") as? String }.sorted()
            #expect(projects == ["Apollo", "Gemini"])
            let apollo = try stack.fetch("Project", "title == %@", "Apollo").first
            #expect((apollo?.value(forKey: "members") as? Set<NSManagedObject>)?.count == 2)
            #expect((bob.value(forKey: "badge") as? NSManagedObject)?.value(forKey: "number") as? Int == 7)
            let ada = employees[0]
            #expect((ada.value(forKey: "reports") as? Set<NSManagedObject>)?.count == 1)
            #expect(((try stack.fetch("Department").first)?.value(forKey: "employees") as? Set<NSManagedObject>)?.count == 2)
        }
    }

    /// Values of another storage class in a number column (written by other code) read as Core Data's
    /// decoding has them: an integer column's REAL truncated and TEXT parsed, a REAL column's INTEGER as a
    /// double; and numbers a slot keeps boxed (an `NSNumber` with a fraction, a `Bool` on an integer, an
    /// `Int64` on a double) are written as the column's kind.
    @Test func foreignAndBoxedNumbersReadAndWriteAsTheirColumns() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = TestModel.make()
        do {
            let stack = try SQLiteStack(model: model, url: url)
            for name in ["Real", "Text", "Exp", "Null"] { stack.insert("Employee", ["name": name]) }
            stack.insert("Department", ["name": "Fraction", "budget": NSNumber(value: 2.5)])
            stack.insert("Department", ["name": "Bool", "budget": true])
            stack.insert("Employee", ["name": "IntegerSalary", "salary": Int64(2)])
            try stack.context.save()
        }
        try RawSQL.execute(url, "UPDATE ZEMPLOYEE SET ZAGE = 2.7, ZSALARY = 3 WHERE ZNAME = 'Real'")
        try RawSQL.execute(url, "UPDATE ZEMPLOYEE SET ZAGE = '12' WHERE ZNAME = 'Text'")
        try RawSQL.execute(url, "UPDATE ZEMPLOYEE SET ZAGE = '1e3', ZACTIVE = 0 WHERE ZNAME = 'Exp'")
        try RawSQL.execute(url, "UPDATE ZEMPLOYEE SET ZAGE = NULL, ZSALARY = NULL WHERE ZNAME = 'Null'")
        let stack = try SQLiteStack(model: model, url: url)
        func employee(_ name: String) throws -> NSManagedObject { try #require(try stack.fetch("Employee", "name == %@", name).first) }
        func department(_ name: String) throws -> NSManagedObject { try #require(try stack.fetch("Department", "name == %@", name).first) }
        #expect(try employee("Real").value(forKey: "age") as? Int64 == 2)
        #expect(try employee("Real").value(forKey: "salary") as? Double == 3)
        #expect(try employee("Text").value(forKey: "age") as? Int64 == 12)
        #expect(try employee("Exp").value(forKey: "age") as? Int64 == 1000)
        #expect(try employee("Exp").value(forKey: "active") as? Bool == false)
        #expect(try employee("Null").value(forKey: "age") == nil && employee("Null").value(forKey: "salary") == nil)
        #expect(try department("Fraction").value(forKey: "budget") as? Int64 == 2)
        #expect(try department("Bool").value(forKey: "budget") as? Int64 == 1)
        #expect(try employee("IntegerSalary").value(forKey: "salary") as? Double == 2)
        let stored = try RawSQL.rows(url, "SELECT typeof(ZSALARY) AS t FROM ZEMPLOYEE WHERE ZNAME = 'IntegerSalary'")
        #expect(stored.first?["t"] as? String == "real")
    }

    @Test func theFileHasCoreDataSchema() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
        }
        let tables = Set(try RawSQL.rows(url, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0["name"] as? String })
        #expect(tables.isSuperset(of: ["ZCOMPANY", "ZDEPARTMENT", "ZEMPLOYEE", "ZTASK", "ZPROJECT", "ZBADGE", "Z_PRIMARYKEY", "Z_METADATA"]))
        #expect(!tables.contains("Z_MODELCACHE"), "we write no model cache, so we create no empty one")
        #expect(!tables.contains("ZMANAGER"), "subentities share their root's table")
        // Entity numbers: pre-order, roots and children sorted by name.
        let keys = try RawSQL.rows(url, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(keys.map { $0["Z_NAME"] as? String } == ["Badge", "Company", "Department", "Employee", "Manager", "Project", "Task"])
        #expect(keys[4]["Z_SUPER"] as? Int64 == 4)
        #expect(keys[1]["Z_MAX"] as? Int64 == 1)
        let employeeColumns = Set(try RawSQL.rows(url, "PRAGMA table_info(ZEMPLOYEE)").compactMap { $0["name"] as? String })
        #expect(employeeColumns.isSuperset(of: ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZAGE", "ZSALARY", "ZDEPARTMENT", "ZMANAGER", "ZBADGE", "ZLEVEL"]))
        #expect(!employeeColumns.contains("ZCACHE"), "transient attributes have no column")
        let taskColumns = Set(try RawSQL.rows(url, "PRAGMA table_info(ZTASK)").compactMap { $0["name"] as? String })
        #expect(taskColumns.isSuperset(of: ["ZOWNER", "Z_FOK_OWNER", "ZREVIEWER", "Z4_OWNER", "Z4_REVIEWER"]))
        // Employee(4).projects ↔ Project(6).members: named after the lower entity number's side.
        let join = Set(try RawSQL.rows(url, "PRAGMA table_info(Z_4PROJECTS)").compactMap { $0["name"] as? String })
        #expect(join == ["Z_4MEMBERS", "Z_6PROJECTS"])
        let journal = try RawSQL.rows(url, "PRAGMA journal_mode").first?["journal_mode"] as? String
        #expect(journal == "wal")
        let metadata = try RawSQL.rows(url, "SELECT Z_UUID, Z_PLIST FROM Z_METADATA")
        let plist = try PropertyListSerialization.propertyList(from: metadata[0]["Z_PLIST"] as! Data, format: nil) as? [String: Any]
        #expect(plist?["NSStoreType"] as? String == "SQLite")
        #expect((plist?["NSStoreModelVersionHashes"] as? [String: Data])?.count == 7)
        #expect(plist?["NSStoreUUID"] == nil, "the UUID lives in Z_UUID")
        #expect(metadata[0]["Z_UUID"] as? String == stack.store.identifier)
        // Spec §1 and §5: a new file's page size, incremental auto-vacuum and the metadata keys that say so.
        #expect(try RawSQL.rows(url, "PRAGMA page_size").first?["page_size"] as? Int64 == 4096)
        #expect(try RawSQL.rows(url, "PRAGMA auto_vacuum").first?["auto_vacuum"] as? Int64 == 2)
        #expect(plist?["_NSAutoVacuumLevel"] as? String == "2")
        #expect((plist?["NSStoreModelVersionHashesVersion"] as? NSNumber)?.intValue == 3)
        #expect(plist?["NSStoreModelVersionHashesDigest"] as? String == stack.coordinator.managedObjectModel.versionHashesDigest)
        #expect(plist?["NSStoreModelVersionChecksumKey"] as? String == stack.coordinator.managedObjectModel.versionChecksum)
    }

    /// Spec §3: files with derived attributes carry triggers that call Core Data's SQL functions; any
    /// writer must provide them, or every insert and update of the table fails ("no such function").
    @Test func derivedAttributeTriggersFindTheirFunctions() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        do {
            let stack = try SQLiteStack(model: TestModel.make(), url: url)
            _ = stack.store
        }
        try RawSQL.execute(url, """
            CREATE TRIGGER ZQ_ZCOMPANY_INSERT AFTER INSERT ON ZCOMPANY FOR EACH ROW BEGIN
              SELECT NSCoreDataDATriggerInsertUpdatedAffectedObjectValue('ZCOMPANY', NEW.Z_ENT, NEW.Z_PK, 'name', NEW.ZNAME);
            END;
            CREATE TRIGGER ZQ_ZCOMPANY_UPDATE AFTER UPDATE OF ZNAME ON ZCOMPANY FOR EACH ROW BEGIN
              SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZCOMPANY', NEW.Z_ENT, NEW.Z_PK, 'name', NEW.ZNAME);
            END;
            """)
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            let company = stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
            company.setValue("Acme Corp", forKey: "name")
            try stack.context.save()
        }
        #expect(try RawSQL.rows(url, "SELECT ZNAME FROM ZCOMPANY").first?["ZNAME"] as? String == "Acme Corp")
    }

    /// A book with `pagesCount = pages.@count` (the fixture store SampleModel2's), `searchTitle =
    /// canonical:(title)` and `touched = now()`; pages point at their book.
    private static func derivedBookModel() -> NSManagedObjectModel {
        let derived = DerivedModels.derived
        let book = TestModel.entity("Book"), page = TestModel.entity("Page")
        let (pages, pageBook) = RelationshipPairs.toMany("pages", from: book, to: page, inverse: "book")
        book.properties = [TestModel.attribute("title", .stringAttributeType), derived("pagesCount", .integer64AttributeType, "pages.@count"),
                           derived("searchTitle", .stringAttributeType, "canonical:(title)"), derived("touched", .dateAttributeType, "now()"), pages]
        page.properties = [TestModel.attribute("number", .integer32AttributeType), pageBook]
        let model = NSManagedObjectModel()
        model.entities = [book, page]
        return model
    }

    /// Spec §3: Core Data keeps derived attributes with triggers in the file. A new store gets Apple's
    /// (for `pages.@count` exactly the text of the fixture store SampleModel2_V1's five triggers), the
    /// values are the store's (never written by a save, which would race the triggers' arithmetic), and
    /// Core Data's SQL functions compute what Apple's do.
    @Test func derivedAttributesAreKeptByApplesTriggers() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: Self.derivedBookModel(), url: url)
        let log = SQLStatementLog()
        stack.sqliteStore.statementLog = log
        try withExtendedLifetime(stack.context) {
            let book = stack.insert("Book", ["title": "Ångström Ａ"])
            let pages = (1...3).map { stack.insert("Page", ["number": $0, "book": book]) }
            try stack.context.save()
            #expect(book.value(forKey: "pagesCount") as? Int64 == 3)
            var row = try #require(try RawSQL.rows(url, "SELECT ZPAGESCOUNT, ZSEARCHTITLE, ZTOUCHED FROM ZBOOK").first)
            #expect(row["ZPAGESCOUNT"] as? Int64 == 3)
            #expect(row["ZSEARCHTITLE"] as? String == "angstrom a" && book.value(forKey: "searchTitle") as? String == "angstrom a")
            // NSCoreDataNow(): a date as Core Data stores one, seconds since 2001; the object has the store's.
            let touched = try #require(row["ZTOUCHED"] as? Double)
            #expect(abs(touched - Date().timeIntervalSinceReferenceDate) < 60)
            #expect((book.value(forKey: "touched") as? Date)?.timeIntervalSinceReferenceDate == touched)

            stack.context.delete(pages[0])
            book.setValue("Éclair", forKey: "title")
            try stack.context.save()
            #expect(book.value(forKey: "pagesCount") as? Int64 == 2)
            row = try #require(try RawSQL.rows(url, "SELECT ZPAGESCOUNT, ZSEARCHTITLE FROM ZBOOK").first)
            #expect(row["ZPAGESCOUNT"] as? Int64 == 2)
            #expect(row["ZSEARCHTITLE"] as? String == "eclair" && book.value(forKey: "searchTitle") as? String == "eclair")
        }
        // The saves wrote the book's title, never a column a trigger keeps.
        let writes = log.statements.filter { $0.hasPrefix("INSERT INTO ZBOOK") || $0.hasPrefix("UPDATE ZBOOK") }
        #expect(writes.count >= 2)
        #expect(writes.allSatisfy { $0.contains("ZTITLE") && !$0.contains("ZPAGESCOUNT") && !$0.contains("ZSEARCHTITLE") && !$0.contains("ZTOUCHED") }, "\(writes)")

        guard let stores = Fixtures.stores else { return }
        func triggers(_ url: URL) throws -> [String: String] {
            var result: [String: String] = [:]
            for row in try RawSQL.rows(url, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%pagesCount%'") {
                result[row["name"] as? String ?? ""] = (row["sql"] as? String)?.replacingOccurrences(of: "CREATE TRIGGER IF NOT EXISTS ", with: "CREATE TRIGGER ")
            }
            return result
        }
        let apple = try triggers(stores.appendingPathComponent("alemar11__CoreDataPlus__SampleModel2_V1.sqlite"))
        #expect(apple.count == 5)
        #expect(try triggers(url) == apple)
    }

    /// A store made without a derived attribute's triggers (by a writer that makes none, or before the
    /// attribute existed) gets them when it opens, with the values of its rows set; an attribute whose
    /// triggers exist under Apple's names is left to them.
    @Test func missingDerivationTriggersAreAddedAndTheRowsFilledIn() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        do {
            let stack = try SQLiteStack(model: Self.derivedBookModel(), url: url)
            let book = stack.insert("Book", ["title": "Été"])
            for number in 1...2 { stack.insert("Page", ["number": number, "book": book]) }
            try stack.context.save()
        }
        try RawSQL.execute(url, """
            DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_INSERT; DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_UPDATE_INCREMENT;
            DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_UPDATE_DECREMENT; DROP TRIGGER Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE;
            DROP TRIGGER Z_DA_ZBOOK_Book_pagesCount_SOURCE_INSERT; DROP TRIGGER Z_DA_ZBOOK_Book_searchTitle_INSERT; DROP TRIGGER Z_DA_ZBOOK_Book_searchTitle_UPDATE;
            DROP TRIGGER Z_DA_ZBOOK_Book_touched_INSERT; DROP TRIGGER Z_DA_ZBOOK_Book_touched_UPDATE;
            UPDATE ZBOOK SET ZPAGESCOUNT = NULL, ZSEARCHTITLE = NULL;
            CREATE TRIGGER Z_DA_ZBOOK_Book_searchTitle_APPLE AFTER UPDATE OF ZTITLE ON ZBOOK FOR EACH ROW BEGIN UPDATE ZBOOK SET ZSEARCHTITLE = 'apple' WHERE Z_PK = NEW.Z_PK; END;
            """)
        let touched = try #require(try RawSQL.rows(url, "SELECT ZTOUCHED FROM ZBOOK").first?["ZTOUCHED"] as? Double)
        let stack = try SQLiteStack(model: Self.derivedBookModel(), url: url)
        let row = try #require(try RawSQL.rows(url, "SELECT ZPAGESCOUNT, ZSEARCHTITLE, ZTOUCHED FROM ZBOOK").first)
        #expect(row["ZPAGESCOUNT"] as? Int64 == 2)
        // now() sets rows that have no time yet; one that has keeps it.
        #expect(row["ZTOUCHED"] as? Double == touched)
        // searchTitle has a trigger of its own (Apple's, here a stand-in): neither added to nor filled in.
        #expect((row["ZSEARCHTITLE"] ?? nil) == nil)
        let names = try RawSQL.rows(url, "SELECT name FROM sqlite_master WHERE type = 'trigger'").compactMap { $0["name"] as? String }
        #expect(names.filter { $0.contains("_Book_pagesCount_") }.count == 5)
        #expect(names.filter { $0.contains("_Book_touched_") }.count == 2)
        #expect(!names.contains("Z_DA_ZBOOK_Book_searchTitle_INSERT"))
        try withExtendedLifetime(stack.context) {
            let book = try #require(try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Book")).first)
            stack.insert("Page", ["number": 3, "book": book])
            try stack.context.save()
            #expect(book.value(forKey: "pagesCount") as? Int64 == 3)
        }
    }

    /// Triggers added to an existing file fill in its rows, also where a relationship leads back to the
    /// same table (a tree), whose subqueries must not confuse the row with the one it reads.
    @Test func derivationTriggersAddedToATreeFillItsRowsIn() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        do {
            let stack = try SQLiteStack(model: DerivedModels.tree(), url: url)
            let root = stack.insert("Node", ["name": "root"])
            let a = stack.insert("Node", ["name": "a", "parent": root])
            stack.insert("Node", ["name": "b", "parent": root])
            stack.insert("Node", ["name": "leaf", "parent": a])
            try stack.context.save()
        }
        let names = try RawSQL.rows(url, "SELECT name FROM sqlite_master WHERE type = 'trigger'").compactMap { $0["name"] as? String }
        try RawSQL.execute(url, names.map { "DROP TRIGGER \($0);" }.joined() + "UPDATE ZNODE SET ZPARENTNAME = NULL, ZCHILDCOUNT = NULL;")
        _ = try SQLiteStack(model: DerivedModels.tree(), url: url).store
        let rows = try RawSQL.rows(url, "SELECT ZNAME, ZPARENTNAME, ZCHILDCOUNT FROM ZNODE ORDER BY ZNAME")
        #expect(rows.map { $0["ZNAME"] as? String } == ["a", "b", "leaf", "root"])
        #expect(rows.map { $0["ZCHILDCOUNT"] as? Int64 } == [1, 0, 0, 2])
        #expect(rows.map { $0["ZPARENTNAME"] as? String } == ["root", "root", "a", nil])
    }

    /// Core Data's layout of composite attributes (its `NSSQLEntity` mapping): a column per stored element,
    /// named after the element alone (`ZLATITUDE`, nested composites flattened), a digit added when the
    /// table already has the name; no column for the composite. A composite whose columns are all NULL
    /// reads back as nil.
    @Test func compositeAttributesAreStoredAsAColumnPerElement() throws {
        let meters = TestModel.attribute("meters", .doubleAttributeType)
        let accuracy = NSCompositeAttributeDescription()
        accuracy.name = "accuracy"
        accuracy.elements = [meters]
        let location = NSCompositeAttributeDescription()
        location.name = "location"
        location.elements = [TestModel.attribute("latitude", .doubleAttributeType), TestModel.attribute("name", .stringAttributeType), accuracy,
                             TestModel.attribute("scratch", .stringAttributeType, transient: true)]
        // Declared before the entity's own `name`: the entity's attribute keeps ZNAME all the same.
        let place = TestModel.entity("Place", [location, TestModel.attribute("name", .stringAttributeType)])
        let model = NSManagedObjectModel()
        model.entities = [place]
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: model, url: url)
        try withExtendedLifetime(stack.context) {
            let rome = stack.insert("Place", ["name": "Rome", "location": ["latitude": 41.9, "name": "centro", "accuracy": ["meters": 3.5]]])
            let void = stack.insert("Place", ["name": "Void", "location": [String: Any]()])
            try stack.context.save()
            let columns = try RawSQL.rows(url, "PRAGMA table_info(ZPLACE)").compactMap { $0["name"] as? String }
            #expect(Set(columns) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZLATITUDE", "ZNAME1", "ZMETERS"])
            let row = try #require(try RawSQL.rows(url, "SELECT ZNAME, ZLATITUDE, ZNAME1, ZMETERS FROM ZPLACE WHERE ZNAME = 'Rome'").first)
            #expect(row["ZLATITUDE"] as? Double == 41.9 && row["ZNAME1"] as? String == "centro" && row["ZMETERS"] as? Double == 3.5)
            let other = stack.newContext()
            #expect(other.object(with: void.objectID).value(forKey: "location") == nil)
            #expect((other.object(with: rome.objectID).value(forKey: "location") as? [String: Any])?["name"] as? String == "centro")
            // Only the changed composite's columns are written.
            let log = SQLStatementLog()
            stack.sqliteStore.statementLog = log
            rome.setValue(42.0, forKeyPath: "location.latitude")
            try stack.context.save()
            stack.sqliteStore.statementLog = nil
            let update = try #require(log.statements.first { $0.hasPrefix("UPDATE ZPLACE") })
            #expect(update.contains("ZLATITUDE") && update.contains("ZMETERS") && !update.contains("ZNAME ="))
            // A composite alone has no column to compare: the error names its elements.
            let request = NSFetchRequest<NSManagedObject>(entityName: "Place")
            request.predicate = NSPredicate(format: "location == nil")
            #expect { try other.fetch(request) } throws: { error in
                "\(error)".contains("location.latitude, location.name, location.accuracy.meters")
            }
        }
    }

    /// Spec §2: two entities of one hierarchy with a property of the same name share the root's table,
    /// so the second one's column gets a numeric suffix (`ZTEXT`, `ZTEXT1`); each reads back its own.
    @Test func sameNamedPropertiesOfOneHierarchyGetSuffixedColumns() throws {
        let message = TestModel.entity("Message", [TestModel.attribute("sender", .stringAttributeType)])
        let system = TestModel.entity("SystemMessage", [TestModel.attribute("text", .stringAttributeType)])
        let textMessage = TestModel.entity("TextMessage", [TestModel.attribute("text", .stringAttributeType)])
        message.subentities = [system, textMessage]
        let model = NSManagedObjectModel()
        model.entities = [message, system, textMessage]
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: model, url: url)
        try withExtendedLifetime(stack.context) {
            stack.insert("SystemMessage", ["sender": "s", "text": "joined"])
            stack.insert("TextMessage", ["sender": "t", "text": "hello"])
            try stack.context.save()
        }
        let columns = Set(try RawSQL.rows(url, "PRAGMA table_info(ZMESSAGE)").compactMap { $0["name"] as? String })
        #expect(columns.isSuperset(of: ["ZSENDER", "ZTEXT", "ZTEXT1"]))
        let rows = try RawSQL.rows(url, "SELECT ZSENDER, ZTEXT, ZTEXT1 FROM ZMESSAGE ORDER BY ZSENDER")
        #expect(rows.map { [$0["ZTEXT"] as? String, $0["ZTEXT1"] as? String] } == [["joined", nil], [nil, "hello"]])
        let other = stack.newContext()
        let read = try stack.fetch("Message", sortedBy: "sender", in: other)
        #expect(read.map { $0.value(forKey: "text") as? String } == ["joined", "hello"])
    }

    /// Spec §4: `Z_MAX` counts the keys of the root's table; a subentity's row keeps 0.
    @Test func aSubentitysInsertRaisesTheRootsMaximum() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            stack.insert("Employee", ["name": "Ann"])
            stack.insert("Manager", ["name": "Bob"])
            stack.insert("Manager", ["name": "Cy"])
            try stack.context.save()
        }
        let keys = try RawSQL.rows(url, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY")
        let maxima = Dictionary(uniqueKeysWithValues: keys.compactMap { row in (row["Z_NAME"] as? String).map { ($0, row["Z_MAX"] as? Int64) } })
        #expect(maxima["Employee"] == 3)
        #expect(maxima["Manager"] == 0)
        let pks = try RawSQL.rows(url, "SELECT Z_PK FROM ZEMPLOYEE ORDER BY Z_PK").compactMap { $0["Z_PK"] as? Int64 }
        #expect(pks == [1, 2, 3])
    }

    /// A save writes its rows in primary-key order, whatever order the context holds its objects in
    /// (their addresses): in key order each write finds its B-tree page where the last one left it.
    @Test func aSaveWritesItsRowsInPrimaryKeyOrder() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        do {
            let stack = try SQLiteStack(model: TestModel.make(), url: url)
            try withExtendedLifetime(stack.context) {
                for index in 0..<40 { _ = stack.insert("Company", ["name": "c\(index)"]) }
                try stack.context.save()
            }
        }
        try RawSQL.execute(url, """
            CREATE TABLE WRITES (KIND TEXT, PK INTEGER);
            CREATE TRIGGER W_INSERT AFTER INSERT ON ZCOMPANY BEGIN INSERT INTO WRITES VALUES ('insert', NEW.Z_PK); END;
            CREATE TRIGGER W_UPDATE AFTER UPDATE ON ZCOMPANY BEGIN INSERT INTO WRITES VALUES ('update', NEW.Z_PK); END;
            CREATE TRIGGER W_DELETE AFTER DELETE ON ZCOMPANY BEGIN INSERT INTO WRITES VALUES ('delete', OLD.Z_PK); END;
            """)
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            // Realized by name ("c0", "c1", "c10", …, "c2", …), not by key; every other one updated,
            // the rest deleted, and new ones given their keys in reverse.
            let companies = try stack.fetch("Company", sortedBy: "name")
            for (index, company) in companies.enumerated() {
                if index % 2 == 0 { company.setValue("renamed \(index)", forKey: "name") } else { stack.context.delete(company) }
            }
            let inserted = (0..<20).map { stack.insert("Company", ["name": "new \($0)"]) }
            try stack.context.obtainPermanentIDs(for: inserted.reversed())
            try stack.context.save()
        }
        let writes = try RawSQL.rows(url, "SELECT KIND, PK FROM WRITES ORDER BY rowid")
        for kind in ["insert", "update", "delete"] {
            let keys = writes.filter { $0["KIND"] as? String == kind }.compactMap { $0["PK"] as? Int64 }
            #expect(keys.count == 20, "\(kind)")
            #expect(keys == keys.sorted(), "\(kind): \(keys)")
        }
        #expect(try RawSQL.rows(url, "SELECT COUNT(*) AS N FROM ZCOMPANY").first?["N"] as? Int64 == 40)
    }

    /// A save of several entities writes each entity's rows together, in key order: each entity numbers
    /// its keys from 1, so key order alone would interleave the tables.
    @Test func aSaveOfSeveralEntitiesWritesEachEntitysRowsTogether() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        _ = try SQLiteStack(model: TestModel.make(), url: url).store
        try RawSQL.execute(url, """
            CREATE TABLE WRITES (TBL TEXT, PK INTEGER);
            CREATE TRIGGER W_COMPANY AFTER INSERT ON ZCOMPANY BEGIN INSERT INTO WRITES VALUES ('company', NEW.Z_PK); END;
            CREATE TRIGGER W_PROJECT AFTER INSERT ON ZPROJECT BEGIN INSERT INTO WRITES VALUES ('project', NEW.Z_PK); END;
            """)
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            var objects: [NSManagedObject] = []
            for index in 0..<15 {
                objects.append(stack.insert("Company", ["name": "c\(index)"]))
                objects.append(stack.insert("Project", ["title": "p\(index)"]))
            }
            try stack.context.obtainPermanentIDs(for: objects.reversed())
            try stack.context.save()
        }
        let writes = try RawSQL.rows(url, "SELECT TBL, PK FROM WRITES ORDER BY rowid").map { ($0["TBL"] as? String ?? "", $0["PK"] as? Int64 ?? 0) }
        #expect(writes.count == 30)
        // One run per table, each ascending.
        let runs = writes.map(\.0).reduce(into: [String]()) { runs, table in if runs.last != table { runs.append(table) } }
        #expect(runs.count == 2, "\(writes)")
        for table in ["company", "project"] {
            let keys = writes.filter { $0.0 == table }.map(\.1)
            #expect(keys == keys.sorted(), "\(table): \(keys)")
        }
    }

    /// Version conflicts are reported deletes first, then updates, as the save writes them.
    @Test func conflictsOfDeletesComeBeforeThoseOfUpdates() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            for index in 0..<6 { stack.insert("Company", ["name": "c\(index)"]) }
            try stack.context.save()
            let companies = try stack.fetch("Company", sortedBy: "name")
            // Another writer changes every row.
            try RawSQL.execute(url, "UPDATE ZCOMPANY SET Z_OPT = Z_OPT + 1")
            for (index, company) in companies.enumerated() {
                if index % 2 == 0 { company.setValue("renamed \(index)", forKey: "name") } else { stack.context.delete(company) }
            }
            let error = #expect(throws: NSError.self) { try stack.context.save() }
            let conflicts = error?.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] ?? []
            #expect(conflicts.count == 6)
            let deleted = conflicts.map { $0.sourceObject.isDeleted }
            #expect(deleted == [true, true, true, false, false, false], "\(deleted)")
        }
    }

    @Test func pragmasFromTheOptionsAreApplied() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stack = try SQLiteStack(model: TestModel.make(), url: url, options: [NSSQLitePragmasOption: ["journal_mode": "DELETE", "synchronous": "OFF"]])
        try withExtendedLifetime(stack.context) {
            stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
        }
        #expect(try RawSQL.rows(url, "PRAGMA journal_mode").first?["journal_mode"] as? String == "delete")
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        // A pragma cannot take a bound argument: anything but plain words is refused, not run.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.file("Other.sqlite"),
                                               options: [NSSQLitePragmasOption: ["synchronous": "OFF; DROP TABLE Z_METADATA"]])
        } throws: { ($0 as NSError).code == 134080 }
    }
}
