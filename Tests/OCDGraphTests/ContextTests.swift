import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor
import OCDTestSupport

// The "Context, changes, saving" rules of spec/coredata-behaviours.md (undo and several contexts are
// later issues), with the fetch request options, the coordinator and the container they rely on.

@Suite("Context: uniquing and object IDs")
struct UniquingTests {
    @Test func aContextHoldsOneObjectPerObjectID() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let first = try #require(try stack.fetch("Employee").first)
        #expect(try stack.fetch("Employee", "name == %@", "Ann").first === first)
        #expect(stack.context.object(with: id) === first)
        #expect(try stack.context.existingObject(with: id) === first)
        #expect(stack.context.registeredObject(for: id) === first)
        let other = stack.newContext()
        let elsewhere = try #require(try stack.fetch("Employee", in: other).first)
        #expect(elsewhere !== first)
        #expect(elsewhere.objectID == id)
    }

    @Test func objectWithRegistersAFaultWithoutReadingTheStore() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let other = stack.newContext()
        other.delete(try other.existingObject(with: id))
        try other.save()
        #expect(stack.context.registeredObject(for: id) == nil)
        // Had it read the store, the missing row would have made it a deleted object.
        let object = stack.context.object(with: id)
        #expect(object.isFault)
        #expect(!object.isDeleted)
        #expect(object.objectID == id)
        #expect(stack.context.registeredObject(for: id) === object)
    }

    @Test func existingObjectRealizesAStoredObjectAndThrowsForAMissingOne() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let reader = stack.newContext()
        try withExtendedLifetime(reader) {
            let realized = try reader.existingObject(with: id)
            #expect(!realized.isFault)
            #expect(realized.string("name") == "Ann")
        }

        let other = stack.newContext()
        other.delete(try other.existingObject(with: id))
        try other.save()
        let error = try #require(throws: NSError.self) { try stack.context.existingObject(with: id) }
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSManagedObjectReferentialIntegrityError)
        #expect(error.code == 133000)
    }

    @Test func insertedObjectsHaveTemporaryIDsUntilSaved() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee", ["name": "Ann"])
        let temporary = employee.objectID
        #expect(temporary.isTemporaryID)
        #expect(temporary.persistentStore == nil)
        try stack.context.save()
        #expect(!employee.objectID.isTemporaryID)
        #expect(employee.objectID.persistentStore === stack.store)
        #expect(stack.context.registeredObject(for: employee.objectID) === employee)
        #expect(stack.context.registeredObject(for: temporary) == nil)
    }

    @Test func obtainPermanentIDsAssignsPermanentIDsBeforeTheSave() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee", ["name": "Ann"])
        try stack.context.obtainPermanentIDs(for: [employee])
        let permanent = employee.objectID
        #expect(!permanent.isTemporaryID)
        #expect(employee.isInserted)
        #expect(stack.context.registeredObject(for: permanent) === employee)
        try stack.context.save()
        #expect(employee.objectID == permanent)
        #expect(try stack.stored("Employee") { $0.objectID } == [permanent])
    }

    @Test func objectIDURIsHaveCoreDataForms() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee", ["name": "Ann"])
        let temporary = employee.objectID.uriRepresentation().absoluteString
        #expect(temporary.hasPrefix("x-coredata:///Employee/t"))
        try stack.context.save()
        let uuid = try #require(stack.store.identifier)
        #expect(uuid == stack.coordinator.metadata(for: stack.store)[NSStoreUUIDKey] as? String)
        #expect(employee.objectID.uriRepresentation().absoluteString == "x-coredata://\(uuid)/Employee/p1")
    }

    @Test func managedObjectIDForURIRepresentationResolvesPermanentURIsOnly() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let uri = id.uriRepresentation()
        let resolved = try #require(stack.coordinator.managedObjectID(forURIRepresentation: uri))
        #expect(resolved == id)
        #expect(stack.context.object(with: resolved).string("name") == "Ann")

        let temporary = stack.insert("Employee", ["name": "Bob"]).objectID.uriRepresentation()
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: temporary) == nil)
        let otherStore = try #require(URL(string: "x-coredata://\(UUID().uuidString)/Employee/p1"))
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: otherStore) == nil)
        let noEntity = try #require(URL(string: "x-coredata://\(stack.store.identifier!)/Nobody/p1"))
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: noEntity) == nil)
    }
}

@Suite("Context: deleting and delete rules")
struct DeleteRuleTests {
    @Test func deleteOnlyMarksTheObjectAndNullifyRunsAtProcessPendingChanges() throws {
        let stack = try TestStack()
        let department = stack.insert("Department", ["name": "R&D"])
        let employee = stack.insert("Employee", ["name": "Ann", "department": department])
        try stack.context.save()

        stack.context.delete(employee)
        #expect(employee.isDeleted)
        #expect(stack.context.deletedObjects == [employee])
        #expect(department.objects("employees").contains(employee))
        stack.context.processPendingChanges()
        #expect(department.objects("employees").isEmpty)
        #expect(!department.isDeleted)
        #expect(department.isUpdated)

        // The other way round: deleting the to-many side clears the to-one side.
        let ops = stack.insert("Department", ["name": "Ops"])
        let bob = stack.insert("Employee", ["name": "Bob", "department": ops])
        try stack.context.save()
        stack.context.delete(ops)
        #expect(bob.object("department") === ops)
        stack.context.processPendingChanges()
        #expect(bob.object("department") == nil)
        #expect(!bob.isDeleted)
    }

    @Test func cascadeDeletesTheDestinationsAtProcessPendingChanges() throws {
        let stack = try TestStack()
        let company = stack.insert("Company", ["name": "Acme"])
        let department = stack.insert("Department", ["name": "R&D", "company": company])
        let employee = stack.insert("Employee", ["name": "Ann", "department": department])
        let task = stack.insert("Task", ["title": "Test", "owner": employee])
        let badge = stack.insert("Badge", ["number": 7, "holder": employee])
        try stack.context.save()

        stack.context.delete(company)
        #expect(!department.isDeleted)
        stack.context.processPendingChanges()
        #expect(department.isDeleted)
        #expect(!employee.isDeleted)
        #expect(employee.object("department") == nil)

        stack.context.delete(employee)
        stack.context.processPendingChanges()
        #expect(task.isDeleted)
        #expect(badge.isDeleted)
        #expect(stack.context.deletedObjects == [company, department, employee, task, badge])
        try stack.context.save()
        let other = stack.newContext()
        for entity in ["Company", "Department", "Employee", "Task", "Badge"] {
            #expect(try stack.fetch(entity, in: other).isEmpty, "\(entity)")
        }
    }

    /// Apple's guide on Deny: the destination's objects must be "transferred elsewhere (or deleted!)".
    /// Deleted in the same save, they stay listed when their inverse does not nullify, and do not count.
    @Test func denyLetsTheDeleteThroughWhenTheDestinationIsDeletedToo() throws {
        let stack = try TestStack(model: TestModel.make { entities, _ in
            entities["Employee"]!.relationshipsByName["manager"]!.deleteRule = .noActionDeleteRule
        })
        let manager = stack.insert("Manager", ["name": "Meg"])
        let report = stack.insert("Employee", ["name": "Ann", "manager": manager])
        try stack.context.save()
        stack.context.delete(report)
        stack.context.delete(manager)
        stack.context.processPendingChanges()
        #expect(manager.objects("reports") == [report], "no nullification: the deleted report stays listed")
        #expect(stack.context.saveError() == nil)
        #expect(try stack.fetch("Employee", in: stack.newContext()).isEmpty)
    }

    @Test func denyMakesTheSaveFailWith1600WhileTheDestinationIsNotEmpty() throws {
        let stack = try TestStack()
        let manager = stack.insert("Manager", ["name": "Meg"])
        let report = stack.insert("Employee", ["name": "Ann", "manager": manager])
        try stack.context.save()

        stack.context.delete(manager)
        stack.context.processPendingChanges()
        #expect(report.object("manager") === manager)
        #expect(throws: NSError.self) { try manager.validateForDelete() }
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSValidationRelationshipDeniedDeleteError)
        #expect(error.code == 1600)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "reports")
        #expect(error.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === manager)
        #expect(error.localizedDescription == "Items cannot be deleted from reports.")
        #expect(manager.isDeleted)
        #expect(try stack.fetch("Manager", in: stack.newContext()).count == 1)

        // Once nothing is left at the destination the delete goes through.
        report.setValue(nil, forKey: "manager")
        try stack.context.save()
        #expect(try stack.fetch("Manager", in: stack.newContext()).isEmpty)
    }

    @Test func noActionLeavesTheInverseDangling() throws {
        let stack = try TestStack()
        let reviewer = stack.insert("Employee", ["name": "Rita"])
        let task = stack.insert("Task", ["title": "Review", "reviewer": reviewer])
        try stack.context.save()
        stack.context.delete(task)
        stack.context.processPendingChanges()
        #expect(task.isDeleted)
        #expect(reviewer.objects("reviewedTasks").contains(task))
        #expect(!reviewer.isUpdated)
    }

    @Test func anObjectInsertedAndDeletedBeforeASaveDisappears() throws {
        let stack = try TestStack()
        let recorder = NotificationRecorder([.NSManagedObjectContextDidSave], object: stack.context)
        let ghost = stack.insert("Employee", ["name": "Ghost"])
        let kept = stack.insert("Employee", ["name": "Kept"])
        stack.context.delete(ghost)
        #expect(ghost.isInserted && ghost.isDeleted)
        #expect(stack.context.insertedObjects.contains(ghost))
        #expect(stack.context.deletedObjects.contains(ghost))

        stack.context.processPendingChanges()
        #expect(!stack.context.insertedObjects.contains(ghost))
        #expect(!stack.context.deletedObjects.contains(ghost))
        #expect(!ghost.isInserted && !ghost.isDeleted)
        #expect(ghost.managedObjectContext == nil)

        try stack.context.save()
        let saved = try #require(recorder.named(.NSManagedObjectContextDidSave).first?.userInfo)
        #expect(saved[NSInsertedObjectsKey] as? Set<NSManagedObject> == [kept])
        #expect((saved[NSDeletedObjectsKey] as? Set<NSManagedObject> ?? []).isEmpty)
        #expect(try stack.stored("Employee") { $0.string("name") } == ["Kept"])
    }

    /// As above, with more objects deleted than inserted (the context then looks for such objects among
    /// the deleted ones).
    @Test func anObjectInsertedAndDeletedAmongMoreDeletedObjectsDisappears() throws {
        let stack = try TestStack()
        let stored = try ["Old 1", "Old 2"].map { try stack.context.existingObject(with: try stack.seed("Employee", ["name": $0])) }
        let ghost = stack.insert("Employee", ["name": "Ghost"])
        for object in stored + [ghost] { stack.context.delete(object) }

        stack.context.processPendingChanges()
        #expect(!ghost.isInserted && !ghost.isDeleted)
        #expect(ghost.managedObjectContext == nil)
        #expect(stack.context.deletedObjects == Set(stored))
        #expect(stack.context.insertedObjects.isEmpty)
        try stack.context.save()
        #expect(try stack.stored("Employee") { $0.string("name") }.isEmpty)
    }
}

