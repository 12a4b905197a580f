import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

/// A `SlotValues` holds an integer, double or boolean attribute in one word of its buffer and anything else
/// in an existential (D27). What a slot was given is what it hands back: only its own kind of plain number
/// goes into the word, anything else is kept as it is.
// Serialized: two tests count live `Tracked` objects through one static counter.
@Suite(.serialized) struct SlotValuesTests {
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

    /// A copy takes every word as bits, then its own reference to what a slot holds: a slot set back to
    /// nil (its words may still hold the old value's bits) is nil in the copy and releases nothing twice.
    @Test func aSlotSetBackToNilIsNilInACopy() {
        Tracked.alive = 0
        do {
            var original = SlotValues(plan: Self.plan)
            original[4] = Tracked()
            original[0] = Tracked()
            original[4] = nil
            original[0] = nil
            original[1] = Int64(7)
            #expect(Tracked.alive == 0)
            var copy = original
            copy[2] = 1.5
            #expect(copy.isNil(4) && copy.isNil(0) && original.isNil(4) && original.isNil(0))
            #expect(SlotValues.unboxedInteger(copy.stored(1)) == 7 && original.isNil(2))
            copy[4] = Tracked()
            original[4] = Tracked()
            #expect(Tracked.alive == 2)
        }
        #expect(Tracked.alive == 0)
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

    @Test func slotsPastTheFirstStateWordAndAnEmptyPlan() {
        let plan = SlotPlan(kinds: [.any, .int64, .double, .bool, .int64, .int64, .int64, .int64, .int64, .double, .bool, .any])
        var values = SlotValues(plan: plan)
        for slot in 4...8 { values.setInteger(Int64(slot * 100), at: slot) }
        values.setDouble(9.5, at: 9)
        values[10] = true
        values[11] = "last"
        #expect((4...8).map { SlotValues.unboxedInteger(values.stored($0)) } == [400, 500, 600, 700, 800])
        #expect(values.words(at: 9) == (9.5.bitPattern, SlotValues.doubleType) && values.words(at: 10) == (1, SlotValues.boolType))
        #expect(values.stored(11) as? String == "last" && (0...3).allSatisfy(values.isNil))
        values[8] = nil
        #expect(values.isNil(8) && !values.isNil(7) && !values.isNil(9))
        let empty = SlotValues(plan: SlotPlan(kinds: []))
        #expect(empty.isEmpty && empty.plan.totalWords == 0)
    }

    @Test func writingAPlainNumberOverABoxReleasesIt() {
        Tracked.alive = 0
        var values = SlotValues(plan: Self.plan)
        values[0] = Tracked()
        values[2] = Tracked()
        values[6] = Tracked()
        #expect(Tracked.alive == 3)
        values.setInteger(1, at: 0)
        values.setDouble(2, at: 2)
        #expect(Tracked.alive == 1 && values.words(at: 0) == (1, SlotValues.int64Type))
        var source = SlotValues(plan: Self.plan)
        source[6] = Int64(6)
        values.copySlot(6, from: source)
        #expect(Tracked.alive == 0 && values.words(at: 6) == (6, SlotValues.int64Type))
    }

    @Test func aBoolInAnExistentialReadsAsZeroOrOne() {
        var values = SlotValues([Int64(-1)])
        values[0] = true
        #expect(values.words(at: 0) == (1, SlotValues.boolType), "the word's other bytes are left from the Int64")
        values[0] = false
        #expect(values.words(at: 0) == (0, SlotValues.boolType))
    }

    /// The read without a reference (typed getters') sees what the ordinary read sees, slot by slot:
    /// plain numbers, nil, a boxed number and an existential.
    @Test func readingWithoutAReferenceReadsTheSameWords() {
        var values = SlotValues([Int64(-7), nil, "x", 2.5, true, Int64(3)], plan: SlotPlan(kinds: [.int64, .int64, .any, .double, .bool, .int64]))
        values[5] = NSNumber(value: Int32(3))
        for slot in 0..<6 {
            let unretained = values.unretained.words(at: slot), retained = values.words(at: slot)
            #expect(unretained.value == retained.value && unretained.type == retained.type, "slot \(slot)")
        }
        #expect(values.unretained.words(at: 0) == (UInt64(bitPattern: -7), SlotValues.int64Type))
        #expect(values.unretained.words(at: 1).type == nil)
    }

    @Test func arraysOfValuesKeepTheirOrder() {
        let values = SlotValues([Int64(1), nil, "x", 2.5, false], plan: SlotPlan(kinds: [.int64, .int64, .any, .double, .bool]))
        #expect(values.map { $0.map { "\($0)" } ?? "nil" } == ["1", "nil", "x", "2.5", "0"])
    }
}

/// What an object's number slots hold after the ways a number gets there: defaults, typed and
/// `NSNumber` values of other widths. The plain form where the number is exactly that (no box beside
/// the word), the `NSNumber` as given otherwise; either way `value(forKey:)` hands out an `NSNumber`.
@Suite struct HeldNumberTests {
    private func words(_ object: NSManagedObject, _ key: String) -> (value: UInt64, type: UnsafeRawPointer?) {
        object.heldValuesForTesting.words(at: EntityLayout.of(object.entity).slot(named: key)!)
    }

