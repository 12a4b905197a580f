import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate

// The "Life cycle" rules of spec/coredata-behaviours.md: the hooks a managed object gets, its flags and
// its change bookkeeping. Hooks are observed through `HookedEmployee` (TestStack.swift).

@Suite("Life cycle: insertion and awakeFromInsert")
struct InsertionTests {
    @Test func initEntityInsertIntoInsertsTheObjectAndAwakesItOnce() throws {
        let (stack, _) = try TestStack.hooked()
        let entity = try #require(stack.model.entitiesByName["Employee"])
        let employee = HookedEmployee(entity: entity, insertInto: stack.context)
        #expect(employee.isInserted)
        #expect(employee.managedObjectContext === stack.context)
        #expect(stack.context.insertedObjects.contains(employee))
        #expect(employee.count("awakeFromInsert") == 1)
    }

    @Test func insertNewObjectCreatesAnObjectOfTheEntitysClassInsertedAndAwoken() throws {
        let (stack, _) = try TestStack.hooked()
        let object = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: stack.context)
        let employee = try #require(object as? HookedEmployee)
        #expect(employee.isInserted)
        #expect(stack.context.insertedObjects == [employee])
        #expect(employee.count("awakeFromInsert") == 1)
    }

    @Test func initContextFindsTheEntityOfTheClassAndInserts() throws {
        let (stack, _) = try TestStack.hooked()
        let employee = HookedEmployee(context: stack.context)
        #expect(employee.entity.name == "Employee")
        #expect(employee.isInserted)
        #expect(employee.count("awakeFromInsert") == 1)
    }

    @Test func anObjectCreatedWithoutAContextAwakesWhenFirstInsertedOnly() throws {
        let (stack, _) = try TestStack.hooked()
        let entity = try #require(stack.model.entitiesByName["Employee"])
        let employee = HookedEmployee(entity: entity, insertInto: nil)
        #expect(!employee.isInserted)
        #expect(employee.managedObjectContext == nil)
        #expect(employee.count("awakeFromInsert") == 0)
        stack.context.insert(employee)
        stack.context.insert(employee)
        #expect(employee.isInserted)
        #expect(employee.count("awakeFromInsert") == 1)
    }

    @Test func modelDefaultValuesAreSetBeforeAwakeFromInsert() throws {
        let (stack, _) = try TestStack.hooked()
        let employee = HookedEmployee(context: stack.context)
        #expect((employee.seen["awakeFromInsert.age"] as? NSNumber)?.intValue == 30)
        #expect((employee.seen["awakeFromInsert.active"] as? NSNumber)?.boolValue == true)
    }

    @Test func awakeFromInsertRunsOnceInALifeEvenAcrossDeleteAndInsertAgain() throws {
        let (stack, _) = try TestStack.hooked()
        let employee = HookedEmployee(context: stack.context)
        stack.context.delete(employee)
        stack.context.insert(employee)
        #expect(employee.isInserted)
        #expect(!employee.isDeleted)
        #expect(employee.count("awakeFromInsert") == 1)
    }

    @Test func primitiveValuesSetInAwakeFromInsertAreStartingValuesNotChanges() throws {
        let (stack, log) = try TestStack.hooked()
        log.awakeFromInsert = { $0.setPrimitiveValue("new@example.com", forKey: "email") }
        let employee = stack.insert("Employee", ["name": "Ann"])
        #expect(employee.string("email") == "new@example.com")
        #expect(employee.changedValuesForCurrentEvent()["email"] == nil)
        try stack.context.save()
        #expect(try stack.stored("Employee") { $0.string("email") } == ["new@example.com"])
    }
}

@Suite("Life cycle: awakeFromFetch")
struct AwakeFromFetchTests {
    @Test func awakeFromFetchRunsOnceWhenAFaultIsFilled() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let (context, _) = stack.newHookedContext()
        let employee = try #require(context.object(with: id) as? HookedEmployee)
        #expect(employee.isFault)
        #expect(employee.count("awakeFromFetch") == 0)
        #expect(employee.string("name") == "Ann")
        #expect(!employee.isFault)
        #expect(employee.count("awakeFromFetch") == 1)
        #expect(employee.seen["awakeFromFetch.isFault"] as? Bool == false)
        _ = employee.int("age")
        #expect(employee.count("awakeFromFetch") == 1)

