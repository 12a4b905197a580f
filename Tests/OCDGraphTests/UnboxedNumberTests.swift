import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// A Department class with typed accessors written as `@Managed` writes them.
final class TypedDepartment: NSManagedObject, @unchecked Sendable {
    static let className = String(reflecting: TypedDepartment.self)
    /// Counts calls of the overridable `primitiveValue(forKey:)`, which generated getters do not make.
    /// Per object: tests running in parallel use other objects of the class.
    var primitiveReads = 0

    var budget: Int64 { get { managedValue(forKey: "budget") } set { setManagedValue(newValue, forKey: "budget") } }
    var budgetAsInt: Int { get { managedValue(forKey: "budget") } set { setManagedValue(newValue, forKey: "budget") } }
    var ratio: Double { get { managedValue(forKey: "ratio") } set { setManagedValue(newValue, forKey: "ratio") } }
    var isOpen: Bool { get { managedValue(forKey: "open") } set { setManagedValue(newValue, forKey: "open") } }
    /// An `Int64` setter of the double `ratio`: not the slot's own kind of number.
    var ratioAsInt64: Int64 { get { managedValue(forKey: "ratio") } set { setManagedValue(newValue, forKey: "ratio") } }
    /// Counts calls of the overridable `setPrimitiveValue(_:forKey:)`, which generated setters do not make.
    var primitiveWrites = 0
    var budgetAsDouble: Double { managedValue(forKey: "budget") }
    var budgetAsNumber: NSNumber? { managedValue(forKey: "budget") }
    var name: String? { get { managedValue(forKey: "name") } set { setManagedValue(newValue, forKey: "name") } }

    override func primitiveValue(forKey key: String) -> Any? {
        primitiveReads += 1
        return super.primitiveValue(forKey: key)
    }

    override func setPrimitiveValue(_ value: Any?, forKey key: String) {
        primitiveWrites += 1
        super.setPrimitiveValue(value, forKey: key)
    }
}

/// Integer, double and boolean attribute values may be held as plain `Int64`s, `Double`s and `Bool`s
/// instead of `NSNumber`s (`SlotValues`: no allocation per value). Every way a value leaves the object or a store must still hand out the
/// `NSNumber` Core Data hands out, and the two forms must compare as the same value.
@Suite struct UnboxedNumberTests {
    /// Whether `value` is an `NSNumber` object, not a Swift integer that a cast could bridge.
    private func isNumberObject(_ value: Any?) -> Bool {
        guard let value else { return false }
        return type(of: value) is NSNumber.Type
    }

    /// Departments are TypedDepartments, with a transient integer `rank` (default 3), a double `ratio` (no
    /// validation, unlike Employee.salary) and, if asked, unique budgets.
    private func stack(uniqueBudgets: Bool = false) throws -> TestStack {
        NSManagedObjectModel.registerManagedObjectClass(TypedDepartment.self, forName: TypedDepartment.className)
        let model = TestModel.make { entities, _ in
            let department = entities["Department"]!
            department.managedObjectClassName = TypedDepartment.className
            department.properties += [TestModel.attribute("rank", .integer32AttributeType, defaultValue: 3, transient: true),
                                      TestModel.attribute("ratio", .doubleAttributeType),
                                      TestModel.attribute("open", .booleanAttributeType)]
            if uniqueBudgets { department.uniquenessConstraints = [["budget"]] }
        }
        return try TestStack(model: model)
    }

    /// An integer in an attribute of no number kind (a transformable) is held in an existential, whose
    /// bits a save's comparison cannot trust: unchanged, it is not a change (review of 43f5de0).
    @Test func anUnchangedIntegerInATransformableIsNotAChange() throws {
        let model = TestModel.make { entities, _ in
            entities["Department"]!.properties += [TestModel.attribute("payload", .transformableAttributeType)]
        }
        let stack = try TestStack(model: model)
        let department = stack.insert("Department", ["name": "A", "payload": Int64(5)])
        try stack.context.save()
        department.setValue("B", forKey: "name")
        #expect(Set(department.changedValues().keys) == ["name"])
        department.setValue(Int64(6), forKey: "payload")
        #expect(Set(department.changedValues().keys) == ["name", "payload"])
        #expect(department.changedValues()["payload"] as? Int64 == 6 || (department.changedValues()["payload"] as? NSNumber)?.int64Value == 6)
    }

