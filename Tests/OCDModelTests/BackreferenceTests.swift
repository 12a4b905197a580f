import Foundation
import Testing
@testable import OCDModel

// Decision D24: back references from properties, subentities and fetch indexes to their entity behave as
// weak references (nil once the entity is gone) without giving the entity a side table.

@Suite("Back references answer nil once their target is gone")
struct BackreferenceTests {
    @Test func aPropertyKeepsItsEntityOnlyWhileTheEntityLives() {
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        weak var released: NSEntityDescription?
        do {
            let entity = NSEntityDescription()
            entity.name = "Person"
            entity.properties = [name]
            released = entity
            #expect(name.entity === entity)
        }
        #expect(released == nil)
        #expect(name.entity == nil)
    }

    @Test func relationshipsAndSubentitiesLetTheirTargetsGo() {
        let employee = NSEntityDescription()
        employee.name = "Employee"
        let department = NSRelationshipDescription()
        department.name = "department"
        employee.properties = [department]
        weak var releasedDepartment: NSEntityDescription?
        weak var releasedPerson: NSEntityDescription?
        do {
            let departmentEntity = NSEntityDescription()
            departmentEntity.name = "Department"
            let employees = NSRelationshipDescription()
            employees.name = "employees"
            employees.destinationEntity = employee
            departmentEntity.properties = [employees]
            department.destinationEntity = departmentEntity
            department.inverseRelationship = employees
            employees.inverseRelationship = department

            let person = NSEntityDescription()
            person.name = "Person"
            person.subentities = [employee]

            #expect(department.destinationEntity === departmentEntity)
            #expect(department.inverseRelationship === employees)
            #expect(employee.superentity === person)
            releasedDepartment = departmentEntity
            releasedPerson = person
        }
        #expect(releasedDepartment == nil)
        #expect(releasedPerson == nil)
        #expect(department.destinationEntity == nil)
        #expect(department.inverseRelationship == nil)
        #expect(employee.superentity == nil)
        // The names stay, as they do when a model file names a destination that is not loaded.
        #expect(department.destinationEntityName == "Department")
    }

    @Test func aFetchIndexLetsItsEntityGo() {
        let index = NSFetchIndexDescription(name: "byName", elements: [])
        weak var released: NSEntityDescription?
        do {
            let entity = NSEntityDescription()
            entity.name = "Person"
            entity.indexes = [index]
            #expect(index.entity === entity)
            released = entity
        }
        #expect(released == nil)
        #expect(index.entity == nil)
    }

    /// Loads racing with the last release either see the object whole or see nil: never a freed object.
    @Test func loadsRacingWithTheLastReleaseNeverSeeAFreedObject() async {
        final class Target: @unchecked Sendable {
            let reference = Backreference()
            let marker = 0x5EED
            init() { reference.attach(self) }
            deinit { reference.clear() }
        }
        for _ in 0..<200 {
            var target: Target? = Target()
            let reference = target!.reference
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        for _ in 0..<200 {
                            if let loaded = reference.load(as: Target.self) {
                                #expect(loaded.marker == 0x5EED)
                            }
                        }
                    }
                }
                target = nil
            }
            #expect(target == nil)
            #expect(reference.load(as: Target.self) == nil)
        }
    }
}
