import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

// A fault is created through `init(entity:insertInto:)`, which takes the fault's object ID from a
// thread-specific value: the fault gets its store ID and no default values, while objects its class's
// initializer creates are new objects (temporary IDs, defaults set). And a fault's values are its row's.

/// An Employee class whose initializer creates a Task after `super.init`.
final class SpawningEmployee: NSManagedObject, @unchecked Sendable {
    /// Module-qualified: the class registry is shared by every test module in the process.
    static let className = String(reflecting: SpawningEmployee.self)

    static func register() {
        NSManagedObjectModel.registerManagedObjectClass(SpawningEmployee.self, forName: className)
    }

    /// The Task made in the initializer.
    private(set) var spawned: NSManagedObject?
    /// The object's ID and fault state when `super.init` returned.
    private(set) var idAfterSuperInit: NSManagedObjectID?
    private(set) var ageAfterSuperInit: Any?

    required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        super.init(entity: entity, insertInto: context)
        idAfterSuperInit = objectID
        ageAfterSuperInit = primitiveValue(forKey: "age")
        let task = entity.relationshipsByName["tasks"]!.destinationEntity!
        spawned = NSManagedObject(entity: task, insertInto: nil)
    }
}

/// An Employee class whose initializer creates a Task *before* `super.init`, as a Swift subclass must
/// when it initializes a stored property with an object.
final class EagerEmployee: NSManagedObject, @unchecked Sendable {
    static let className = String(reflecting: EagerEmployee.self)

    static func register() {
        NSManagedObjectModel.registerManagedObjectClass(EagerEmployee.self, forName: className)
    }

    let scratch: NSManagedObject

    required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        scratch = NSManagedObject(entity: entity.relationshipsByName["tasks"]!.destinationEntity!, insertInto: nil)
        super.init(entity: entity, insertInto: context)
    }
}

/// An Employee class whose initializer makes one more Employee of its own class before `super.init`.
final class MirroringEmployee: NSManagedObject, @unchecked Sendable {
    static let className = String(reflecting: MirroringEmployee.self)
    nonisolated(unsafe) static var depth = 0
    /// Where the mirror is inserted (nil: not inserted).
    nonisolated(unsafe) static var mirrorContext: NSManagedObjectContext?

    static func register() {
        NSManagedObjectModel.registerManagedObjectClass(MirroringEmployee.self, forName: className)
    }

    let mirror: NSManagedObject?

    required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        let isMirror = Self.depth > 0
        if !isMirror {
            Self.depth += 1
            defer { Self.depth -= 1 }
            mirror = MirroringEmployee(entity: entity, insertInto: Self.mirrorContext)
        } else {
            mirror = nil
        }
        super.init(entity: entity, insertInto: context)
        // The mirror's own initializer sets values after super.init; they must survive its repair.
        if isMirror {
            setPrimitiveValue("set by the initializer", forKey: "name")
            setPrimitiveValue(NSNumber(value: 55), forKey: "age")
        }
    }
}

extension TestModel {
    /// The test model with Employee objects of `className`, and a Setting entity of attributes only, each
    /// with a default value.
    static func faultCreation(employeeClass className: String) -> NSManagedObjectModel {
        make { entities, model in
            entities["Employee"]!.managedObjectClassName = className
            model.entities = model.entities + [settingEntity()]
        }
    }

    static func settingEntity() -> NSEntityDescription {
        func attribute(_ name: String, _ type: NSAttributeType, _ defaultValue: Any) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            attribute.defaultValue = defaultValue
            return attribute
        }
        let setting = NSEntityDescription()
        setting.name = "Setting"
        setting.managedObjectClassName = "NSManagedObject"
        setting.properties = [
            attribute("key", .stringAttributeType, "default key"),
            attribute("enabled", .booleanAttributeType, true),
            attribute("count", .integer32AttributeType, 7),
            attribute("ratio", .doubleAttributeType, 0.5),
            attribute("note", .stringAttributeType, "default note"),
        ]
        return setting
    }
}

// Serialized: two tests share `MirroringEmployee`'s static context and depth.
@Suite("Fault creation: the fault's ID reaches init(entity:insertInto:) only", .serialized)
struct FaultCreationTests {
    func spawningStack() throws -> TestStack {
        SpawningEmployee.register()
        return try TestStack(model: TestModel.faultCreation(employeeClass: SpawningEmployee.className))
    }

