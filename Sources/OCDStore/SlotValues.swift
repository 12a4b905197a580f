import CSwiftRuntime
import Foundation
import OCDModel

/// The values of a row or an object by slot of its ``EntityLayout``.
///
/// An integer, double or boolean attribute's value may be held as a plain `Int64`, `Double` or `Bool`
/// rather than an `NSNumber` (D26), and such a slot takes one word rather than a 32-byte existential
/// (D27): ten `Int64` attributes are 80 bytes of values, not 320. The layout of the words is the entity's
/// ``SlotPlan``. Reading through the subscript (or iterating) hands out the stored form every other reader
/// expects, an `NSNumber`; hot paths that know what they want read ``stored(_:)`` or ``words(at:)`` and box
/// nothing. A slot may hold either form: writers keep what they are given, and a value that is not the
/// slot's plain number (an `NSNumber` set on an integer attribute, say) is kept as it is, in a box.
///
/// A value type: copies share one buffer until one of them is written (copy-on-write), so a fault's
/// values and its row's are one buffer.
public struct SlotValues: RandomAccessCollection, MutableCollection, @unchecked Sendable {
    @usableFromInline var buffer: SlotBuffer

    /// Nil in every slot of `plan`.
    public init(plan: SlotPlan) { buffer = SlotBuffer.make(plan) }

    /// `values` by slot, laid out by `plan` (by default every slot an existential, for values without an
    /// entity's layout).
    public init(_ values: [Any?], plan: SlotPlan? = nil) {
        let plan = plan ?? SlotPlan(untyped: values.count)
        precondition(plan.count == values.count, "\(values.count) values for a plan of \(plan.count) slots")
        buffer = SlotBuffer.make(plan)
        for (slot, value) in values.enumerated() where value != nil { buffer.set(value, at: slot) }
    }

    /// The layout of the values.
    @inlinable public var plan: SlotPlan { buffer.plan }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { buffer.plan.count }

    /// The value of `slot` in its stored form (an unboxed number as an `NSNumber`).
    @inlinable
    public subscript(slot: Int) -> Any? {
        get { SlotValues.boxed(buffer.storedValue(at: slot)) }
        set { mutableBuffer().set(newValue, at: slot) }
    }

    /// The value of `slot` as held: an integer, double or boolean maybe a plain `Int64`, `Double` or
    /// `Bool` (no `NSNumber` made).
    @inlinable
    public func stored(_ slot: Int) -> Any? { buffer.storedValue(at: slot) }

    /// Whether `slot` holds nil, without copying its value out.
    @inlinable
    public func isNil(_ slot: Int) -> Bool { buffer.isNil(at: slot) }

    /// Whether `slot` holds the same bits here as in `other` (so the same value; different bits may still
    /// be equal values). True at once for two copies of one buffer.
    @inlinable
    public func holdsSame(_ slot: Int, as other: SlotValues) -> Bool {
        SlotBuffer.holdSame(slot, buffer, other.buffer)
    }

    /// Sets `slot` to the value `other` holds in `slot` (the same entity's values), as held.
    @inlinable
    public mutating func copySlot(_ slot: Int, from other: SlotValues) {
        if other.buffer.plan === buffer.plan, other.buffer.plan.kind(of: slot) != .any, let word = other.buffer.rawNumber(at: slot) {
            mutableBuffer().setRawNumber(word, at: slot)
        } else {
            self[slot] = other.stored(slot)
        }
    }

    /// Sets `slot`, which the plan holds as an `Int64`, to `value` without making an existential.
    @inlinable
    public mutating func setInteger(_ value: Int64, at slot: Int) {
        let buffer = mutableBuffer()
        if buffer.plan.kind(of: slot) == .int64 { buffer.setRawNumber(UInt64(bitPattern: value), at: slot) } else { buffer.set(value, at: slot) }
    }

