import Foundation
import Testing
import OCDModel
import OCDStore

/// A `SlotValues` holds an integer, double or boolean attribute in one word of its buffer and anything else
/// in an existential (D27). What a slot was given is what it hands back: only its own kind of plain number
/// goes into the word, anything else is kept as it is.
@Suite struct SlotValuesTests {
    /// Counts its instances, to see that the buffer releases what it holds.
    final class Tracked: @unchecked Sendable {
        nonisolated(unsafe) static var alive = 0
        init() { Self.alive += 1 }
        deinit { Self.alive -= 1 }
    }

    static let plan = SlotPlan(properties: [
        TestModel.attribute("count", .integer64AttributeType),
        TestModel.attribute("small", .integer16AttributeType),
        TestModel.attribute("ratio", .doubleAttributeType),
        TestModel.attribute("flag", .booleanAttributeType),
        TestModel.attribute("name", .stringAttributeType),
        TestModel.attribute("weight", .floatAttributeType),
        TestModel.attribute("scratch", .integer32AttributeType, transient: true),
    ])

    @Test func numbersTakeOneWordAndEverythingElseAnExistential() {
        let plan = Self.plan
        #expect((0..<plan.count).map(plan.kind(of:)) == [.int64, .int64, .double, .bool, .any, .any, .int64])
        // One word of state bytes for seven slots, a word per number, four per existential.
        #expect(plan.totalWords == 1 + 5 + 4 * 2)
        let items = SlotPlan(kinds: Array(repeating: .int64, count: 10))
        #expect(items.totalWords == 2 + 10, "ten Int64 attributes are 96 bytes, not ten 32-byte existentials")
    }

    @Test func plainNumbersRoundTripThroughTheirWords() {
        var values = SlotValues(plan: Self.plan)
        #expect(values.count == 7 && values.allSatisfy { $0 == nil })
        for slot in 0..<7 { #expect(values.isNil(slot) && values.words(at: slot).type == nil) }
        values[0] = Int64.min
        values.setInteger(-7, at: 1)
        values.setDouble(-0.0, at: 2)
        values[3] = true
        values[6] = Int64.max
        #expect(SlotValues.unboxedInteger(values.stored(0)) == .min)
        #expect(SlotValues.unboxedInteger(values.stored(1)) == -7)
        #expect(SlotValues.unboxedDouble(values.stored(2))?.sign == .minus)
        #expect(SlotValues.unboxedBool(values.stored(3)) == true)
        #expect(values.words(at: 3) == (1, SlotValues.boolType))
        #expect(values.words(at: 0) == (UInt64(bitPattern: Int64.min), SlotValues.int64Type))
        // The subscript hands out the NSNumber every reader expects.
        #expect((values[0] as? NSNumber)?.int64Value == .min)
        #expect((values[2] as? NSNumber)?.doubleValue == 0)
        #expect(values[3] as? Bool == true && values[3] is NSNumber)
        values[3] = false
        #expect(values.words(at: 3) == (0, SlotValues.boolType) && !values.isNil(3))
        values[0] = nil
        #expect(values.isNil(0) && values[0] == nil)
        values.setDouble(.nan, at: 2)
        #expect(SlotValues.unboxedDouble(values.stored(2))?.isNaN == true)
    }

    @Test func otherValuesInANumberSlotAreKeptAsGiven() {
        var values = SlotValues(plan: Self.plan)
        let number = NSNumber(value: 1.5)
        values[0] = number
        let same = (values.stored(0) as AnyObject) === number
        #expect(same, "an NSNumber set on an integer attribute is kept, not converted")
        values[1] = Int(3)
        #expect(values.stored(1) is Int && SlotValues.unboxedInteger(values.stored(1)) == nil)
        values[2] = Int64(2)
        #expect(SlotValues.unboxedInteger(values.stored(2)) == 2, "an Int64 on a double slot stays an Int64")
        #expect(values.words(at: 2) == (2, SlotValues.int64Type))
        values[3] = "yes"
        #expect(values.stored(3) as? String == "yes" && values[3] as? String == "yes")
        values[6] = true
        #expect(values.words(at: 6) == (1, SlotValues.boolType), "a Bool boxed in an integer slot reads as one")
        values[4] = Int64(9)
        #expect(SlotValues.unboxedInteger(values.stored(4)) == 9 && (values[4] as? NSNumber)?.intValue == 9)
    }

    @Test func copiesShareUntilWrittenAndReleaseWhatTheyHold() {
        Tracked.alive = 0
        do {
            var original = SlotValues(plan: Self.plan)
            original[0] = Tracked()
            original[4] = Tracked()
            original[2] = 2.5
            #expect(Tracked.alive == 2)
            var copy = original
            copy[2] = 3.5
            copy[0] = Int64(1)
            #expect(SlotValues.unboxedDouble(original.stored(2)) == 2.5 && SlotValues.unboxedDouble(copy.stored(2)) == 3.5)
            #expect(original.stored(0) is Tracked && SlotValues.unboxedInteger(copy.stored(0)) == 1)
            #expect(copy.stored(4) is Tracked && Tracked.alive == 2, "the copy holds the same object")
            original[4] = nil
            #expect(Tracked.alive == 2, "still held by the copy")
            copy[4] = "gone"
            #expect(Tracked.alive == 1)
            original[0] = Int64(5)
            #expect(Tracked.alive == 0, "overwriting a boxed value releases it")
            original[0] = Tracked()
            copy[4] = Tracked()
            #expect(Tracked.alive == 2)
        }
        #expect(Tracked.alive == 0, "a buffer releases its values when it goes")
    }

    @Test func copyingASlotWorksAcrossPlans() {
        var typed = SlotValues(plan: Self.plan)
        typed[0] = Int64(11)
        typed[3] = true
        typed[4] = "text"
        var untyped = SlotValues(Array(repeating: nil, count: 7))
        for slot in [0, 3, 4] { untyped.copySlot(slot, from: typed) }
        #expect(SlotValues.unboxedInteger(untyped.stored(0)) == 11 && SlotValues.unboxedBool(untyped.stored(3)) == true)
        var back = SlotValues(plan: Self.plan)
        for slot in 0..<7 { back.copySlot(slot, from: untyped) }
        #expect(back.words(at: 0) == (11, SlotValues.int64Type) && back.words(at: 3) == (1, SlotValues.boolType))
        #expect(back.stored(4) as? String == "text" && back.isNil(1))
        var again = SlotValues(plan: Self.plan)
        again[0] = NSNumber(value: 2)
        back.copySlot(0, from: again)
        #expect(back.stored(0) is NSNumber, "a boxed value is copied as it is")
    }

    @Test func arraysOfValuesKeepTheirOrder() {
        let values = SlotValues([Int64(1), nil, "x", 2.5, false], plan: SlotPlan(kinds: [.int64, .int64, .any, .double, .bool]))
        #expect(values.map { $0.map { "\($0)" } ?? "nil" } == ["1", "nil", "x", "2.5", "0"])
    }
}