        // Fetched objects are faults too, filled on first use.
        try stack.seed("Employee", ["name": "Bob"])
        let bob = try #require(try stack.fetch("Employee", "name == 'Bob'", in: context).first as? HookedEmployee)
        #expect(bob.count("awakeFromFetch") == 0)
        _ = bob.string("name")
        #expect(bob.count("awakeFromFetch") == 1)
    }

    @Test func settingAValueInAwakeFromFetchDoesNotDirtyTheObject() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let (context, log) = stack.newHookedContext()
        log.awakeFromFetch = { $0.setValue("warm", forKey: "cache") }
        let employee = context.object(with: id)
        _ = employee.string("name")
        #expect(employee.string("cache") == "warm")
        #expect(!employee.isUpdated)
        #expect(!employee.hasChanges)
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        context.processPendingChanges()
        #expect(log.events("notification ObjectsDidChange").isEmpty)
    }

    /// Change processing is off in awakeFromFetch: a persistent property set there leaves no old value
    /// for the current event either (nothing would end that event for the object).
    @Test func aPersistentValueSetInAwakeFromFetchRecordsNoEventValue() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let (context, log) = stack.newHookedContext()
        log.awakeFromFetch = { $0.setValue("ann@x", forKey: "email") }
        let employee = context.object(with: id)
        _ = employee.string("name")
        #expect(employee.string("email") == "ann@x")
        context.processPendingChanges()
        #expect(employee.changedValuesForCurrentEvent().isEmpty)
        #expect(context.updatedObjects.isEmpty)
    }
}

@Suite("Life cycle: awake(fromSnapshotEvents:)")
struct SnapshotEventTests {
    @Test func snapshotEventTypesHaveApplesRawValues() {
        #expect(NSSnapshotEventType.undoInsertion.rawValue == 2)
        #expect(NSSnapshotEventType.undoDeletion.rawValue == 4)
        #expect(NSSnapshotEventType.undoUpdate.rawValue == 8)
        #expect(NSSnapshotEventType.rollback.rawValue == 16)
        #expect(NSSnapshotEventType.refresh.rawValue == 32)
        #expect(NSSnapshotEventType.mergePolicy.rawValue == 64)
    }

    @Test func rollbackSendsTheRollbackEventToChangedObjects() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        try stack.seed("Employee", ["name": "Untouched"])
        let all = try stack.fetch("Employee").compactMap { $0 as? HookedEmployee }
        for employee in all { _ = employee.string("name") }
        let ann = try #require(all.first { $0.objectID == id })
        ann.setValue("Anna", forKey: "name")
        stack.context.rollback()
        #expect(ann.snapshotEvents == [.rollback])
        #expect(ann.string("name") == "Ann")
        #expect(all.first { $0 !== ann }?.snapshotEvents == [])
    }

    @Test func refreshWithMergeSendsTheRefreshEvent() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let ann = try #require(stack.context.existingObject(with: id) as? HookedEmployee)
        ann.setValue(41, forKey: "age")
        stack.context.refresh(ann, mergeChanges: true)
        #expect(ann.snapshotEvents == [.refresh])
    }
}

@Suite("Life cycle: willSave and didSave")
struct SaveHookTests {
    /// Saved "Updated", "Deleted" and "Untouched", realized in the stack's context; then "Inserted" is
    /// inserted, "Updated" changed and "Deleted" deleted.
    static func threeKindsOfChange() throws -> (stack: TestStack, log: HookLog, byName: [String: HookedEmployee]) {
        let (stack, log) = try TestStack.hooked()
        for name in ["Updated", "Deleted", "Untouched"] { try stack.seed("Employee", ["name": name]) }
        var byName: [String: HookedEmployee] = [:]
        for case let employee as HookedEmployee in try stack.fetch("Employee") { byName[employee.string("name")!] = employee }
        byName["Inserted"] = try #require(stack.insert("Employee", ["name": "Inserted"]) as? HookedEmployee)
        byName["Updated"]!.setValue(41, forKey: "age")
        stack.context.delete(byName["Deleted"]!)
        return (stack, log, byName)
    }

    @Test func willSaveAndDidSaveRunOnceForEachInsertedUpdatedAndDeletedObject() throws {
        let (stack, _, byName) = try Self.threeKindsOfChange()
        try stack.context.save()
        for name in ["Inserted", "Updated", "Deleted"] {
            #expect(byName[name]!.count("willSave") == 1, "\(name)")
            #expect(byName[name]!.count("didSave") == 1, "\(name)")
        }
        #expect(byName["Untouched"]!.count("willSave") == 0)
        #expect(byName["Untouched"]!.count("didSave") == 0)
        #expect(byName["Inserted"]!.seen["willSave.isInserted"] as? Bool == true)
        #expect(byName["Deleted"]!.seen["willSave.isDeleted"] as? Bool == true)
    }

    @Test func aDeletedObjectIsDeletedDuringDidSaveAndAForgottenFaultAfterwards() throws {
        let (stack, _, byName) = try Self.threeKindsOfChange()
        try stack.context.save()
        let deleted = byName["Deleted"]!
        #expect(deleted.seen["didSave.isDeleted"] as? Bool == true)
        #expect(!deleted.isDeleted)
        #expect(deleted.isFault)
        #expect(deleted.managedObjectContext == nil)
    }