@Suite("Context: saving")
struct SaveTests {
    /// Saved "D" and "U" realized in the stack's context; then "I" inserted, "U" changed, "D" deleted.
    static func changes() throws -> (TestStack, HookLog, inserted: NSManagedObject, updated: NSManagedObject, deleted: NSManagedObject) {
        let (stack, log) = try TestStack.hooked()
        let d = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "D"]))
        let u = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "U"]))
        let i = stack.insert("Employee", ["name": "I"])
        u.setValue(41, forKey: "age")
        stack.context.delete(d)
        log.clear()
        return (stack, log, i, u, d)
    }

    /// The save takes each set's objects by address (`inAddressOrder`: its passes over a large save's
    /// objects then walk memory forwards); an order Core Data leaves open, pinned so that it is not lost.
    @Test func saveTakesEachSetsObjectsInAddressOrder() throws {
        let (stack, log) = try TestStack.hooked()
        var order: [ObjectIdentifier] = []
        log.willSave = { order.append(ObjectIdentifier($0)) }
        let inserted = (0..<64).map { stack.insert("Employee", ["name": "E\($0)"]) }
        try stack.context.save()
        #expect(order.count == inserted.count)
        #expect(order == order.sorted())
        #expect(Set(order) == Set(inserted.map(ObjectIdentifier.init)))
    }

    @Test func saveValidatesAndCallsWillSavePerSetThenDidSaveBetweenItsNotifications() throws {
        let (stack, log, _, _, _) = try Self.changes()
        try stack.context.save()
        let steps = log.events.filter { event in
            ["notification WillSave", "notification DidSave", "validateFor", "willSave", "didSave"].contains { event.hasPrefix($0) }
        }
        #expect(Array(steps.prefix(7)) == [
            "notification WillSave",
            "validateForDelete D", "willSave D",
            "validateForInsert I", "willSave I",
            "validateForUpdate U", "willSave U",
        ])
        #expect(Set(steps.dropFirst(7).prefix(3)) == ["didSave D", "didSave I", "didSave U"])
        #expect(Array(steps.dropFirst(10)) == ["notification DidSave", "notification DidSaveObjectIDs"])
    }

    @Test func didSaveNotificationsListTheSavedObjectsAndTheirIDs() throws {
        let (stack, _, inserted, updated, deleted) = try Self.changes()
        let deletedID = deleted.objectID
        let recorder = NotificationRecorder([.NSManagedObjectContextDidSave, .NSManagedObjectContextDidSaveObjectIDs], object: stack.context)
        try stack.context.save()
        let objects = try #require(recorder.named(.NSManagedObjectContextDidSave).first?.userInfo)
        #expect(objects[NSInsertedObjectsKey] as? Set<NSManagedObject> == [inserted])
        #expect(objects[NSUpdatedObjectsKey] as? Set<NSManagedObject> == [updated])
        #expect(objects[NSDeletedObjectsKey] as? Set<NSManagedObject> == [deleted])
        let ids = try #require(recorder.named(.NSManagedObjectContextDidSaveObjectIDs).first?.userInfo)
        #expect(ids[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID> == [inserted.objectID])
        #expect(ids[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID> == [updated.objectID])
        #expect(ids[NSDeletedObjectIDsKey] as? Set<NSManagedObjectID> == [deletedID])
        #expect(!inserted.objectID.isTemporaryID)
        #expect(objects.count == 3 && ids.count == 3)
        // Each post has a userInfo of its own: the next save's does not show through this one's.
        let later = stack.insert("Employee", ["name": "Later"])
        try stack.context.save()
        let next = try #require(recorder.named(.NSManagedObjectContextDidSave).last?.userInfo)
        #expect(next[NSInsertedObjectsKey] as? Set<NSManagedObject> == [later])
        #expect(next[NSDeletedObjectsKey] as? Set<NSManagedObject> == [])
        #expect(objects[NSInsertedObjectsKey] as? Set<NSManagedObject> == [inserted])
        #expect(objects[NSDeletedObjectsKey] as? Set<NSManagedObject> == [deleted])
    }

    @Test func aFailedSaveLeavesTheStoreAndTheContextsChangesAsTheyWere() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let danID = try stack.seed("Employee", ["name": "Dan"])
        let ann = try stack.context.existingObject(with: annID)
        ann.setValue(31, forKey: "age")
        stack.context.delete(try stack.context.existingObject(with: danID))
        let valid = stack.insert("Employee", ["name": "Val"])
        let invalid = stack.insert("Employee")

        #expect(stack.context.saveError()?.code == NSValidationMissingMandatoryPropertyError)
        #expect(try stack.stored("Employee", sortedBy: "name") { $0.string("name") } == ["Ann", "Dan"])
        #expect(try stack.stored("Employee", sortedBy: "name") { $0.int("age") }.first == 30)
        #expect(stack.context.insertedObjects == [valid, invalid])
        #expect(stack.context.updatedObjects == [ann])
        #expect(stack.context.deletedObjects.map(\.objectID) == [danID])
        #expect(ann.int("age") == 31)
        #expect(invalid.objectID.isTemporaryID)

        invalid.setValue("Fix", forKey: "name")
        try stack.context.save()
        #expect(try stack.stored("Employee", sortedBy: "name") { $0.string("name") } == ["Ann", "Fix", "Val"])
        #expect(try stack.stored("Employee", sortedBy: "name") { $0.int("age") }.first == 31)
    }
}

@Suite("Context: validation")
struct ValidationTests {
    @Test func aMissingRequiredValueFailsWith1570() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee")
        let error = try #require(stack.context.saveError())
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == 1570)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "name")
        #expect(error.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === employee)
        #expect(error.userInfo[NSValidationValueErrorKey] == nil)
        #expect(error.localizedDescription == "name is a required value.")
    }

    @Test(arguments: [(200, 1610, "age is too large."), (-1, 1620, "age is too small.")])
    func aNumberOutOfRangeFailsWithTheCodeItsPredicateCarries(age: Int, code: Int, message: String) throws {
        let stack = try TestStack()
        stack.insert("Employee", ["name": "Ann", "age": age])
        let error = try #require(stack.context.saveError())
        #expect(error.code == code)
        #expect(error.localizedDescription == message)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "age")
        #expect((error.userInfo[NSValidationValueErrorKey] as? NSNumber)?.intValue == age)
        #expect(error.userInfo[NSValidationPredicateErrorKey] is NSPredicate)
    }

    @Test func aStringNotMatchingItsPatternFailsWith1680() throws {
        let stack = try TestStack()
        stack.insert("Employee", ["name": "Ann", "email": "not an address"])
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSValidationStringPatternMatchingError)
        #expect(error.localizedDescription == "email is invalid.")
    }

    @Test func aStringWarningFailsWith1550AndItsLocalizedErrorString() throws {
        let stack = try TestStack(model: TestModel.make { _, model in
            model.localizationDictionary = ["ErrorString/SalaryNegative": "A salary cannot be negative."]
        })
        stack.insert("Employee", ["name": "Ann", "salary": -5.0])
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.code == 1550)
        #expect(error.localizedDescription == "A salary cannot be negative.")
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "salary")

        let plain = try TestStack()
        plain.insert("Employee", ["name": "Ann", "salary": -5.0])
        #expect(plain.context.saveError()?.localizedDescription == "SalaryNegative")
    }

    @Test func severalFailuresFailWith1560AndTheErrorsUnderNSDetailedErrorsKey() throws {
        let stack = try TestStack()
        stack.insert("Employee", ["age": 200])
        stack.insert("Employee", ["name": "Ann", "email": "nope"])
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSValidationMultipleErrorsError)
        #expect(error.code == 1560)
        #expect(error.localizedDescription == "Multiple validation errors occurred.")
        let details = try #require(error.userInfo[NSDetailedErrorsKey] as? [NSError])
        #expect(details.map(\.code).sorted() == [1570, 1610, 1680])
        for detail in details { #expect(detail.userInfo[NSValidationObjectErrorKey] is NSManagedObject) }
    }

    @Test func messagesNameEntitiesAndPropertiesThroughTheLocalizationDictionary() throws {
        let stack = try TestStack(model: TestModel.make { _, model in
            model.localizationDictionary = ["Property/age/Entity/Employee": "Age in years", "Property/name": "Full name"]
        })
        stack.insert("Employee", ["age": 200])
        let error = try #require(stack.context.saveError())
        let messages = Set((error.userInfo[NSDetailedErrorsKey] as? [NSError] ?? []).map(\.localizedDescription))
        #expect(messages == ["Age in years is too large.", "Full name is a required value."])
    }

    @Test func toManyCountsAreValidatedOnTheSet() throws {
        let stack = try TestStack(model: TestModel.make { entities, _ in
            let members = entities["Project"]!.relationshipsByName["members"]!
            members.minCount = 1
            members.maxCount = 2
        })
        let empty = stack.insert("Project", ["title": "Empty"])
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSValidationRelationshipLacksMinimumCountError)
        #expect(error.localizedDescription == "Too few items in members.")
        stack.context.delete(empty)

        let people = ["A", "B", "C"].map { stack.insert("Employee", ["name": $0]) }
        stack.insert("Project", ["title": "Crowded", "members": Set(people)])
        let tooMany = try #require(stack.context.saveError())
        #expect(tooMany.code == NSValidationRelationshipExceedsMaximumCountError)
        #expect(tooMany.localizedDescription == "Too many items in members.")
    }

    @Test func validateValueForKeyChecksTheModelsConstraints() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee", ["name": "Ann"])
        var tooOld: Any? = 200
        let error = try #require(throws: NSError.self) { try employee.validateValue(&tooOld, forKey: "age") }
        #expect(error.code == NSValidationNumberTooLargeError)
        var fine: Any? = 40
        try employee.validateValue(&fine, forKey: "age")
        var missing: Any? = nil
        #expect(throws: NSError.self) { try employee.validateValue(&missing, forKey: "name") }
    }

    @Test func validateKeyMethodsRunThroughValidateValueAndAtSave() throws {
        let (stack, _) = try TestStack.hooked()
        let employee = try #require(stack.insert("Employee", ["name": "Ann"]) as? HookedEmployee)
        var padded: Any? = "  Bob  "
        try employee.validateValue(&padded, forKey: "name")
        #expect(padded as? String == "Bob")
        #expect(employee.count("validateName") == 1)

        var nobody: Any? = "Nobody"
        let direct = try #require(throws: NSError.self) { try employee.validateValue(&nobody, forKey: "name") }
        #expect(direct.domain == "HookedEmployee")

        employee.setValue("Nobody", forKey: "name")
        let error = try #require(stack.context.saveError())
        #expect(error.domain == "HookedEmployee")
        #expect(error.code == 42)
    }
}

