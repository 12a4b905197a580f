import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate

/// `mergeChanges(fromContextDidSave:)` and its relatives: what one context saved reaches another's
/// registered objects (spec: "updates refresh registered objects, inserts become available, deletes are
/// removed").
@Suite struct MergeChangesTests {
    /// Saves `context` and returns its `NSManagedObjectContextDidSave` notification.
    private func saveNotification(_ context: NSManagedObjectContext) throws -> Notification {
        let recorder = NotificationRecorder([.NSManagedObjectContextDidSave], object: context)
        try context.save()
        return try #require(recorder.notifications.first)
    }

    @Test func updatesInsertsAndDeletesReachTheOtherContext() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let bobID = try stack.seed("Employee", ["name": "Bob", "age": 40])
        let ann = stack.context.object(with: annID)
        #expect(ann.int("age") == 30)
        let bob = stack.context.object(with: bobID)
        _ = bob.string("name")

        let other = stack.newContext()
        other.object(with: annID).setValue(31, forKey: "age")
        other.delete(other.object(with: bobID))
        let cy = stack.insert("Employee", ["name": "Cy"], into: other)
        let saved = try saveNotification(other)

        let changes = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        stack.context.mergeChanges(fromContextDidSave: saved)
        #expect(ann.int("age") == 31)
        #expect(!ann.isUpdated && !stack.context.hasChanges)
        #expect(stack.context.registeredObject(for: bobID) == nil)
        #expect(bob.managedObjectContext == nil && !bob.isDeleted)
        let note = try #require(changes.notifications.last)
        let info = note.userInfo ?? [:]
        #expect((info[NSRefreshedObjectsKey] as? Set<NSManagedObject>)?.map(\.objectID) == [annID])
        #expect((info[NSDeletedObjectsKey] as? Set<NSManagedObject>)?.map(\.objectID) == [bobID])
        #expect((info[NSInsertedObjectsKey] as? Set<NSManagedObject>)?.map(\.objectID) == [cy.objectID])
        #expect(changes.notifications.count == 1)
        let names = try stack.fetch("Employee", sortedBy: "name").map { $0.string("name") }
        #expect(names == ["Ann", "Cy"])
        // The merged deletion is no pending change: a save has nothing to do.
        #expect(stack.context.deletedObjects.isEmpty)
        try stack.context.save()
    }

    @Test func localChangesSurviveTheMergeAndSaveWithoutAConflict() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let ann = stack.context.object(with: annID)
        ann.setValue("ann@x", forKey: "email")

        let other = stack.newContext()
        other.object(with: annID).setValue(31, forKey: "age")
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(ann.int("age") == 31 && ann.string("email") == "ann@x")
        #expect(ann.isUpdated && stack.context.hasChanges)
        #expect(Set(ann.changedValues().keys) == ["email"])
        try stack.context.save()
        #expect(try stack.stored("Employee") { "\($0.string("name")!) \($0.int("age")!) \($0.string("email") ?? "-")" } == ["Ann 31 ann@x"])
    }

    /// Saves a project "P" and an employee for each of `names`, the first `members` of them its members.
    private func seedProject(_ stack: TestStack, people names: [String], members: Int) throws -> (project: NSManagedObjectID, people: [NSManagedObjectID]) {
        let seeding = stack.newContext()
        let project = stack.insert("Project", ["title": "P"], into: seeding)
        let people = names.map { stack.insert("Employee", ["name": $0], into: seeding) }
        project.setValue(Set(people.prefix(members)), forKey: "members")
        try seeding.save()
        return (project.objectID, people.map(\.objectID))
    }

    /// Adds the employee `person` to the project's members as `context` sees them, or removes it.
    private func join(_ project: NSManagedObjectID, _ person: NSManagedObjectID, in context: NSManagedObjectContext, leaving: Bool = false) {
        let members = context.object(with: project).mutableSetValue(forKey: "members")
        if leaving { members.remove(context.object(with: person)) } else { members.add(context.object(with: person)) }
    }

    private func memberNames(_ project: NSManagedObject) -> Set<String> { Set(project.objects("members").compactMap { $0.string("name") }) }

    /// A to-many relationship changed in both contexts: the merge re-applies this context's added and
    /// removed members over the stored ones, so the other context's additions are not lost by the next
    /// save (they were when the whole local set was kept).
    @Test func aToManyRelationshipChangedInBothContextsKeepsBothContextsChanges() throws {
        let stack = try TestStack()
        let (projectID, ids) = try seedProject(stack, people: ["Ann", "Bob", "Cy", "Di"], members: 2)
        let local = stack.context.object(with: projectID)
        #expect(local.objects("members").count == 2)
        // Here: Cy joins and Ann leaves. There: Di joins.
        join(projectID, ids[2], in: stack.context)
        join(projectID, ids[0], in: stack.context, leaving: true)
        let other = stack.newContext()
        join(projectID, ids[3], in: other)
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))

        #expect(memberNames(local) == ["Bob", "Cy", "Di"])
        #expect(local.isUpdated)
        try stack.context.save()
        #expect(try stack.stored("Project", memberNames) == [["Bob", "Cy", "Di"]])
        #expect(try stack.stored("Employee", sortedBy: "name") { $0.objects("projects").count } == [0, 1, 1, 1])
    }

    /// An ordered relationship keeps this context's order for its members, the other context's new
    /// members after them; a refresh that merges changes does the same.
    @Test func anOrderedRelationshipKeepsItsOrderAndGainsTheOtherContextsMembers() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let ann = stack.insert("Employee", ["name": "Ann"], into: seeding)
        let tasks = ["a", "b", "c", "d"].map { stack.insert("Task", ["title": $0], into: seeding) }
        ann.setValue(NSOrderedSet(array: [tasks[0], tasks[1]]), forKey: "tasks")
        try seeding.save()
        let ids = tasks.map(\.objectID)

        let local = stack.context.object(with: ann.objectID)
        func titles() -> [String] {
            (local.value(forKey: "tasks") as? NSOrderedSet)?.array.compactMap { ($0 as? NSManagedObject)?.string("title") } ?? []
        }
        #expect(titles() == ["a", "b"])
        local.mutableOrderedSetValue(forKey: "tasks").insert(stack.context.object(with: ids[2]), at: 0)
        let other = stack.newContext()
        other.object(with: ids[3]).setValue(other.object(with: ann.objectID), forKey: "owner")
        try other.save()
        stack.context.refresh(local, mergeChanges: true)
        #expect(titles() == ["c", "a", "b", "d"])
        try stack.context.save()
        #expect(try stack.stored("Task", sortedBy: "title") { $0.object("owner")?.string("name") } == ["Ann", "Ann", "Ann", "Ann"])
    }

    /// A reorder by the other context is kept when this context only added members: each addition goes
    /// after the member it follows here. One this context reordered keeps its own order.
    @Test func anOrderedRelationshipTakesTheOtherContextsReorderWhenThisOneOnlyAdded() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let ann = stack.insert("Employee", ["name": "Ann"], into: seeding)
        let tasks = ["a", "b", "c", "d", "e"].map { stack.insert("Task", ["title": $0], into: seeding) }
        ann.setValue(NSOrderedSet(array: Array(tasks[0..<3])), forKey: "tasks")
        try seeding.save()
        let ids = tasks.map(\.objectID)
        let local = stack.context.object(with: ann.objectID)
        func titles(_ object: NSManagedObject) -> [String] {
            (object.value(forKey: "tasks") as? NSOrderedSet)?.array.compactMap { ($0 as? NSManagedObject)?.string("title") } ?? []
        }
        #expect(titles(local) == ["a", "b", "c"])
        local.mutableOrderedSetValue(forKey: "tasks").insert(stack.context.object(with: ids[3]), at: 1)
        let other = stack.newContext()
        other.object(with: ann.objectID).mutableOrderedSetValue(forKey: "tasks").moveObjects(at: [2], to: 0)
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(titles(local) == ["c", "a", "d", "b"])

        // Reordered here too: this context's order wins for its members.
        local.mutableOrderedSetValue(forKey: "tasks").moveObjects(at: [3], to: 0)
        #expect(titles(local) == ["b", "c", "a", "d"])
        let third = stack.newContext()
        third.object(with: ann.objectID).mutableOrderedSetValue(forKey: "tasks").add(third.object(with: ids[4]))
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(third))
        #expect(titles(local) == ["b", "c", "a", "d", "e"])
        try stack.context.save()
        let fresh = stack.newContext()
        #expect(titles(try fresh.existingObject(with: ann.objectID)) == ["b", "c", "a", "d", "e"])
    }

    /// Changes that end where the store already is leave nothing to save, in whatever order either
    /// context added the members.
    @Test func aToManyChangeTheOtherContextAlsoMadeLeavesNothingChanged() throws {
        let stack = try TestStack()
        let (projectID, ids) = try seedProject(stack, people: ["Ann", "Bob"], members: 0)
        let local = stack.context.object(with: projectID)
        join(projectID, ids[1], in: stack.context)
        join(projectID, ids[0], in: stack.context)
        let other = stack.newContext()
        join(projectID, ids[0], in: other)
        join(projectID, ids[1], in: other)
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(local.objects("members").count == 2)
        #expect(local.changedValues()["members"] == nil)
    }

    /// A save makes the saved members the ones later changes are counted from: a member removed and
    /// saved here, then added back there, is not removed again by the merge.
    @Test func aSaveStartsTheChangesAMergeReappliesAfresh() throws {
        let stack = try TestStack()
        let (projectID, ids) = try seedProject(stack, people: ["Ann", "Bob", "Cy"], members: 2)
        let local = stack.context.object(with: projectID)
        join(projectID, ids[0], in: stack.context, leaving: true)
        try stack.context.save()

        let other = stack.newContext()
        join(projectID, ids[0], in: other)
        let notification = try saveNotification(other)
        join(projectID, ids[2], in: stack.context)
        stack.context.mergeChanges(fromContextDidSave: notification)
        #expect(memberNames(local) == ["Ann", "Bob", "Cy"])
    }

    /// A member the other context added but this one deleted does not come back: the save that deletes
    /// it leaves no reference to it.
    @Test func aNewcomerDeletedHereStaysOut() throws {
        let stack = try TestStack()
        let (projectID, ids) = try seedProject(stack, people: ["Ann", "Cy", "Di"], members: 1)
        let local = stack.context.object(with: projectID)
        _ = local.objects("members")
        stack.context.delete(stack.context.object(with: ids[2]))
        join(projectID, ids[1], in: stack.context)

        let other = stack.newContext()
        join(projectID, ids[2], in: other)
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(memberNames(local) == ["Ann", "Cy"])
        try stack.context.save()
        #expect(try stack.stored("Project", memberNames) == [["Ann", "Cy"]])
    }

    @Test func aDeletionRunsTheDeleteRulesOfTheOtherContextsObjects() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let department = stack.insert("Department", ["name": "R&D"], into: seeding)
        let annSeed = stack.insert("Employee", ["name": "Ann"], into: seeding)
        let bobSeed = stack.insert("Employee", ["name": "Bob"], into: seeding)
        department.setValue(Set([annSeed, bobSeed]), forKey: "employees")
        try seeding.save()

        let local = stack.context.object(with: department.objectID)
        #expect(local.objects("employees").count == 2)
        // Realized here, so that its relationship to the department is loaded too.
        let bob = stack.context.object(with: bobSeed.objectID)
        #expect(bob.object("department") === local)
        let other = stack.newContext()
        other.delete(other.object(with: bobSeed.objectID))
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(local.objects("employees").map(\.objectID) == [annSeed.objectID])
        #expect(!stack.context.hasChanges)
    }

    /// The other context moved a task to Bob, then deleted Ann, whose tasks cascade. Ann's relationships
    /// here are out of date (the task is still hers): the merge must not cascade through them.
    @Test func aMergedDeletionDoesNotCascadeThroughOutOfDateRelationships() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let ann = stack.insert("Employee", ["name": "Ann"], into: seeding)
        let bob = stack.insert("Employee", ["name": "Bob"], into: seeding)
        let task = stack.insert("Task", ["title": "T", "owner": ann], into: seeding)
        try seeding.save()
        let localAnn = stack.context.object(with: ann.objectID)
        #expect(localAnn.value(forKey: "tasks") is NSOrderedSet)
        let localTask = stack.context.object(with: task.objectID)
        #expect(localTask.object("owner") === localAnn)

        let other = stack.newContext()
        other.object(with: task.objectID).setValue(other.object(with: bob.objectID), forKey: "owner")
        other.delete(other.object(with: ann.objectID))
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(stack.context.deletedObjects.isEmpty)
        #expect(localTask.object("owner")?.objectID == bob.objectID)
        #expect(!stack.context.hasChanges)
        try stack.context.save()
        #expect(try stack.stored("Task") { $0.string("title") } == ["T"])
    }

    /// A deleted object that is only a fault here still leaves the relationships of the objects that
    /// point to it, even those with unsaved changes of their own (which a refresh keeps).
    @Test func aDeletedFaultLeavesTheRelationshipsThatHoldIt() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let department = stack.insert("Department", ["name": "R&D"], into: seeding)
        let ann = stack.insert("Employee", ["name": "Ann", "department": department], into: seeding)
        let bob = stack.insert("Employee", ["name": "Bob", "department": department], into: seeding)
        try seeding.save()
        let local = stack.context.object(with: department.objectID)
        let members = local.objects("employees")
        #expect(members.count == 2 && members.allSatisfy { $0.isFault })
        let cy = stack.insert("Employee", ["name": "Cy", "department": local])

        let other = stack.newContext()
        other.delete(other.object(with: bob.objectID))
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(Set(local.objects("employees").map(\.objectID)) == [ann.objectID, cy.objectID])
        try stack.context.save()
        let names = try stack.stored("Department") { Set($0.objects("employees").compactMap { $0.string("name") }) }
        #expect(names == [["Ann", "Cy"]])
    }

    /// A task inserted here for an employee the other context deleted: Employee.tasks cascades, and the
    /// task exists nowhere else, so it goes with her.
    @Test func anObjectInsertedHereGoesWithTheDeletedObjectItsInverseCascadesFrom() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann"])
        let bobID = try stack.seed("Employee", ["name": "Bob"])
        let ann = stack.context.object(with: annID)
        let doomed = stack.insert("Task", ["title": "T", "owner": ann])
        let kept = stack.insert("Task", ["title": "U", "reviewer": ann, "owner": stack.context.object(with: bobID)])
        let other = stack.newContext()
        other.delete(other.object(with: annID))
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(doomed.managedObjectContext == nil && !stack.context.insertedObjects.contains(doomed))
        // Task.reviewer's inverse (reviewedTasks) nullifies: the task stays, without its reviewer.
        #expect(kept.isInserted && kept.object("reviewer") == nil)
        try stack.context.save()
        #expect(try stack.stored("Task") { $0.string("title") } == ["U"])
    }

    /// A link the store no longer counts (Task.reviewer has no-action rules, so the other context's
    /// deletion of the task changed nobody else): the reviewer lets go of it and stays unchanged.
    @Test func lettingGoOfADeletedObjectLeavesAnUnchangedObjectUnchanged() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let ann = stack.insert("Employee", ["name": "Ann"], into: seeding)
        let task = stack.insert("Task", ["title": "T", "reviewer": ann], into: seeding)
        try seeding.save()
        let localAnn = stack.context.object(with: ann.objectID)
        #expect(localAnn.objects("reviewedTasks").count == 1)
        let changes = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        let other = stack.newContext()
        other.delete(other.object(with: task.objectID))
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(localAnn.objects("reviewedTasks").isEmpty)
        #expect(!localAnn.isUpdated && !stack.context.hasChanges && localAnn.changedValues().isEmpty)
        // Observers still hear that it changed.
        #expect((changes.notifications.last?.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject>)?.contains(localAnn) == true)
    }

    /// A merged deletion of a realized object calls its `prepareForDeletion()` as `delete(_:)` would:
    /// once, with the object already deleted.
    @Test func aRealizedMergedDeletionHearsOfIt() throws {
        let (stack, _) = try TestStack.hooked()
        let annID = try stack.seed("Employee", ["name": "Ann"])
        let ann = try #require(stack.context.object(with: annID) as? HookedEmployee)
        _ = ann.string("name")
        let other = stack.newContext()
        other.delete(other.object(with: annID))
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(ann.count("prepareForDeletion") == 1)
        #expect(ann.seen["prepareForDeletion.isDeleted"] as? Bool == true)
    }

    /// A saved task moved here to an employee the other context deleted: her tasks cascade, and the link
    /// is this context's own, so the task is deleted here as `delete(_:)` of her would delete it.
    @Test func anObjectLinkedHereToADeletedOneCascadesWithIt() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let ann = stack.insert("Employee", ["name": "Ann"], into: seeding)
        let bob = stack.insert("Employee", ["name": "Bob"], into: seeding)
        let task = stack.insert("Task", ["title": "T", "owner": bob], into: seeding)
        try seeding.save()
        let localTask = stack.context.object(with: task.objectID)
        localTask.setValue(stack.context.object(with: ann.objectID), forKey: "owner")
        let other = stack.newContext()
        other.delete(other.object(with: ann.objectID))
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(localTask.isDeleted)
        try stack.context.save()
        #expect(try stack.stored("Task") { $0.string("title") }.isEmpty)
    }

    /// An object deleted here and updated there: the pending deletion is kept, and saves against the
    /// version the other context wrote (no optimistic-locking conflict).
    @Test func aPendingDeletionSavesAfterTheObjectWasUpdatedElsewhere() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let ann = stack.context.object(with: annID)
        stack.context.delete(ann)
        let other = stack.newContext()
        other.object(with: annID).setValue(31, forKey: "age")
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(ann.isDeleted && stack.context.deletedObjects.count == 1)
        try stack.context.save()
        #expect(try stack.stored("Employee") { $0.string("name") }.isEmpty)
    }

    /// The IDs of a save notification's `…ObjectIDs` variant merge as well.
    @Test func theObjectIDsNotificationMergesToo() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let ann = stack.context.object(with: annID)
        #expect(ann.int("age") == 30)
        let other = stack.newContext()
        other.object(with: annID).setValue(36, forKey: "age")
        let recorder = NotificationRecorder([.NSManagedObjectContextDidSaveObjectIDs], object: other)
        try other.save()
        stack.context.mergeChanges(fromContextDidSave: try #require(recorder.notifications.first))
        #expect(ann.int("age") == 36)
    }

    /// A second coordinator on the same file: its IDs are taken by their URIs.
    @Test func idsOfAnotherCoordinatorMergeByTheirURIs() throws {
        guard TestStack.storeType == NSSQLiteStoreType else { return }
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let ann = stack.context.object(with: annID)
        #expect(ann.int("age") == 30)
        let second = try TestStack(model: stack.model, storeType: NSSQLiteStoreType, url: stack.store.url, options: nil)
        let theirs = try #require(try second.fetch("Employee").first)
        theirs.setValue(37, forKey: "age")
        let cy = second.insert("Employee", ["name": "Cy"])
        try second.context.save()
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: [theirs.objectID], NSInsertedObjectsKey: [cy.objectID]],
                                            into: [stack.context])
        #expect(ann.int("age") == 37)
        #expect(try stack.fetch("Employee", sortedBy: "name").compactMap { $0.string("name") } == ["Ann", "Cy"])
    }

    @Test func aFaultTheOtherContextUpdatedFiresWithTheNewValues() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        // A fault holding the row it was fetched with.
        let fault = try #require(try stack.fetch("Employee").first)
        #expect(fault.isFault)
        let other = stack.newContext()
        other.object(with: annID).setValue(32, forKey: "age")
        stack.context.mergeChanges(fromContextDidSave: try saveNotification(other))
        #expect(fault.isFault)
        #expect(fault.int("age") == 32)
    }

    @Test func remoteChangesMergeByURI() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let ann = stack.context.object(with: annID)
        #expect(ann.int("age") == 30)
        let other = stack.newContext()
        other.object(with: annID).setValue(33, forKey: "age")
        try other.save()
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: [annID.uriRepresentation()]], into: [stack.context])
        #expect(ann.int("age") == 33)
        #expect(!stack.context.hasChanges)
    }

    @Test func automaticMergingFollowsTheOtherContextsSaves() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let context = stack.context
        let ann = context.object(with: annID)
        #expect(ann.int("age") == 30)
        #expect(!context.automaticallyMergesChangesFromParent)
        context.automaticallyMergesChangesFromParent = true
        #expect(context.automaticallyMergesChangesFromParent)

        let other = stack.newContext()
        other.object(with: annID).setValue(34, forKey: "age")
        try other.save()
        // The merge runs on the context's queue: a block queued after it sees it done.
        context.performAndWait {}
        #expect(ann.int("age") == 34)

        context.automaticallyMergesChangesFromParent = false
        other.object(with: annID).setValue(35, forKey: "age")
        try other.save()
        context.performAndWait {}
        #expect(ann.int("age") == 34)
    }

    /// A context that merges automatically and is then released leaves no observer behind: later saves
    /// of other contexts run as before.
    @Test func aReleasedAutomaticallyMergingContextStopsListening() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        do {
            let merging = stack.newContext()
            merging.automaticallyMergesChangesFromParent = true
            _ = merging.object(with: annID)
        }
        let other = stack.newContext()
        other.object(with: annID).setValue(38, forKey: "age")
        try other.save()
        #expect(try stack.stored("Employee") { $0.int("age") } == [38])
    }

    /// Another context moved an employee to one department while this one moves it to a third: the merge
    /// leaves the second department listing it (its row says so), but the save's to-one is the truth, as
    /// a foreign key is in SQL. Each store then has the employee in one department only.
    @Test func aMemberMovedHereAndElsewhereEndsInOneOwner() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let departments = ["D1", "D2", "D3"].map { stack.insert("Department", ["name": $0], into: seeding) }
        let ann = stack.insert("Employee", ["name": "Ann", "department": departments[0]], into: seeding)
        try seeding.save()
        let ids = departments.map(\.objectID)

        let here = stack.context
        let mine = ids.map { here.object(with: $0) }
        for department in mine { _ = (department.value(forKey: "employees") as? Set<NSManagedObject>)?.count }
        let annHere = here.object(with: ann.objectID)
        _ = annHere.value(forKey: "name")

        let other = stack.newContext()
        other.object(with: ann.objectID).setValue(other.object(with: ids[1]), forKey: "department")
        let saved = try saveNotification(other)

        annHere.setValue(mine[2], forKey: "department")
        here.mergeChanges(fromContextDidSave: saved)
        try here.save()

        func members() -> [[String]] {
            let check = stack.newContext()
            return ids.map { id in ((check.object(with: id).value(forKey: "employees") as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "name") as? String } }
        }
        #expect(members() == [[], [], ["Ann"]])
        let check = stack.newContext()
        #expect((check.object(with: ann.objectID).value(forKey: "department") as? NSManagedObject)?.objectID == ids[2])
        // This context still holds D2 as merged, listing Ann: a later save of D2 must not list her again.
        mine[1].setValue("D2 renamed", forKey: "name")
        try here.save()
        #expect(members() == [[], [], ["Ann"]])
    }

    /// A context that writes its stale list of an owner over another's move into it (overwrite policy)
    /// does not lose the member: the member's to-one still points at the owner, and the store follows it,
    /// as SQL's foreign key does.
    @Test func anOwnersStaleListDoesNotDropAMemberThatPointsAtIt() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let d1 = stack.insert("Department", ["name": "D1"], into: seeding)
        let d2 = stack.insert("Department", ["name": "D2"], into: seeding)
        stack.insert("Employee", ["name": "Yan", "department": d2], into: seeding)
        let xia = stack.insert("Employee", ["name": "Xia", "department": d1], into: seeding)
        try seeding.save()

        let here = stack.context
        let mine = here.object(with: d2.objectID)
        _ = (mine.value(forKey: "employees") as? Set<NSManagedObject>)?.count
        let other = stack.newContext()
        other.object(with: xia.objectID).setValue(other.object(with: d2.objectID), forKey: "department")
        try other.save()

        here.mergePolicy = NSOverwriteMergePolicy
        mine.setValue("D2 renamed", forKey: "name")
        try here.save()
        let check = stack.newContext()
        let names = ((check.object(with: d2.objectID).value(forKey: "employees") as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "name") as? String }
        #expect(names.sorted() == ["Xia", "Yan"])
    }
}