    @Test func aValueSetInWillSaveOnlyWhenItDiffersRunsWillSaveAgainAndSettles() throws {
        let (stack, log) = try TestStack.hooked()
        log.willSave = { employee in
            if employee.string("email") != "stamped@example.com" { employee.setValue("stamped@example.com", forKey: "email") }
        }
        let employee = try #require(stack.insert("Employee", ["name": "Ann"]) as? HookedEmployee)
        try stack.context.save()
        #expect(employee.count("willSave") == 2)
        #expect(employee.count("didSave") == 1)
        #expect(!stack.context.hasChanges)
        #expect(try stack.stored("Employee") { $0.string("email") } == ["stamped@example.com"])
    }

    @Test func aWillSaveThatChangesOneOfSeveralObjectsRunsAgainForThatOneOnly() throws {
        let (stack, log) = try TestStack.hooked()
        log.willSave = { employee in
            if employee.string("name") == "Ann" && employee.string("email") != "stamped@example.com" {
                employee.setValue("stamped@example.com", forKey: "email")
            }
        }
        let ann = try #require(stack.insert("Employee", ["name": "Ann"]) as? HookedEmployee)
        let bob = try #require(stack.insert("Employee", ["name": "Bob"]) as? HookedEmployee)
        let updated = try #require(stack.insert("Employee", ["name": "Cid"]) as? HookedEmployee)
        try stack.context.save()
        updated.setValue(30, forKey: "age")
        let carl = try #require(stack.insert("Employee", ["name": "Carl"]) as? HookedEmployee)
        try stack.context.save()
        #expect(ann.count("willSave") == 2)
        #expect(bob.count("willSave") == 1)
        #expect(updated.count("willSave") == 2)
        #expect(carl.count("willSave") == 1)
        for employee in [ann, bob, updated, carl] { #expect(employee.count("didSave") == (employee === updated ? 2 : 1)) }
        #expect(!stack.context.hasChanges)
    }

    @Test func objectsThatWillSaveInsertsOrDeletesAreValidatedAndGetWillSaveInTheSameSave() throws {
        let (stack, log) = try TestStack.hooked()
        try stack.seed("Employee", ["name": "Bob"])
        let bob = try #require(try stack.fetch("Employee").first as? HookedEmployee)
        var audit: HookedEmployee?
        log.willSave = { employee in
            guard employee.string("name") == "Ann", audit == nil, let context = employee.managedObjectContext else { return }
            context.delete(bob)
            // Set without change notifications: only its insertion tells the save about it.
            audit = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context) as? HookedEmployee
            audit?.setPrimitiveValue("Audit", forKey: "name")
        }
        let ann = try #require(stack.insert("Employee", ["name": "Ann"]) as? HookedEmployee)
        try stack.context.save()
        let inserted = try #require(audit)
        #expect(ann.count("willSave") == 1)
        #expect(bob.count("validateForDelete") == 1)
        #expect(bob.count("willSave") == 1)
        #expect(inserted.count("validateForInsert") == 1)
        #expect(inserted.count("willSave") == 1)
        #expect(try stack.stored("Employee", sortedBy: "name") { $0.string("name") } == ["Ann", "Audit"])
    }

    @Test func anObjectHandledAsUpdatedThenDeletedByWillSaveIsValidatedAsDeleted() throws {
        let (stack, log) = try TestStack.hooked()
        try stack.seed("Employee", ["name": "Bob"])
        let bob = try #require(try stack.fetch("Employee").first as? HookedEmployee)
        bob.setValue(50, forKey: "age")
        log.willSave = { employee in
            guard employee.string("name") == "Ann", !bob.isDeleted else { return }
            employee.managedObjectContext?.delete(bob)
        }
        stack.insert("Employee", ["name": "Ann"])
        try stack.context.save()
        #expect(bob.count("validateForUpdate") == 1)
        #expect(bob.count("validateForDelete") == 1)
        #expect(bob.count("willSave") == 2)
        #expect(bob.seen["willSave.isDeleted"] as? Bool == true)
        #expect(try stack.stored("Employee") { $0.string("name") } == ["Ann"])
    }

