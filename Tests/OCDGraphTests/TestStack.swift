import Foundation
import OCDGraph
// `setValidation(_:warnings:)` (package API): Core Data error codes as warnings, as momc compiles them.
import OCDModel
import OCDPredicate
import OCDStore
import OCDTestSupport
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor
#if OCD_SQLITE_CONFORMANCE
import OCDSQLiteStore
#endif

/// A model built in code, covering every relationship kind and delete rule the graph tests need:
///
/// - Company ⇄ departments (to-many, cascade) / Department.company (to-one, nullify)
/// - Department ⇄ employees (to-many, nullify) / Employee.department (to-one, nullify)
/// - Employee ⇄ tasks (ordered to-many, cascade) / Task.owner (to-one, nullify)
/// - Employee ⇄ projects (many-to-many, nullify both sides)
/// - Employee ⇄ badge (one-to-one, cascade) / Badge.holder (to-one, nullify)
/// - Manager is a subentity of Employee with reports (to-many, deny) / Employee.manager
/// - Task.reviewer (to-one, no action) / Employee.reviewedTasks (to-many, nullify)
/// - Employee has constraints: name required, age 0...150 and email pattern (Core Data error codes as
///   warnings, as `momc` compiles an Xcode model's min/max and pattern), salary ≥ 0 (string warning).
///
/// `customize` runs on the entities (by name) and the model before the model is used, to set classes,
/// counts or a localization dictionary for one test.
enum TestModel {
    /// An attribute description, as the model's and the tests' own entities use them.
    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, defaultValue: Any? = nil, transient: Bool = false) -> NSAttributeDescription {
        ModelDescriptions.attribute(name, type, optional: optional, defaultValue: defaultValue, transient: transient)
    }

    /// An entity of plain `NSManagedObject`s with `properties`.
    static func entity(_ name: String, _ properties: [NSPropertyDescription] = []) -> NSEntityDescription {
        ModelDescriptions.entity(name, properties)
    }

    static func make(_ customize: ([String: NSEntityDescription], NSManagedObjectModel) -> Void = { _, _ in }) -> NSManagedObjectModel {
        func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule = .nullifyDeleteRule, ordered: Bool = false, optional: Bool = true) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.maxCount = toMany ? 0 : 1
            relationship.deleteRule = rule
            relationship.isOrdered = ordered
            relationship.isOptional = optional
            return relationship
        }
        func inverse(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) {
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let company = entity("Company"), department = entity("Department"), employee = entity("Employee")
        let manager = entity("Manager"), task = entity("Task"), project = entity("Project"), badge = entity("Badge")
        employee.subentities = [manager]

        let companyDepartments = relationship("departments", department, toMany: true, rule: .cascadeDeleteRule)
        let departmentCompany = relationship("company", company, toMany: false)
        inverse(companyDepartments, departmentCompany)
        let departmentEmployees = relationship("employees", employee, toMany: true)
        let employeeDepartment = relationship("department", department, toMany: false)
        inverse(departmentEmployees, employeeDepartment)
        let employeeTasks = relationship("tasks", task, toMany: true, rule: .cascadeDeleteRule, ordered: true)
        let taskOwner = relationship("owner", employee, toMany: false)
        inverse(employeeTasks, taskOwner)
        let employeeProjects = relationship("projects", project, toMany: true)
        let projectMembers = relationship("members", employee, toMany: true)
        inverse(employeeProjects, projectMembers)
        let employeeBadge = relationship("badge", badge, toMany: false, rule: .cascadeDeleteRule)
        let badgeHolder = relationship("holder", employee, toMany: false)
        inverse(employeeBadge, badgeHolder)
        let managerReports = relationship("reports", employee, toMany: true, rule: .denyDeleteRule)
        let employeeManager = relationship("manager", manager, toMany: false)
        inverse(managerReports, employeeManager)
        let taskReviewer = relationship("reviewer", employee, toMany: false, rule: .noActionDeleteRule)
        let employeeReviewedTasks = relationship("reviewedTasks", task, toMany: true)
        inverse(taskReviewer, employeeReviewedTasks)

        let name = attribute("name", .stringAttributeType, optional: false)
        let age = attribute("age", .integer16AttributeType, defaultValue: 30)
        age.setValidation([NSPredicate(format: "SELF >= 0"), NSPredicate(format: "SELF <= 150")],
                          warnings: [NSValidationNumberTooSmallError, NSValidationNumberTooLargeError])
        let email = attribute("email", .stringAttributeType)
        email.setValidation([NSPredicate(format: "SELF MATCHES %@", "[^@ ]+@[^@ ]+")], warnings: [NSValidationStringPatternMatchingError])
        let salary = attribute("salary", .doubleAttributeType, defaultValue: 0.0)
        salary.setValidationPredicates([NSPredicate(format: "SELF >= 0")], withValidationWarnings: ["SalaryNegative"])
        let cache = attribute("cache", .stringAttributeType, transient: true)

        company.properties = [attribute("name", .stringAttributeType), companyDepartments]
        department.properties = [attribute("name", .stringAttributeType), attribute("budget", .integer64AttributeType), departmentCompany, departmentEmployees]
        employee.properties = [name, age, email, salary, cache, attribute("hired", .dateAttributeType), attribute("active", .booleanAttributeType, defaultValue: true),
                               employeeDepartment, employeeTasks, employeeProjects, employeeBadge, employeeManager, employeeReviewedTasks]
        manager.properties = [attribute("level", .integer32AttributeType, defaultValue: 1), managerReports]
        task.properties = [attribute("title", .stringAttributeType), attribute("done", .booleanAttributeType, defaultValue: false), taskOwner, taskReviewer]
        project.properties = [attribute("title", .stringAttributeType), projectMembers]
        badge.properties = [attribute("number", .integer32AttributeType), badgeHolder]

        let model = NSManagedObjectModel()
        model.entities = [company, department, employee, manager, task, project, badge]
        customize(model.entitiesByName, model)
        return model
    }
}

