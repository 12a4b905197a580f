import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import OCDTestSupport
import Testing
import class OCDPredicate.NSPredicate

/// An Employee whose `age` (Integer 16) is read through an `Int16` property, as `@Managed var age: Int16`
/// expands it.
final class NarrowEmployee: NSManagedObject, @unchecked Sendable {
    var age: Int16 { managedValue(forKey: "age") }
    static let className = String(reflecting: NarrowEmployee.self)
}

/// Values in files (written by other code, or damaged) that reached a trap of Swift or of Linux
/// Foundation; each test stopped the process before its fix. Found by an audit of bad-input paths.
@Suite struct BadInputRegressionTests {
    /// A store with one Employee and one Company, closed.
    private func store(_ folder: TemporaryFolder, _ model: NSManagedObjectModel = TestModel.make()) throws -> URL {
        let url = folder.file()
        let stack = try SQLiteStack(model: model, url: url, options: ["NSSQLitePragmasOption": ["journal_mode": "DELETE"]])
        try withExtendedLifetime(stack.context) {
            stack.insert("Employee", ["name": "Ann", "age": 30, "hired": Date(timeIntervalSinceReferenceDate: 0)])
            stack.insert("Company", ["name": "Acme"])
            try stack.context.save()
        }
        try stack.coordinator.remove(stack.store)
        return url
    }

    /// SQLite does not enforce an Integer 16 column's width: 70000 reads through an `Int16` property
    /// truncated, as Apple's scalar accessors read it (`shortValue`), not as a stopped process.
    @Test func aNumberBeyondAnIntegerAttributesWidthReadsTruncated() throws {
        NSManagedObjectModel.registerManagedObjectClass(NarrowEmployee.self, forName: NarrowEmployee.className)
        let model = TestModel.make { entities, _ in entities["Employee"]!.managedObjectClassName = NarrowEmployee.className }
        let folder = TemporaryFolder()
        let url = try store(folder, model)
        try RawSQL.execute(url, "UPDATE ZEMPLOYEE SET ZAGE = 70000")
        let stack = try SQLiteStack(model: model, url: url)
        let ages = try withExtendedLifetime(stack.context) { try stack.fetch("Employee").map { ($0 as? NarrowEmployee)?.age } }
        #expect(ages == [Int16(truncatingIfNeeded: 70000)])
    }

    /// A date column holding no number of seconds (NaN, an infinity) reads as nil: Linux Foundation stops
    /// describing such a date.
    @Test func aDateThatIsNoNumberOfSecondsReadsAsNil() throws {
        let folder = TemporaryFolder()
        let url = try store(folder)
        for stored in ["'nan'", "9e999", "-9e999", "'inf'"] {
            try RawSQL.execute(url, "UPDATE ZEMPLOYEE SET ZHIRED = \(stored)")
            let stack = try SQLiteStack(model: TestModel.make(), url: url)
            let hired = try withExtendedLifetime(stack.context) { try stack.fetch("Employee").first?.value(forKey: "hired") }
            #expect(hired == nil, "\(stored)")
        }
    }

    /// A dictionary result of a date column that holds no number of seconds has no date for it.
    @Test func aDictionaryResultOfADateThatIsNoNumberOfSecondsHasNoDate() throws {
        let folder = TemporaryFolder()
        let url = try store(folder)
        try RawSQL.execute(url, "UPDATE ZEMPLOYEE SET ZHIRED = 9e999")
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        let rows = try withExtendedLifetime(stack.context) {
            let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["name", "hired"]
            return try stack.context.fetch(request)
        }
        #expect(rows.count == 1)
        #expect(rows.first?["name"] as? String == "Ann")
        #expect(rows.first?["hired"] as? Date == nil)
    }

    /// A key maximum at Int64's end leaves no keys for new objects: the save fails, where adding the
    /// save's count trapped.
    @Test func aKeyMaximumAtTheEndOfInt64FailsTheSave() throws {
        let folder = TemporaryFolder()
        let url = try store(folder)
        try RawSQL.execute(url, "UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807 WHERE Z_NAME = 'Company'")
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        withExtendedLifetime(stack.context) {
            stack.insert("Company", ["name": "Another"])
            let error = #expect(throws: NSError.self) { try stack.context.save() }
            #expect(error?.localizedDescription.contains("no primary keys left") == true, "\(String(describing: error))")
        }
    }