@Suite("Context: rollback, reset and refresh")
struct DiscardingChangesTests {
    @Test func rollbackRestoresTheLastSavedState() throws {
        let stack = try TestStack()
        let department = stack.insert("Department", ["name": "R&D"])
        let ann = stack.insert("Employee", ["name": "Ann", "age": 30, "department": department])
        let dan = stack.insert("Employee", ["name": "Dan"])
        try stack.context.save()

        ann.setValue(31, forKey: "age")
        let ops = stack.insert("Department", ["name": "Ops"])
        ann.setValue(ops, forKey: "department")
        stack.context.delete(dan)
        let eve = stack.insert("Employee", ["name": "Eve"])
        stack.context.processPendingChanges()

        stack.context.rollback()
        #expect(!stack.context.hasChanges)
        #expect(ann.int("age") == 30)
        #expect(ann.object("department") === department)
        #expect(department.objects("employees") == [ann])
        #expect(!dan.isDeleted)
        #expect(dan.string("name") == "Dan")
        for object in [eve, ops] {
            #expect(!object.isInserted)
            #expect(object.managedObjectContext == nil)
        }
        #expect(try stack.fetch("Employee").count == 2)
    }

    @Test func rollbackEmptiesTheUndoStack() throws {
        let stack = try TestStack()
        #expect(stack.context.undoManager == nil)
        let undoManager = UndoManager()
        stack.context.undoManager = undoManager
        undoManager.registerUndo(withTarget: stack.context) { _ in }
        #expect(undoManager.canUndo)
        stack.context.rollback()
        #expect(!undoManager.canUndo)
    }

    /// UndoManager as Apple documents it: removeAllActions() enables registration again, may run inside
    /// an undo action, and canUndo sees actions in a nested open group.
    @Test func undoManagerClearsEnablesAndCountsNestedGroups() throws {
        let undoManager = UndoManager()
        let target = NSObject()
        undoManager.disableUndoRegistration()
        undoManager.removeAllActions()
        #expect(undoManager.isUndoRegistrationEnabled)

        var ran = 0
        undoManager.registerUndo(withTarget: target) { _ in
            ran += 1
            undoManager.removeAllActions()
        }
        undoManager.undo()
        #expect(ran == 1)
        #expect(!undoManager.canUndo && !undoManager.canRedo)

        undoManager.beginUndoGrouping()
        undoManager.beginUndoGrouping()
        undoManager.registerUndo(withTarget: target) { _ in }
        #expect(undoManager.canUndo)
        undoManager.endUndoGrouping()
        undoManager.endUndoGrouping()
        #expect(undoManager.canUndo)
    }

    @Test func resetForgetsEveryRegisteredObject() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let ann = try stack.context.existingObject(with: id)
        ann.setValue("Anna", forKey: "name")
        let bob = stack.insert("Employee", ["name": "Bob"])
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)

        stack.context.reset()
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(!stack.context.hasChanges)
        #expect(stack.context.registeredObject(for: id) == nil)
        for object in [ann, bob] {
            #expect(object.managedObjectContext == nil)
            #expect(object.isFault)
            #expect(!object.hasChanges)
        }
        #expect(recorder.notifications.last?.userInfo?[NSInvalidatedAllObjectsKey] != nil)
        let again = try #require(try stack.fetch("Employee").first)
        #expect(again !== ann)
        #expect(again.string("name") == "Ann")
    }

    @Test func refreshWithoutMergeDropsChangesAndFaultsTheObject() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann"]))
        ann.setValue("Anna", forKey: "name")
        stack.context.refresh(ann, mergeChanges: false)
        #expect(ann.isFault)
        #expect(!ann.isUpdated)
        #expect(!stack.context.hasChanges)
        #expect(ann.string("name") == "Ann")
    }

    @Test func refreshWithoutMergeAlsoDropsAPendingDelete() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann"]))
        stack.context.delete(ann)
        stack.context.refresh(ann, mergeChanges: false)
        #expect(!ann.isDeleted)
        #expect(ann.isFault)
        #expect(stack.context.deletedObjects.isEmpty)
        #expect(!stack.context.hasChanges)
        try stack.context.save()
        #expect(try stack.stored("Employee") { $0.string("name") } == ["Ann"])
    }

    @Test func refreshWithMergeRereadsTheStoreAndKeepsPendingChangesOnTop() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let ann = try stack.context.existingObject(with: id)
        ann.setValue("Anna", forKey: "name")
        let other = stack.newContext()
        try other.existingObject(with: id).setValue(44, forKey: "age")
        try other.save()

        stack.context.refresh(ann, mergeChanges: true)
        #expect(!ann.isFault)
        #expect(ann.isUpdated)
        #expect(ann.string("name") == "Anna")
        #expect(ann.int("age") == 44)
        #expect(Set(ann.changedValues().keys) == ["name"])
        try stack.context.save()
        #expect(try stack.stored("Employee") { "\($0.string("name") ?? "") \($0.int("age") ?? 0)" } == ["Anna 44"])
    }

    @Test func refreshAllObjectsKeepsChangedObjectsAndFaultsTheOthers() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann"]))
        let bob = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Bob"]))
        ann.setValue("Anna", forKey: "name")
        stack.context.refreshAllObjects()
        #expect(!ann.isFault)
        #expect(ann.string("name") == "Anna")
        #expect(ann.isUpdated)
        #expect(bob.isFault)
    }
}

@Suite("Context: fetching with pending changes")
struct PendingChangesFetchTests {
    /// Ann (30) saved and realized, then changed to 60 in memory; Bob (70) inserted, not saved.
    static func changedStack() throws -> (TestStack, ann: NSManagedObject, bob: NSManagedObject) {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann", "age": 30]))
        ann.setValue(60, forKey: "age")
        let bob = stack.insert("Employee", ["name": "Bob", "age": 70])
        return (stack, ann, bob)
    }

    @Test func aFetchSeesUnsavedInsertsUpdatedValuesAndDeletes() throws {
        let (stack, ann, bob) = try Self.changedStack()
        #expect(try stack.fetch("Employee", "name == 'Bob'") == [bob])
        #expect(try stack.fetch("Employee", "age > 50", sortedBy: "name") == [ann, bob])
        #expect(try stack.fetch("Employee", "age < 40").isEmpty)
        stack.context.delete(ann)
        #expect(try stack.fetch("Employee") == [bob])
    }

    @Test func withoutPendingChangesAFetchSeesOnlyTheStore() throws {
        let (stack, ann, _) = try Self.changedStack()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.includesPendingChanges = false
        request.predicate = NSPredicate(format: "age > 50")
        #expect(try stack.context.fetch(request).isEmpty)
        request.predicate = NSPredicate(format: "age < 40")
        let found = try stack.context.fetch(request)
        #expect(found == [ann])
        #expect(ann.int("age") == 60)
    }

    @Test func dictionaryResultsSeeOnlyTheStore() throws {
        let (stack, _, _) = try Self.changedStack()
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "age"]
        let rows = try stack.context.fetch(request)
        #expect(rows.count == 1)
        #expect(rows.first?["name"] as? String == "Ann")
        #expect((rows.first?["age"] as? NSNumber)?.intValue == 30)
    }

    @Test func aFetchNeverOverwritesTheValuesOfARealizedObject() throws {
        let stack = try TestStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let bobID = try stack.seed("Employee", ["name": "Bob", "age": 40])
        let ann = try stack.context.existingObject(with: annID)
        let bob = try stack.context.existingObject(with: bobID)
        ann.setValue("ann@example.com", forKey: "email")
        let other = stack.newContext()
        for id in [annID, bobID] {
            let elsewhere = try other.existingObject(with: id)
            elsewhere.setValue(44, forKey: "age")
            elsewhere.setValue("other@example.com", forKey: "email")
        }
        try other.save()

        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.returnsObjectsAsFaults = false
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        #expect(try stack.context.fetch(request) == [ann, bob])
        #expect(ann.int("age") == 30)
        #expect(ann.string("email") == "ann@example.com")
        #expect(bob.int("age") == 40)
        #expect(bob.string("email") == nil)
        #expect(!bob.hasChanges)
    }

    @Test func fetchLimitIsAppliedAfterPendingInsertsAreMerged() throws {
        let stack = try TestStack()
        for age in [10, 20, 30] { try stack.seed("Employee", ["name": "Saved \(age)", "age": age]) }
        stack.insert("Employee", ["name": "New", "age": 5])
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
        request.fetchLimit = 2
        #expect(try stack.context.fetch(request).map { $0.int("age") } == [5, 10])
    }

    @Test func countIncludesPendingChangesUnlessAskedNotTo() throws {
        let stack = try TestStack()
        let first = try stack.seed("Employee", ["name": "A"])
        for name in ["B", "C"] { try stack.seed("Employee", ["name": name]) }
        stack.insert("Employee", ["name": "D"])
        stack.insert("Employee", ["name": "E"])
        stack.context.delete(stack.context.object(with: first))
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        #expect(try stack.context.count(for: request) == 4)
        request.fetchLimit = 3
        #expect(try stack.context.count(for: request) == 3)
        request.fetchLimit = 0
        request.includesPendingChanges = false
        #expect(try stack.context.count(for: request) == 3)
    }
}