    /// Where values just made by ``init(plan:)`` keep their numbers, to fill a row in: a call per value
    /// through ``setInteger(_:at:)`` (a uniqueness test and two lookups in the plan) was a tenth of
    /// reading a row. Valid while these values are alive and not copied; writes through the subscript
    /// meanwhile are fine (the buffer is unique, so they write in place).
    package mutating func freshNumbers() -> FreshNumbers {
        precondition(isKnownUniquelyReferenced(&buffer), "freshNumbers() of shared values")
        return buffer.withUnsafeMutablePointerToElements { FreshNumbers(words: $0) }
    }

    /// Sets `slot`, which the plan holds as a `Double`, to `value` without making an existential.
    @inlinable
    public mutating func setDouble(_ value: Double, at slot: Int) {
        let buffer = mutableBuffer()
        if buffer.plan.kind(of: slot) == .double { buffer.setRawNumber(value.bitPattern, at: slot) } else { buffer.set(value, at: slot) }
    }

    /// Sets `slot`, which the plan holds as a `Bool`, to `value` without making an existential.
    @inlinable
    public mutating func setBool(_ value: Bool, at slot: Int) {
        let buffer = mutableBuffer()
        if buffer.plan.kind(of: slot) == .bool { buffer.setRawNumber(value ? 1 : 0, at: slot) } else { buffer.set(value, at: slot) }
    }

    /// The first word of the value at `slot` and its type's metadata (null for nil), read in place: for a
    /// number held plainly, its bits (a `Bool` as 0 or 1) and the metadata of `Int64`, `Double` or `Bool`.
    @inlinable @inline(__always)
    public func words(at slot: Int) -> (value: UInt64, type: UnsafeRawPointer?) {
        buffer.words(at: slot)
    }

    /// The values without a reference of their own, for a read while their owner keeps them: a
    /// property read copied the values out of the object and retained and released them around it (two
    /// atomic operations, a fifth of reading a number through a typed property).
    @inlinable @inline(__always)
    public var unretained: UnretainedSlotValues { UnretainedSlotValues(buffer: Unmanaged.passUnretained(buffer)) }

    @inlinable @inline(__always)
    mutating func mutableBuffer() -> SlotBuffer {
        if !isKnownUniquelyReferenced(&buffer) { buffer = buffer.copy() }
        return buffer
    }

    /// `value` with an unboxed number turned into the `NSNumber` readers of values expect.
    @inlinable @inline(__always)
    public static func boxed(_ value: Any?) -> Any? {
        if let number = number(words(value)) { return number }
        return value
    }

    /// The `NSNumber` of a number held plainly, from its words (``words(at:)``, ``words(_:)``); nil for
    /// anything else. A `Bool` owns only the word's first byte (``unboxedBool(_:)``).
    @inlinable @inline(__always)
    public static func number(_ words: (value: UInt64, type: UnsafeRawPointer?)) -> NSNumber? {
        if words.type == int64Type { return makeNumber(words.value, type: NumberMaker.cfSInt64) }
        if words.type == doubleType { return makeNumber(words.value, type: NumberMaker.cfDouble) }
        if words.type == boolType { return NSNumber(value: words.value & 0xFF != 0) }
        return nil
    }

    /// The `NSNumber` of an `Int64` or `Double`'s bits, as `NSNumber(value:)` makes it (`type` is the
    /// `CFNumberType` it passes), without its checked cast of CoreFoundation's result (D36).
    @usableFromInline
    static func makeNumber(_ bits: UInt64, type: Int) -> NSNumber {
        NumberMaker.make(bits, type: type)
    }

    /// Whether `value` is an unboxed number (one ``boxed(_:)`` makes an `NSNumber` of).
    @inlinable @inline(__always)
    public static func isUnboxedNumber(_ value: Any?) -> Bool {
        let type = words(value).type
        return type != nil && (type == int64Type || type == doubleType || type == boolType)
    }

    /// The integer held unboxed in `value`, or nil (an `NSNumber` or any other value is not looked into).
    @inlinable @inline(__always)
    public static func unboxedInteger(_ value: Any?) -> Int64? {
        let words = self.words(value)
        return words.type == int64Type ? Int64(bitPattern: words.value) : nil
    }