    @Test func defaultsAndFixedWidthIntegersAreHeldInTheirWords() throws {
        let stack = try TestStack()
        let ann = stack.insert("Employee", ["name": "Ann"])
        #expect(words(ann, "age") == (30, SlotValues.int64Type), "the model's Int default of an integer 16")
        #expect(words(ann, "salary") == (0.0.bitPattern, SlotValues.doubleType))
        #expect(words(ann, "active") == (1, SlotValues.boolType))
        #expect((ann.value(forKey: "age") as? NSNumber)?.int16Value == 30 && ann.value(forKey: "age") as? Int16 == 30)
        ann.setValue(Int16(41), forKey: "age")
        #expect(words(ann, "age") == (41, SlotValues.int64Type))
        ann.setValue(Int32(-7), forKey: "age")
        #expect(words(ann, "age") == (UInt64(bitPattern: -7), SlotValues.int64Type))
        ann.setValue(NSNumber(value: Int32(12)), forKey: "age")
        #expect(words(ann, "age") == (12, SlotValues.int64Type))
        ann.setValue(NSNumber(value: 2.5), forKey: "salary")
        #expect(words(ann, "salary") == (2.5.bitPattern, SlotValues.doubleType))
        ann.setValue(NSNumber(value: false), forKey: "active")
        #expect(words(ann, "active") == (0, SlotValues.boolType))
        let manager = stack.insert("Manager", ["name": "Bo"])
        #expect(words(manager, "level") == (1, SlotValues.int64Type), "an integer 32 default")
    }

    @Test func numbersThatAreNotExactlyTheSlotsKindAreKeptAsGiven() throws {
        let stack = try TestStack()
        let ann = stack.insert("Employee", ["name": "Ann"])
        let fraction = NSNumber(value: 2.5)
        ann.setValue(fraction, forKey: "age")
        let kept = (ann.primitiveValue(forKey: "age") as AnyObject) === fraction
        #expect(kept, "a fraction on an integer attribute is not truncated in memory")
        #expect(words(ann, "age").type != SlotValues.int64Type)
        ann.setValue(Float(1.5), forKey: "salary")
        #expect(words(ann, "salary").type != SlotValues.doubleType)
        #expect((ann.value(forKey: "salary") as? NSNumber)?.doubleValue == 1.5)
        ann.setValue(NSNumber(value: 2), forKey: "active")
        #expect((ann.value(forKey: "active") as? NSNumber)?.intValue == 2, "not made a Bool")
        try stack.context.save()
        #expect(!stack.context.hasChanges)
    }
}

/// `holdsSame` (the quick test of "unchanged" before comparing values) never calls different values the
/// same: only number slots' words and boxes, and nil, are compared as bits.
@Suite struct HoldsSameTests {
    @Test func onlyIdenticalBitsOfNumbersOrTwoNilsAreTheSame() {
        let plan = SlotPlan(kinds: [.int64, .any, .double, .int64])
        var a = SlotValues(plan: plan), b = SlotValues(plan: plan)
        #expect((0..<4).allSatisfy { a.holdsSame($0, as: b) }, "nil and nil")
        a[0] = Int64(5); b[0] = Int64(5)
        a[1] = "abcdefgh-first"; b[1] = "abcdefgh-first"
        #expect(a.holdsSame(0, as: b))
        #expect(!a.holdsSame(1, as: b), "an existential's value is never judged by its bits")
        b[0] = Int64(6)
        #expect(!a.holdsSame(0, as: b))
        // Boxed values in a number slot: two strings sharing their first eight bytes are not the same.
        a[3] = "abcdefgh1"; b[3] = "abcdefgh2"
        #expect(!a.holdsSame(3, as: b))
        let number = NSNumber(value: 2.5)
        a[3] = number; b[3] = number
        #expect(!a.holdsSame(3, as: b), "two boxes of one object: left to a comparison of values")
        var c = a
        #expect(c.holdsSame(3, as: a), "a copy shares the buffer")
        c[2] = 1.0
        #expect(c.holdsSame(3, as: a) && !c.holdsSame(2, as: a))
        // The same word under different kinds of number is not the same value.
        var integer = SlotValues(plan: SlotPlan(kinds: [.int64]))
        var double = SlotValues(plan: SlotPlan(kinds: [.double]))
        integer.setInteger(Int64(bitPattern: 2.0.bitPattern), at: 0)
        double.setDouble(2.0, at: 0)
        #expect(!integer.holdsSame(0, as: double))
    }

    /// A change of a long string is a change, though the old and new values share their first word.
    @Test func aStringChangeAfterItsFirstEightBytesIsAChange() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "abcdefgh1"])
        let object = try stack.context.existingObject(with: id)
        object.setValue("abcdefgh2", forKey: "name")
        #expect(object.changedValues()["name"] as? String == "abcdefgh2")
        #expect(object.changedValuesForCurrentEvent()["name"] as? String == "abcdefgh1")
        object.setValue("abcdefgh1", forKey: "name")
        #expect(object.changedValues().isEmpty, "back to the committed value")
    }
}