@Suite("Context: inaccessible faults")
struct InaccessibleFaultTests {
    @Test func byDefaultAFaultWhoseRowIsGoneBecomesADeletedObjectWithNilValues() throws {
        let stack = try TestStack()
        #expect(stack.context.shouldDeleteInaccessibleFaults)
        let id = try stack.seed("Employee", ["name": "Ann", "age": 30])
        let ann = stack.context.object(with: id)
        let other = stack.newContext()
        other.delete(try other.existingObject(with: id))
        try other.save()

        #expect(ann.string("name") == nil)
        #expect(ann.value(forKey: "age") == nil)
        #expect(ann.isDeleted)
        #expect(!ann.isFault)
        #expect(stack.context.deletedObjects.contains(ann))
        // Skipped by validation (its required name is nil) and by the store; gone after the save.
        try stack.context.save()
        #expect(ann.managedObjectContext == nil)
        #expect(!stack.context.hasChanges)
    }

    @Test func withShouldDeleteInaccessibleFaultsFalseFiringSuchAFaultStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack()
            stack.context.shouldDeleteInaccessibleFaults = false
            let id = try stack.seed("Employee", ["name": "Ann"])
            let ann = stack.context.object(with: id)
            let other = stack.newContext()
            other.delete(try other.existingObject(with: id))
            try other.save()
            _ = ann.value(forKey: "name")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("CoreData could not fulfill a fault"))
    }
}

@Suite("Context: ObjectsDidChange")
struct ObjectsDidChangeTests {
    @Test func objectsDidChangeIsPostedAtProcessPendingChangesWithTheChangedObjects() throws {
        let stack = try TestStack()
        let updated = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "U"]))
        let deleted = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "D"]))
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        let inserted = stack.insert("Employee", ["name": "I"])
        updated.setValue(41, forKey: "age")
        stack.context.delete(deleted)
        #expect(recorder.notifications.isEmpty)

        stack.context.processPendingChanges()
        let notifications = recorder.named(.NSManagedObjectContextObjectsDidChange)
        #expect(notifications.count == 1)
        let note = try #require(notifications.first)
        #expect(note.object as? NSManagedObjectContext === stack.context)
        #expect(note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> == [inserted])
        #expect(note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> == [updated])
        #expect(note.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> == [deleted])

        stack.context.processPendingChanges()
        #expect(recorder.notifications.count == 1)
    }

    /// An unsaved object changed after its insertion was announced is listed as updated in the next
    /// event, though `updatedObjects` leaves it out; within its inserting event it is only inserted.
    @Test func aLaterChangeToAnInsertedObjectIsReportedAsUpdated() throws {
        let stack = try TestStack()
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        let ann = stack.insert("Employee", ["name": "Ann"])
        ann.setValue(40, forKey: "age")
        stack.context.processPendingChanges()
        let first = try #require(recorder.named(.NSManagedObjectContextObjectsDidChange).first)
        #expect(first.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> == [ann])
        #expect(first.userInfo?[NSUpdatedObjectsKey] == nil)

        ann.setValue(41, forKey: "age")
        #expect(ann.changedValuesForCurrentEvent()["age"] as? Int == 40)
        stack.context.processPendingChanges()
        let notes = recorder.named(.NSManagedObjectContextObjectsDidChange)
        #expect(notes.count == 2)
        #expect(notes.last?.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> == [ann])
        #expect(notes.last?.userInfo?[NSInsertedObjectsKey] == nil)
        #expect(stack.context.updatedObjects.isEmpty && stack.context.insertedObjects == [ann])
        #expect(ann.isInserted && !ann.isUpdated)
    }

    /// Inserted and deleted in one event: no notification names it. Inserted in an earlier event, then
    /// deleted before a save: the deletion is reported, so observers drop what they were told of.
    @Test func anObjectInsertedAndDeletedInOneEventIsNotReported() throws {
        let stack = try TestStack()
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        let ghost = stack.insert("Employee", ["name": "Ghost"])
        stack.context.delete(ghost)
        let kept = stack.insert("Employee", ["name": "Kept"])
        stack.context.processPendingChanges()
        let first = try #require(recorder.named(.NSManagedObjectContextObjectsDidChange).first)
        #expect(first.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> == [kept])
        #expect(first.userInfo?[NSDeletedObjectsKey] == nil)

        stack.context.delete(kept)
        stack.context.processPendingChanges()
        let second = try #require(recorder.named(.NSManagedObjectContextObjectsDidChange).last)
        #expect(second.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> == [kept])
        #expect(!stack.context.hasChanges)
    }

    /// An insert dropped (inserted, then deleted before the event ended) and then made again is
    /// announced as inserted, in one notification; one undone by `rollback()` and made again likewise. The context
    /// keeps an event's inserted objects in a list, and these leave an entry there that must not count.
    @Test func anObjectInsertedAgainAfterItsInsertWasDroppedIsAnnouncedAsInserted() throws {
        let stack = try TestStack()
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        let ghost = stack.insert("Employee", ["name": "Ghost"])
        stack.context.delete(ghost)
        stack.context.processPendingChanges()
        #expect(recorder.notifications.isEmpty)

        stack.context.insert(ghost)
        stack.context.delete(ghost)
        stack.context.insert(ghost)  // deleted, then inserted again in one event: simply inserted
        let other = stack.insert("Employee", ["name": "Other"])
        stack.context.processPendingChanges()
        let first = try #require(recorder.named(.NSManagedObjectContextObjectsDidChange).first)
        #expect(recorder.notifications.count == 1)
        #expect(first.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> == [ghost, other])
        #expect(first.userInfo?[NSDeletedObjectsKey] == nil)

        let undone = stack.insert("Employee", ["name": "Undone"])
        stack.context.rollback()
        #expect(stack.context.insertedObjects.isEmpty)
        // The rollback announces the end of the insertions observers heard of, and only those.
        #expect(recorder.notifications.count == 2)
        #expect(recorder.notifications.last?.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> == [ghost, other])
        stack.context.insert(undone)
        stack.context.processPendingChanges()
        let last = try #require(recorder.named(.NSManagedObjectContextObjectsDidChange).last)
        #expect(recorder.notifications.count == 3)
        #expect(last.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> == [undone])
        try stack.context.save()
        #expect(try stack.stored("Employee") { $0.string("name") } == ["Undone"])
    }

    /// A new object given a permanent ID (obtainPermanentIDs) and then deleted and inserted again is still
    /// a new object: saved as an insert, never as an update of a row that does not exist (which failed the
    /// save with a conflict, or under a merge policy deleted the object and saved nothing). The same after
    /// the dropped insert was processed: it comes back as a new object, not a fault no store can fill.
    @Test(arguments: [false, true])
    func aNewObjectWithAPermanentIDDeletedAndInsertedAgainIsSavedAsNew(processedBetween: Bool) throws {
        let stack = try TestStack()
        stack.context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        let ann = stack.insert("Employee", ["name": "Ann", "age": 30])
        try stack.context.obtainPermanentIDs(for: [ann])
        #expect(!ann.objectID.isTemporaryID)
        stack.context.delete(ann)
        if processedBetween { stack.context.processPendingChanges() }
        stack.context.insert(ann)
        if processedBetween {
            #expect(!ann.isFault)
            ann.setValue("Ann", forKey: "name")
        }
        #expect(ann.isInserted && !ann.isUpdated && !ann.isDeleted)
        #expect(stack.context.updatedObjects.isEmpty)
        #expect(stack.context.insertedObjects == [ann])
        try stack.context.save()
        #expect(ann.managedObjectContext === stack.context)
        #expect(try stack.stored("Employee") { $0.string("name") } == ["Ann"])
    }

    /// A save made by an ObjectsDidChange observer runs the delete rules of the deletes it saves: the
    /// save's own processing of pending changes did nothing while the notification was being posted, so a
    /// cascade left its destinations in the store.
    @Test func aSaveInsideAnObjectsDidChangeObserverRunsDeleteRules() throws {
        let stack = try TestStack()
        let company = stack.insert("Company", ["name": "C"])
        stack.insert("Department", ["name": "D"]).setValue(company, forKey: "company")
        try stack.context.save()
        // Posted on this thread, inside processPendingChanges().
        final class Outcome: @unchecked Sendable { var saved = false; var error: Error? }
        let outcome = Outcome()
        nonisolated(unsafe) let doomed = company
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange,
                                                           object: stack.context, queue: nil) { _ in
            guard !outcome.saved else { return }
            outcome.saved = true
            stack.context.delete(doomed)
            do { try stack.context.save() } catch { outcome.error = error }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        company.setValue("C2", forKey: "name")
        stack.context.processPendingChanges()
        #expect(outcome.saved && outcome.error == nil)
        #expect(try stack.stored("Company") { $0.string("name") }.isEmpty)
        #expect(try stack.stored("Department") { $0.string("name") }.isEmpty)
        #expect(!stack.context.hasChanges)
    }

    /// An observer that changes an object at every ObjectsDidChange and then fetches (which processes
    /// pending changes) is not called again inside its own call: the change it made is announced at the
    /// next event, not in a notification nested in the one it is handling.
    @Test func anObserverThatChangesAndFetchesIsNotCalledInsideItself() throws {
        let stack = try TestStack()
        let ann = stack.insert("Employee", ["name": "Ann", "age": 1])
        try stack.context.save()
        final class Calls: @unchecked Sendable { var count = 0; var depth = 0; var deepest = 0 }
        let calls = Calls()
        nonisolated(unsafe) let stamped = ann
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange,
                                                           object: stack.context, queue: nil) { _ in
            calls.count += 1
            calls.depth += 1
            calls.deepest = max(calls.deepest, calls.depth)
            defer { calls.depth -= 1 }
            guard calls.count < 50 else { return }
            stamped.setValue(calls.count + 100, forKey: "age")
            _ = try? stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        }
        defer { NotificationCenter.default.removeObserver(token) }
        ann.setValue("Ann2", forKey: "name")
        stack.context.processPendingChanges()
        #expect(calls.count == 1 && calls.deepest == 1)
        stack.context.processPendingChanges()
        #expect(calls.count == 2 && calls.deepest == 1)
    }

    /// An object a context listed for its next ObjectsDidChange, and that outlived that context, starts
    /// clean in the context it joins: the listing bits it carried were the first context's, and its
    /// changes in the new one are announced there.
    @Test func anObjectFromAContextThatWentAwayIsAnnouncedByTheContextItJoins() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Wanderer", "age": 40])
        var first: NSManagedObjectContext? = stack.newContext()
        let wanderer = try #require(try first?.existingObject(with: id))
        wanderer.setValue(41, forKey: "age")  // listed by the first context as updated, for its next event
        first = nil
        #expect(wanderer.managedObjectContext == nil)

        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        stack.context.insert(wanderer)
        #expect(wanderer.changedValuesForCurrentEvent().isEmpty)
        stack.context.processPendingChanges()
        #expect(recorder.named(.NSManagedObjectContextObjectsDidChange).first?.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> == [wanderer])
        wanderer.setValue(42, forKey: "age")
        stack.context.processPendingChanges()
        let notes = recorder.named(.NSManagedObjectContextObjectsDidChange)
        #expect(notes.count == 2)
        #expect(notes.last?.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> == [wanderer])
    }

    /// An object inserted, or deleted, in a context that then goes away is neither any more: its status
    /// was that context's. Another context it joins takes it in and saves it, rather than finding it
    /// "inserted already" and leaving it out of its save.
    @Test func anObjectInsertedInAContextThatWentAwayIsSavedByTheContextItJoins() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann", "age": 40]))
        var first: NSManagedObjectContext? = stack.newContext()
        let newcomer = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: first!)
        let leaver = try #require(try first?.existingObject(with: ann.objectID))
        first?.delete(leaver)
        #expect(newcomer.isInserted && leaver.isDeleted)
        first = nil
        #expect(!newcomer.isInserted && !newcomer.isUpdated && !newcomer.isDeleted)
        #expect(!leaver.isDeleted)

        stack.context.insert(newcomer)
        #expect(newcomer.isInserted)
        #expect(stack.context.insertedObjects.contains(newcomer))
        newcomer.setValue("Newcomer", forKey: "name")
        try stack.context.save()
        #expect(!newcomer.objectID.isTemporaryID)
        let check = stack.newContext()
        let saved = try #require(try check.existingObject(with: newcomer.objectID))
        #expect(saved.value(forKey: "name") as? String == "Newcomer")
    }

    /// A deleted object changed in an event (here by hand; delete propagation does it too) has no old
    /// values for the current event once the event ends.
    @Test func aDeletedObjectsEventValuesEndWithTheEvent() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann", "age": 40]))
        stack.context.delete(ann)
        stack.context.processPendingChanges()
        ann.setValue(41, forKey: "age")
        #expect(ann.changedValuesForCurrentEvent()["age"] as? Int == 40)
        stack.context.processPendingChanges()
        #expect(ann.changedValuesForCurrentEvent().isEmpty)
    }

    @Test func refreshedObjectsAreReportedUnderTheRefreshedKey() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann"]))
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        stack.context.refresh(ann, mergeChanges: false)
        stack.context.processPendingChanges()
        #expect(recorder.notifications.first?.userInfo?[NSRefreshedObjectsKey] as? Set<NSManagedObject> == [ann])
    }

    /// A change that `refresh(_:mergeChanges: false)` drops within the event is reported as a refresh,
    /// not as an update; a change made after that refresh, in the same event, is an update again, and
    /// the object is listed once.
    @Test func aChangeDroppedByARefreshIsNotReportedAsAnUpdate() throws {
        let stack = try TestStack()
        let ann = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann", "age": 40]))
        let bob = try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Bob", "age": 50]))
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: stack.context)
        ann.setValue(41, forKey: "age")
        bob.setValue(51, forKey: "age")
        stack.context.refresh(ann, mergeChanges: false)
        stack.context.refresh(bob, mergeChanges: false)
        bob.setValue(52, forKey: "age")
        stack.context.processPendingChanges()
        let note = try #require(recorder.named(.NSManagedObjectContextObjectsDidChange).first)
        #expect(recorder.notifications.count == 1)
        #expect(note.userInfo?[NSRefreshedObjectsKey] as? Set<NSManagedObject> == [ann, bob])
        #expect(note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> == [bob])
        #expect(stack.context.updatedObjects == [bob])
        #expect(ann.value(forKey: "age") as? Int == 40 && bob.value(forKey: "age") as? Int == 52)
    }

    @Test func notificationNamesAndUserInfoKeysAreApplesStrings() {
        #expect(Notification.Name.NSManagedObjectContextObjectsDidChange.rawValue == "NSObjectsChangedInManagingContextNotification")
        #expect(Notification.Name.NSManagedObjectContextWillSave.rawValue == "NSManagingContextWillSaveChangesNotification")
        #expect(Notification.Name.NSManagedObjectContextDidSave.rawValue == "NSManagingContextDidSaveChangesNotification")
        #expect(Notification.Name.NSManagedObjectContextDidSaveObjectIDs.rawValue == "NSManagedObjectContextDidSaveObjectIDsNotification")
        #expect(NSManagedObjectContext.didSaveObjectsNotification == .NSManagedObjectContextDidSave)
        #expect([NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey, NSRefreshedObjectsKey, NSInvalidatedObjectsKey, NSInvalidatedAllObjectsKey]
                == ["inserted", "updated", "deleted", "refreshed", "invalidated", "invalidatedAll"])
        #expect([NSInsertedObjectIDsKey, NSUpdatedObjectIDsKey, NSDeletedObjectIDsKey]
                == ["inserted_objectIDs", "updated_objectIDs", "deleted_objectIDs"])
        #expect(NSManagedObjectContext.NotificationKey.insertedObjects.rawValue == NSInsertedObjectsKey)
    }
}