    /// The double held unboxed in `value`, or nil.
    @inlinable @inline(__always)
    public static func unboxedDouble(_ value: Any?) -> Double? {
        let words = self.words(value)
        return words.type == doubleType ? Double(bitPattern: words.value) : nil
    }

    /// The boolean held unboxed in `value`, or nil.
    @inlinable @inline(__always)
    public static func unboxedBool(_ value: Any?) -> Bool? {
        // A `Bool` writes only the buffer's first byte: the rest of the word was never written, so only
        // that byte is read.
        let bytes = unsafeBitCast(value, to: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, Int, Int, UnsafeRawPointer?).self)
        return bytes.10 == boolType ? bytes.0 != 0 : nil
    }

    /// The first word of the existential's inline buffer and its type's metadata (null for nil). Read
    /// this way because `type(of:)` and `as!` go through the runtime (`swift_getDynamicType`,
    /// `swift_dynamicCast`), about a tenth of reading a value; an `Int64`, a `Double` and a `Bool` always
    /// live inline, and their metadata is theirs.
    @inlinable @inline(__always)
    public static func words(_ value: Any?) -> (value: UInt64, type: UnsafeRawPointer?) {
        let words = unsafeBitCast(value, to: (UInt64, Int, Int, UnsafeRawPointer?).self)
        return (words.0, words.3)
    }

    /// The metadata of the unboxed forms, as ``words(at:)`` reports a value's type.
    @inlinable public static var int64Type: UnsafeRawPointer { unsafeBitCast(Int64.self as Any.Type, to: UnsafeRawPointer.self) }
    @inlinable public static var doubleType: UnsafeRawPointer { unsafeBitCast(Double.self as Any.Type, to: UnsafeRawPointer.self) }
    @inlinable public static var boolType: UnsafeRawPointer { unsafeBitCast(Bool.self as Any.Type, to: UnsafeRawPointer.self) }
}

/// Where each slot of an entity's values lives in a ``SlotValues`` buffer: an integer, double or boolean
/// attribute in one word, anything else in a 32-byte existential (D27). Built once per entity layout.
public final class SlotPlan: @unchecked Sendable {
    /// How a slot is held.
    public enum Kind: UInt8, Sendable {
        /// An existential (`Any?`), four words.
        case any
        /// One word: an `Int64`'s bits.
        case int64
        /// One word: a `Double`'s bits.
        case double
        /// One word: 0 or 1.
        case bool
    }

    /// The number of slots.
    public let count: Int
    /// Per slot, its word offset in the buffer's tail shifted left by two, or'd with its kind's raw value:
    /// one load answers both.
    @usableFromInline let descriptors: [UInt32]
    /// Words of per-slot state bytes before the values (``SlotBuffer``).
    @usableFromInline let stateWords: Int
    /// Words of the whole tail: the state bytes, then one per number slot and four per other slot.
    public let totalWords: Int
    @usableFromInline let anySlots: [Int]
    @usableFromInline let numberSlots: [Int]

    /// A plan of `kinds`, slot by slot.
    public init(kinds: [Kind]) {
        count = kinds.count
        stateWords = (kinds.count + 7) / 8
        var offset = stateWords
        var descriptors: [UInt32] = []
        var anySlots: [Int] = []
        var numberSlots: [Int] = []
        for (slot, kind) in kinds.enumerated() {
            descriptors.append(UInt32(offset) << 2 | UInt32(kind.rawValue))
            if kind == .any {
                anySlots.append(slot)
                offset += MemoryLayout<Any?>.stride / 8
            } else {
                numberSlots.append(slot)
                offset += 1
            }
        }
        self.descriptors = descriptors
        self.anySlots = anySlots
        self.numberSlots = numberSlots
        totalWords = offset
    }

    /// A plan holding every slot as an existential.
    public convenience init(untyped count: Int) {
        self.init(kinds: Array(repeating: .any, count: count))
    }

    /// The plan for `properties`: integer, double and boolean attributes (transient or not) in a word.
    public convenience init(properties: [NSPropertyDescription]) {
        self.init(kinds: properties.map { property in
            switch (property as? NSAttributeDescription)?.attributeType {
            case .integer16AttributeType?, .integer32AttributeType?, .integer64AttributeType?: return .int64
            case .doubleAttributeType?: return .double
            case .booleanAttributeType?: return .bool
            default: return .any
            }
        })
    }

