import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// A model built in code, covering every relationship kind and delete rule the graph tests need:
///
/// - Company ⇄ departments (to-many, cascade) / Department.company (to-one, nullify)
/// - Department ⇄ employees (to-many, nullify) / Employee.department (to-one, nullify)
/// - Employee ⇄ tasks (ordered to-many, cascade) / Task.owner (to-one, nullify)
/// - Employee ⇄ projects (many-to-many, nullify both sides)
/// - Employee ⇄ badge (one-to-one, cascade) / Badge.holder (to-one, nullify)
/// - Manager is a subentity of Employee with reports (to-many, deny) / Employee.manager
/// - Employee has constraints: name required, age 0...150, email pattern, salary ≥ 0 (string warning).
enum TestModel {
    static func make() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, defaultValue: Any? = nil, transient: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = optional
            attribute.defaultValue = defaultValue
            attribute.isTransient = transient
            return attribute
        }
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
        func entity(_ name: String) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = "NSManagedObject"
            return entity
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

        let name = attribute("name", .stringAttributeType, optional: false)
        let age = attribute("age", .integer16AttributeType, defaultValue: 30)
        age.setValidationPredicates([NSPredicate(format: "SELF >= 0"), NSPredicate(format: "SELF <= 150")], withValidationWarnings: ["AgeTooSmall", "AgeTooLarge"])
        let email = attribute("email", .stringAttributeType)
        let salary = attribute("salary", .doubleAttributeType, defaultValue: 0.0)
        salary.setValidationPredicates([NSPredicate(format: "SELF >= 0")], withValidationWarnings: ["SalaryNegative"])
        let cache = attribute("cache", .stringAttributeType, transient: true)

        company.properties = [attribute("name", .stringAttributeType), companyDepartments]
        department.properties = [attribute("name", .stringAttributeType), attribute("budget", .integer64AttributeType), departmentCompany, departmentEmployees]
        employee.properties = [name, age, email, salary, cache, attribute("hired", .dateAttributeType), attribute("active", .booleanAttributeType, defaultValue: true),
                               employeeDepartment, employeeTasks, employeeProjects, employeeBadge, employeeManager]
        manager.properties = [attribute("level", .integer32AttributeType, defaultValue: 1), managerReports]
        task.properties = [attribute("title", .stringAttributeType), attribute("done", .booleanAttributeType, defaultValue: false), taskOwner]
        project.properties = [attribute("title", .stringAttributeType), projectMembers]
        badge.properties = [attribute("number", .integer32AttributeType), badgeHolder]

        let model = NSManagedObjectModel()
        model.entities = [company, department, employee, manager, task, project, badge]
        return model
    }
}

/// A coordinator with one in-memory store and a private-queue context on it.
struct TestStack {
    let model: NSManagedObjectModel
    let coordinator: NSPersistentStoreCoordinator
    let store: NSPersistentStore
    let context: NSManagedObjectContext

    init(model: NSManagedObjectModel = TestModel.make()) throws {
        self.model = model
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        store = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    /// Another context on the same coordinator.
    func newContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

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