    /// A version at Int64's end (Z_OPT) wraps to Int64's start, in the file as in memory, instead of
    /// trapping; the row can be saved again, and deleted, afterwards (SQLite's `Z_OPT + 1` would have made
    /// it a REAL that no later version check matches).
    @Test func aVersionAtTheEndOfInt64WrapsAndTheRowStaysWritable() throws {
        let folder = TemporaryFolder()
        let url = try store(folder)
        try RawSQL.execute(url, "UPDATE ZCOMPANY SET Z_OPT = 9223372036854775807")
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            let company = try #require(try stack.fetch("Company").first)
            company.setValue("Renamed", forKey: "name")
            try stack.context.save()
            #expect(try RawSQL.rows(url, "SELECT Z_OPT FROM ZCOMPANY").first?["Z_OPT"] as? Int64 == .min)
            company.setValue("Renamed again", forKey: "name")
            try stack.context.save()
            #expect(try RawSQL.rows(url, "SELECT Z_OPT, ZNAME FROM ZCOMPANY").first?["ZNAME"] as? String == "Renamed again")
            stack.context.delete(company)
            try stack.context.save()
        }
        #expect(try RawSQL.rows(url, "SELECT COUNT(*) AS N FROM ZCOMPANY").first?["N"] as? Int64 == 0)
    }

    /// A busy timeout beyond Int32's milliseconds, or infinity ("wait forever"), is clamped.
    @Test func aHugeTimeoutIsClamped() throws {
        let folder = TemporaryFolder()
        for timeout in [Double.infinity, 1e12, .nan] {
            let stack = try SQLiteStack(model: TestModel.make(), url: folder.file(), options: [NSPersistentStoreTimeoutOption: timeout])
            #expect(stack.coordinator.persistentStores.count == 1, "\(timeout)")
        }
    }

    /// Composite element names become column names like property names: names that are not plain
    /// identifiers are refused (134080) rather than written into SQL. A fetch index's name, which only names
    /// its index, is quoted instead.
    @Test func compositeElementNamesMustBeIdentifiersAndFetchIndexNamesAreQuoted() throws {
        func model(element: String, index: String) -> NSManagedObjectModel {
            let entity = TestModel.entity("Place", [TestModel.attribute("name", .stringAttributeType)])
            let composite = NSCompositeAttributeDescription()
            composite.name = "location"
            composite.elements = [TestModel.attribute(element, .doubleAttributeType)]
            entity.properties.append(composite)
            let byName = NSFetchIndexDescription(name: index, elements: [NSFetchIndexElementDescription(property: entity.properties[0], collationType: .binary)])
            entity.indexes = [byName]
            let model = NSManagedObjectModel()
            model.entities = [entity]
            return model
        }
        let folder = TemporaryFolder()
        for (number, (element, index)) in [("x); DROP TABLE Z_METADATA; --", "byName")].enumerated() {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model(element: element, index: index))
            let error = #expect(throws: NSError.self) {
                try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.file("Refused\(number).sqlite"), options: nil)
            }
            #expect(error?.code == 134080, "\(String(describing: error))")
            #expect(error?.localizedDescription.contains("cannot name an SQLite") == true, "\(String(describing: error))")
            // Refused before a file is made: nothing is left behind.
            #expect(!FileManager.default.fileExists(atPath: folder.file("Refused\(number).sqlite").path))
        }
        let odd = "i ON ZPLACE (ZNAME); DROP TABLE Z_METADATA; --"
        let url = folder.file("Accepted.sqlite")
        let stack = try SQLiteStack(model: model(element: "x", index: odd), url: url)
        #expect(stack.coordinator.persistentStores.count == 1)
        #expect(try RawSQL.rows(url, "SELECT COUNT(*) AS N FROM Z_METADATA").first?["N"] as? Int64 == 1)
        #expect(try RawSQL.rows(url, "SELECT name FROM sqlite_master WHERE type = 'index'").contains { $0["name"] as? String == "Z_Place_" + odd })
    }

    /// The comparison function the store registers refuses operator and option numbers it does not know
    /// (a trigger of a file written by other code can call it with anything): negative ones trapped.
    @Test func theComparisonFunctionRefusesUnknownNumbers() throws {
        let folder = TemporaryFolder()
        let url = try store(folder)
        try RawSQL.execute(url, """
            CREATE TABLE PROBE (RESULT);
            CREATE TRIGGER PROBE_ON_INSERT AFTER INSERT ON ZCOMPANY BEGIN
              INSERT INTO PROBE VALUES (ocd_compare(-1, -1, 1, 1)), (ocd_compare(4, -3, 1, 1)), (ocd_compare(4, 0, 1, 1));
            END;
            """)
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            stack.insert("Company", ["name": "Probe"])
            try stack.context.save()
        }
        let results = try RawSQL.rows(url, "SELECT RESULT FROM PROBE ORDER BY rowid").map { $0["RESULT"] as? Int64 }
        #expect(results == [nil, nil, 1], "\(results)")
    }

    /// An infinite double given for a decimal attribute (as a predicate's constant, or set) does not reach
    /// Linux Foundation's `NSNumber.decimalValue`, which stops the process on one.
    @Test func anInfiniteDoubleForADecimalAttributeDoesNotTrap() throws {
        let model = NSManagedObjectModel()
        model.entities = [TestModel.entity("Invoice", [TestModel.attribute("amount", .decimalAttributeType)])]
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: model, url: folder.file())
        try withExtendedLifetime(stack.context) {
            stack.insert("Invoice", ["amount": Decimal(5)])
            try stack.context.save()
            #expect(try stack.fetch("Invoice", "amount < %@", Double.infinity).count == 1)
            #expect(try stack.fetch("Invoice", "amount > %@", -Double.infinity).count == 1)
            let invoice = stack.insert("Invoice")
            invoice.setValue(Double.infinity, forKey: "amount")
            #expect((invoice.value(forKey: "amount") as? Decimal)?.isNaN == true)
            // Kept as Decimal's text for it, "NaN", and read back as NaN.
            try stack.context.save()
        }
        let stored = try RawSQL.rows(folder.file(), "SELECT ZAMOUNT FROM ZINVOICE ORDER BY Z_PK").map { $0["ZAMOUNT"] ?? nil }
        #expect(stored.count == 2 && stored[0] as? Int64 == 5 && stored[1] as? String == "NaN", "\(stored)")
        let reader = try SQLiteStack(model: model, url: folder.file())
        let amounts = try withExtendedLifetime(reader.context) { try reader.fetch("Invoice").map { $0.value(forKey: "amount") as? Decimal } }
        #expect(amounts.count == 2 && amounts.contains { $0?.isNaN == true }, "\(amounts)")
    }
}