    /// Checks the object the initializer made: a new Task, not the fault.
    func expectNewTask(_ spawned: NSManagedObject?, notFor id: NSManagedObjectID, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let task = try #require(spawned, sourceLocation: sourceLocation)
        #expect(task.entity.name == "Task", sourceLocation: sourceLocation)
        #expect(task.objectID != id, sourceLocation: sourceLocation)
        #expect(task.objectID.isTemporaryID, sourceLocation: sourceLocation)
        #expect(task.objectID.entity.name == "Task", sourceLocation: sourceLocation)
        #expect(!task.isFault, sourceLocation: sourceLocation)
        #expect(!task.isInserted, sourceLocation: sourceLocation)
        #expect(task.managedObjectContext == nil, sourceLocation: sourceLocation)
        // The model's default: set for a new object.
        #expect((task.value(forKey: "done") as? NSNumber)?.boolValue == false, sourceLocation: sourceLocation)
        #expect(task.value(forKey: "title") == nil, sourceLocation: sourceLocation)
    }

    @Test func aFetchedFaultHasItsIDWhileTheObjectItsInitializerMadeIsNew() throws {
        let stack = try spawningStack()
        let id = try stack.seed("Employee", ["name": "Ann", "age": 41])
        let reader = stack.newContext()
        let fetched = try #require(try stack.fetch("Employee", in: reader).first as? SpawningEmployee)
        #expect(fetched.objectID == id)
        #expect(fetched.isFault)
        #expect(fetched.idAfterSuperInit == id)
        // No default values for a fault: `age` (default 30) was not set by the initializer.
        #expect(fetched.ageAfterSuperInit == nil)
        #expect(reader.registeredObject(for: id) === fetched)
        try expectNewTask(fetched.spawned, notFor: id)
        #expect(!reader.registeredObjects.contains { $0 === fetched.spawned })

        #expect(fetched.string("name") == "Ann")
        #expect(fetched.int("age") == 41)
        #expect(!fetched.isFault)
        #expect(!fetched.hasChanges)
    }

    @Test func objectWithAndExistingObjectCreateFaultsWithTheirIDs() throws {
        let stack = try spawningStack()
        let first = try stack.seed("Employee", ["name": "Ann"])
        let second = try stack.seed("Employee", ["name": "Bob", "age": 52])
        let reader = stack.newContext()

        let fault = try #require(reader.object(with: first) as? SpawningEmployee)
        #expect(fault.objectID == first)
        #expect(fault.isFault)
        #expect(fault.idAfterSuperInit == first)
        try expectNewTask(fault.spawned, notFor: first)
        #expect(fault.string("name") == "Ann")
        #expect(fault.int("age") == 30)

        let realized = try #require(try reader.existingObject(with: second) as? SpawningEmployee)
        #expect(realized.objectID == second)
        #expect(!realized.isFault)
        try expectNewTask(realized.spawned, notFor: second)
        #expect(realized.spawned?.objectID != fault.spawned?.objectID)
        #expect(realized.int("age") == 52)
    }

    @Test func aToOneDestinationFaultOfTheSubclassGetsItsOwnID() throws {
        let stack = try spawningStack()
        let setup = stack.newContext()
        let ann = stack.insert("Employee", ["name": "Ann"], into: setup)
        let task = stack.insert("Task", ["title": "Write", "owner": ann], into: setup)
        try setup.save()
        let reader = stack.newContext()
        let fetchedTask = try reader.existingObject(with: task.objectID)
        let owner = try #require(fetchedTask.value(forKey: "owner") as? SpawningEmployee)
        #expect(owner.objectID == ann.objectID)
        #expect(owner.isFault)
        try expectNewTask(owner.spawned, notFor: ann.objectID)
        #expect(owner.spawned?.objectID != fetchedTask.objectID)
        #expect(owner.string("name") == "Ann")
    }

    @Test func aNewObjectOfTheSubclassAndItsSpawnedObjectAreBothNew() throws {
        let stack = try spawningStack()
        let entity = try #require(stack.model.entitiesByName["Employee"])
        let employee = SpawningEmployee(entity: entity, insertInto: stack.context)
        #expect(employee.objectID.isTemporaryID)
        #expect(!employee.isFault)
        #expect(employee.isInserted)
        #expect((employee.ageAfterSuperInit as? NSNumber)?.intValue == 30)
        try expectNewTask(employee.spawned, notFor: employee.objectID)
    }

    @Test func theSpawnedObjectOfAFaultCanBeInsertedAndSaved() throws {
        let stack = try spawningStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let fetched = try #require(try stack.fetch("Employee").first as? SpawningEmployee)
        let spawned = try #require(fetched.spawned)
        stack.context.insert(spawned)
        spawned.setValue("Spawned", forKey: "title")
        spawned.setValue(fetched, forKey: "owner")
        try stack.context.save()
        #expect(!spawned.objectID.isTemporaryID)
        #expect(fetched.objectID == id)
        #expect(try stack.stored("Task") { $0.string("title") } == ["Spawned"])
        #expect(try stack.stored("Task") { $0.object("owner")?.objectID } == [id])
        #expect(try stack.stored("Employee") { $0.string("name") } == ["Ann"])
    }

