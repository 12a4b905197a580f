import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor
import OCDTestSupport

/// Decimal values through key paths and dictionary results. Linux Foundation's NSDecimalNumber never
/// finishes hashing (its `hash` recurses until the stack overflows), so nothing may put one in a hashed
/// collection: an ordered set of decimals, or a set bridged to Foundation. Found by an audit; each test
/// stopped the process before its fix.
@Suite struct DecimalValueTests {
    /// Invoice —lines (ordered, to-many)→ Line, whose `amount` is a decimal.
    static func model() -> NSManagedObjectModel {
        let invoice = TestModel.entity("Invoice", [TestModel.attribute("number", .integer64AttributeType)])
        let line = TestModel.entity("Line", [TestModel.attribute("amount", .decimalAttributeType)])
        let (lines, owner) = RelationshipPairs.toMany("lines", from: invoice, to: line, ordered: true, inverse: "invoice")
        // The same, unordered: its members' amounts would be a set of decimals.
        let (extras, extraOwner) = RelationshipPairs.toMany("extras", from: invoice, to: line, inverse: "extraInvoice")
        invoice.properties += [lines, extras]
        line.properties += [owner, extraOwner]
        let model = NSManagedObjectModel()
        model.entities = [invoice, line]
        return model
    }

    private func invoice(in stack: TestStack) throws -> NSManagedObject {
        let invoice = stack.insert("Invoice", ["number": 7])
        let lines = invoice.mutableOrderedSetValue(forKey: "lines")
        for amount in ["19.99", "5", "19.99"] {
            lines.add(stack.insert("Line", ["amount": Decimal(string: amount)!]))
        }
        let extras = invoice.mutableSetValue(forKey: "extras")
        for amount in ["1.5", "2.25"] { extras.add(stack.insert("Line", ["amount": Decimal(string: amount)!])) }
        try stack.context.save()
        return invoice
    }

    /// The amounts of an ordered to-many come back in order, as an array: an ordered set would hash them.
    @Test func anOrderedToManysDecimalsComeBackAsAnArray() throws {
        let stack = try TestStack(model: Self.model())
        try withExtendedLifetime(stack.context) {
            let invoice = try invoice(in: stack)
            let amounts = invoice.value(forKeyPath: "lines.amount") as? [Any]
            #expect(amounts?.compactMap { $0 as? Decimal } == [Decimal(string: "19.99")!, 5, Decimal(string: "19.99")!])
            #expect((invoice.value(forKeyPath: "lines.@sum.amount") as? NSNumber)?.decimalValue == Decimal(string: "44.98")!)
        }
    }

    /// A dictionary fetch of a key path through a to-many is refused with an error, as for the to-many
    /// itself, rather than computing (and bridging) a set of its values.
    @Test func aDictionaryFetchThroughAToManyIsAnError() throws {
        let stack = try TestStack(model: Self.model())
        try withExtendedLifetime(stack.context) {
            _ = try invoice(in: stack)
            for key in ["lines.amount", "lines", "extras.amount", "extras"] {
                let request = NSFetchRequest<NSDictionary>(entityName: "Invoice")
                request.resultType = .dictionaryResultType
                request.propertiesToFetch = [key]
                #expect(throws: NSError.self, "\(key)") { _ = try stack.context.fetch(request) }
            }
            let request = NSFetchRequest<NSDictionary>(entityName: "Line")
            request.resultType = .dictionaryResultType
            request.predicate = NSPredicate(format: "invoice != nil")
            request.propertiesToFetch = ["amount", "invoice.number"]
            let rows = try stack.context.fetch(request)
            #expect(rows.count == 3)
            #expect(rows.allSatisfy { ($0["invoice.number"] as? NSNumber)?.intValue == 7 })
            // An aggregate through a to-many is one value: fetched as before.
            let counts = NSFetchRequest<NSDictionary>(entityName: "Invoice")
            counts.resultType = .dictionaryResultType
            counts.propertiesToFetch = ["number", "lines.@count", "extras.@count"]
            let row = try #require(try stack.context.fetch(counts).first)
            #expect((row["lines.@count"] as? NSNumber)?.intValue == 3)
            #expect((row["extras.@count"] as? NSNumber)?.intValue == 2)
        }
    }
}