    @Test func aUniquenessConstraintSeesTheSameNumberInBothForms() throws {
        let stack = try stack(uniqueBudgets: true)
        stack.insert("Department", ["name": "A", "budget": Int64(5)])
        try stack.context.save()
        // Against the stored row, and between two new objects.
        let boxed = stack.insert("Department", ["name": "B", "budget": NSNumber(value: 5)])
        let first = try #require(stack.context.saveError())
        #expect(first.code == NSManagedObjectConstraintMergeError)
        let conflict = try #require((first.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])?.first)
        #expect(isNumberObject(conflict.constraintValues["budget"]))
        #expect(isNumberObject(conflict.databaseSnapshot?["budget"]))
        stack.context.delete(boxed)
        stack.insert("Department", ["name": "C", "budget": 6])
        stack.insert("Department", ["name": "D", "budget": NSNumber(value: Int16(6))])
        #expect(stack.context.saveError()?.code == NSManagedObjectConstraintMergeError)
    }

    @Test func aFetchedObjectsTransientIntegerDefaultIsANumber() throws {
        let stack = try stack()
        let made = stack.insert("Department", ["name": "R&D"])
        #expect(isNumberObject(made.value(forKey: "rank")))
        try stack.context.save()
        let other = stack.newContext()
        let fetched = try #require(try stack.fetch("Department", in: other).first)
        #expect(isNumberObject(fetched.value(forKey: "rank")))
        #expect(fetched.value(forKey: "rank") as? Int32 == 3)
    }

    /// `unboxedInteger` reads the existential's words: only an `Int64` itself answers.
    @Test func onlyAnInt64IsAnUnboxedInteger() {
        // The layout `SlotValues` reads: three words of inline buffer, then the type (null for nil).
        #expect(MemoryLayout<Any?>.size == 32 && MemoryLayout<Any?>.stride == 32)
        for value: Int64 in [.min, -1, 0, 42, .max] {
            #expect(SlotValues.unboxedInteger(value) == value)
            #expect((SlotValues.boxed(value) as? NSNumber)?.int64Value == value)
            #expect(isNumberObject(SlotValues.boxed(value)))
        }
        for value in [0.0, -0.0, 2.5, -1e300, .infinity, .greatestFiniteMagnitude] {
            #expect(SlotValues.unboxedDouble(value) == value && SlotValues.unboxedInteger(value) == nil)
            #expect((SlotValues.boxed(value) as? NSNumber)?.doubleValue == value)
        }
        #expect(SlotValues.unboxedDouble(Double.nan)?.isNaN == true)
        for value in [true, false] {
            #expect(SlotValues.unboxedBool(value) == value && SlotValues.unboxedInteger(value) == nil)
            #expect(isNumberObject(SlotValues.boxed(value)) && SlotValues.boxed(value) as? Bool == value)
        }
        let others: [Any?] = [nil, NSNumber(value: Int64(42)), NSNumber(value: 2.5), NSNumber(value: true), Int(42), Int32(42),
                              UInt64(42), Optional<Int64>(42) as Any, Float(2.5), UInt8(1), "42",
                              "a string too long to be stored inline in the container", Data([1, 2, 3]),
                              NSObject(), [Int64(42)], (Int64(42), Int64(43)), Decimal(42), Date(timeIntervalSinceReferenceDate: 1)]
        for value in others {
            #expect(SlotValues.unboxedInteger(value) == nil, "\(String(describing: value))")
            #expect(SlotValues.unboxedDouble(value) == nil && SlotValues.unboxedBool(value) == nil, "\(String(describing: value))")
            #expect(!SlotValues.isUnboxedNumber(value), "\(String(describing: value))")
            let boxed = SlotValues.boxed(value)
            #expect((boxed == nil) == (value == nil))
            if let value, let boxed, type(of: value) is AnyClass {
                let same = (boxed as AnyObject) === (value as AnyObject)
                #expect(same, "an object is handed out as it is")
            }
        }
        var values = SlotValues([Int64(7), nil, "x"])
        #expect(isNumberObject(values[0]) && values[1] == nil && values[2] as? String == "x")
        values[1] = Int64(8)
        #expect(SlotValues.unboxedInteger(values.stored(1)) == 8)
        #expect(values.compactMap { ($0 as? NSNumber)?.intValue } == [7, 8])
    }