    @Test func objectsCreatedAfterFaultsOnTheSameThreadAreNew() throws {
        let stack = try spawningStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        _ = try stack.fetch("Employee")
        _ = stack.context.object(with: id)
        let entity = try #require(stack.model.entitiesByName["Employee"])
        let plain = NSManagedObject(entity: try #require(stack.model.entitiesByName["Task"]), insertInto: nil)
        #expect(plain.objectID.isTemporaryID)
        #expect(!plain.isFault)
        #expect((plain.value(forKey: "done") as? NSNumber)?.boolValue == false)
        let employee = SpawningEmployee(entity: entity, insertInto: nil)
        #expect(employee.objectID.isTemporaryID)
        #expect(employee.objectID != id)
        #expect(employee.int("age") == 30)
    }

    @Test func faultsCreatedOnManyThreadsAtOnceGetTheirOwnIDs() throws {
        let stack = try spawningStack()
        let setup = stack.newContext()
        for index in 0..<40 { stack.insert("Employee", ["name": "E\(index)"], into: setup) }
        try setup.save()
        let ids = try stack.fetch("Employee", in: setup).map(\.objectID)
        let problems = ProblemCounter()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let context = stack.newContext()
            context.performAndWait {
                for id in ids.shuffled() {
                    guard let fault = context.object(with: id) as? SpawningEmployee else { problems.add(); continue }
                    if fault.objectID != id || fault.idAfterSuperInit != id || !fault.isFault { problems.add() }
                    if fault.spawned?.objectID.isTemporaryID != true || fault.spawned?.isFault != false { problems.add() }
                }
            }
        }
        #expect(problems.count == 0)
    }

    /// Swift runs a subclass's stored-property initialization before `super.init`: the object made there
    /// must not take the pending fault's ID.
    @Test func anObjectMadeBeforeSuperInitDoesNotTakeTheFaultsID() throws {
        EagerEmployee.register()
        let id: NSManagedObjectID
        var keep: [NSManagedObject] = []
        do {
            let stack = try TestStack(model: TestModel.faultCreation(employeeClass: EagerEmployee.className))
            id = try stack.seed("Employee", ["name": "Ann"])
            let reader = stack.newContext()
            let fault = try #require(reader.object(with: id) as? EagerEmployee)
            // Kept past the context: an object registered under an ID it does not have would leave a stale
            // entry behind when it goes away, which a live context could then read.
            keep = [fault, fault.scratch]
            #expect(fault.objectID == id)
            #expect(fault.scratch.objectID.isTemporaryID)
            #expect(fault.scratch.objectID != id)
            #expect((fault.scratch.value(forKey: "done") as? NSNumber)?.boolValue == false)
            #expect(fault.isFault)
            #expect(reader.registeredObject(for: id) === fault)
        }
        withExtendedLifetime(keep) {}
    }
}

extension FaultCreationTests {
    /// The object of the fault's own class and entity made before `super.init` is indistinguishable from the
    /// fault there and takes its ID; the fault itself must still be the fault, with its ID and its row.
    @Test func theFaultStaysTheFaultWhenItsInitializerMakesAnObjectOfItsOwnClassFirst() throws {
        MirroringEmployee.register()
        let stack = try TestStack(model: TestModel.faultCreation(employeeClass: MirroringEmployee.className))
        let id = try stack.seed("Employee", ["name": "Ann", "age": 44])
        let reader = stack.newContext()
        let fault = try #require(reader.object(with: id) as? MirroringEmployee)
        #expect(fault.objectID == id)
        #expect(fault.isFault)
        #expect(reader.registeredObject(for: id) === fault)
        #expect(fault.string("name") == "Ann")
        #expect(fault.int("age") == 44)
        #expect(!fault.hasChanges)
        // The mirror is the new object its initializer asked for: a temporary ID, the model's defaults.
        let mirror = try #require(fault.mirror as? MirroringEmployee)
        #expect(mirror !== fault)
        #expect(mirror.objectID.isTemporaryID)
        #expect(mirror.objectID != id)
        #expect(!mirror.isFault)
        #expect(!mirror.isInserted)
        // What its initializer set after super.init stays; what it did not set gets the model's default.
        #expect(mirror.string("name") == "set by the initializer")
        #expect(mirror.int("age") == 55)
        #expect((mirror.value(forKey: "active") as? NSNumber)?.boolValue == true)
        #expect((mirror.value(forKey: "projects") as? Set<NSManagedObject>)?.isEmpty == true)
    }