@Suite("Context: fetch request options")
struct FetchRequestOptionTests {
    /// Ann (30, 100.0, R&D), Bob (30, 200.0, R&D), Cid (40, 50.0, no department), and a manager Meg (50,
    /// 300.0), all saved.
    static func staff() throws -> TestStack {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let department = stack.insert("Department", ["name": "R&D"], into: seeding)
        stack.insert("Employee", ["name": "Ann", "age": 30, "salary": 100.0, "department": department], into: seeding)
        stack.insert("Employee", ["name": "Bob", "age": 30, "salary": 200.0, "department": department], into: seeding)
        stack.insert("Employee", ["name": "Cid", "age": 40, "salary": 50.0], into: seeding)
        stack.insert("Manager", ["name": "Meg", "age": 50, "salary": 300.0], into: seeding)
        try seeding.save()
        return stack
    }

    /// An aggregate of the employees' salaries named `name` (`sum:`, `average:` …), read as `type`.
    static func salary(_ name: String, _ function: String, _ type: NSAttributeType = .doubleAttributeType) -> NSExpressionDescription {
        let description = NSExpressionDescription()
        description.name = name
        description.expression = NSExpression(forFunction: function, arguments: [NSExpression(forKeyPath: "salary")])
        description.expressionResultType = type
        return description
    }

    /// A dictionary request for Employee rows.
    static func dictionaries(_ properties: [Any], groupedBy grouping: [Any]? = nil, sortedBy sorts: [NSSortDescriptor] = []) -> NSFetchRequest<NSDictionary> {
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = properties
        request.propertiesToGroupBy = grouping
        request.sortDescriptors = sorts
        return request
    }

    @Test func objectIDResultsIncludePendingInserts() throws {
        let stack = try Self.staff()
        let new = stack.insert("Employee", ["name": "New"])
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Employee")
        request.resultType = .managedObjectIDResultType
        let ids = try stack.context.fetch(request)
        #expect(ids.count == 5)
        #expect(ids.contains(new.objectID))
    }

    @Test func countResultTypeAnswersOneNumber() throws {
        let stack = try Self.staff()
        let request = NSFetchRequest<NSNumber>(entityName: "Employee")
        request.resultType = .countResultType
        request.predicate = NSPredicate(format: "age == 30")
        #expect(try stack.context.fetch(request).map(\.intValue) == [2])
    }