/// A coordinator with one in-memory store (an SQLite store in a new temporary file when these files run
/// as the conformance suite, OCDSQLiteConformanceTests) and a private-queue context on it.
struct TestStack {
    /// The store type the suite runs on.
    #if OCD_SQLITE_CONFORMANCE
    static let storeType = NSSQLiteStoreType
    #else
    static let storeType = NSInMemoryStoreType
    #endif

    /// A new store file in a temporary folder of this test run (nil for the in-memory store).
    static func newStoreURL() -> URL? {
        guard storeType == NSSQLiteStoreType else { return nil }
        return ScratchFiles.folder.appendingPathComponent("\(UUID().uuidString).sqlite")
    }

    let model: NSManagedObjectModel
    let coordinator: NSPersistentStoreCoordinator
    let store: NSPersistentStore
    let context: NSManagedObjectContext

    init(model: NSManagedObjectModel = TestModel.make()) throws {
        try self.init(model: model, storeType: Self.storeType, url: Self.newStoreURL(), options: nil)
    }

    /// A stack on a store of `storeType` at `url`.
    init(model: NSManagedObjectModel, storeType: String, url: URL?, options: [AnyHashable: Any]?) throws {
        self.model = model
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        store = try coordinator.addPersistentStore(ofType: storeType, configurationName: nil, at: url, options: options)
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    /// Another context on the same coordinator.
    func newContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @discardableResult
    func insert(_ entityName: String, _ values: [String: Any] = [:], into context: NSManagedObjectContext? = nil) -> NSManagedObject {
        let target = context ?? self.context
        let object = NSEntityDescription.insertNewObject(forEntityName: entityName, into: target)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    func fetch(_ entityName: String, _ format: String? = nil, _ args: Any?..., sortedBy key: String? = nil, in context: NSManagedObjectContext? = nil) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
        if let format { request.predicate = NSPredicate(format: format, argumentArray: args.map { $0 as Any }) }
        if let key { request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)] }
        return try (context ?? self.context).fetch(request)
    }
}

/// Collects the notifications a block of code posts.
final class NotificationRecorder: @unchecked Sendable {
    private(set) var notifications: [Notification] = []
    private var tokens: [NSObjectProtocol] = []

    init(_ names: [Notification.Name], object: AnyObject? = nil) {
        for name in names {
            tokens.append(NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] note in
                self?.notifications.append(note)
            })
        }
    }

    func named(_ name: Notification.Name) -> [Notification] { notifications.filter { $0.name == name } }

    deinit { for token in tokens { NotificationCenter.default.removeObserver(token) } }
}