    @Test func doublesAndBooleansAreReadAsNumbersEverywhere() throws {
        let stack = try stack()
        let ann = stack.insert("Employee", ["name": "Ann", "salary": 2.5, "active": false])
        for value in [ann.value(forKey: "salary"), ann.value(forKey: "active"), ann.changedValues()["salary"], ann.changedValues()["active"]] {
            #expect(isNumberObject(value), "\(String(describing: value))")
        }
        #expect(ann.value(forKey: "active") as? Bool == false && ann.value(forKey: "salary") as? Double == 2.5)
        try stack.context.save()

        let other = stack.newContext()
        let fetched = try #require(try stack.fetch("Employee", in: other).first)
        #expect(isNumberObject(fetched.value(forKey: "salary")) && isNumberObject(fetched.value(forKey: "active")))
        #expect(isNumberObject(fetched.committedValues(forKeys: ["salary"])["salary"]))
        let salary: Double = fetched.managedValue(forKey: "salary")
        let active: Bool = fetched.managedValue(forKey: "active")
        let salaryNumber: NSNumber? = fetched.managedValue(forKey: "salary")
        #expect(salary == 2.5 && !active && salaryNumber?.doubleValue == 2.5)
        // The same value in the other form is no change; another value is one.
        fetched.setValue(NSNumber(value: 2.5), forKey: "salary")
        fetched.setValue(NSNumber(value: false), forKey: "active")
        #expect(fetched.changedValues().isEmpty)
        fetched.setValue(true, forKey: "active")
        fetched.setValue(3.0, forKey: "salary")
        #expect(isNumberObject(fetched.changedValuesForCurrentEvent()["active"]))
        #expect(fetched.changedValuesForCurrentEvent()["active"] as? Bool == false)
        #expect(fetched.changedValues()["active"] as? Bool == true && fetched.changedValues()["salary"] as? Double == 3.0)
        try other.save()
        let third = stack.newContext()
        let matching = try stack.fetch("Employee", "active == YES AND salary > 2.75", in: third)
        #expect(matching.count == 1)
        #expect(NSPredicate(format: "active == YES AND salary == 3").evaluate(with: fetched))
    }

    /// Doubles compare as `NSNumber.isEqual(_:)` compares them, whichever form each side is in.
    @Test func specialDoublesCompareAsNumbersDo() throws {
        let stack = try stack()
        for (stored, set) in [(Double.nan, Double.nan), (0.0, -0.0), (-0.0, 0.0), (1.0, 1.0 + .ulpOfOne)] {
            let department = stack.insert("Department", ["name": "N", "ratio": stored])
            try stack.context.save()
            let numbersEqual = NSNumber(value: stored).isEqual(NSNumber(value: set))
            department.setValue(set, forKey: "ratio")
            #expect(department.changedValues().isEmpty == numbersEqual, "\(stored) then \(set)")
            department.setValue(NSNumber(value: set), forKey: "ratio")
            #expect(department.changedValues().isEmpty == numbersEqual, "\(stored) then NSNumber \(set)")
            stack.context.rollback()
        }
    }

    /// SQLite stores a NaN as NULL (Documentation/SQLiteStore.md); the in-memory store keeps the NaN.
    @Test func aSavedNaNReadsBackAsTheStoreKeepsIt() throws {
        let stack = try stack()
        stack.insert("Department", ["name": "N", "ratio": Double.nan])
        try stack.context.save()
        let other = stack.newContext()
        let fetched = try #require(try stack.fetch("Department", in: other).first)
        if TestStack.storeType == NSSQLiteStoreType {
            #expect(fetched.value(forKey: "ratio") == nil)
        } else {
            #expect((fetched.value(forKey: "ratio") as? NSNumber)?.doubleValue.isNaN == true)
        }
    }