    @Test func anObjectACascadeDeletesAfterARoundStartsIsValidatedAndGetsWillSave() throws {
        let (stack, log) = try TestStack.hooked { entities, _ in
            entities["Department"]!.relationshipsByName["employees"]!.deleteRule = .cascadeDeleteRule
        }
        let department = stack.insert("Department", ["name": "R&D"])
        let bob = try #require(stack.insert("Employee", ["name": "Bob", "department": department]) as? HookedEmployee)
        try stack.context.save()
        log.willSave = { employee in
            if employee.string("name") == "Ann" && employee.string("email") == nil { employee.setValue("ann@example.com", forKey: "email") }
        }
        let ann = try #require(stack.insert("Employee", ["name": "Ann"]) as? HookedEmployee)
        // Deleted by an observer of the ObjectsDidChange that ends the first round: the cascade to Bob runs
        // as the next round starts.
        // Posted on this thread, inside save().
        nonisolated(unsafe) let (watched, doomed) = (ann, department)
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: stack.context, queue: nil) { note in
            let updated = note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? []
            if updated.contains(watched) && !doomed.isDeleted { stack.context.delete(doomed) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try stack.context.save()
        #expect(department.isDeleted == false && department.managedObjectContext == nil)
        #expect(bob.count("validateForDelete") == 1)
        #expect(bob.seen["willSave.isDeleted"] as? Bool == true)
        #expect(try stack.stored("Employee") { $0.string("name") } == ["Ann"])
        #expect(try stack.stored("Department") { $0.string("name") }.isEmpty)
    }

    @Test func aWillSaveThatSetsAValueEveryTimeNeverSettlesAndTheSaveFails() throws {
        let (stack, log) = try TestStack.hooked()
        log.willSave = { $0.setValue("stamped@example.com", forKey: "email") }
        stack.insert("Employee", ["name": "Ann"])
        let error = try #require(stack.context.saveError())
        #expect(error.localizedDescription.contains("still dirty after 1000 attempts"))
        #expect(try stack.fetch("Employee", in: stack.newContext()).isEmpty)
    }

    @Test func anObjectThatFailsValidationGetsNoWillSave() throws {
        let (stack, _) = try TestStack.hooked()
        let employee = try #require(stack.insert("Employee") as? HookedEmployee)
        #expect(stack.context.saveError()?.code == NSValidationMissingMandatoryPropertyError)
        #expect(employee.count("validateForInsert") == 1)
        #expect(employee.count("willSave") == 0)
        #expect(employee.count("didSave") == 0)
    }
}

@Suite("Life cycle: prepareForDeletion")
struct PrepareForDeletionTests {
    @Test func prepareForDeletionRunsInsideDeleteBeforeRelationshipsAreBroken() throws {
        let (stack, _) = try TestStack.hooked()
        let department = stack.insert("Department", ["name": "R&D"])
        let employee = try #require(stack.insert("Employee", ["name": "Ann", "department": department]) as? HookedEmployee)
        try stack.context.save()

        stack.context.delete(employee)
        #expect(employee.count("prepareForDeletion") == 1)
        #expect(employee.seen["prepareForDeletion.department"] as? NSManagedObject === department)
        #expect(employee.seen["prepareForDeletion.inverseHoldsSelf"] as? Bool == true)
        #expect(employee.seen["prepareForDeletion.isDeleted"] as? Bool == true)

        stack.context.processPendingChanges()
        #expect(!department.objects("employees").contains(employee))
        #expect(employee.count("prepareForDeletion") == 1)
    }
}

@Suite("Life cycle: turning into a fault")
struct TurnIntoFaultTests {
    @Test func refreshWithoutMergeRunsWillAndDidTurnIntoFaultAroundFaulting() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let employee = try #require(stack.context.existingObject(with: id) as? HookedEmployee)
        stack.context.refresh(employee, mergeChanges: false)
        #expect(employee.isFault)
        #expect(employee.count("willTurnIntoFault") == 1)
        #expect(employee.count("didTurnIntoFault") == 1)
        #expect(employee.seen["willTurnIntoFault.isFault"] as? Bool == false)
        #expect(employee.seen["didTurnIntoFault.isFault"] as? Bool == true)
        // Already a fault: nothing turns.
        stack.context.refresh(employee, mergeChanges: false)
        #expect(employee.count("willTurnIntoFault") == 1)
    }

    @Test func resetTurnsEveryRealizedObjectIntoAFault() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let saved = try #require(stack.context.existingObject(with: id) as? HookedEmployee)
        let inserted = try #require(stack.insert("Employee", ["name": "Bob"]) as? HookedEmployee)
        stack.context.reset()
        for employee in [saved, inserted] {
            #expect(employee.isFault)
            #expect(employee.count("willTurnIntoFault") == 1)
            #expect(employee.count("didTurnIntoFault") == 1)
        }
    }
}

