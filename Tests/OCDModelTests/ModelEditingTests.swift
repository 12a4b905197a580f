import Foundation
import OCDTestSupport
import Testing
@testable import OCDModel

/// Editing a model in code where Apple's Core Data refuses the edit, copies, or keeps the model
/// consistent (found by an audit of model editing; each test failed or crashed before its fix).
@Suite("Model editing")
struct ModelEditingTests {
    static func attribute(_ name: String, _ type: NSAttributeType = .stringAttributeType) -> NSAttributeDescription {
        ModelDescriptions.attribute(name, type)
    }

    static func entity(_ name: String, _ properties: [NSPropertyDescription] = []) -> NSEntityDescription {
        ModelDescriptions.entity(name, properties)
    }

    /// An entity that leaves the model leaves its configurations: a store of the configuration would
    /// otherwise map it while the metadata recorded no hash for it, and could not be opened again.
    @Test func anEntityRemovedFromTheModelLeavesItsConfigurations() {
        let a = Self.entity("A", [Self.attribute("x")])
        let b = Self.entity("B", [Self.attribute("y")])
        let model = NSManagedObjectModel()
        model.entities = [a, b]
        model.setEntities([a, b], forConfigurationName: "Cloud")
        model.entities = [a]
        #expect(model.entities(forConfigurationName: "Cloud")?.compactMap(\.name) == ["A"])
        #expect(model.configurations == ["Cloud"])

        // Replaced by an edited copy: the copy takes its place, as references by name are resolved again.
        let edited = a.copy() as! NSEntityDescription
        model.entities = [edited]
        #expect(model.entities(forConfigurationName: "Cloud")?.first === edited)
    }

