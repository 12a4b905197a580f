import Foundation
import OpenCoreData
import Testing

// `@Managed` at run time for every scalar type Xcode's scalar codegen maps, optional and not, the
// to-many forms, and generated primitive accessors.

@ManagedObject
final class ScalarBox: NSManagedObject {
    @Managed var i16: Int16
    @Managed var i32: Int32
    @Managed var i64: Int64
    @Managed var d: Double
    @Managed var f: Float
    @Managed var b: Bool
    @Managed var oi16: Int16?
    @Managed var oi64: Int64?
    @Managed var od: Double?
    @Managed var ob: Bool?
    @Managed var name: String?
    @Managed var primitiveName: String?
    @Managed var friends: NSSet
    @Managed var fans: Set<ScalarBox>?
    @Managed var primitiveFriends: Set<ScalarBox>
    @Managed var text: String
    @Managed var blob: Data
    @Managed var amount: Decimal
    @Managed var tags: [String]
    @Managed var info: [String: Int]
}

private func scalarContext() throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
    let entity = NSEntityDescription()
    entity.name = "Box"
    entity.managedObjectClassName = "ScalarBox"
    let friends = NSRelationshipDescription()
    friends.name = "friends"
    friends.destinationEntity = entity
    friends.maxCount = 0
    let fans = NSRelationshipDescription()
    fans.name = "fans"
    fans.destinationEntity = entity
    fans.maxCount = 0
    friends.inverseRelationship = fans
    fans.inverseRelationship = friends
    entity.properties = [
        testAttribute("i16", .integer16AttributeType), testAttribute("i32", .integer32AttributeType),
        testAttribute("i64", .integer64AttributeType), testAttribute("d", .doubleAttributeType),
        testAttribute("f", .floatAttributeType), testAttribute("b", .booleanAttributeType),
        testAttribute("oi16", .integer16AttributeType), testAttribute("oi64", .integer64AttributeType),
        testAttribute("od", .doubleAttributeType), testAttribute("ob", .booleanAttributeType),
        testAttribute("name", .stringAttributeType), friends, fans,
        testAttribute("text", .stringAttributeType), testAttribute("blob", .binaryDataAttributeType),
        testAttribute("amount", .decimalAttributeType), testAttribute("tags", .transformableAttributeType),
        testAttribute("info", .transformableAttributeType),
    ]
    return try oneEntityContext(entity, class: ScalarBox.self)
}

@Suite struct ManagedScalarTests {
    @Test func scalarsRoundTripThroughASaveAndNilReadsAsZeroOrNil() throws {
        let (coordinator, context) = try scalarContext()
        let box = ScalarBox(context: context)
        #expect(box.i16 == 0 && box.i64 == 0 && box.d == 0 && box.f == 0 && !box.b, "nil scalars read as zero")
        #expect(box.oi16 == nil && box.oi64 == nil && box.od == nil && box.ob == nil)
        box.i16 = -12
        box.i32 = 70_000
        box.i64 = 1 << 40
        box.d = 2.5
        box.f = 1.25
        box.b = true
        box.oi16 = 7
        box.od = 0.5
        box.ob = false
        try context.save()

        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        try withExtendedLifetime(reader) {
            let fetched = try #require(try reader.fetch(NSFetchRequest<ScalarBox>(entityName: "Box")).first)
            #expect(fetched.i16 == -12 && fetched.i32 == 70_000 && fetched.i64 == 1 << 40)
            #expect(fetched.d == 2.5 && fetched.f == 1.25 && fetched.b)
            #expect(fetched.oi16 == 7 && fetched.oi64 == nil && fetched.od == 0.5 && fetched.ob == false)
            #expect(fetched.value(forKey: "i64") as? Int64 == 1 << 40)
        }
    }

    /// A non-optional `String`, `Data`, `Decimal`, array or dictionary reads nil as an empty value, as
    /// Apple's `@NSManaged` getters bridge a nil object (the accessor stopped).
    @Test func nonOptionalValuesReadNilAsEmpty() throws {
        let (_, context) = try scalarContext()
        let box = ScalarBox(context: context)
        #expect(box.text == "" && box.blob.isEmpty && box.amount == 0 && box.tags.isEmpty && box.info.isEmpty)
        box.text = "set"
        box.tags = ["a"]
        #expect(box.text == "set" && box.tags == ["a"])
        box.setValue(nil, forKey: "text")
        #expect(box.text == "")
    }

    /// A number that a scalar property cannot hold exactly reads as Apple's scalar accessors read it through
    /// `longLongValue`, `boolValue` or `doubleValue` (the accessor stopped for `Int64`, `Int` and `Bool`).
    @Test func inexactNumbersReadAsNSNumbersScalarValuesGiveThem() throws {
        let (_, context) = try scalarContext()
        let box = ScalarBox(context: context)
        box.setValue(2.5, forKey: "i64")
        box.setValue(2, forKey: "b")
        box.setValue(-3.75, forKey: "i16")
        #expect(box.i64 == 2 && box.b && box.i16 == -3)
        box.setValue(2.5, forKey: "oi64")
        #expect(box.oi64 == 2, "an optional scalar reads an inexact number as the plain one does")
        box.setValue(Int64(1 << 53) + 1, forKey: "d")
        #expect(box.d == Double(Int64(1 << 53) + 1))
    }

    @Test func generatedPrimitiveAccessorsSkipNotificationsAndInverses() throws {
        let (_, context) = try scalarContext()
        let box = ScalarBox(context: context)
        let other = ScalarBox(context: context)
        try context.save()
        var notified = 0
        let token = box.observeValue(forKey: "name", options: [.new]) { _, _, _, _, _, _ in notified += 1 }
        box.primitiveName = "quiet"
        #expect(box.name == "quiet")
        #expect(notified == 0)
        #expect(!box.isUpdated)
        box.primitiveFriends = [other]
        #expect(box.friends.count == 1)
        #expect((other.fans ?? []).isEmpty, "a primitive set does not update the inverse")
        token.invalidate()
    }

    @Test func nsSetAndOptionalSetPropertiesAndTheirMutatorsKeepBothSides() throws {
        let (_, context) = try scalarContext()
        let a = ScalarBox(context: context)
        let b = ScalarBox(context: context)
        let c = ScalarBox(context: context)
        a.addToFriends(b)
        #expect(b.fans == [a])
        a.addToFriends(NSSet(array: [c]))
        #expect(c.fans == [a] && a.friends.count == 2)
        c.removeFromFans(a)
        #expect(a.friends.count == 1)
        b.fans = nil
        #expect(a.friends.count == 0)
        a.removeFromFriends(NSSet(array: [b, c]))
        #expect(a.friends.count == 0)
    }
}