    @Test func integersSetAsSwiftIntegersAreReadAsNumbers() throws {
        let stack = try stack()
        let department = stack.insert("Department", ["name": "R&D", "budget": Int64(5_000_000_000)])
        let employee = stack.insert("Employee", ["name": "Ann", "age": 42])
        for value in [department.value(forKey: "budget"), department.primitiveValue(forKey: "budget"),
                      employee.value(forKey: "age"), department.changedValues()["budget"],
                      department.dictionaryWithValues(forKeys: ["budget"])["budget"], department.value(forKeyPath: "budget")] {
            #expect(isNumberObject(value), "\(String(describing: value)) of type \(value.map { "\(type(of: $0))" } ?? "nil")")
        }
        #expect(department.value(forKey: "budget") as? Int == 5_000_000_000)
        #expect(department.value(forKey: "budget") as? Double == 5e9)
        #expect(employee.value(forKey: "age") as? Int16 == 42)
        #expect((department.value(forKey: "budget") as? NSNumber)?.int64Value == 5_000_000_000)
    }

    @Test func storedIntegersAreReadAsNumbersEverywhere() throws {
        let stack = try stack()
        stack.insert("Department", ["name": "R&D", "budget": Int64(7)])
        try stack.context.save()

        let context = stack.newContext()
        let department = try #require(try stack.fetch("Department", in: context).first)
        #expect(department.isFault)
        #expect(isNumberObject(department.value(forKey: "budget")))
        #expect(isNumberObject(department.committedValues(forKeys: ["budget"])["budget"]))
        department.setValue(Int64(8), forKey: "budget")
        #expect(isNumberObject(department.changedValuesForCurrentEvent()["budget"]))
        #expect((department.changedValuesForCurrentEvent()["budget"] as? NSNumber)?.intValue == 7)

        let request = NSFetchRequest<NSDictionary>(entityName: "Department")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["budget"]
        let row = try #require(try stack.context.fetch(request).first)
        #expect(isNumberObject(row["budget"]))
        #expect((row["budget"] as? NSNumber)?.intValue == 7)
    }

    @Test func extremeIntegersKeepTheirValueThroughEveryForm() throws {
        let stack = try stack()
        let values: [Int64] = [.min, .min + 1, -1, 0, 1, Int64(Int32.max) + 1, .max - 1, .max]
        for value in values { stack.insert("Department", ["name": "\(value)", "budget": value]) }
        try stack.context.save()
        let other = stack.newContext()
        let fetched = try stack.fetch("Department", sortedBy: "budget", in: other)
        #expect(fetched.compactMap { ($0.value(forKey: "budget") as? NSNumber)?.int64Value } == values)
        #expect(fetched.compactMap { ($0 as? TypedDepartment)?.budget } == values)
        #expect(fetched.compactMap { ($0.value(forKey: "name") as? String) } == values.map { "\($0)" })
        for object in fetched { object.setValue(NSNumber(value: (object as! TypedDepartment).budget), forKey: "budget") }
        #expect(fetched.allSatisfy { $0.changedValues().isEmpty })
    }

    @Test func observersGetNumbers() throws {
        let stack = try stack()
        let department = stack.insert("Department", ["name": "R&D", "budget": Int64(1)])
        var seen: [(Any?, Any?, Bool)] = []
        let token = department.observeValue(forKey: "budget", options: [.old, .new, .prior]) { _, _, old, new, _, prior in seen.append((old, new, prior)) }
        department.setValue(Int64(2), forKey: "budget")
        withExtendedLifetime(token) {}
        #expect(seen.map(\.2) == [true, false])
        #expect(seen.allSatisfy { isNumberObject($0.0) })
        #expect(isNumberObject(seen.last?.1))
        #expect(seen.map { ($0.0 as? NSNumber)?.intValue } == [1, 1] && (seen.last?.1 as? NSNumber)?.intValue == 2)
    }

