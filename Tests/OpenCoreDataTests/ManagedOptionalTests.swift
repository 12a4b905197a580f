import Foundation
import OpenCoreData
import Testing

// `@Managed` optional properties of every non-scalar kind: set, saved, read back in a new context, and
// read as nil when unset (each read goes through the conversion an inexact number takes too).

@ManagedObject
final class OptionalBox: NSManagedObject {
    @Managed var when: Date?
    @Managed var link: URL?
    @Managed var code: UUID?
    @Managed var amount: Decimal?
    @Managed var bytes: Data?
    @Managed var label: String?
    @Managed var tags: [String]?
    @Managed var ratio: Double?
    @Managed var flag: Bool?
}

@Suite struct ManagedOptionalTests {
    @Test func optionalPropertiesOfEveryKindRoundTrip() throws {
        let entity = NSEntityDescription()
        entity.name = "OptionalBox"
        entity.managedObjectClassName = "OptionalBox"
        entity.properties = [
            testAttribute("when", .dateAttributeType), testAttribute("link", .URIAttributeType),
            testAttribute("code", .UUIDAttributeType), testAttribute("amount", .decimalAttributeType),
            testAttribute("bytes", .binaryDataAttributeType), testAttribute("label", .stringAttributeType),
            testAttribute("tags", .transformableAttributeType), testAttribute("ratio", .doubleAttributeType),
            testAttribute("flag", .booleanAttributeType),
        ]
        let (coordinator, context) = try oneEntityContext(entity, class: OptionalBox.self)
        let empty = OptionalBox(context: context)
        #expect(empty.when == nil && empty.link == nil && empty.code == nil && empty.amount == nil && empty.bytes == nil)
        #expect(empty.label == nil && empty.tags == nil && empty.ratio == nil && empty.flag == nil)
        let box = OptionalBox(context: context)
        let code = UUID()
        box.when = Date(timeIntervalSinceReferenceDate: 86_400)
        box.link = URL(string: "https://example.com/a")
        box.code = code
        box.amount = Decimal(string: "12.5")
        box.bytes = Data([1, 2])
        box.label = "x"
        box.tags = ["a", "b"]
        box.ratio = 0.5
        box.flag = true
        try context.save()
        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = coordinator
        let read = try #require(try other.existingObject(with: box.objectID) as? OptionalBox)
        #expect(read.when == Date(timeIntervalSinceReferenceDate: 86_400))
        #expect(read.link == URL(string: "https://example.com/a"))
        #expect(read.code == code)
        #expect(read.amount == Decimal(string: "12.5"))
        #expect(read.bytes == Data([1, 2]))
        #expect(read.label == "x" && read.tags == ["a", "b"] && read.ratio == 0.5 && read.flag == true)
        // A decimal set as an NSDecimalNumber through key-value coding reads back as a Decimal.
        read.setValue(NSDecimalNumber(string: "3.25"), forKey: "amount")
        #expect(read.amount == Decimal(string: "3.25"))
    }
}

// The shape code shared with Apple platforms takes: the attribute chosen by `#if`.
@ManagedObject
final class CrossPlatformNote: NSManagedObject {
    #if canImport(CoreData)
    @NSManaged
    #else
    @Managed
    #endif
    var text: String?
}

@Suite struct CrossPlatformAttributeTests {
    @Test func aManagedAttributeChosenByIfConfigIsModeled() throws {
        let entity = NSEntityDescription()
        entity.name = "CrossPlatformNote"
        entity.managedObjectClassName = "CrossPlatformNote"
        entity.properties = [testAttribute("text", .stringAttributeType)]
        let (_, context) = try oneEntityContext(entity, class: CrossPlatformNote.self)
        let note = CrossPlatformNote(context: context)
        note.text = "a"
        #expect(note.value(forKey: "text") as? String == "a")
        #expect(note.changedValues()["text"] as? String == "a")
        let predicate = try NSPredicate(converting: #Predicate<CrossPlatformNote> { $0.text == "a" })
        #expect(predicate.predicateFormat == #"text == "a""#)
        #expect(predicate.evaluate(with: note))
    }
}