    @Test func dictionaryResultsHoldThePropertiesToFetchWithRelationshipsAsIDs() throws {
        let stack = try Self.staff()
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "department"]
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let rows = try stack.context.fetch(request)
        #expect(rows.count == 4)
        #expect(Set(rows[0].allKeys.compactMap { $0 as? String }) == ["name", "department"])
        #expect(rows[0]["department"] is NSManagedObjectID)
        #expect(rows[2]["name"] as? String == "Cid")
        #expect(rows[2]["department"] == nil)
    }

    @Test func groupingWithASumAndAHavingPredicate() throws {
        let stack = try Self.staff()
        let request = Self.dictionaries(["age", Self.salary("total", "sum:")], groupedBy: ["age"], sortedBy: [NSSortDescriptor(key: "age", ascending: true)])
        let groups = try stack.context.fetch(request)
        #expect(groups.map { ($0["age"] as? NSNumber)?.intValue } == [30, 40, 50])
        #expect(groups.map { ($0["total"] as? NSNumber)?.doubleValue } == [300, 50, 300])

        request.havingPredicate = NSPredicate(format: "total > 100")
        #expect(try stack.context.fetch(request).map { ($0["age"] as? NSNumber)?.intValue } == [30, 50])
    }

    /// A having predicate may name a grouped property the results do not fetch, as SQL's HAVING may: the
    /// in-memory path read it from the result and dropped every group.
    @Test func aHavingPredicateNamesAGroupedPropertyNotFetched() throws {
        let stack = try Self.staff()
        let request = Self.dictionaries([Self.salary("total", "sum:")], groupedBy: ["age"], sortedBy: [NSSortDescriptor(key: "age", ascending: true)])
        request.havingPredicate = NSPredicate(format: "age > 35")
        #expect(try stack.context.fetch(request).map { ($0["total"] as? NSNumber)?.doubleValue } == [50, 300])
        request.havingPredicate = NSPredicate(format: "age > 35 AND total > 100")
        #expect(try stack.context.fetch(request).map { ($0["total"] as? NSNumber)?.doubleValue } == [300])
    }

    /// Plain dictionary results (no grouping, aggregate or distinct) sort by an expression description's
    /// name, as SQL's ORDER BY sorts by a column's alias: the in-memory store was asked to sort its rows
    /// by a key they do not have, and the fetch failed.
    @Test func plainDictionaryResultsSortByAnExpressionsName() throws {
        let stack = try Self.staff()
        let department = NSExpressionDescription()
        department.name = "unit"
        department.expression = NSExpression(forKeyPath: "department.name")
        department.expressionResultType = .stringAttributeType
        let request = Self.dictionaries(["name", department], sortedBy: [NSSortDescriptor(key: "unit", ascending: false), NSSortDescriptor(key: "name", ascending: true)])
        let rows = try stack.context.fetch(request)
        #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob", "Cid", "Meg"])
        #expect(rows.map { $0["unit"] as? String } == ["R&D", "R&D", nil, nil])
        request.fetchLimit = 1
        request.fetchOffset = 1
        #expect(try stack.context.fetch(request).map { $0["name"] as? String } == ["Bob"])
    }

    /// A value read as a date that is no number of seconds (a NaN salary) leaves its key out of the
    /// result, in both stores: the in-memory path put an `Any` holding an empty optional there.
    @Test func aValueReadAsADateThatIsNoNumberOfSecondsIsLeftOut() throws {
        // Without salary's validation (salary >= 0), which a NaN fails.
        let stack = try TestStack(model: TestModel.make { entities, _ in
            (entities["Employee"]?.propertiesByName["salary"] as? NSAttributeDescription)?.setValidationPredicates(nil, withValidationWarnings: nil)
        })
        for (name, salary) in [("Ann", Double.nan), ("Bob", 200), ("Cid", 50), ("Meg", 300)] {
            stack.insert("Employee", ["name": name, "salary": salary])
        }
        try stack.context.save()
        let when = NSExpressionDescription()
        when.name = "when"
        when.expression = NSExpression(forKeyPath: "salary")
        when.expressionResultType = .dateAttributeType
        let rows = try stack.context.fetch(Self.dictionaries(["name", when], sortedBy: [NSSortDescriptor(key: "name", ascending: true)]))
        #expect(rows.map { $0["name"] as? String } == ["Ann", "Bob", "Cid", "Meg"])
        #expect(rows[0]["when"] == nil)
        #expect(rows[1]["when"] as? Date == Date(timeIntervalSinceReferenceDate: 200))
    }

    /// `sum:` of a Boolean attribute counts the true values, in both stores (the SQLite store read the sum
    /// as a Boolean).
    @Test func theSumOfABooleanIsANumber() throws {
        let stack = try Self.staff()
        let inactive = try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).filter { $0.value(forKey: "name") as? String == "Cid" }
        inactive.first?.setValue(false, forKey: "active")
        try stack.context.save()
        let count = NSExpressionDescription()
        count.name = "active"
        count.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "active")])
        let rows = try stack.context.fetch(Self.dictionaries([count]))
        #expect((rows.first?["active"] as? NSNumber)?.intValue == 3)
    }

    /// Grouped results sort by a grouped property they do not fetch, and by a key path, as SQL's ORDER BY
    /// does, in both stores.
    @Test func groupedResultsSortByUnfetchedKeysAndKeyPaths() throws {
        let stack = try Self.staff()
        let total = Self.salary("total", "sum:")
        let byAge = Self.dictionaries([total], groupedBy: ["age"], sortedBy: [NSSortDescriptor(key: "age", ascending: false)])
        #expect(try stack.context.fetch(byAge).map { ($0["total"] as? NSNumber)?.doubleValue } == [300, 50, 300])

        let byDepartment = Self.dictionaries(["department", total], groupedBy: ["department"], sortedBy: [NSSortDescriptor(key: "department.name", ascending: false)])
        let groups = try stack.context.fetch(byDepartment)
        // Descending: R&D first, then the group without a department (NULL sorts first ascending).
        #expect(groups.map { ($0["total"] as? NSNumber)?.doubleValue } == [300, 350])

        // An expression named like a property sorts by its own value, not the property's.
        let bySum = Self.dictionaries(["age", Self.salary("salary", "sum:")], groupedBy: ["age"],
                                      sortedBy: [NSSortDescriptor(key: "salary", ascending: true), NSSortDescriptor(key: "age", ascending: true)])
        #expect(try stack.context.fetch(bySum).map { ($0["age"] as? NSNumber)?.intValue } == [40, 30, 50])
    }

    /// An expression description's `expressionResultType` is the type the value is read as, in both
    /// stores: an average typed as an integer is truncated, a count typed as a double is one.
    @Test func expressionResultTypeIsTheTypeOfTheValue() throws {
        let stack = try Self.staff()
        let request = Self.dictionaries([Self.salary("average", "average:", .integer64AttributeType), Self.salary("count", "count:", .doubleAttributeType)])
        let row = try #require(try stack.context.fetch(request).first)
        // (100 + 200 + 50 + 300) / 4 = 162.5
        let average = try #require(row["average"] as? NSNumber)
        #expect(average.int64Value == 162 && average.doubleValue == 162)
        let count = try #require(row["count"] as? NSNumber)
        #expect(count.doubleValue == 4 && String(cString: count.objCType) == "d")
        request.propertiesToFetch = [Self.salary("count", "count:", .decimalAttributeType)]
        #expect(try stack.context.fetch(request).first?["count"] as? Decimal == 4)
    }

    /// Distinct results keep the first of each set of equal dictionaries, in order.
    @Test func distinctResultsKeepTheFirstOfEqualResults() throws {
        let stack = try Self.staff()
        let request = Self.dictionaries(["age", "department"], sortedBy: [NSSortDescriptor(key: "age", ascending: true)])
        request.returnsDistinctResults = true
        let rows = try stack.context.fetch(request)
        #expect(rows.map { ($0["age"] as? NSNumber)?.intValue } == [30, 40, 50])
    }

    /// Aggregates over no value: `count:` is 0; `sum:`, `average:`, `min:` and `max:` have none (SQL's
    /// NULL), so the key is left out, in both stores alike.
    @Test func aggregatesOverNothingHaveNoValueButACount() throws {
        let stack = try TestStack()
        let request = Self.dictionaries(["sum:", "average:", "min:", "max:", "count:"].map { function in
            Self.salary(String(function.dropLast()), function, function == "count:" ? .integer64AttributeType : .doubleAttributeType)
        })
        let rows = try stack.context.fetch(request)
        #expect(rows.count == 1)
        #expect(Set(rows.first?.allKeys.compactMap { $0 as? String } ?? []) == ["count"])
        #expect((rows.first?["count"] as? NSNumber)?.intValue == 0)
    }

    @Test func returnsDistinctResultsDropsRepeatedDictionaries() throws {
        let stack = try Self.staff()
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["age"]
        #expect(try stack.context.fetch(request).count == 4)
        request.returnsDistinctResults = true
        #expect(try stack.context.fetch(request).count == 3)
    }

    @Test func fetchOffsetSkipsTheFirstResults() throws {
        let stack = try Self.staff()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.fetchOffset = 1
        request.fetchLimit = 2
        #expect(try stack.context.fetch(request).map { $0.string("name") } == ["Bob", "Cid"])
    }

    @Test func includesSubentitiesDecidesWhetherManagersAreFetchedAsEmployees() throws {
        let stack = try Self.staff()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        #expect(try stack.context.fetch(request).count == 4)
        request.includesSubentities = false
        #expect(try stack.context.fetch(request).contains { $0.entity.name == "Manager" } == false)
        #expect(try stack.context.fetch(request).count == 3)
    }

    @Test func prefetchingLoadsTheRelationshipKeyPaths() throws {
        let stack = try Self.staff()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "name == 'Ann'")
        request.relationshipKeyPathsForPrefetching = ["department"]
        let ann = try #require(try stack.context.fetch(request).first)
        #expect(!ann.hasFault(forRelationshipNamed: "department"))
        #expect(ann.object("department")?.isFault == false)
    }

    /// A request made by entity name is resolved against the context that runs it, as Core Data's is.
    @Test func aFetchByNameResolvesTheRequestsEntity() throws {
        let stack = try TestStack()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        #expect(request.entity == nil)
        _ = try stack.context.fetch(request)
        #expect(request.entity === stack.model.entitiesByName["Employee"])
        #expect(request.entityName == "Employee")
    }

    /// A path back through a to-many (`department.employees`) reaches each object once per step: all of
    /// them come back realized, with their relationships loaded.
    @Test func prefetchingAPathBackThroughAToManyLoadsEachObjectOnce() throws {
        let stack = try TestStack()
        let department = stack.insert("Department", ["name": "R&D"])
        for index in 0..<300 { stack.insert("Employee", ["name": "E\(index)", "department": department]) }
        try stack.context.save()
        let reader = stack.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.relationshipKeyPathsForPrefetching = ["department.employees"]
        let employees = try reader.fetch(request)
        #expect(employees.count == 300)
        let fetchedDepartment = try #require(employees.first?.object("department"))
        #expect(!fetchedDepartment.isFault && !fetchedDepartment.hasFault(forRelationshipNamed: "employees"))
        #expect(fetchedDepartment.objects("employees").count == 300)
        #expect(employees.allSatisfy { !$0.isFault })
    }

    @Test func executeRunsTheRequestInTheContextThatIsPerforming() throws {
        let stack = try Self.staff()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "age == 30")
        let found = try stack.context.performAndWait { try request.execute() }
        #expect(found.count == 2)
        #expect(found.allSatisfy { $0.managedObjectContext === stack.context })
    }
}