    /// The same, with the mirror made for insertion into a context: it is inserted there, and saving it
    /// writes a second row rather than touching the fault's.
    @Test func theMirrorOfAFaultIsInsertedWhereItsInitializerAsked() throws {
        MirroringEmployee.register()
        let stack = try TestStack(model: TestModel.faultCreation(employeeClass: MirroringEmployee.className))
        let id = try stack.seed("Employee", ["name": "Ann", "age": 44])
        let reader = stack.newContext()
        MirroringEmployee.mirrorContext = reader
        defer { MirroringEmployee.mirrorContext = nil }
        let fault = try #require(reader.object(with: id) as? MirroringEmployee)
        MirroringEmployee.mirrorContext = nil
        let mirror = try #require(fault.mirror)
        #expect(fault.objectID == id && fault.isFault)
        #expect(mirror.isInserted)
        #expect(mirror.objectID.isTemporaryID)
        #expect(reader.registeredObject(for: id) === fault)
        #expect(reader.registeredObject(for: mirror.objectID) === mirror)
        #expect(mirror.value(forKey: "name") as? String == "set by the initializer")
        mirror.setValue("Mirror", forKey: "name")
        try reader.save()
        #expect(try stack.stored("Employee") { $0.string("name") ?? "" }.sorted() == ["Ann", "Mirror"])
    }
}

@Suite("Fault creation: a fault's values are its row's, not the model's defaults")
struct FaultDefaultValueTests {
    /// Values unlike every default of Setting, nil included.
    static var stored: [String: Any?] { ["key": "stored key", "enabled": false, "count": 0, "ratio": 2.25, "note": nil] }

    func stackWithStoredSetting() throws -> (TestStack, NSManagedObjectID) {
        let stack = try TestStack(model: TestModel.faultCreation(employeeClass: "NSManagedObject"))
        let setup = stack.newContext()
        let setting = stack.insert("Setting", into: setup)
        // Defaults first: the new object has them.
        #expect(setting.value(forKey: "note") as? String == "default note")
        #expect((setting.value(forKey: "count") as? NSNumber)?.intValue == 7)
        for (key, value) in Self.stored { setting.setValue(value, forKey: key) }
        try setup.save()
        return (stack, setting.objectID)
    }

    func expectStoredValues(_ setting: NSManagedObject, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(setting.value(forKey: "key") as? String == "stored key", sourceLocation: sourceLocation)
        #expect((setting.value(forKey: "enabled") as? NSNumber)?.boolValue == false, sourceLocation: sourceLocation)
        #expect((setting.value(forKey: "count") as? NSNumber)?.intValue == 0, sourceLocation: sourceLocation)
        #expect((setting.value(forKey: "ratio") as? NSNumber)?.doubleValue == 2.25, sourceLocation: sourceLocation)
        #expect(setting.value(forKey: "note") == nil, sourceLocation: sourceLocation)
        #expect(setting.changedValues().isEmpty, sourceLocation: sourceLocation)
        #expect(!setting.hasChanges, sourceLocation: sourceLocation)
    }

    @Test func aFetchedFaultReadsItsStoredValues() throws {
        let (stack, id) = try stackWithStoredSetting()
        let reader = stack.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Setting")
        let setting = try #require(try reader.fetch(request).first)
        #expect(setting.objectID == id)
        #expect(setting.isFault)
        expectStoredValues(setting)
        #expect(setting.committedValues(forKeys: ["note"])["note"] is NSNull)
    }

    @Test func aFetchWithoutPropertyValuesAndObjectWithReadStoredValues() throws {
        let (stack, id) = try stackWithStoredSetting()
        let reader = stack.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Setting")
        request.includesPropertyValues = false
        let setting = try #require(try reader.fetch(request).first)
        #expect(setting.isFault)
        expectStoredValues(setting)

        let other = stack.newContext()
        let fault = other.object(with: id)
        #expect(fault.isFault)
        expectStoredValues(fault)
    }

    @Test func aRefreshedObjectReadsStoredValuesAgain() throws {
        let (stack, id) = try stackWithStoredSetting()
        let setting = try stack.context.existingObject(with: id)
        setting.setValue("changed", forKey: "note")
        stack.context.refresh(setting, mergeChanges: false)
        #expect(setting.isFault)
        expectStoredValues(setting)
    }

    @Test func anEmployeeFaultReadsStoredValuesOverDefaults() throws {
        let stack = try TestStack(model: TestModel.faultCreation(employeeClass: "NSManagedObject"))
        let setup = stack.newContext()
        let employee = stack.insert("Employee", ["name": "Ann", "active": false, "salary": 12.5], into: setup)
        employee.setValue(nil, forKey: "age")
        try setup.save()
        let reader = stack.newContext()
        let fetched = try #require(try stack.fetch("Employee", in: reader).first)
        #expect(fetched.isFault)
        #expect(fetched.value(forKey: "age") == nil)
        #expect((fetched.value(forKey: "active") as? NSNumber)?.boolValue == false)
        #expect((fetched.value(forKey: "salary") as? NSNumber)?.doubleValue == 12.5)
        #expect(fetched.changedValues().isEmpty)
    }
}

/// A thread-safe count of problems seen on several threads.
private final class ProblemCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