@Suite("Life cycle: flags")
struct FlagTests {
    @Test func aNewObjectIsInsertedAndASavedOneHasNoChangesUntilAValueIsSet() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee", ["name": "Ann"])
        #expect(employee.isInserted)
        #expect(!employee.isUpdated)
        #expect(!employee.isDeleted)
        #expect(!employee.isFault)
        #expect(employee.hasChanges)
        #expect(employee.faultingState == 0)
        try stack.context.save()
        #expect(!employee.isInserted)
        #expect(!employee.hasChanges)
        #expect(!stack.context.hasChanges)
        employee.setValue("Anna", forKey: "name")
        #expect(employee.isUpdated)
        #expect(employee.hasChanges)
        #expect(!employee.isInserted)
        #expect(employee.faultingState == 0)
    }

    @Test func aDeletedObjectIsDeletedAndHasChanges() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee", ["name": "Ann"])
        try stack.context.save()
        stack.context.delete(employee)
        #expect(employee.isDeleted)
        #expect(!employee.isInserted)
        #expect(employee.hasChanges)
        #expect(stack.context.hasChanges)
    }

    @Test func aFaultIsAFaultWithANonZeroFaultingState() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let employee = stack.context.object(with: id)
        #expect(employee.isFault)
        #expect(employee.faultingState != 0)
        _ = employee.string("name")
        #expect(!employee.isFault)
        #expect(employee.faultingState == 0)
    }

    @Test func readingFlagsIdentityAndDescriptionDoesNotFireAFault() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let employee = try #require(stack.context.object(with: id) as? HookedEmployee)
        _ = (employee.isInserted, employee.isUpdated, employee.isDeleted, employee.hasChanges, employee.faultingState)
        #expect(employee.objectID == id)
        #expect(employee.entity.name == "Employee")
        #expect(employee.managedObjectContext === stack.context)
        _ = employee.hash
        #expect(employee == stack.context.object(with: id))
        #expect(employee.isEqual(employee))
        #expect(Set([employee]).contains(employee))
        #expect(employee.description.contains("<fault>"))
        #expect(employee.isFault)
        #expect(employee.count("awakeFromFetch") == 0)
    }

    /// Managed objects are equal by identity, as NSObject's are on Apple platforms (Core Data does not
    /// override isEqual:): not the same row's object in another context, nor its ID.
    @Test func anObjectIsEqualOnlyToItself() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let employee = stack.context.object(with: id)
        let elsewhere = stack.newContext().object(with: id)
        #expect(employee.isEqual(employee))
        #expect(employee.isEqual(Optional<Any>.some(employee)))
        #expect(employee.isEqual(AnyHashable(employee)))
        #expect(!employee.isEqual(elsewhere))
        #expect(!employee.isEqual(employee.objectID))
        #expect(!employee.isEqual(nil))
        #expect(!employee.isEqual(NSNull()))
        #expect(Set([employee, elsewhere, employee]).count == 2)
        // Typed NSObject, as corelibs' `==` passes it (isEqual reads the reference without the runtime's cast).
        #expect(employee.isEqual(employee as NSObject))
        #expect(!employee.isEqual(elsewhere as NSObject))
        #expect(!employee.isEqual(employee.objectID as NSObject))
        #expect((employee as NSObject) == (employee as NSObject))
        #expect((employee as NSObject) != (elsewhere as NSObject))
    }

    /// IDs are equal by value, whatever static type the other one comes in (`isEqual(_:)` takes it
    /// without the runtime's cast when it is typed `NSManagedObjectID` or `NSObject`).
    @Test func anIDIsEqualToAnotherInstanceOfTheSameIDOnly() throws {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann"])
        let other = try stack.seed("Employee", ["name": "Bob"])
        let coordinator = try #require(stack.context.persistentStoreCoordinator)
        let again = try #require(coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation()))
        try #require(again !== id)
        #expect(id.isEqual(again))
        #expect(id.isEqual(again as NSObject))
        #expect(id.isEqual(Optional<Any>.some(again)))
        #expect(id.isEqual(AnyHashable(again)))
        #expect(!id.isEqual(other))
        #expect(!id.isEqual(other as NSObject))
        #expect(!id.isEqual(stack.context.object(with: id) as NSObject))
        #expect(!id.isEqual(NSString(string: "x") as NSObject))
        #expect(!id.isEqual(nil))
        #expect(Set([id, again, other]).count == 2)
    }

    @Test func theDescriptionOfARealizedObjectShowsItsEntityIDAndValues() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee", ["name": "Ann"])
        let text = employee.description
        #expect(text.contains("(entity: Employee; id: "))
        #expect(text.contains(employee.objectID.uriRepresentation().absoluteString))
        #expect(text.contains("name = \"Ann\";"))
        #expect(text.contains("email = nil;"))
        // The address, as on Apple platforms, and the same number as `hash`.
        let address = UInt(bitPattern: ObjectIdentifier(employee))
        #expect(text.contains("0x" + String(address, radix: 16)))
        #expect(employee.hash == Int(bitPattern: address))
    }
}

@Suite("Life cycle: changed and committed values")
struct ChangedValuesTests {
    /// Ann (age 30, no email) saved and realized in the stack's context.
    static func savedAnn() throws -> (TestStack, NSManagedObject) {
        let stack = try TestStack()
        let id = try stack.seed("Employee", ["name": "Ann", "age": 30])
        return (stack, try stack.context.existingObject(with: id))
    }