    /// How `slot` is held.
    @inlinable @inline(__always)
    public func kind(of slot: Int) -> Kind { Kind(rawValue: UInt8(truncatingIfNeeded: descriptors[slot] & 3))! }

    @inlinable @inline(__always)
    func offset(of slot: Int) -> Int { Int(descriptors[slot] >> 2) }

    /// Where number slot `slot` keeps its word, for ``FreshNumbers``; nil for a slot held as an
    /// existential.
    package func wordOffset(ofNumberSlot slot: Int) -> Int? { kind(of: slot) == .any ? nil : offset(of: slot) }
}

/// The numbers of values nothing has set yet (``SlotValues/freshNumbers()``): a number slot is set by
/// writing its word, at the slot's ``SlotPlan/wordOffset(ofNumberSlot:)``, and marking its state plain.
package struct FreshNumbers {
    @usableFromInline let words: UnsafeMutablePointer<UInt64>

    @inlinable init(words: UnsafeMutablePointer<UInt64>) { self.words = words }

    /// Sets number slot `slot`, whose word is at `offset`, to `word` (an `Int64`'s or `Double`'s bits, as
    /// the plan holds the slot). Only on a slot still nil: a boxed value there would not be released.
    @inlinable @inline(__always)
    package func set(_ word: UInt64, slot: Int, offset: Int) {
        UnsafeMutableRawPointer(words).assumingMemoryBound(to: UInt8.self)[slot] = SlotBuffer.plainState
        words[offset] = word
    }
}

/// ``SlotValues`` read without a reference: valid only while whoever holds the values keeps them.
public struct UnretainedSlotValues {
    @usableFromInline let buffer: Unmanaged<SlotBuffer>

    @inlinable @inline(__always)
    init(buffer: Unmanaged<SlotBuffer>) { self.buffer = buffer }

    /// ``SlotValues/words(at:)``.
    @inlinable @inline(__always)
    public func words(at slot: Int) -> (value: UInt64, type: UnsafeRawPointer?) {
        buffer._withUnsafeGuaranteedRef { $0.words(at: slot) }
    }

    /// ``SlotValues/holdsSame(_:as:)``, with no reference taken to either (a changed attribute's setter
    /// asks it of the object's values and its event's start values).
    @inlinable @inline(__always)
    public func holdsSame(_ slot: Int, as other: UnretainedSlotValues) -> Bool {
        buffer._withUnsafeGuaranteedRef { mine in
            other.buffer._withUnsafeGuaranteedRef { theirs in SlotBuffer.holdSame(slot, mine, theirs) }
        }
    }
}

/// The storage of a ``SlotValues``: a header (the plan) and a tail of words. The tail starts with one
/// state byte per slot (for a number slot: 0 nil, 1 its plain bits, 2 a retained ``SlotBox`` holding
/// whatever else was set), then each slot's word or existential at the plan's offset.
@usableFromInline
final class SlotBuffer: ManagedBuffer<SlotPlan, UInt64> {
    /// The plan, read through the header's pointer: `header` is a class's stored property, and reading
    /// it checks exclusivity at run time (`swift_beginAccess`, 3 % of reading Items through accessors).
    @inlinable @inline(__always)
    var plan: SlotPlan { withUnsafeMutablePointerToHeader { $0.pointee } }

    @usableFromInline static let nilState: UInt8 = 0
    @usableFromInline static let plainState: UInt8 = 1
    @usableFromInline static let boxedState: UInt8 = 2

    /// Whether `slot` holds the same bits in both buffers (``SlotValues/holdsSame(_:as:)``).
    @inlinable
    static func holdSame(_ slot: Int, _ first: SlotBuffer, _ second: SlotBuffer) -> Bool {
        if first === second { return true }
        // Number slots: the same state and word (plain bits, or the same box). An existential's bits are
        // compared only for nil: its other words matter for a value larger than one (a String, a UUID).
        guard let mine = first.rawSlot(at: slot), let theirs = second.rawSlot(at: slot) else {
            return first.isNil(at: slot) && second.isNil(at: slot)
        }
        // The same bits mean the same value only for the same kind of number (plans of one entity agree).
        return mine == theirs && (first.plan === second.plan || first.plan.kind(of: slot) == second.plan.kind(of: slot))
    }