extension TestModel {
    /// The test model with Employee objects of class ``HookedEmployee``.
    static func hooked(_ customize: ([String: NSEntityDescription], NSManagedObjectModel) -> Void = { _, _ in }) -> NSManagedObjectModel {
        HookedEmployee.register()
        return make { entities, model in
            entities["Employee"]!.managedObjectClassName = HookedEmployee.className
            customize(entities, model)
        }
    }
}

extension TestStack {
    /// A stack whose Employee objects are ``HookedEmployee``s, with a ``HookLog`` on its context.
    static func hooked(_ customize: ([String: NSEntityDescription], NSManagedObjectModel) -> Void = { _, _ in }) throws -> (TestStack, HookLog) {
        let stack = try TestStack(model: TestModel.hooked(customize))
        return (stack, HookLog(on: stack.context))
    }

    /// Another context on the coordinator, with its own log.
    func newHookedContext() -> (NSManagedObjectContext, HookLog) {
        let context = newContext()
        return (context, HookLog(on: context))
    }
}

/// What the hooks of ``HookedEmployee`` objects in one context did, in order, with the context's
/// notifications in between; and what they should do (set per test).
final class HookLog: @unchecked Sendable {
    private(set) var events: [String] = []
    /// Run by `willSave()` of every object of the context.
    var willSave: ((HookedEmployee) -> Void)?
    /// Run by `awakeFromFetch()`.
    var awakeFromFetch: ((HookedEmployee) -> Void)?
    /// Run by `awakeFromInsert()`.
    var awakeFromInsert: ((HookedEmployee) -> Void)?
    private var tokens: [NSObjectProtocol] = []

    /// Attaches a log to `context` (through its `userInfo`) and records its notifications.
    init(on context: NSManagedObjectContext) {
        context.userInfo["hooks"] = self
        let names: [(Notification.Name, String)] = [
            (.NSManagedObjectContextWillSave, "WillSave"), (.NSManagedObjectContextDidSave, "DidSave"),
            (.NSManagedObjectContextDidSaveObjectIDs, "DidSaveObjectIDs"), (.NSManagedObjectContextObjectsDidChange, "ObjectsDidChange"),
        ]
        for (name, label) in names {
            tokens.append(NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { [weak self] _ in
                self?.record("notification \(label)")
            })
        }
    }

    static func of(_ context: NSManagedObjectContext?) -> HookLog? { context?.userInfo["hooks"] as? HookLog }

    func record(_ event: String) { events.append(event) }

    /// The events that start with `prefix`.
    func events(_ prefix: String) -> [String] { events.filter { $0.hasPrefix(prefix) } }

    func clear() { events = [] }

    deinit { for token in tokens { NotificationCenter.default.removeObserver(token) } }
}

/// An Employee class that counts its life-cycle hooks, records what it saw inside them, logs them to
/// its context's ``HookLog`` ("willSave Alice"), and has a `validateName` method.
final class HookedEmployee: NSManagedObject, @unchecked Sendable {
    private(set) var calls: [String: Int] = [:]
    /// Values seen inside hooks, by "hook.what".
    private(set) var seen: [String: Any] = [:]
    private(set) var snapshotEvents: [NSSnapshotEventType] = []
    /// The log of the context the object was in when a hook last ran.
    private var log: HookLog?

    /// Module-qualified, because this file is compiled into two test modules that share one process
    /// (and one class registry): the in-memory suite and the SQLite conformance suite.
    static let className = String(reflecting: HookedEmployee.self)

    static func register() {
        NSManagedObjectModel.registerManagedObjectClass(HookedEmployee.self, forName: className)
    }

    func count(_ hook: String) -> Int { calls[hook] ?? 0 }

    /// The employee's name, read without firing a fault (nil while a fault).
    private var label: String {
        isFault ? "<fault>" : (primitiveValue(forKey: "name") as? String ?? "nil")
    }

    private func hook(_ name: String, logged: Bool = true) {
        calls[name, default: 0] += 1
        if let current = HookLog.of(managedObjectContext) { log = current }
        if logged { log?.record("\(name) \(label)") }
    }

    override func awakeFromInsert() {
        super.awakeFromInsert()
        hook("awakeFromInsert")
        seen["awakeFromInsert.age"] = primitiveValue(forKey: "age")
        seen["awakeFromInsert.active"] = primitiveValue(forKey: "active")
        log?.awakeFromInsert?(self)
    }