    @Test func changedValuesHoldsChangedPersistentPropertiesWithTheirNewValues() throws {
        let (stack, ann) = try Self.savedAnn()
        #expect(ann.changedValues().isEmpty)
        ann.setValue("Anna", forKey: "name")
        ann.setValue("anna@example.com", forKey: "email")
        ann.setValue("transient", forKey: "cache")
        ann.setValue(nil, forKey: "age")
        let changes = ann.changedValues()
        #expect(Set(changes.keys) == ["name", "email", "age"])
        #expect(changes["name"] as? String == "Anna")
        #expect(changes["email"] as? String == "anna@example.com")
        #expect(changes["age"] is NSNull)
        try stack.context.save()
        #expect(ann.changedValues().isEmpty)
    }

    @Test func aValueSetToWhatItWasIsNotAChangedValueButTheObjectIsUpdated() throws {
        let (stack, ann) = try Self.savedAnn()
        ann.setValue("Ann", forKey: "name")
        #expect(ann.changedValues().isEmpty)
        #expect(!ann.hasPersistentChangedValues)
        #expect(ann.isUpdated)
        #expect(stack.context.hasChanges)
    }

    @Test func changedValuesForCurrentEventHoldsOldValuesUntilProcessPendingChanges() throws {
        let (stack, ann) = try Self.savedAnn()
        ann.setValue("Anna", forKey: "name")
        ann.setValue("Annie", forKey: "name")
        ann.setValue("transient", forKey: "cache")
        #expect(ann.changedValuesForCurrentEvent().count == 1)
        #expect(ann.changedValuesForCurrentEvent()["name"] as? String == "Ann")
        stack.context.processPendingChanges()
        #expect(ann.changedValuesForCurrentEvent().isEmpty)
        ann.setValue("Anne", forKey: "name")
        #expect(ann.changedValuesForCurrentEvent()["name"] as? String == "Annie")
        // Each event ends its objects' old values, after a rollback as after processPendingChanges.
        stack.context.processPendingChanges()
        #expect(ann.changedValuesForCurrentEvent().isEmpty)
        ann.setValue("Ana", forKey: "name")
        stack.context.rollback()
        #expect(ann.changedValuesForCurrentEvent().isEmpty)
        ann.setValue("Anya", forKey: "name")
        #expect(ann.changedValuesForCurrentEvent()["name"] as? String == "Ann")
        stack.context.processPendingChanges()
        #expect(ann.changedValuesForCurrentEvent().isEmpty)
    }

    /// An old value is the property's value at its first change in the event, even when a primitive
    /// setter (which records nothing) changed it after the event's first change of another property; and
    /// attributes past the 32nd slot and relationships are recorded too (D28).
    @Test func anOldValueIsTheValueAtThePropertysFirstChange() throws {
        let (stack, ann) = try Self.savedAnn()
        ann.setValue(40, forKey: "age")
        ann.setPrimitiveValue(2.5, forKey: "salary")
        ann.setPrimitiveValue("Primitive", forKey: "name")
        ann.setValue(3.5, forKey: "salary")
        ann.setValue("Anna", forKey: "name")
        ann.setValue(41, forKey: "age")
        let old = ann.changedValuesForCurrentEvent()
        #expect(old["age"] as? Int == 30 && old["salary"] as? Double == 2.5 && old["name"] as? String == "Primitive")
        #expect(old.count == 3)
        stack.context.processPendingChanges()
        ann.setValue(50, forKey: "age")
        #expect(ann.changedValuesForCurrentEvent().keys.sorted() == ["age"])
        #expect(ann.changedValuesForCurrentEvent()["age"] as? Int == 41)

        let model = TestModel.make { entities, _ in
            entities["Company"]!.properties += (0..<40).map { TestModel.attribute("n\($0)", .integer64AttributeType) }
        }
        let wide = try TestStack(model: model)
        let id = try wide.seed("Company", ["name": "Acme", "n3": 3, "n35": 35])
        let acme = try wide.context.existingObject(with: id)
        let department = wide.insert("Department", ["name": "Sales"])
        wide.context.processPendingChanges()
        acme.setValue(36, forKey: "n35")
        acme.setValue(4, forKey: "n3")
        acme.setValue(37, forKey: "n35")
        department.setValue(acme, forKey: "company")
        let wideOld = acme.changedValuesForCurrentEvent()
        #expect(wideOld["n35"] as? Int == 35 && wideOld["n3"] as? Int == 3)
        #expect((wideOld["departments"] as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(wideOld.count == 3)
    }