@Suite("Context: perform")
struct PerformTests {
    @Test func performRunsTheBlockLaterOnTheContextsQueueAndProcessesPendingChanges() async throws {
        let stack = try TestStack()
        let context = stack.context
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            context.perform {
                _ = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
                context.perform { done.resume() }
            }
        }
        #expect(recorder.notifications.count == 1)
        #expect(context.performAndWait { context.insertedObjects.count } == 1)
    }

    @Test func performAndWaitIsReentrant() throws {
        let stack = try TestStack()
        let context = stack.context
        let value = context.performAndWait {
            context.performAndWait { 42 }
        }
        #expect(value == 42)
    }

    @Test func asyncPerformReturnsTheBlocksResult() async throws {
        let stack = try Self.seeded()
        let context = stack.context
        let names = try await context.perform {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).compactMap { $0.string("name") }
        }
        #expect(names == ["Ann"])
    }

    @Test func theEndOfAPerformAndWaitBlockProcessesPendingChanges() throws {
        let stack = try TestStack()
        let department = stack.insert("Department", ["name": "R&D"])
        let employee = stack.insert("Employee", ["name": "Ann", "department": department])
        try stack.context.save()
        stack.context.performAndWait { stack.context.delete(employee) }
        #expect(department.objects("employees").isEmpty)
    }

    static func seeded() throws -> TestStack {
        let stack = try TestStack()
        try stack.seed("Employee", ["name": "Ann"])
        return stack
    }
}

/// A store that keeps rows in a dictionary and reports none back from a save: the context must then take
/// what it sent, one version on, as the stored row (and a new row as sent, at version 1).
final class SilentStore: NSPersistentStore, @unchecked Sendable {
    // Qualified by the module: this file is compiled into two test targets that run in one process.
    static let typeName = String(reflecting: SilentStore.self)
    override var type: String { Self.typeName }
    var rows: [Int64: StoreRow] = [:]
    /// Report the updated rows, in the reverse of the request's order (a store breaking the contract).
    var reportsUpdatedRowsReversed = false
    private var nextKey: Int64 = 1

    override func newObjectIDs(for entity: NSEntityDescription, count: Int) throws -> [NSManagedObjectID] {
        defer { nextKey += Int64(count) }
        return (0..<count).map { objectID(for: entity, primaryKey: nextKey + Int64($0)) }
    }

    override func row(for objectID: NSManagedObjectID) throws -> StoreRow? { primaryKey(of: objectID).flatMap { rows[$0] } }

    override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        var conflicts: [(objectID: NSManagedObjectID, expectedVersion: Int64, stored: StoreRow?)] = []
        for (row, expected) in request.updated {
            let stored = primaryKey(of: row.objectID).flatMap { rows[$0] }
            if stored?.version != expected { conflicts.append((row.objectID, expected, stored)) }
        }
        if !conflicts.isEmpty { throw StoreError.conflicts(conflicts) }
        var written: [StoreRow] = []
        for (row, expected) in request.updated {
            let stored = StoreRow(objectID: row.objectID, version: expected + 1, values: row.values)
            rows[primaryKey(of: row.objectID)!] = stored
            written.append(stored)
        }
        for row in request.inserted { rows[primaryKey(of: row.objectID)!] = row }
        return StoreSaveResult(updated: reportsUpdatedRowsReversed ? written.reversed() : [])
    }
}

/// A store type registered by the tests: no data, metadata with a greeting.
final class GreetingStore: NSPersistentStore, @unchecked Sendable {
    // Qualified by the module, as SilentStore's: the two test targets that compile this file run in one
    // process, in parallel, and one registration under a shared name would replace the other.
    static let typeName = String(reflecting: GreetingStore.self)
    override var type: String { Self.typeName }
    override func loadMetadata() throws {
        var metadata = freshMetadata()
        metadata["Greeting"] = "hello"
        self.metadata = metadata
    }
}

@Suite("Coordinator and container")
struct CoordinatorTests {
    @Test func addingAStoreOfAnUnknownTypeFailsWith134000() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let error = try #require(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: "NoSuchStore", configurationName: nil, at: nil, options: nil)
        }
        #expect(error.code == NSPersistentStoreInvalidTypeError)
        #expect(error.code == 134000)
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test func aRemovedStoreIsNoLongerTheCoordinators() throws {
        let stack = try TestStack()
        #expect(stack.store.persistentStoreCoordinator === stack.coordinator)
        try stack.coordinator.remove(stack.store)
        #expect(stack.coordinator.persistentStores.isEmpty)
        #expect(stack.store.persistentStoreCoordinator == nil)
        #expect(throws: NSError.self) { try stack.coordinator.remove(stack.store) }
    }

    @Test func metadataHoldsTheStoreTypeAndUUID() throws {
        let stack = try TestStack()
        let metadata = stack.coordinator.metadata(for: stack.store)
        #expect(metadata[NSStoreTypeKey] as? String == TestStack.storeType)
        #expect(metadata[NSStoreUUIDKey] as? String == stack.store.identifier)
        #expect(UUID(uuidString: stack.store.identifier) != nil)
    }

    @Test func aRegisteredStoreClassIsCreatedForItsType() throws {
        NSPersistentStoreCoordinator.registerStoreClass(GreetingStore.self, forStoreType: GreetingStore.typeName)
        #expect(NSPersistentStoreCoordinator.registeredStoreTypes[GreetingStore.typeName] != nil)
        #expect(NSPersistentStoreCoordinator.registeredStoreTypes[NSInMemoryStoreType] != nil)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let store = try coordinator.addPersistentStore(ofType: GreetingStore.typeName, configurationName: nil, at: nil)
        #expect(store is GreetingStore)
        #expect(coordinator.metadata(for: store)["Greeting"] as? String == "hello")
        #expect(coordinator.metadata(for: store)[NSStoreTypeKey] as? String == GreetingStore.typeName)
    }

    @Test func aStoreThatReportsNoRowsLeavesTheContextWithTheVersionsItWrote() throws {
        NSPersistentStoreCoordinator.registerStoreClass(SilentStore.self, forStoreType: SilentStore.typeName)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let store = try #require(try coordinator.addPersistentStore(ofType: SilentStore.typeName, configurationName: nil, at: nil) as? SilentStore)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
            company.setValue("Acme", forKey: "name")
            try context.save()
            let key = try #require(store.primaryKey(of: company.objectID))
            #expect(store.rows[key]?.version == 1)
            // Each save expects the version the previous one wrote: no conflict, one version on each time.
            for (index, name) in ["Acme 2", "Acme 3"].enumerated() {
                company.setValue(name, forKey: "name")
                try context.save()
                #expect(store.rows[key]?.version == Int64(index + 2))
                #expect(store.rows[key]?.value(named: "name") as? String == name)
            }
            // A row changed behind the context's back is a conflict for the default merge policy.
            store.rows[key] = StoreRow(objectID: company.objectID, version: 7, values: store.rows[key]!.values)
            company.setValue("Acme 4", forKey: "name")
            let error = try #require(throws: NSError.self) { try context.save() }
            #expect(error.code == NSManagedObjectMergeError)
        }
    }

    /// A store that reports its updated rows out of order: each object keeps the row of its own (the
    /// one it sent, one version on), never another object's.
    @Test func rowsReportedOutOfOrderGoToNoOtherObject() throws {
        NSPersistentStoreCoordinator.registerStoreClass(SilentStore.self, forStoreType: SilentStore.typeName)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let store = try #require(try coordinator.addPersistentStore(ofType: SilentStore.typeName, configurationName: nil, at: nil) as? SilentStore)
        store.reportsUpdatedRowsReversed = true
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let companies = ["Acme", "Globex", "Initech"].map { name in
                let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
                company.setValue(name, forKey: "name")
                return company
            }
            try context.save()
            for round in 1...2 {
                for company in companies { company.setValue("\(company.value(forKey: "name") as? String ?? "?") \(round)", forKey: "name") }
                try context.save()
                for company in companies {
                    #expect(company.committedValues(forKeys: ["name"])["name"] as? String == company.value(forKey: "name") as? String)
                }
            }
        }
    }

    @Test func aContainerLoadsAnInMemoryStoreAndHasOneViewContext() throws {
        let container = Self.inMemoryContainer()
        var reports: [(String, Error?)] = []
        container.loadPersistentStores { description, error in reports.append((description.type, error)) }
        #expect(reports.count == 1)
        #expect(reports.first?.0 == NSInMemoryStoreType)
        #expect(reports.first?.1 == nil)
        #expect(container.persistentStoreCoordinator.persistentStores.map(\.type) == [NSInMemoryStoreType])
        let view = container.viewContext
        #expect(view === container.viewContext)
        #expect(view.concurrencyType == .mainQueueConcurrencyType)
        #expect(view.persistentStoreCoordinator === container.persistentStoreCoordinator)
    }

    @Test func backgroundContextsAreNewPrivateContextsOnTheContainersCoordinator() throws {
        let container = Self.inMemoryContainer()
        container.loadPersistentStores { _, _ in }
        let background = container.newBackgroundContext()
        #expect(background !== container.newBackgroundContext())
        #expect(background.concurrencyType == .privateQueueConcurrencyType)
        #expect(background.persistentStoreCoordinator === container.persistentStoreCoordinator)
        try background.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Company", into: background).setValue("Acme", forKey: "name")
            try background.save()
        }
        let companies = try container.viewContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Company"))
        #expect(companies.map { $0.string("name") } == ["Acme"])
    }

    @Test func performBackgroundTaskRunsTheBlockOnAPrivateContext() async throws {
        let container = Self.inMemoryContainer()
        container.loadPersistentStores { _, _ in }
        let type = await withCheckedContinuation { (done: CheckedContinuation<NSManagedObjectContext.ConcurrencyType, Never>) in
            container.performBackgroundTask { context in
                NSEntityDescription.insertNewObject(forEntityName: "Company", into: context).setValue("Acme", forKey: "name")
                try? context.save()
                done.resume(returning: context.concurrencyType)
            }
        }
        #expect(type == .privateQueueConcurrencyType)
        let count = try await container.performBackgroundTask { context in
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Company"))
        }
        #expect(count == 1)
    }

    /// The container's members are `open`, as Apple's are: a subclass configures every background
    /// context by overriding `newBackgroundContext()`, and `performBackgroundTask` uses the override (a
    /// subclass outside the module could not override them before).
    @Test func aContainerSubclassOverridesNewBackgroundContext() async throws {
        let container = NamingContainer(name: "GraphTests", managedObjectModel: TestModel.make())
        container.persistentStoreDescriptions = Self.inMemoryContainer().persistentStoreDescriptions
        container.loadPersistentStores { _, _ in }
        #expect(container.newBackgroundContext().name == "background")
        let name = try await container.performBackgroundTask { context in context.name }
        #expect(name == "background")
        let named = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
            container.performBackgroundTask { context in done.resume(returning: context.name) }
        }
        #expect(named == "background")
        #expect(container.viewContext.name == "main")
        #expect(container.name == "Named GraphTests")
    }

    /// Names of Apple's Swift overlay that code written for Apple platforms uses: the concurrency types'
    /// short names, `CocoaError`'s Core Data codes, shortcuts and userInfo readers, and the properties
    /// Apple declares non-optional (each line here failed to compile before).
    @Test func applesOverlayNamesCompileAndAnswer() throws {
        let privateContext = NSManagedObjectContext(.privateQueue)
        #expect(privateContext.concurrencyType == .privateQueueConcurrencyType)
        let type: NSManagedObjectContextConcurrencyType = .mainQueue
        #expect(type == .mainQueueConcurrencyType)

        let stack = try TestStack()
        stack.insert("Employee", ["age": 40])
        do {
            try stack.context.save()
            Issue.record("a save without a mandatory name succeeded")
        } catch let error as CocoaError where error.code == .validationMissingMandatoryProperty {
            #expect(error.validationKey == "name")
            #expect((error.validationObject as? NSManagedObject)?.entity.name == "Employee")
            #expect(error.code == CocoaError.validationMissingMandatoryProperty)
        }
        stack.context.rollback()

        let company = stack.insert("Company", ["name": "Acme"])
        try stack.context.save()
        let id = company.objectID
        let other = stack.newContext()
        try other.performAndWait {
            other.delete(try other.existingObject(with: id))
            try other.save()
        }
        let fresh = stack.newContext()
        do {
            _ = try fresh.performAndWait { try fresh.existingObject(with: id) }
            Issue.record("a deleted object was found")
        } catch CocoaError.managedObjectReferentialIntegrity {
        } catch {
            Issue.record("another error: \(error)")
        }
        #expect(CocoaError.Code.persistentStoreSaveConflicts.rawValue == 134050)
        #expect(CocoaError.Code.sqlite.rawValue == NSSQLiteError)

        let name = try #require(stack.model.entitiesByName["Employee"]?.attributesByName["name"])
        #expect(name.entity.name == "Employee")
        #expect(name.entity.managedObjectModel.entitiesByName["Company"] != nil)
    }

    /// A context subclass overrides what Apple's lets subclasses override (`save()`, `fetch(_:)`,
    /// `processPendingChanges()` …): these were `public`, or in extensions, and could not be.
    @Test func aContextSubclassOverridesSaveAndFetch() throws {
        let stack = try TestStack()
        let context = CountingContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        stack.insert("Company", ["name": "Acme"], into: context)
        try context.save()
        #expect(context.saves == 1)
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Company")).count == 1)
        #expect(context.fetches == 1)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Company")) == 1)
        #expect(context.counts == 1)
        #expect(context.pendingChangeRuns > 0, "save() and fetch(_:) process pending changes through the override")
    }

    static func inMemoryContainer() -> NSPersistentContainer {
        let container = NSPersistentContainer(name: "GraphTests", managedObjectModel: TestModel.make())
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        return container
    }
}