    override func awakeFromFetch() {
        super.awakeFromFetch()
        hook("awakeFromFetch")
        seen["awakeFromFetch.isFault"] = isFault
        log?.awakeFromFetch?(self)
    }

    override func awake(fromSnapshotEvents flags: NSSnapshotEventType) {
        super.awake(fromSnapshotEvents: flags)
        hook("awakeFromSnapshotEvents")
        snapshotEvents.append(flags)
    }

    override func willSave() {
        super.willSave()
        hook("willSave")
        seen["willSave.isInserted"] = isInserted
        seen["willSave.isDeleted"] = isDeleted
        log?.willSave?(self)
    }

    override func didSave() {
        super.didSave()
        hook("didSave")
        seen["didSave.isDeleted"] = isDeleted
        seen["didSave.isInserted"] = isInserted
    }

    override func prepareForDeletion() {
        super.prepareForDeletion()
        hook("prepareForDeletion")
        seen["prepareForDeletion.department"] = primitiveValue(forKey: "department") ?? NSNull()
        seen["prepareForDeletion.isDeleted"] = isDeleted
        if let department = primitiveValue(forKey: "department") as? NSManagedObject {
            let members = department.value(forKey: "employees") as? Set<NSManagedObject> ?? []
            seen["prepareForDeletion.inverseHoldsSelf"] = members.contains(self)
        }
    }

    override func willTurnIntoFault() {
        super.willTurnIntoFault()
        hook("willTurnIntoFault")
        seen["willTurnIntoFault.isFault"] = isFault
    }

    override func didTurnIntoFault() {
        super.didTurnIntoFault()
        hook("didTurnIntoFault", logged: false)
        log?.record("didTurnIntoFault")
        seen["didTurnIntoFault.isFault"] = isFault
    }

    override func validateForInsert() throws {
        hook("validateForInsert")
        try super.validateForInsert()
    }

    override func validateForUpdate() throws {
        hook("validateForUpdate")
        try super.validateForUpdate()
    }

    override func validateForDelete() throws {
        hook("validateForDelete")
        try super.validateForDelete()
    }

    override class var managedKeyTable: ManagedKeyTable {
        var table = super.managedKeyTable
        table.validator(key: "name") { (object: HookedEmployee, value: inout Any?) in try object.validateName(&value) }
        return table
    }

    /// Refuses "Nobody" with a custom error and trims surrounding spaces.
    func validateName(_ value: inout Any?) throws {
        calls["validateName", default: 0] += 1
        guard let name = value as? String else { return }
        if name == "Nobody" {
            throw NSError(domain: "HookedEmployee", code: 42, userInfo: [NSLocalizedDescriptionKey: "Nobody is not a name."])
        }
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        if trimmed != name { value = trimmed }
    }
}

/// Saves `values` as one new object of `entityName` through a fresh context and returns its ID.
extension TestStack {
    @discardableResult
    func seed(_ entityName: String, _ values: [String: Any]) throws -> NSManagedObjectID {
        let context = newContext()
        let object = insert(entityName, values, into: context)
        try context.save()
        return object.objectID
    }

    /// What the store holds: `read` applied to every stored object of `entityName` (sorted by `key`),
    /// fetched in a fresh context that lives while `read` runs (objects need their context to fire).
    func stored<T>(_ entityName: String, sortedBy key: String? = nil, _ read: (NSManagedObject) -> T) throws -> [T] {
        let context = newContext()
        return try withExtendedLifetime(context) { try fetch(entityName, sortedBy: key, in: context).map(read) }
    }
}

extension NSManagedObject {
    /// `value(forKey:)` as a String.
    func string(_ key: String) -> String? { value(forKey: key) as? String }
    /// `value(forKey:)` as an Int (stored numbers are `NSNumber`s).
    func int(_ key: String) -> Int? { (value(forKey: key) as? NSNumber)?.intValue }
    /// `value(forKey:)` as a to-one destination.
    func object(_ key: String) -> NSManagedObject? { value(forKey: key) as? NSManagedObject }
    /// `value(forKey:)` of an unordered to-many relationship.
    func objects(_ key: String) -> Set<NSManagedObject> { value(forKey: key) as? Set<NSManagedObject> ?? [] }
}

extension NSManagedObjectContext {
    /// The error `save()` throws, or nil when it succeeds.
    func saveError() -> NSError? {
        do {
            try save()
            return nil
        } catch {
            return error as NSError
        }
    }
}
