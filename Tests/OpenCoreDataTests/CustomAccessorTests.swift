import Foundation
import OpenCoreData
import Testing

// The accessor article's listings, in Swift: custom public accessors over primitive ones, a copying setter,
// custom to-many mutators, a scalar kept in the subclass's own storage with custom primitive accessors.
// `@ManagedObject` records the custom accessors, so that `value(forKey:)` dispatches to them as key-value
// coding does on Apple platforms, and the custom primitive accessors, so that Core Data reads and writes
// the value the subclass keeps.

@ManagedObject
final class ListingDepartment: NSManagedObject {
    nonisolated(unsafe) static var nameGets = 0
    nonisolated(unsafe) static var nameSets = 0

    /// Listing 1: a custom public accessor pair over the primitive value.
    var name: String? {
        get {
            Self.nameGets += 1
            willAccessValue(forKey: "name")
            defer { didAccessValue(forKey: "name") }
            return primitiveValue(forKey: "name") as? String
        }
        set {
            Self.nameSets += 1
            willChangeValue(forKey: "name")
            // Listing 2: the setter copies the value.
            setPrimitiveValue(newValue.map { String($0) }, forKey: "name")
            didChangeValue(forKey: "name")
        }
    }

    /// Listing 3: custom to-many mutators with set-mutation notifications.
    func addEmployeesObject(_ value: ListingEmployee) {
        let changed: Set<AnyHashable> = [value]
        willChangeValue(forKey: "employees", withSetMutation: .union, using: changed)
        var employees = primitiveValue(forKey: "employees") as? Set<NSManagedObject> ?? []
        employees.insert(value)
        setPrimitiveValue(employees, forKey: "employees")
        didChangeValue(forKey: "employees", withSetMutation: .union, using: changed)
    }

    func removeEmployeesObject(_ value: ListingEmployee) {
        let changed: Set<AnyHashable> = [value]
        willChangeValue(forKey: "employees", withSetMutation: .minus, using: changed)
        var employees = primitiveValue(forKey: "employees") as? Set<NSManagedObject> ?? []
        employees.remove(value)
        setPrimitiveValue(employees, forKey: "employees")
        didChangeValue(forKey: "employees", withSetMutation: .minus, using: changed)
    }
}

@ManagedObject
final class ListingEmployee: NSManagedObject {
    /// The accessor article's `int16` example: the scalar lives in the subclass's own storage…
    private var storedInt16: Int16 = 0

    var int16: Int16 {
        get {
            willAccessValue(forKey: "int16")
            defer { didAccessValue(forKey: "int16") }
            return storedInt16
        }
        set {
            willChangeValue(forKey: "int16")
            storedInt16 = newValue
            didChangeValue(forKey: "int16")
        }
    }

    /// …and custom primitive accessors let Core Data read and write it, so it is persisted.
    var primitiveInt16: Int16 {
        get { storedInt16 }
        set { storedInt16 = newValue }
    }
}

enum ListingModel {
    static func make() -> NSManagedObjectModel {
        NSManagedObjectModel.registerManagedObjectClass(ListingDepartment.self, forName: "ListingDepartment")
        NSManagedObjectModel.registerManagedObjectClass(ListingEmployee.self, forName: "ListingEmployee")
        let department = NSEntityDescription()
        department.name = "Department"
        department.managedObjectClassName = "ListingDepartment"
        let employee = NSEntityDescription()
        employee.name = "Employee"
        employee.managedObjectClassName = "ListingEmployee"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let int16 = NSAttributeDescription()
        int16.name = "int16"
        int16.attributeType = .integer16AttributeType
        int16.isOptional = false
        int16.defaultValue = 0
        let employees = NSRelationshipDescription()
        employees.name = "employees"
        employees.destinationEntity = employee
        employees.maxCount = 0
        let departmentOfEmployee = NSRelationshipDescription()
        departmentOfEmployee.name = "department"
        departmentOfEmployee.destinationEntity = department
        departmentOfEmployee.maxCount = 1
        employees.inverseRelationship = departmentOfEmployee
        departmentOfEmployee.inverseRelationship = employees
        department.properties = [name, employees]
        employee.properties = [int16, departmentOfEmployee]
        let model = NSManagedObjectModel()
        model.entities = [department, employee]
        return model
    }
}

/// A coordinator with an in-memory store for the listings' model, and a context on it.
struct ListingStack {
    let coordinator: NSPersistentStoreCoordinator
    let context: NSManagedObjectContext

    init(model: NSManagedObjectModel = ListingModel.make()) throws {
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    func newContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    func insert(_ entityName: String) -> NSManagedObject {
        NSEntityDescription.insertNewObject(forEntityName: entityName, into: context)
    }

    func fetch(_ entityName: String, in context: NSManagedObjectContext) throws -> [NSManagedObject] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entityName))
    }
}

// Serialized: the tests count calls of the accessors in static counters, which a test running beside
// them would also move.
@Suite(.serialized) struct CustomAccessorListings {
    @Test func valueForKeyDispatchesToTheCustomAccessor() throws {
        let stack = try ListingStack()
        let department = try #require(stack.insert("Department") as? ListingDepartment)
        department.name = "R&D"
        let before = ListingDepartment.nameGets
        #expect(department.value(forKey: "name") as? String == "R&D")
        #expect(ListingDepartment.nameGets == before + 1)
        let setsBefore = ListingDepartment.nameSets
        department.setValue("Sales", forKey: "name")
        #expect(ListingDepartment.nameSets == setsBefore + 1, "setValue(_:forKey:) went through the custom setter")
        #expect(department.name == "Sales")
        #expect(department.changedValues()["name"] as? String == "Sales")
        #expect(ListingDepartment.keyPathString(\.name) == "name")
    }