    @usableFromInline
    static func make(_ plan: SlotPlan) -> SlotBuffer {
        let buffer = unsafeDowncast(SlotBuffer.create(minimumCapacity: plan.totalWords) { _ in plan }, to: SlotBuffer.self)
        // All zero bits are every slot nil: the state bytes, the numbers' words, and each existential's
        // (`Optional<Any>.none` is a null metadata word, which `words(_:)` reads as nil too). One fill
        // rather than a store per slot.
        buffer.withUnsafeMutablePointerToElements { base in
            _ = UnsafeMutableRawPointer(base).initializeMemory(as: UInt8.self, repeating: 0, count: plan.totalWords * 8)
        }
        return buffer
    }

    deinit {
        let plan = self.plan
        withUnsafeMutablePointerToElements { base in
            let states = UnsafeMutableRawPointer(base).assumingMemoryBound(to: UInt8.self)
            for slot in plan.numberSlots where states[slot] == Self.boxedState {
                Unmanaged<SlotBox>.fromOpaque(UnsafeRawPointer(bitPattern: UInt((base + plan.offset(of: slot)).pointee))!).release()
            }
            for slot in plan.anySlots { Self.existential(base, plan.offset(of: slot)).deinitialize(count: 1) }
        }
    }

    /// A buffer of the same values, for a write to a shared one.
    @usableFromInline
    func copy() -> SlotBuffer {
        let plan = self.plan
        let copy = unsafeDowncast(SlotBuffer.create(minimumCapacity: plan.totalWords) { _ in plan }, to: SlotBuffer.self)
        withUnsafeMutablePointerToElements { source in
            copy.withUnsafeMutablePointerToElements { target in
                // Every word as bits in one move (the states, the numbers, and a nil existential's
                // bits), then a reference of its own for each slot that holds one: a new object's first
                // write copies the entity's shared nil values, and a store per slot was most of it.
                UnsafeMutableRawPointer(target).copyMemory(from: UnsafeRawPointer(source), byteCount: plan.totalWords * 8)
                let states = UnsafeMutableRawPointer(source).assumingMemoryBound(to: UInt8.self)
                for slot in plan.numberSlots where states[slot] == Self.boxedState {
                    _ = Unmanaged<SlotBox>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(source[plan.offset(of: slot)]))!).retain()
                }
                for slot in plan.anySlots {
                    let offset = plan.offset(of: slot)
                    // A nil is all zero bits, copied already; anything else is copied as a value.
                    guard source[offset + 3] != 0 else { continue }
                    UnsafeMutableRawPointer(target + offset).bindMemory(to: Any?.self, capacity: 1).initialize(to: Self.existential(source, offset).pointee)
                }
            }
        }
        return copy
    }

    @inlinable @inline(__always)
    static func existential(_ base: UnsafeMutablePointer<UInt64>, _ offset: Int) -> UnsafeMutablePointer<Any?> {
        UnsafeMutableRawPointer(base + offset).assumingMemoryBound(to: Any?.self)
    }

    @inlinable @inline(__always)
    func state(_ base: UnsafeMutablePointer<UInt64>, _ slot: Int) -> UInt8 {
        UnsafeMutableRawPointer(base).assumingMemoryBound(to: UInt8.self)[slot]
    }

    @inlinable @inline(__always)
    static func type(of kind: SlotPlan.Kind) -> UnsafeRawPointer {
        switch kind {
        case .int64: return SlotValues.int64Type
        case .double: return SlotValues.doubleType
        default: return SlotValues.boolType
        }
    }

    /// A number slot's state and word as they are (a boxed value's box pointer), or nil for an existential
    /// slot.
    @inlinable @inline(__always)
    func rawSlot(at slot: Int) -> (state: UInt8, word: UInt64)? {
        withUnsafeMutablePointerToElements { base in
            let descriptor = plan.descriptors[slot]
            guard descriptor & 3 != 0 else { return nil }
            return (state(base, slot), base[Int(descriptor >> 2)])
        }
    }

    /// A number slot's plain bits, or nil if it holds nil or a boxed value.
    @inlinable @inline(__always)
    func rawNumber(at slot: Int) -> UInt64? {
        withUnsafeMutablePointerToElements { base in
            state(base, slot) == Self.plainState ? base[plan.offset(of: slot)] : nil
        }
    }

    /// Sets a number slot to plain bits, releasing a value boxed there.
    @inlinable @inline(__always)
    func setRawNumber(_ word: UInt64, at slot: Int) {
        withUnsafeMutablePointerToElements { base in
            let offset = plan.offset(of: slot)
            let states = UnsafeMutableRawPointer(base).assumingMemoryBound(to: UInt8.self)
            let old = states[slot] == Self.boxedState ? base[offset] : nil
            states[slot] = Self.plainState
            base[offset] = word
            // Released once the slot no longer points to it: its deinit may read the values.
            if let old { Self.releaseBox(old) }
        }
    }

    @usableFromInline
    static func releaseBox(_ word: UInt64) {
        Unmanaged<SlotBox>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(word))!).release()
    }

    @inlinable @inline(__always)
    func isNil(at slot: Int) -> Bool {
        withUnsafeMutablePointerToElements { base in
            let descriptor = plan.descriptors[slot]
            // The existential's metadata word, null for nil: no copy of the value.
            if descriptor & 3 == 0 { return UnsafeRawPointer(base + Int(descriptor >> 2)).load(fromByteOffset: 24, as: UnsafeRawPointer?.self) == nil }
            return state(base, slot) == Self.nilState
        }
    }

    @inlinable
    func storedValue(at slot: Int) -> Any? {
        withUnsafeMutablePointerToElements { base in
            let descriptor = plan.descriptors[slot]
            let offset = Int(descriptor >> 2)
            switch descriptor & 3 {
            case 0: return Self.existential(base, offset).pointee
            case let kind:
                switch state(base, slot) {
                case Self.plainState:
                    let word = base[offset]
                    if kind == 1 { return Int64(bitPattern: word) }
                    if kind == 2 { return Double(bitPattern: word) }
                    return word != 0
                case Self.boxedState:
                    return Unmanaged<SlotBox>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(base[offset]))!).takeUnretainedValue().value
                default:
                    return nil
                }
            }
        }
    }

    @inlinable @inline(__always)
    func words(at slot: Int) -> (value: UInt64, type: UnsafeRawPointer?) {
        withUnsafeMutablePointerToElements { base in
            let descriptor = plan.descriptors[slot]
            let offset = Int(descriptor >> 2)
            if descriptor & 3 == 0 {
                let value = UnsafeRawPointer(base + offset)
                let type = value.load(fromByteOffset: MemoryLayout<Any?>.stride - MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer?.self)
                // A `Bool` owns only the first byte of the word (``unboxedBool(_:)``).
                if type == SlotValues.boolType { return (UInt64(value.load(as: UInt8.self)), type) }
                return (value.load(as: UInt64.self), type)
            }
            switch state(base, slot) {
            case Self.plainState:
                return (base[offset], Self.type(of: SlotPlan.Kind(rawValue: UInt8(truncatingIfNeeded: descriptor & 3))!))
            case Self.boxedState:
                let value = Unmanaged<SlotBox>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(base[offset]))!).takeUnretainedValue().value
                // A `Bool` boxed here owns only its first byte (`unboxedBool`).
                if let bool = SlotValues.unboxedBool(value) { return (bool ? 1 : 0, SlotValues.boolType) }
                return SlotValues.words(value)
            default:
                return (0, nil)
            }
        }
    }

    /// Sets `slot` to `value` as given: the slot's own kind of number in its word, anything else as it is.
    @inlinable
    func set(_ value: Any?, at slot: Int) {
        withUnsafeMutablePointerToElements { base in
            let descriptor = plan.descriptors[slot]
            let offset = Int(descriptor >> 2)
            let kind = descriptor & 3
            if kind == 0 {
                Self.existential(base, offset).pointee = value
                return
            }
            let states = UnsafeMutableRawPointer(base).assumingMemoryBound(to: UInt8.self)
            let old = states[slot] == Self.boxedState ? base[offset] : nil
            let words = SlotValues.words(value)
            if words.type == nil {
                states[slot] = Self.nilState
                base[offset] = 0
            } else if kind == 1 && words.type == SlotValues.int64Type || kind == 2 && words.type == SlotValues.doubleType {
                states[slot] = Self.plainState
                base[offset] = words.value
            } else if kind == 3, let bool = SlotValues.unboxedBool(value) {
                states[slot] = Self.plainState
                base[offset] = bool ? 1 : 0
            } else {
                states[slot] = Self.boxedState
                base[offset] = UInt64(UInt(bitPattern: Unmanaged.passRetained(SlotBox(value!)).toOpaque()))
            }
            if let old { Self.releaseBox(old) }
        }
    }
}