    @Test func aConfigurationTakesOnlyTheModelsEntities() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = NSManagedObjectModel()
            model.entities = [ModelEditingTests.entity("A")]
            model.setEntities([ModelEditingTests.entity("Stranger")], forConfigurationName: "C")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Entities for a configuration must already be in the model"), "stopped with: \(output)")
    }

    /// Apple's Core Data refuses a subentity's property named like an inherited one when the model
    /// becomes immutable; a fetch of the parent would read another column for it in an SQLite store.
    @Test func aRedeclaredInheritedPropertyStopsWhenTheModelIsUsed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let employee = ModelEditingTests.entity("Employee", [ModelEditingTests.attribute("age", .integer16AttributeType)])
            let manager = ModelEditingTests.entity("Manager", [ModelEditingTests.attribute("age", .integer32AttributeType)])
            employee.subentities = [manager]
            let model = NSManagedObjectModel()
            model.entities = [employee, manager]
            model.markInUse()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Property named 'age' in entity 'Manager' conflicts with property inherited from parent entity 'Employee'"),
                "stopped with: \(output)")
    }

    @Test func aModelFileRedeclaringAnInheritedPropertyIsALoadError() throws {
        let url = try temporaryModel(modelXML("""
            <entity name="Employee"><attribute name="age" attributeType="Integer 16"/></entity>
            <entity name="Manager" parentEntity="Employee"><attribute name="age" attributeType="Integer 32"/></entity>
            """))
        #expect {
            try NSManagedObjectModel(validatingContentsOf: url)
        } throws: { error in
            (error as? ModelLoadError)?.problem.contains("Property named 'age' in entity 'Manager' conflicts with property inherited from parent entity 'Employee'") == true
        }
    }

    /// A redeclaration that repeats the inherited property exactly is accepted, as Apple's Core Data
    /// accepts it, and dropped: the subentity inherits the property (one column in a store). Written as
    /// `sub.properties = parent.properties + [extra]` before the two are linked, it is common.
    @Test func anIdenticalRedeclarationIsInheritedInstead() throws {
        let employee = Self.entity("Employee", [Self.attribute("name"), Self.attribute("age", .integer16AttributeType)])
        let manager = Self.entity("Manager", employee.properties + [Self.attribute("level", .integer16AttributeType)])
        #expect(manager.properties.map(\.name) == ["name", "age", "level"])
        employee.subentities = [manager]
        let model = NSManagedObjectModel()
        model.entities = [employee, manager]
        model.markInUse()
        #expect(manager.ownProperties.map(\.name) == ["level"])
        #expect(manager.propertiesByName["age"] === employee.propertiesByName["age"])

        let url = try temporaryModel(modelXML("""
            <entity name="Employee"><attribute name="age" optional="YES" attributeType="Integer 16"/></entity>
            <entity name="Manager" parentEntity="Employee"><attribute name="age" optional="YES" attributeType="Integer 16"/></entity>
            """))
        let loaded = try NSManagedObjectModel(validatingContentsOf: url)
        #expect(loaded.entitiesByName["Manager"]?.ownProperties.isEmpty == true)
    }

    /// A uniqueness constraint on no property, or on a to-many relationship, was accepted and never
    /// enforced: duplicates saved without a conflict. Apple raises.
    @Test func constraintsCoreDataRefusesAreReported() {
        let company = Self.entity("Company", [Self.attribute("name")])
        let employees = NSRelationshipDescription()
        employees.name = "staff"
        employees.destinationEntity = company
        employees.minCount = 0
        employees.maxCount = 0
        company.properties.append(employees)
        company.uniquenessConstraints = [["nmae"], ["staff"], ["name"]]
        let model = NSManagedObjectModel()
        model.entities = [company]
        let reasons = model.usageProblems().map(\.reason)
        #expect(reasons == [
            "Can't find property named 'nmae' for a uniqueness constraint of entity 'Company'",
            "Cannot create unique constraints for to-many relationships (Company.staff).",
        ])
        #expect(model.consistencyProblems().contains("error: Company: Can't find property named 'nmae' for a uniqueness constraint of entity 'Company'"))
    }

    @Test func aConstraintOnNoPropertyStopsWhenTheModelIsUsed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let company = ModelEditingTests.entity("Company", [ModelEditingTests.attribute("name")])
            company.uniquenessConstraints = [["emial"]]
            let model = NSManagedObjectModel()
            model.entities = [company]
            model.markInUse()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Can't find property named 'emial'"), "stopped with: \(output)")
    }

    /// Inherited properties, property descriptions and composite elements are what constraints may name.
    @Test func constraintsOnInheritedPropertiesAndDescriptionsAreAccepted() {
        let name = Self.attribute("name")
        let person = Self.entity("Person", [name])
        let employee = Self.entity("Employee", [Self.attribute("badge")])
        person.subentities = [employee]
        employee.uniquenessConstraints = [["name", "badge"]]
        person.uniquenessConstraints = [[name]]
        let model = NSManagedObjectModel()
        model.entities = [person, employee]
        #expect(model.usageProblems().isEmpty)
        model.markInUse()
        #expect(!model.isEditable)
    }

    /// One attribute description put on two entities: Apple's Core Data adds a copy to the second and
    /// leaves the original with the first; this project stopped.
    @Test func aPropertyOfAnotherEntityIsAddedAsACopy() {
        let created = Self.attribute("created", .dateAttributeType)
        let a = Self.entity("A", [created])
        let b = Self.entity("B", [created])
        #expect(created.entity === a)
        let copy = b.attributesByName["created"]
        #expect(copy != nil && copy !== created)
        #expect(copy?.entity === b)
        #expect(copy?.attributeType == .dateAttributeType)
        #expect(a.attributesByName["created"] === created)
    }

    @Test func anEntityCannotHaveTwoSuperentities() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = ModelEditingTests.entity("A"), b = ModelEditingTests.entity("B"), c = ModelEditingTests.entity("C")
            a.subentities = [c]
            b.subentities = [c]
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Can't add an entity to multiple superentities"), "stopped with: \(output)")
    }

    @Test func anEntityCannotBeItsOwnSubentity() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = ModelEditingTests.entity("A")
            a.subentities = [a]
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Can't set superentity of self to self"), "stopped with: \(output)")
    }

    @Test func anEntityCannotBeASubentityOfItsOwnSubentity() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = ModelEditingTests.entity("A"), b = ModelEditingTests.entity("B")
            a.subentities = [b]
            b.subentities = [a]
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("a subentity of its own subentity"), "stopped with: \(output)")
    }

    /// Copies of a model's entities, each made with `copy()` (which brings copies of its subentities),
    /// make a model whose hierarchy is its own entities: the subentity copies outside it give way to the
    /// listed entities of their names.
    @Test func aModelOfEntityCopiesKeepsItsHierarchyToItsOwnEntities() {
        let person = Self.entity("Person", [Self.attribute("name")])
        let employee = Self.entity("Employee", [Self.attribute("badge")])
        person.subentities = [employee]
        let model = NSManagedObjectModel()
        model.entities = [person, employee]
        let other = NSManagedObjectModel()
        other.entities = model.entities.map { $0.copy() as! NSEntityDescription }
        let copies = other.entitiesByName
        #expect(copies["Person"]?.subentities.count == 1)
        #expect(copies["Person"]?.subentities.first === copies["Employee"])
        #expect(copies["Employee"]?.superentity === copies["Person"])
        #expect(other.entityVersionHashesByName == model.entityVersionHashesByName)
    }

    /// Moving a subentity is still possible: take it from its parent first.
    @Test func aSubentityMovesOnceItsParentLetsItGo() {
        let a = Self.entity("A"), b = Self.entity("B"), c = Self.entity("C")
        a.subentities = [c]
        a.subentities = []
        b.subentities = [c]
        #expect(c.superentity === b)
        #expect(a.subentities.isEmpty)
        // Setting the same list again keeps it.
        b.subentities = [c]
        #expect(b.subentities.map(\.name) == ["C"])
    }

    /// An entity's copy takes copies of its subentities and no parent, as Apple's does. It took no
    /// subentities and kept its parent's name, so joining another model made it a subentity of whatever
    /// entity there had that name.
    @Test func anEntityCopyTakesItsSubentitiesNotItsParent() throws {
        let person = Self.entity("Person", [Self.attribute("name")])
        let employee = Self.entity("Employee", [Self.attribute("badge")])
        let manager = Self.entity("Manager", [Self.attribute("level", .integer16AttributeType)])
        person.subentities = [employee]
        employee.subentities = [manager]
        let model = NSManagedObjectModel()
        model.entities = [person, employee, manager]

        let employeeCopy = try #require(employee.copy() as? NSEntityDescription)
        #expect(employeeCopy.superentity == nil)
        #expect(employeeCopy.subentities.compactMap(\.name) == ["Manager"])
        let managerCopy = try #require(employeeCopy.subentities.first)
        #expect(managerCopy !== manager && managerCopy.superentity === employeeCopy)
        #expect(managerCopy.attributesByName["level"] != nil && managerCopy.attributesByName["badge"] != nil)
        #expect(employee.subentities.first === manager, "the original keeps its own")

        // Another model with an unrelated entity named like the original's parent.
        let other = NSManagedObjectModel()
        other.entities = [Self.entity("Person"), employeeCopy, managerCopy]
        #expect(employeeCopy.superentity == nil)
        #expect(managerCopy.superentity === employeeCopy)

        // Copying the whole model still rebuilds its hierarchy.
        let modelCopy = try #require(model.copy() as? NSManagedObjectModel)
        #expect(modelCopy.entities.compactMap(\.name) == ["Person", "Employee", "Manager"])
        #expect(modelCopy.entitiesByName["Manager"]?.superentity === modelCopy.entitiesByName["Employee"])
        #expect(modelCopy.entitiesByName["Employee"]?.superentity === modelCopy.entitiesByName["Person"])
        #expect(modelCopy.entityVersionHashesByName == model.entityVersionHashesByName)
    }
}