    /// A refresh that merges changes in the middle of an event keeps the event's old values, and a
    /// property first changed after it has the refreshed value as its old value.
    @Test func oldValuesAcrossARefreshThatMergesChanges() throws {
        let (stack, ann) = try Self.savedAnn()
        ann.setValue("Anna", forKey: "name")
        let other = stack.newContext()
        try other.existingObject(with: ann.objectID).setValue(45, forKey: "age")
        try other.save()
        stack.context.refresh(ann, mergeChanges: true)
        #expect(ann.value(forKey: "age") as? Int == 45 && ann.value(forKey: "name") as? String == "Anna")
        ann.setValue(46, forKey: "age")
        let old = ann.changedValuesForCurrentEvent()
        #expect(old["name"] as? String == "Ann")
        #expect(old["age"] as? Int == 45, "the value at the property's first change, after the refresh")
    }

    /// A context that goes away ends its event: an object that outlives it keeps no old values of it.
    @Test func anObjectOutlivingItsContextKeepsNoEventValues() throws {
        let (stack, ann) = try Self.savedAnn()
        let id = ann.objectID
        var survivor: NSManagedObject?
        do {
            let context = stack.newContext()
            let object = try context.existingObject(with: id)
            object.setValue("Anna", forKey: "name")
            #expect(object.changedValuesForCurrentEvent()["name"] as? String == "Ann")
            survivor = object
        }
        let object = try #require(survivor)
        #expect(object.managedObjectContext == nil)
        #expect(object.changedValuesForCurrentEvent().isEmpty)
    }

    @Test func committedValuesAreTheLastSavedValuesWithNSNullForNil() throws {
        let (stack, ann) = try Self.savedAnn()
        ann.setValue("Anna", forKey: "name")
        ann.setValue("anna@example.com", forKey: "email")
        let all = ann.committedValues(forKeys: nil)
        #expect(all["name"] as? String == "Ann")
        #expect(all["email"] is NSNull)
        #expect((all["age"] as? NSNumber)?.intValue == 30)
        #expect(all["cache"] == nil)
        let some = ann.committedValues(forKeys: ["name"])
        #expect(Array(some.keys) == ["name"])
        try stack.context.save()
        #expect(ann.committedValues(forKeys: ["name"])["name"] as? String == "Anna")
    }

    @Test func committedValuesOfAnObjectNeverSavedAreEmpty() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee", ["name": "Ann"])
        #expect(employee.committedValues(forKeys: nil).isEmpty)
        #expect(employee.committedValues(forKeys: ["name"]).isEmpty)
    }

    @Test func inspectingChangesDoesNotFireRelationshipFaults() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let department = stack.insert("Department", ["name": "R&D"], into: seeding)
        let employee = stack.insert("Employee", ["name": "Ann", "department": department], into: seeding)
        stack.insert("Task", ["title": "Write tests", "owner": employee], into: seeding)
        try seeding.save()

        let ann = try stack.context.existingObject(with: employee.objectID)
        ann.setValue("Anna", forKey: "name")
        _ = ann.changedValues()
        _ = ann.changedValuesForCurrentEvent()
        let committed = ann.committedValues(forKeys: nil)
        #expect(ann.hasFault(forRelationshipNamed: "department"))
        #expect(ann.hasFault(forRelationshipNamed: "tasks"))
        let committedDepartment = try #require(committed["department"] as? NSManagedObject)
        #expect(committedDepartment.objectID == department.objectID)
        #expect(committedDepartment.isFault)
    }
}

@Suite("Life cycle: relationship faults and class settings")
struct RelationshipFaultTests {
    @Test func hasFaultForRelationshipNamedAnswersWithoutFiring() throws {
        let stack = try TestStack()
        let seeding = stack.newContext()
        let department = stack.insert("Department", ["name": "R&D"], into: seeding)
        let employee = stack.insert("Employee", ["name": "Ann", "department": department], into: seeding)
        try seeding.save()

        let ann = stack.context.object(with: employee.objectID)
        #expect(ann.hasFault(forRelationshipNamed: "department"))
        #expect(ann.isFault)
        _ = ann.string("name")
        #expect(ann.hasFault(forRelationshipNamed: "department"))
        #expect(ann.hasFault(forRelationshipNamed: "tasks"))
        let rd = try #require(ann.object("department"))
        #expect(rd.isFault)
        _ = rd.string("name")
        #expect(!ann.hasFault(forRelationshipNamed: "department"))
        _ = ann.value(forKey: "tasks")
        #expect(!ann.hasFault(forRelationshipNamed: "tasks"))

        let new = stack.insert("Employee", ["name": "Bob"])
        #expect(!new.hasFault(forRelationshipNamed: "tasks"))
        #expect(!new.hasFault(forRelationshipNamed: "department"))
    }