/// A value set on a number slot that is not the slot's plain number (an `NSNumber`, a `String` …).
@usableFromInline
final class SlotBox {
    @usableFromInline let value: Any
    @usableFromInline init(_ value: Any) { self.value = value }
}

/// Makes `NSNumber`s the way swift-corelibs-foundation's `NSNumber(value:)` does, through CoreFoundation's
/// `CFNumberCreate`, minus the checked cast of its result that `NSNumber`'s factory initializer makes (a
/// quarter of the number's cost, about 15 ns of each `value(forKey:)` of a number). Checked once per
/// process: where CoreFoundation's numbers are not of `NSNumber(value:)`'s class, or do not read back and
/// compare as its numbers do (another Foundation), it uses `NSNumber(value:)` (D36).
@usableFromInline
package enum NumberMaker {
    /// `kCFNumberSInt64Type` and `kCFNumberDoubleType`: what `NSNumber(value: Int64)` and
    /// `NSNumber(value: Double)` pass.
    @inlinable static var cfSInt64: Int { 4 }
    @inlinable static var cfDouble: Int { 13 }

    private static let direct: Bool = {
        #if os(Linux)
        var probe: Int64 = -7_000_000_001
        var real = 2.5
        guard let made = ocd_cf_number_create(nil, cfSInt64, &probe),
              let madeReal = ocd_cf_number_create(nil, cfDouble, &real) else { return false }
        let integer = Unmanaged<AnyObject>.fromOpaque(made).takeRetainedValue()
        let double = Unmanaged<AnyObject>.fromOpaque(madeReal).takeRetainedValue()
        guard let integer = integer as? NSNumber, let double = double as? NSNumber else { return false }
        let reference = NSNumber(value: probe), referenceReal = NSNumber(value: real)
        guard ObjectIdentifier(type(of: integer)) == ObjectIdentifier(type(of: reference)),
              ObjectIdentifier(type(of: double)) == ObjectIdentifier(type(of: referenceReal)) else { return false }
        return integer.int64Value == probe && integer.isEqual(reference) && integer.objCType.pointee == reference.objCType.pointee
            && double.doubleValue == real && double.isEqual(referenceReal) && double.objCType.pointee == referenceReal.objCType.pointee
        #else
        return false
        #endif
    }()

    /// Whether numbers are made through `CFNumberCreate` directly (for tests: on Linux they should be).
    package static var makesNumbersDirectly: Bool { direct }

    @usableFromInline
    static func make(_ bits: UInt64, type: Int) -> NSNumber {
        #if os(Linux)
        if direct {
            var word = bits
            if let made = ocd_cf_number_create(nil, type, &word) {
                return Unmanaged<NSNumber>.fromOpaque(made).takeRetainedValue()
            }
        }
        #endif
        return type == cfDouble ? NSNumber(value: Double(bitPattern: bits)) : NSNumber(value: Int64(bitPattern: bits))
    }
}