    @Test func aNumberAndTheSameSwiftIntegerAreTheSameValue() throws {
        let stack = try stack()
        let unboxed = stack.insert("Department", ["name": "A", "budget": Int64(5)])
        let boxed = stack.insert("Department", ["name": "B", "budget": NSNumber(value: 5)])
        try stack.context.save()
        // Setting the stored value in the other form changes nothing.
        unboxed.setValue(NSNumber(value: 5), forKey: "budget")
        boxed.setValue(Int64(5), forKey: "budget")
        boxed.setValue(5, forKey: "budget")
        #expect(unboxed.changedValues().isEmpty)
        #expect(boxed.changedValues().isEmpty)
        unboxed.setValue(NSNumber(value: 6), forKey: "budget")
        #expect((unboxed.changedValues()["budget"] as? NSNumber)?.intValue == 6)
        // Both forms match predicates and sort alike, in memory and in the store.
        let matching = try stack.fetch("Department", "budget == 5")
        #expect(matching.map { $0.value(forKey: "name") as? String } == ["B"])
        #expect(NSPredicate(format: "budget == 6").evaluate(with: unboxed))
        #expect(NSPredicate(format: "budget == 5").evaluate(with: boxed))
        try stack.context.save()
        let other = stack.newContext()
        let sorted = try stack.fetch("Department", sortedBy: "budget", in: other)
        #expect(sorted.map { $0.value(forKey: "name") as? String } == ["B", "A"])
    }

    /// The typed setters store the value as it is held, with the change notifications and tracking of
    /// any setter, and (as Core Data's generated setters) without calling `setPrimitiveValue(_:forKey:)`.
    @Test func typedSettersStoreTheValueWithTheirNotifications() throws {
        let stack = try stack()
        let department = try #require(stack.insert("Department", ["name": "R&D", "budget": 1, "ratio": 0.5]) as? TypedDepartment)
        try stack.context.save()
        var seen: [Any?] = []
        let token = department.observeValue(forKey: "budget", options: [.new]) { _, _, _, new, _, _ in seen.append(new) }
        department.primitiveWrites = 0
        department.budget = 7
        department.budgetAsInt = 8
        department.ratio = 1.5
        department.name = "Labs"
        department.isOpen = true
        withExtendedLifetime(token) {}
        #expect(department.primitiveWrites == 0)
        #expect(department.isOpen && department.value(forKey: "open") as? Bool == true && isNumberObject(department.value(forKey: "open")))
        #expect(seen.compactMap { ($0 as? NSNumber)?.intValue } == [7, 8])
        #expect(isNumberObject(department.value(forKey: "budget")) && department.value(forKey: "budget") as? Int == 8)
        #expect(department.ratio == 1.5 && isNumberObject(department.value(forKey: "ratio")))
        #expect(department.isUpdated && Set(department.changedValues().keys) == ["budget", "ratio", "name", "open"])
        #expect(Set(department.changedValuesForCurrentEvent().keys) == ["budget", "ratio", "name", "open"])
        department.setPrimitiveValue(NSNumber(value: 9), forKey: "budget")
        #expect(department.primitiveWrites == 1 && department.budget == 9)
        try stack.context.save()
        let other = stack.newContext()
        let stored = try #require(try stack.fetch("Department", in: other).first as? TypedDepartment)
        #expect(stored.budget == 9 && stored.ratio == 1.5 && stored.name == "Labs" && stored.isOpen)
        // A typed setter fires a fault first; one of another kind of number is kept as given.
        let faultContext = stack.newContext()
        let fault = try #require(try stack.fetch("Department", in: faultContext).first as? TypedDepartment)
        faultContext.refresh(fault, mergeChanges: false)
        #expect(fault.isFault)
        fault.budget = 10
        fault.ratioAsInt64 = 2
        #expect(!fault.isFault && fault.budget == 10 && fault.ratio == 2 && fault.name == "Labs")
        #expect(fault.changedValues().count == 2 && fault.value(forKey: "ratio") as? Int == 2)
    }

