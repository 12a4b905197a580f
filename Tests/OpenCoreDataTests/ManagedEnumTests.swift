import Foundation
import OpenCoreData
import Testing

// `@Managed` properties whose type is an enum with a raw value (stored as the raw value, as Apple code
// does with `@objc enum`s and computed wrappers), and unsigned or 8-bit scalars, which read nil as zero.

enum BoxStatus: Int16 { case a = 1, b = 2 }
enum BoxMood: String { case happy, grumpy }

@ManagedObject
final class EnumBox: NSManagedObject {
    @Managed var status: BoxStatus
    @Managed var mood: BoxMood?
    @Managed var small: UInt8
    @Managed var tiny: Int8
}

@Suite struct ManagedEnumTests {
    fileprivate static func context() throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let entity = NSEntityDescription()
        entity.name = "EnumBox"
        entity.managedObjectClassName = "EnumBox"
        entity.properties = [testAttribute("status", .integer16AttributeType), testAttribute("mood", .stringAttributeType),
                             testAttribute("small", .integer16AttributeType), testAttribute("tiny", .integer16AttributeType)]
        return try oneEntityContext(entity, class: EnumBox.self)
    }

    @Test func enumsAreStoredAsTheirRawValues() throws {
        let (coordinator, context) = try Self.context()
        let box = EnumBox(context: context)
        box.status = .b
        #expect(box.value(forKey: "status") as? Int16 == 2)
        #expect(box.status == .b)
        box.setValue(Int16(1), forKey: "status")
        #expect(box.status == .a)
        #expect(box.mood == nil)
        box.mood = .grumpy
        #expect(box.value(forKey: "mood") as? String == "grumpy")
        box.setValue(BoxMood.happy, forKey: "mood")
        #expect(box.mood == .happy)
        try context.save()

        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        let fetched = try withExtendedLifetime(reader) {
            try reader.fetch(NSFetchRequest<EnumBox>(entityName: "EnumBox")).first.map { ($0.status, $0.mood) }
        }
        #expect(fetched?.0 == .a && fetched?.1 == .happy)
    }

    @Test func unsignedAndEightBitScalarsReadNilAsZero() throws {
        let (_, context) = try Self.context()
        let box = EnumBox(context: context)
        #expect(box.small == 0 && box.tiny == 0)
        box.small = 200
        box.tiny = -5
        #expect(box.value(forKey: "small") as? Int16 == 200)
        #expect(box.small == 200 && box.tiny == -5)
    }

    /// A raw value that names no case (written by a newer version of the app) reads as nil through an
    /// optional enum property; the stored value stays as it is.
    @Test func anUnknownCaseReadsAsNilThroughAnOptionalEnum() throws {
        let (_, context) = try Self.context()
        let box = EnumBox(context: context)
        box.setValue("sleepy", forKey: "mood")
        #expect(box.mood == nil)
        #expect(box.value(forKey: "mood") as? String == "sleepy")
    }

    /// Through a non-optional enum property it stops with the accessor's message: there is no value to
    /// give.
    @Test func anUnknownCaseStopsANonOptionalEnum() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, context) = try ManagedEnumTests.context()
            let box = EnumBox(context: context)
            box.setValue(Int16(9), forKey: "status")
            _ = box.status
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("cannot hold the stored value 9"), "stopped with another message: \(output)")
    }
}
