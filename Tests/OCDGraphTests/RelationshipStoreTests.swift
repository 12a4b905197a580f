import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

// Relationships as the stores keep them: within one store, and without members that are gone.

@Suite("Relationships: stores")
struct RelationshipStoreTests {
    /// "Core Data does not let you create relationships that cross stores": the save fails with
    /// `NSManagedObjectExternalRelationshipError` before anything is written (a store dropped the link,
    /// or kept one side of it).
    @Test func aRelationshipAcrossStoresFailsTheSave() throws {
        let stack = try TestStack()
        let second = try stack.coordinator.addPersistentStore(ofType: TestStack.storeType, configurationName: nil, at: TestStack.newStoreURL())
        let department = stack.insert("Department", ["name": "R&D"])
        stack.context.assign(department, to: second)
        let ann = stack.insert("Employee", ["name": "Ann", "department": department])
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSManagedObjectExternalRelationshipError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "department" || error.userInfo[NSValidationKeyErrorKey] as? String == "employees")
        #expect(stack.context.hasChanges && ann.objectID.isTemporaryID)
        // Within one store, the same objects save.
        stack.context.assign(ann, to: second)
        try stack.context.save()
        let reader = stack.newContext()
        #expect(try reader.existingObject(with: ann.objectID).object("department")?.objectID == department.objectID)
    }

    /// A member deleted without its owners hearing (no inverse, or a no-action many-to-many) leaves their
    /// stored lists, in memory as in an SQLite join table.
    @Test func aDeletedManyToManyMemberLeavesTheStoredLists() throws {
        let stack = try TestStack(model: TestModel.make { entities, _ in
            entities["Project"]!.relationshipsByName["members"]!.deleteRule = .noActionDeleteRule
        })
        let project = stack.insert("Project", ["title": "p"])
        let ann = stack.insert("Employee", ["name": "Ann"])
        ann.mutableSetValue(forKey: "projects").add(project)
        try stack.context.save()
        stack.context.delete(project)
        try stack.context.save()
        let reader = stack.newContext()
        let stored = try reader.existingObject(with: ann.objectID)
        #expect(stored.objects("projects").isEmpty)
        #expect(!reader.hasChanges)
    }
}

/// A context holding a many-to-many list from before another context deleted a member saves the list
/// back whole; the member must not come back. SQLite's reads join the rows and never return it; the
/// in-memory store handed it out to every later reader.
@Suite struct StaleMemberListTests {
    @Test func aStaleManyToManyListDoesNotBringBackADeletedMember() throws {
        let stack = try TestStack(model: TestModel.make { entities, _ in
            entities["Employee"]!.relationshipsByName["projects"]!.deleteRule = .noActionDeleteRule
        })
        let project = stack.insert("Project", ["title": "p"])
        let ann = stack.insert("Employee", ["name": "Ann"]), bob = stack.insert("Employee", ["name": "Bob"])
        project.mutableSetValue(forKey: "members").addObjects(from: [ann, bob])
        try stack.context.save()
        let other = stack.newContext()
        try withExtendedLifetime(other) {
            other.delete(try other.existingObject(with: bob.objectID))
            try other.save()
        }
        #expect(project.objects("members").count == 2, "this context still lists Bob")
        project.setValue("renamed", forKey: "title")
        try stack.context.save()
        let reader = stack.newContext()
        try withExtendedLifetime(reader) {
            let members = try reader.existingObject(with: project.objectID).objects("members")
            #expect(members.map(\.objectID) == [ann.objectID])
        }
    }
}