    @Test func typedGettersReadTheStoredInteger() throws {
        let stack = try stack()
        let made = try #require(stack.insert("Department", ["name": "R&D"]) as? TypedDepartment)
        made.budget = 9_000_000_000
        #expect(made.budgetAsInt == 9_000_000_000 && made.budgetAsDouble == 9e9)
        try stack.context.save()

        let context = stack.newContext()
        let fetched = try #require(try stack.fetch("Department", in: context).first as? TypedDepartment)
        fetched.primitiveReads = 0
        #expect(fetched.budget == 9_000_000_000)
        #expect(fetched.budgetAsInt == 9_000_000_000)
        #expect(!fetched.isFault)
        #expect(fetched.budgetAsNumber?.int64Value == 9_000_000_000)
        #expect(fetched.budgetAsDouble == 9e9)
        #expect(fetched.name == "R&D")
        // As Core Data's generated accessors, the getters read the stored value, not through the override.
        #expect(fetched.primitiveReads == 0)
        #expect(fetched.primitiveValue(forKey: "budget") as? Int == 9_000_000_000)
        #expect(fetched.primitiveReads == 1)

        // A value set as an NSNumber reads the same through the typed getter.
        fetched.setValue(NSNumber(value: 3), forKey: "budget")
        #expect(fetched.budget == 3 && fetched.budgetAsInt == 3)
        fetched.budget = 4
        #expect((fetched.changedValues()["budget"] as? NSNumber)?.intValue == 4)
    }
}

/// The numbers `value(forKey:)` hands out are made through CoreFoundation's `CFNumberCreate` as
/// `NSNumber(value:)` makes them, without its checked cast (D36): each must be indistinguishable from
/// `NSNumber(value:)`'s, whatever the value.
@Suite("Numbers made without NSNumber(value:)")
struct DirectNumberTests {
    @Test func onLinuxNumbersAreMadeDirectly() {
        #if os(Linux)
        #expect(NumberMaker.makesNumbersDirectly)
        #endif
    }

    @Test(arguments: [Int64.min, -1_000_000_007, -1, 0, 1, 7, 12, 13, 255, 4_294_967_296, Int64.max])
    func integersAreThoseOfNSNumberValue(_ value: Int64) throws {
        let made = try #require(SlotValues.number((UInt64(bitPattern: value), SlotValues.int64Type)))
        let reference = NSNumber(value: value)
        #expect(ObjectIdentifier(type(of: made)) == ObjectIdentifier(type(of: reference)))
        #expect(made.int64Value == value)
        #expect(made.isEqual(reference) && reference.isEqual(made))
        #expect(made.hash == reference.hash)
        #expect(made.objCType.pointee == reference.objCType.pointee)
        #expect(made.description == reference.description)
        #expect(made.compare(reference) == .orderedSame)
        #expect((made as Any) as? Int64 == value)
        #expect((made as Any) as? Int == Int(exactly: value))
        #expect((made as Any) as? Double == Double(exactly: value))
        #expect(made.doubleValue == reference.doubleValue && made.boolValue == reference.boolValue)
    }

    /// A number made is owned once: it goes away with its last reference (no leak), and outlives every
    /// other use (no over-release; a double free would crash here or later).
    @Test func aNumberMadeIsReleasedWithItsLastReference() throws {
        weak var weakInteger: NSNumber?
        weak var weakDouble: NSNumber?
        do {
            let integer = try #require(SlotValues.number((UInt64(bitPattern: 4_294_967_311), SlotValues.int64Type)))
            let double = try #require(SlotValues.number((1234.5678.bitPattern, SlotValues.doubleType)))
            weakInteger = integer
            weakDouble = double
            #expect(weakInteger?.int64Value == 4_294_967_311 && weakDouble?.doubleValue == 1234.5678)
        }
        #expect(weakInteger == nil)
        #expect(weakDouble == nil)
    }

    @Test(arguments: [0.0, -0.0, 2.5, -1e300, .pi, .infinity, -.infinity, .nan, Double.leastNonzeroMagnitude])
    func doublesAreThoseOfNSNumberValue(_ value: Double) throws {
        let made = try #require(SlotValues.number((value.bitPattern, SlotValues.doubleType)))
        let reference = NSNumber(value: value)
        #expect(made.doubleValue.bitPattern == value.bitPattern || (value.isNaN && made.doubleValue.isNaN))
        #expect(made.isEqual(reference) && reference.isEqual(made))
        #expect(made.hash == reference.hash)
        #expect(made.objCType.pointee == reference.objCType.pointee)
        #expect(made.description == reference.description)
        #expect(((made as Any) as? Double)?.bitPattern == ((reference as Any) as? Double)?.bitPattern)
        #expect((made as Any) as? Int == (reference as Any) as? Int)
    }
}