@Suite("Context: the model's default values")
struct DefaultValueTests {
    /// A new object's defaults answer casts as set and fetched values do: numbers are NSNumbers, so
    /// `as? Int16` works on Linux (a Swift `Int` in an `Any` would not cast to `Int16`).
    @Test func numericDefaultsCastLikeStoredNumbers() throws {
        let stack = try TestStack(model: TestModel.make { entities, _ in
            let score = NSAttributeDescription()
            score.name = "score"
            score.attributeType = .floatAttributeType
            score.defaultValue = 0.1
            entities["Badge"]!.properties.append(score)
        })
        let ann = stack.insert("Employee", ["name": "Ann"])
        #expect(ann.value(forKey: "age") as? Int16 == 30)
        #expect(ann.value(forKey: "age") as? Int == 30)
        #expect(ann.value(forKey: "salary") as? Double == 0)
        #expect(ann.value(forKey: "active") as? Bool == true)
        let badge = stack.insert("Badge", [:])
        #expect(badge.value(forKey: "score") as? Float == 0.1)
    }
}

/// An Xcode model's limits become validation checks with Core Data's error codes: string and binary
/// lengths (1670 too short, 1660 too long), dates (1640 too soon, 1630 too late), numbers (1620, 1610).
@Suite("Validation: limits read from a model file")
struct ModelFileLimitTests {
    private func context() throws -> (NSManagedObjectContext, NSPersistentStoreCoordinator) {
        let folder = ScratchFiles.path("Limits.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                <entity name="Limited" representedClassName="NSManagedObject" syncable="YES">
                    <attribute name="code" optional="YES" attributeType="String" minValueString="2" maxValueString="4"/>
                    <attribute name="blob" optional="YES" attributeType="Binary" minValueString="1" maxValueString="3"/>
                    <attribute name="when" optional="YES" attributeType="Date" minDateTimeInterval="0" maxDateTimeInterval="86400"/>
                    <attribute name="count" optional="YES" attributeType="Integer 32" minValueString="1" maxValueString="9"/>
                </entity>
            </model>
            """
        try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
        let model = try #require(NSManagedObjectModel(contentsOf: folder))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(ofType: TestStack.storeType, configurationName: nil, at: TestStack.newStoreURL(), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (context, coordinator)
    }

    /// Each case: the key, a value outside its limits, the error code.
    private static func outside(_ index: Int) -> (String, Any, Int) {
        [("code", "x" as Any, NSValidationStringTooShortError), ("code", "xxxxx", NSValidationStringTooLongError),
         ("blob", Data(), NSValidationStringTooShortError), ("blob", Data([1, 2, 3, 4]), NSValidationStringTooLongError),
         ("when", Date(timeIntervalSinceReferenceDate: -1), NSValidationDateTooSoonError),
         ("when", Date(timeIntervalSinceReferenceDate: 86401), NSValidationDateTooLateError),
         ("count", 0, NSValidationNumberTooSmallError), ("count", 10, NSValidationNumberTooLargeError)][index]
    }

    @Test(arguments: 0..<8)
    func aValueOutsideTheLimitsFailsWithItsCode(_ index: Int) throws {
        let (key, value, code) = Self.outside(index)
        let (context, coordinator) = try context()
        try withExtendedLifetime(coordinator) {
            let object = NSEntityDescription.insertNewObject(forEntityName: "Limited", into: context)
            object.setValue(value, forKey: key)
            do {
                try context.save()
                Issue.record("\(key) = \(value) saved")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain && error.code == code, "\(key) = \(value): \(error)")
                #expect(error.userInfo[NSValidationKeyErrorKey] as? String == key)
            }
            // Within the limits, it saves.
            object.setValue(["code": "xyz", "blob": Data([1, 2]), "when": Date(timeIntervalSinceReferenceDate: 10), "count": 5][key], forKey: key)
            try context.save()
        }
    }
}

/// The context remembers the last entity found by name and the last entity checked to be of its model
/// (inserting objects one by one asks both per object); what it remembers follows its coordinator.
@Suite("Context: entity lookups")
struct EntityLookupTests {
    private func context(with coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test func insertingByNameTakesTheEntityOfTheContextsCurrentCoordinator() throws {
        let first = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let second = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let context = context(with: first)
        context.performAndWait {
            for name in ["Company", "Employee", "Company", "Company"] {
                let object = NSEntityDescription.insertNewObject(forEntityName: name, into: context)
                #expect(object.entity === first.managedObjectModel.entitiesByName[name])
            }
            #expect(NSEntityDescription.entity(forEntityName: "Nothing", in: context) == nil)

            context.reset()
            context.persistentStoreCoordinator = second
            #expect(NSEntityDescription.entity(forEntityName: "Company", in: context) === second.managedObjectModel.entitiesByName["Company"])
            let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
            #expect(company.entity === second.managedObjectModel.entitiesByName["Company"])
        }
    }

    @Test func insertingAnObjectOfAnotherModelStopsAfterObjectsOfTheContextsOwn() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let foreign = TestModel.make().entitiesByName["Company"]!
            context.performAndWait {
                _ = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
                _ = NSManagedObject(entity: foreign, insertInto: context)
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("insert(_:): the entity Company is not an entity of this context's model."), "stopped with another message: \(output)")
    }
}

/// A container that names its contexts, through the members Apple's container lets subclasses override.
final class NamingContainer: NSPersistentContainer, @unchecked Sendable {
    override func newBackgroundContext() -> NSManagedObjectContext {
        let context = super.newBackgroundContext()
        context.name = "background"
        return context
    }

    override var name: String { "Named " + super.name }

    override var viewContext: NSManagedObjectContext {
        let context = super.viewContext
        context.name = "main"
        return context
    }
}

/// A context that counts the calls its overrides see.
final class CountingContext: NSManagedObjectContext, @unchecked Sendable {
    var saves = 0, fetches = 0, counts = 0, pendingChangeRuns = 0

    override func save() throws {
        saves += 1
        try super.save()
    }

    override func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        fetches += 1
        return try super.fetch(request)
    }

    override func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        counts += 1
        return try super.count(for: request)
    }

    override func processPendingChanges() {
        pendingChangeRuns += 1
        super.processPendingChanges()
    }
}