    @Test func theCopyingSetterKeepsItsOwnCopy() throws {
        let stack = try ListingStack()
        let department = try #require(stack.insert("Department") as? ListingDepartment)
        // Through key-value coding, which hands the setter the mutable object itself: a setter that kept
        // it (or a KVC path around the setter storing it as the primitive value) would see the change.
        let source = NSMutableString(string: "R&D")
        department.setValue(source, forKey: "name")
        source.append(" (old)")
        #expect(department.name == "R&D")
        #expect(department.primitiveValue(forKey: "name") as? String == "R&D")
        #expect((department.primitiveValue(forKey: "name") as AnyObject?) !== source)
    }

    @Test func customToManyMutatorsNotifyAndMaintainTheInverse() throws {
        let stack = try ListingStack()
        let department = try #require(stack.insert("Department") as? ListingDepartment)
        let employee = try #require(stack.insert("Employee") as? ListingEmployee)
        var kinds: [NSKeyValueChange] = []
        let token = department.observeValue(forKey: "employees", options: [.new]) { _, kind, _, _, _, _ in kinds.append(kind) }
        department.addEmployeesObject(employee)
        #expect(employee.value(forKey: "department") as? NSManagedObject === department)
        department.removeEmployeesObject(employee)
        #expect(employee.value(forKey: "department") == nil)
        #expect(kinds == [.insertion, .removal])
        token.invalidate()
    }

    @Test func aScalarInTheSubclassStorageIsPersistedThroughCustomPrimitiveAccessors() throws {
        let stack = try ListingStack()
        let employee = try #require(stack.insert("Employee") as? ListingEmployee)
        employee.int16 = 42
        #expect(employee.value(forKey: "int16") as? Int16 == 42)
        #expect(employee.primitiveValue(forKey: "int16") as? Int16 == 42)
        #expect(employee.isInserted)
        try stack.context.save()
        let other = stack.newContext()
        let fetched = try #require(try stack.fetch("Employee", in: other).first as? ListingEmployee)
        #expect(fetched.int16 == 42, "the fetched value reaches the subclass's storage through primitiveInt16")
        fetched.int16 = 7
        #expect(fetched.isUpdated)
        // Read back through primitiveInt16, as Core Data reads a property whose class stores it.
        #expect((fetched.changedValues()["int16"] as? NSNumber)?.int16Value == 7)
        try other.save()
        let third = stack.newContext()
        let again = try #require(try stack.fetch("Employee", in: third).first as? ListingEmployee)
        #expect(again.int16 == 7)
    }

    /// Validation checks the value the class keeps, which the save writes: it read the object's own copy,
    /// out of date under custom primitive accessors, so a required value set through them failed the save
    /// as missing, and a value beyond a validation predicate was saved.
    @Test(arguments: [false, true])
    func validationChecksTheValueTheClassKeeps(withPredicate: Bool) throws {
        let model = ListingModel.make()
        let int16 = try #require(model.entitiesByName["Employee"]?.attributesByName["int16"])
        int16.defaultValue = nil
        if withPredicate {
            int16.setValidationPredicates([NSPredicate(format: "SELF <= 100")], withValidationWarnings: ["Too big"])
        }
        let stack = try ListingStack(model: model)
        let employee = try #require(stack.insert("Employee") as? ListingEmployee)
        employee.int16 = 42
        try stack.context.save()
        guard withPredicate else { return }
        employee.int16 = 500
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "int16")
        #expect(error.userInfo[NSValidationValueErrorKey] as? NSNumber == 500)
    }

    /// A primitive value read or set on a fault, with custom primitive accessors: the fault fires first,
    /// so the read gives the stored value and the set is kept (it was set, then overwritten by the row the
    /// fault filled the class's storage with, and never saved).
    @Test func primitiveValuesOfAFaultGoThroughTheFilledAccessors() throws {
        let stack = try ListingStack()
        (stack.insert("Employee") as? ListingEmployee)?.int16 = 42
        try stack.context.save()
        let other = stack.newContext()
        let employee = try #require(try stack.fetch("Employee", in: other).first as? ListingEmployee)
        #expect(employee.isFault)
        #expect(employee.primitiveValue(forKey: "int16") as? Int16 == 42)
        other.refresh(employee, mergeChanges: false)
        #expect(employee.isFault)
        employee.setPrimitiveValue(Int16(5), forKey: "int16")
        #expect(employee.primitiveValue(forKey: "int16") as? Int16 == 5)
        #expect(employee.int16 == 5)
    }

    /// With custom primitive accessors the class keeps the value: an old value comes from it, not from a
    /// stale copy, and a primitive set of a plain number reaches it.
    @Test func oldValuesAndPrimitiveSetsGoThroughTheCustomPrimitiveAccessors() throws {
        let stack = try ListingStack()
        let employee = try #require(stack.insert("Employee") as? ListingEmployee)
        employee.int16 = 42
        stack.context.processPendingChanges()
        employee.int16 = 50
        #expect((employee.changedValuesForCurrentEvent()["int16"] as? NSNumber)?.int16Value == 42)
        employee.setPrimitiveValue(Int64(5), forKey: "int16")
        #expect(employee.int16 == 5 && employee.primitiveInt16 == 5)
        employee.setValue(6, forKey: "int16")
        #expect(employee.int16 == 6)
    }
}