    @Test func contextShouldIgnoreUnmodeledPropertyChangesDefaultsToTrue() {
        #expect(NSManagedObject.contextShouldIgnoreUnmodeledPropertyChanges)
        #expect(HookedEmployee.contextShouldIgnoreUnmodeledPropertyChanges)
    }
}

/// An Employee class with a property of its own that announces its changes, as a Swift class must for
/// Core Data to see them (no automatic change notifications).
class UnmodeledNicknameEmployee: NSManagedObject, @unchecked Sendable {
    private(set) var saves = (will: 0, did: 0)
    var nickname: String = "" {
        willSet { willChangeValue(forKey: "nickname") }
        didSet { didChangeValue(forKey: "nickname") }
    }
    override func willSave() { saves.will += 1 }
    override func didSave() { saves.did += 1 }
}

/// The same, but its context is to mark an object updated when the nickname changes. Its fault and
/// snapshot hooks clear the nickname, as a class clears caches of its own there.
final class TrackedNicknameEmployee: UnmodeledNicknameEmployee, @unchecked Sendable {
    override class var contextShouldIgnoreUnmodeledPropertyChanges: Bool { false }
    override func willTurnIntoFault() { nickname = "" }
    override func didTurnIntoFault() { nickname = "" }
    override func awake(fromSnapshotEvents flags: NSSnapshotEventType) { nickname = "" }
}

@Suite("Life cycle: changes of unmodeled properties")
struct UnmodeledPropertyChangeTests {
    /// A stack whose Employees are `employeeClass`, with Ann saved, and Ann fetched into its context.
    func stack<T: UnmodeledNicknameEmployee>(_ employeeClass: T.Type) throws -> (TestStack, T) {
        // Module-qualified: this file is compiled into two test modules that share one class registry.
        let className = String(reflecting: employeeClass)
        NSManagedObjectModel.registerManagedObjectClass(employeeClass, forName: className)
        let stack = try TestStack(model: TestModel.make { entities, _ in entities["Employee"]!.managedObjectClassName = className })
        let id = try stack.seed("Employee", ["name": "Ann"])
        return (stack, try #require(try stack.context.existingObject(with: id) as? T))
    }

    @Test func byDefaultTheContextIgnoresThem() throws {
        let (stack, ann) = try stack(UnmodeledNicknameEmployee.self)
        ann.nickname = "Annie"
        #expect(!ann.isUpdated && !ann.hasChanges)
        #expect(!stack.context.hasChanges && stack.context.updatedObjects.isEmpty)
    }

    @Test func aClassThatAsksHasTheObjectMarkedUpdatedAndSavedWithNoColumnWritten() throws {
        let (stack, ann) = try stack(TrackedNicknameEmployee.self)
        final class Seen: @unchecked Sendable { var updated: [Set<NSManagedObject>] = [] }
        let seen = Seen()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: stack.context, queue: nil) { note in
            seen.updated.append(note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? [])
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        ann.nickname = "Annie"
        #expect(ann.isUpdated && ann.hasChanges)
        #expect(stack.context.hasChanges && stack.context.updatedObjects.contains(ann))
        // Nothing modeled changed.
        #expect(ann.changedValues().isEmpty && !ann.hasPersistentChangedValues)
        stack.context.processPendingChanges()
        #expect(seen.updated.last?.contains(ann) == true)

        try stack.context.save()
        #expect(ann.saves.will == 1 && ann.saves.did == 1)
        #expect(!ann.isUpdated && !stack.context.hasChanges)
        let other = stack.newContext()
        let stored = try #require(try stack.fetch("Employee", in: other).first)
        #expect(stored.string("name") == "Ann")
    }

    @Test func theSaveKeepsTheRowsVersion() throws {
        let (stack, ann) = try stack(TrackedNicknameEmployee.self)
        // Read before the save: with the row's version raised, its save would be an optimistic-locking
        // conflict (the default merge policy's error).
        let other = stack.newContext()
        let annThere = try #require(try stack.fetch("Employee", in: other).first)
        _ = annThere.string("name")
        ann.nickname = "Annie"
        try stack.context.save()
        annThere.setValue("Anna", forKey: "name")
        try other.save()
    }

    @Test func theFaultAndSnapshotHooksDoNotDirtyTheObjectAgain() throws {
        let (stack, ann) = try stack(TrackedNicknameEmployee.self)
        ann.nickname = "Annie"
        ann.setValue("Anna", forKey: "name")
        stack.context.refresh(ann, mergeChanges: false)
        #expect(ann.isFault && !ann.isUpdated && !stack.context.hasChanges)

        ann.setValue("Anna", forKey: "name")
        ann.nickname = "Annie"
        stack.context.rollback()
        #expect(!ann.isUpdated && !stack.context.hasChanges)

        ann.nickname = "Annie"
        stack.context.reset()
        #expect(!stack.context.hasChanges && stack.context.updatedObjects.isEmpty)
    }
}
