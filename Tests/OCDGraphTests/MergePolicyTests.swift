import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

// Merge policies (Documentation/Graph.md, "Merge policies"): optimistic-locking conflicts between two
// contexts on one coordinator, and uniqueness-constraint conflicts.

/// Ann (age 30, email ann@x) read by the stack's context ("mine") and by a second context ("theirs").
/// `theirs` changes and saves first, then `mine` changes and saves under `policy`.
private struct LockingConflict {
    let stack: TestStack
    let theirs: NSManagedObjectContext
    let mine: NSManagedObject
    let id: NSManagedObjectID

    init(_ policy: NSMergePolicy, theirs change: (NSManagedObject, NSManagedObjectContext) throws -> Void,
         mine edit: (NSManagedObject) -> Void) throws {
        stack = try TestStack()
        id = try stack.seed("Employee", ["name": "Ann", "age": 30, "email": "ann@x"])
        stack.context.mergePolicy = policy
        mine = try stack.context.existingObject(with: id)
        theirs = stack.newContext()
        let theirObject = try theirs.existingObject(with: id)
        try change(theirObject, theirs)
        try theirs.save()
        edit(mine)
    }

    /// What the store holds for every employee, as "name age email", sorted.
    func stored() throws -> [String] {
        try stack.stored("Employee", sortedBy: "name") { "\($0.string("name") ?? "nil") \($0.int("age") ?? -1) \($0.string("email") ?? "nil")" }
    }
}

/// The usual edits: theirs changes age and email, mine changes name and age.
private func theirsChangeAgeAndEmail(_ object: NSManagedObject, _: NSManagedObjectContext) {
    object.setValue(40, forKey: "age")
    object.setValue("ann@y", forKey: "email")
}

private func mineChangeNameAndAge(_ object: NSManagedObject) {
    object.setValue("Anna", forKey: "name")
    object.setValue(50, forKey: "age")
}

@Suite("Merge policies: the API")
struct MergePolicyAPITests {
    @Test func sharedPoliciesHaveTheirTypesAndTheGlobalsAreThem() {
        #expect(NSMergePolicy.error.mergeType == .errorMergePolicyType)
        #expect(NSMergePolicy.mergeByPropertyStoreTrump.mergeType == .mergeByPropertyStoreTrumpMergePolicyType)
        #expect(NSMergePolicy.mergeByPropertyObjectTrump.mergeType == .mergeByPropertyObjectTrumpMergePolicyType)
        #expect(NSMergePolicy.overwrite.mergeType == .overwriteMergePolicyType)
        #expect(NSMergePolicy.rollback.mergeType == .rollbackMergePolicyType)
        #expect(ObjectIdentifier(NSErrorMergePolicy) == ObjectIdentifier(NSMergePolicy.error))
        #expect(ObjectIdentifier(NSMergeByPropertyStoreTrumpMergePolicy) == ObjectIdentifier(NSMergePolicy.mergeByPropertyStoreTrump))
        #expect(ObjectIdentifier(NSMergeByPropertyObjectTrumpMergePolicy) == ObjectIdentifier(NSMergePolicy.mergeByPropertyObjectTrump))
        #expect(ObjectIdentifier(NSOverwriteMergePolicy) == ObjectIdentifier(NSMergePolicy.overwrite))
        #expect(ObjectIdentifier(NSRollbackMergePolicy) == ObjectIdentifier(NSMergePolicy.rollback))
        #expect(NSMergePolicyType.overwriteMergePolicyType.rawValue == 3)
        #expect(NSMergePolicy(merge: .rollbackMergePolicyType).mergeType == .rollbackMergePolicyType)
    }

    @Test func aContextStartsWithTheErrorPolicyAndTakesTheGlobals() throws {
        let stack = try TestStack()
        #expect((stack.context.mergePolicy as? NSMergePolicy) === NSMergePolicy.error)
        stack.context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        #expect((stack.context.mergePolicy as? NSMergePolicy)?.mergeType == .mergeByPropertyObjectTrumpMergePolicyType)
    }

    @Test func aSubclassSeesTheConflictsAndCanCallSuper() throws {
        final class Recording: NSMergePolicy, @unchecked Sendable {
            var seen: [NSMergeConflict] = []
            override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
                seen += list
                try super.resolve(optimisticLockingConflicts: list)
            }
        }
        let policy = Recording(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        let conflict = try LockingConflict(policy, theirs: theirsChangeAgeAndEmail, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(policy.seen.count == 1)
            #expect(policy.seen.first?.sourceObject === conflict.mine)
            #expect(try conflict.stored() == ["Anna 50 ann@y"])
        }
    }
}

@Suite("Merge policies: optimistic locking")
struct OptimisticLockingPolicyTests {
    @Test func errorPolicyThrowsMergeErrorWithTheConflicts() throws {
        let conflict = try LockingConflict(.error, theirs: theirsChangeAgeAndEmail, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            let error = try #require(conflict.stack.context.saveError())
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSManagedObjectMergeError)
            #expect(error.code == 133020)
            let list = try #require(error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])
            #expect(list.count == 1)
            let first = try #require(list.first)
            #expect(first.sourceObject === conflict.mine)
            #expect(first.newVersionNumber > first.oldVersionNumber)
            #expect((first.persistedSnapshot?["age"] as? NSNumber)?.intValue == 40)
            #expect((first.cachedSnapshot?["age"] as? NSNumber)?.intValue == 30)
            #expect((first.objectSnapshot?["age"] as? NSNumber)?.intValue == 50)
            // Nothing written; the context keeps its changes.
            #expect(try conflict.stored() == ["Ann 40 ann@y"])
            #expect(conflict.mine.hasChanges)
            #expect(conflict.mine.string("name") == "Anna")
        }
    }

    /// Apple's `NSMergeConflict`: "Snapshot dictionaries include values for all attributes and to-one
    /// relationships, but not to-many relationships. Relationship values are NSManagedObjectID
    /// references." Building them fires no to-many relationship.
    @Test func conflictSnapshotsHoldAttributesAndToOneIDsButNoToManyRelationship() throws {
        let conflict = try LockingConflict(.error, theirs: { object, context in
            object.setValue(40, forKey: "age")
            let department = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
            department.setValue("R&D", forKey: "name")
            object.setValue(department, forKey: "department")
        }, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            let error = try #require(conflict.stack.context.saveError())
            let first = try #require((error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])?.first)
            let snapshots = [first.persistedSnapshot, first.cachedSnapshot, first.objectSnapshot]
            for snapshot in snapshots {
                let keys = Set(try #require(snapshot).keys)
                #expect(keys.isSuperset(of: ["name", "age", "email", "department", "badge", "manager"]))
                #expect(keys.isDisjoint(with: ["tasks", "projects", "reviewedTasks"]), "\(keys)")
            }
            let stored = try #require(first.persistedSnapshot?["department"] as? NSManagedObjectID)
            #expect(stored.entity.name == "Department" && !stored.isTemporaryID)
            #expect(first.cachedSnapshot?["department"] is NSNull)
            #expect(first.objectSnapshot?["department"] is NSNull)
            #expect(conflict.mine.hasFault(forRelationshipNamed: "tasks"), "a to-many relationship was loaded to build a snapshot")
        }
    }

    @Test func objectTrumpKeepsTheContextsChangesAndTakesTheStoresOthers() throws {
        let conflict = try LockingConflict(.mergeByPropertyObjectTrump, theirs: theirsChangeAgeAndEmail, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try conflict.stored() == ["Anna 50 ann@y"])
            #expect(conflict.mine.string("email") == "ann@y")
            #expect(!conflict.mine.hasChanges)
        }
    }

    @Test func storeTrumpTakesTheStoresChangesAndKeepsTheContextsOthers() throws {
        let conflict = try LockingConflict(.mergeByPropertyStoreTrump, theirs: theirsChangeAgeAndEmail, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try conflict.stored() == ["Anna 40 ann@y"])
            #expect(conflict.mine.int("age") == 40)
        }
    }

    @Test func overwriteWritesTheWholeInMemoryObject() throws {
        let conflict = try LockingConflict(.overwrite, theirs: theirsChangeAgeAndEmail, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try conflict.stored() == ["Anna 50 ann@x"])
        }
    }

    @Test func rollbackDiscardsTheContextsChanges() throws {
        let conflict = try LockingConflict(.rollback, theirs: theirsChangeAgeAndEmail, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try conflict.stored() == ["Ann 40 ann@y"])
            #expect(conflict.mine.string("name") == "Ann")
            #expect(!conflict.mine.hasChanges)
        }
    }

    @Test func theSaveRetriesAgainstTheNewVersionSoALaterSaveSucceeds() throws {
        let conflict = try LockingConflict(.mergeByPropertyObjectTrump, theirs: theirsChangeAgeAndEmail, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            conflict.mine.setValue("Annie", forKey: "name")
            conflict.stack.context.mergePolicy = NSMergePolicy.error
            try conflict.stack.context.save()
            #expect(try conflict.stored() == ["Annie 50 ann@y"])
        }
    }

    @Test func aResolvedObjectIsToldOfTheMerge() throws {
        let (stack, _) = try TestStack.hooked()
        let id = try stack.seed("Employee", ["name": "Ann"])
        stack.context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        let mine = try #require(try stack.context.existingObject(with: id) as? HookedEmployee)
        let theirs = stack.newContext()
        try withExtendedLifetime(theirs) {
            try theirs.existingObject(with: id).setValue(41, forKey: "age")
            try theirs.save()
            mine.setValue("Anna", forKey: "name")
            try stack.context.save()
            #expect(mine.snapshotEvents.contains(.mergePolicy))
        }
    }

    @Test func failedSaveWritesNothingElse() throws {
        let conflict = try LockingConflict(.error, theirs: theirsChangeAgeAndEmail, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) { () throws in
            conflict.stack.insert("Employee", ["name": "Zed"])
            conflict.stack.insert("Department", ["name": "Sales"])
            #expect(conflict.stack.context.saveError()?.code == NSManagedObjectMergeError)
            #expect(try conflict.stored() == ["Ann 40 ann@y"])
            #expect(try conflict.stack.stored("Department") { $0.string("name") }.isEmpty)
            #expect(conflict.stack.context.insertedObjects.count == 2)
        }
    }
}

@Suite("Merge policies: relationships and deletions")
struct LockingRelationshipPolicyTests {
    /// Ann in department One; theirs moves her to Two, mine moves her to Three (or only renames her).
    private func departmentConflict(_ policy: NSMergePolicy, mineMoves: Bool) throws -> (LockingConflict, [String: NSManagedObjectID]) {
        var departments: [String: NSManagedObjectID] = [:]
        let conflict = try LockingConflict(policy, theirs: { object, context in
            for name in ["One", "Two", "Three"] {
                let department = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
                department.setValue(name, forKey: "name")
                if name == "Two" { object.setValue(department, forKey: "department") }
            }
            try context.obtainPermanentIDs(for: Array(context.insertedObjects))
            for department in context.insertedObjects { departments[department.string("name")!] = department.objectID }
        }, mine: { object in
            object.setValue("Anna", forKey: "name")
        })
        if mineMoves {
            let three = try conflict.stack.context.existingObject(with: departments["Three"]!)
            conflict.mine.setValue(three, forKey: "department")
        }
        return (conflict, departments)
    }

    private func storedDepartment(_ conflict: LockingConflict) throws -> [String] {
        try conflict.stack.stored("Employee") { "\($0.string("name") ?? "nil") in \($0.object("department")?.string("name") ?? "nil")" }
    }

    @Test func objectTrumpTakesTheStoresRelationshipWhenTheContextDidNotChangeIt() throws {
        let (conflict, _) = try departmentConflict(.mergeByPropertyObjectTrump, mineMoves: false)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try storedDepartment(conflict) == ["Anna in Two"])
            #expect(conflict.mine.object("department")?.string("name") == "Two")
        }
    }

    @Test func objectTrumpKeepsTheContextsRelationshipChange() throws {
        let (conflict, _) = try departmentConflict(.mergeByPropertyObjectTrump, mineMoves: true)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try storedDepartment(conflict) == ["Anna in Three"])
        }
    }

    /// A to-many relationship both sides changed keeps both sides' members under either policy (the
    /// in-memory store's rows, which list members, made store trump take the stored set whole).
    @Test(arguments: [NSMergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump])
    func bothPoliciesMergeAToManyRelationshipMemberByMember(policy: NSMergePolicy) throws {
        let conflict = try LockingConflict(policy, theirs: { object, context in
            let apollo = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
            apollo.setValue("Apollo", forKey: "title")
            object.mutableSetValue(forKey: "projects").add(apollo)
        }, mine: { object in
            object.setValue("Anna", forKey: "name")
            let gemini = NSEntityDescription.insertNewObject(forEntityName: "Project", into: object.managedObjectContext!)
            gemini.setValue("Gemini", forKey: "title")
            object.mutableSetValue(forKey: "projects").add(gemini)
        })
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(Set(conflict.mine.objects("projects").compactMap { $0.string("title") }) == ["Apollo", "Gemini"])
            #expect(try conflict.stack.stored("Employee") { Set($0.objects("projects").compactMap { $0.string("title") }) } == [["Apollo", "Gemini"]])
            #expect(try conflict.stack.stored("Project", sortedBy: "title") { $0.objects("members").count } == [1, 1])
        }
    }

    @Test func storeTrumpTakesTheStoresRelationshipChange() throws {
        let (conflict, _) = try departmentConflict(.mergeByPropertyStoreTrump, mineMoves: true)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try storedDepartment(conflict) == ["Anna in Two"])
        }
    }

    @Test func deletedInTheStoreIsAConflictWithVersionZeroForTheErrorPolicy() throws {
        let conflict = try LockingConflict(.error, theirs: { object, context in context.delete(object) }, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            let error = try #require(conflict.stack.context.saveError())
            #expect(error.code == NSManagedObjectMergeError)
            let first = try #require((error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])?.first)
            #expect(first.newVersionNumber == 0)
            #expect(first.persistedSnapshot == nil)
            #expect(try conflict.stored().isEmpty)
        }
    }

    @Test(arguments: [NSMergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .rollback])
    func deletedInTheStoreDeletesTheObject(policy: NSMergePolicy) throws {
        let conflict = try LockingConflict(policy, theirs: { object, context in context.delete(object) }, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try conflict.stored().isEmpty)
            #expect(conflict.mine.managedObjectContext == nil)
            #expect(!conflict.stack.context.hasChanges)
        }
    }

    @Test func overwriteInsertsAnObjectDeletedInTheStoreAgain() throws {
        let conflict = try LockingConflict(.overwrite, theirs: { object, context in context.delete(object) }, mine: mineChangeNameAndAge)
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try conflict.stored() == ["Anna 50 ann@x"])
            #expect(try conflict.stack.stored("Employee") { $0.objectID } == [conflict.id])
            #expect(!conflict.mine.hasChanges)
        }
    }

    @Test func objectTrumpKeepsTheContextsDeletion() throws {
        let conflict = try LockingConflict(.mergeByPropertyObjectTrump, theirs: theirsChangeAgeAndEmail, mine: { object in
            object.managedObjectContext?.delete(object)
        })
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try conflict.stored().isEmpty)
        }
    }

    @Test func storeTrumpLetsTheStoresUpdateWinOverTheContextsDeletion() throws {
        let conflict = try LockingConflict(.mergeByPropertyStoreTrump, theirs: theirsChangeAgeAndEmail, mine: { object in
            object.managedObjectContext?.delete(object)
        })
        try withExtendedLifetime(conflict.theirs) {
            try conflict.stack.context.save()
            #expect(try conflict.stored() == ["Ann 40 ann@y"])
            #expect(!conflict.mine.isDeleted)
        }
    }
}

/// A stack whose employees are unique by email.
private func uniqueEmailStack() throws -> TestStack {
    try TestStack(model: TestModel.make { entities, _ in entities["Employee"]!.uniquenessConstraints = [["email"]] })
}

private func storedEmployees(_ stack: TestStack) throws -> [String] {
    try stack.stored("Employee", sortedBy: "name") { "\($0.string("name") ?? "nil") \($0.int("age") ?? -1) \($0.string("email") ?? "nil")" }
}

@Suite("Merge policies: uniqueness constraints")
struct ConstraintPolicyTests {
    @Test func errorPolicyThrowsConstraintMergeErrorAgainstAStoredObject() throws {
        let stack = try uniqueEmailStack()
        let ann = try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        let bob = stack.insert("Employee", ["name": "Bob", "email": "a@x"])
        let error = try #require(stack.context.saveError())
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSManagedObjectConstraintMergeError)
        #expect(error.code == 133021)
        let list = try #require(error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])
        #expect(list.count == 1)
        let conflict = try #require(list.first)
        #expect(conflict.constraint == ["email"])
        #expect(conflict.constraintValues["email"] as? String == "a@x")
        #expect(conflict.databaseObject?.objectID == ann)
        #expect(conflict.databaseSnapshot?["name"] as? String == "Ann")
        #expect(conflict.conflictingObjects.count == 1 && conflict.conflictingObjects.first === bob)
        #expect(conflict.conflictingSnapshots.count == 1)
        #expect(try storedEmployees(stack) == ["Ann 30 a@x"])
        #expect(bob.isInserted)
    }

    @Test func errorPolicyThrowsForTwoNewObjectsWithNoDatabaseObject() throws {
        let stack = try uniqueEmailStack()
        stack.insert("Employee", ["name": "Ann", "email": "a@x"])
        stack.insert("Employee", ["name": "Bob", "email": "a@x"])
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSManagedObjectConstraintMergeError)
        let conflict = try #require((error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])?.first)
        #expect(conflict.databaseObject == nil)
        #expect(conflict.databaseSnapshot == nil)
        #expect(conflict.conflictingObjects.count == 2)
        #expect(try storedEmployees(stack).isEmpty)
    }

    @Test func nilValuesDoNotClash() throws {
        let stack = try uniqueEmailStack()
        stack.insert("Employee", ["name": "Ann"])
        stack.insert("Employee", ["name": "Bob"])
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Ann 30 nil", "Bob 30 nil"])
    }

    @Test func objectTrumpMergesTheNewObjectIntoTheStoredOne() throws {
        let stack = try uniqueEmailStack()
        let ann = try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        stack.context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        let bob = stack.insert("Employee", ["name": "Bob", "email": "a@x", "age": 50])
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Bob 50 a@x"])
        #expect(try stack.stored("Employee") { $0.objectID } == [ann])
        #expect(bob.managedObjectContext == nil)
    }

    /// Object trump merges a new object into the stored one it clashes with; a to-one the stored object
    /// loses keeps its destination: a delete rule applies only when the owner is deleted, and nobody
    /// deleted the stored object (its cascading badge was deleted, and its row removed by the save).
    @Test func objectTrumpLeavesTheStoredObjectsFormerDestinationInPlace() throws {
        let stack = try uniqueEmailStack()
        let ann = stack.insert("Employee", ["name": "Ann", "email": "a@x"])
        ann.setValue(stack.insert("Badge", ["number": 7]), forKey: "badge")
        try stack.context.save()
        stack.context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        stack.insert("Employee", ["name": "Bob", "email": "a@x"])
        try stack.context.save()
        let stored = try storedEmployees(stack)
        #expect(stored == ["Bob 30 a@x"], "\(stored)")  // 30: age's default value
        #expect(try stack.stored("Badge") { $0.int("number") } == [7])
    }

    /// A save under a merge policy goes through when it meets every kind of conflict in turn: a locking
    /// conflict, a uniqueness conflict between two of its new objects, then one of the survivor with a
    /// stored object, which the context held stale, so a locking conflict again. It ran out of rounds and
    /// threw NSManagedObjectMergeError, which such a policy is there to avoid.
    @Test func aSaveUnderAMergePolicyResolvesEachKindOfConflictInTurn() throws {
        let stack = try uniqueEmailStack()
        let first = stack.insert("Employee", ["name": "S", "email": "a@x"])
        let second = stack.insert("Employee", ["name": "O", "email": "o@x"])
        try stack.context.save()
        let other = stack.newContext()
        try withExtendedLifetime(other) {
            for id in [first.objectID, second.objectID] { try other.existingObject(with: id).setValue(41, forKey: "age") }
            try other.save()
        }
        stack.context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        second.setValue("O2", forKey: "name")
        stack.insert("Employee", ["name": "N1", "email": "a@x"])
        stack.insert("Employee", ["name": "N2", "email": "a@x"])
        try stack.context.save()
        #expect(try stack.stored("Employee", sortedBy: "email") { $0.string("email") } == ["a@x", "o@x"])
        #expect(try stack.stored("Employee", sortedBy: "email") { $0.string("name") }.last == "O2")
    }

    @Test func storeTrumpKeepsTheStoredValuesAndTakesTheNewToManyMembers() throws {
        let stack = try uniqueEmailStack()
        let ann = try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        stack.context.mergePolicy = NSMergePolicy.mergeByPropertyStoreTrump
        let bob = stack.insert("Employee", ["name": "Bob", "email": "a@x", "age": 50])
        let project = stack.insert("Project", ["title": "Apollo"])
        bob.mutableSetValue(forKey: "projects").add(project)
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Ann 30 a@x"])
        #expect(try stack.stored("Employee") { $0.objects("projects").compactMap { $0.string("title") } } == [["Apollo"]])
        #expect(project.objects("members").map(\.objectID) == [ann])
    }

    @Test func overwriteReplacesTheStoredObjectWithTheNewOne() throws {
        let stack = try uniqueEmailStack()
        try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        stack.context.mergePolicy = NSMergePolicy.overwrite
        let bob = stack.insert("Employee", ["name": "Bob", "email": "a@x", "age": 50])
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Bob 50 a@x"])
        #expect(try stack.stored("Employee") { $0.objectID } == [bob.objectID])
    }

    @Test func rollbackDropsTheNewObject() throws {
        let stack = try uniqueEmailStack()
        try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        stack.context.mergePolicy = NSMergePolicy.rollback
        let bob = stack.insert("Employee", ["name": "Bob", "email": "a@x", "age": 50])
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Ann 30 a@x"])
        #expect(bob.managedObjectContext == nil)
    }

    @Test func rollbackDiscardsAnUpdateThatClashes() throws {
        let stack = try uniqueEmailStack()
        try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        let bobID = try stack.seed("Employee", ["name": "Bob", "email": "b@x"])
        stack.context.mergePolicy = NSMergePolicy.rollback
        let bob = try stack.context.existingObject(with: bobID)
        bob.setValue("a@x", forKey: "email")
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Ann 30 a@x", "Bob 30 b@x"])
        #expect(bob.string("email") == "b@x")
    }

    /// Two stored objects both changed in the save, one taking the other's value: rollback and store
    /// trump discard in-memory changes, so the taker loses its change, and no stored row is deleted.
    @Test(arguments: [NSMergePolicy.rollback, .mergeByPropertyStoreTrump])
    func aStoredObjectThatTookAValueLosesTheChangeNotItsRow(policy: NSMergePolicy) throws {
        let stack = try uniqueEmailStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        let bobID = try stack.seed("Employee", ["name": "Bob", "email": "b@x"])
        stack.context.mergePolicy = policy
        let ann = try stack.context.existingObject(with: annID)
        let bob = try stack.context.existingObject(with: bobID)
        ann.setValue("Annie", forKey: "name")
        bob.setValue("a@x", forKey: "email")
        bob.setValue(44, forKey: "age")
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Annie 30 a@x", "Bob 30 b@x"])
        #expect(bob.managedObjectContext === stack.context && !bob.isDeleted)
        #expect(bob.string("email") == "b@x")
    }

    /// Store trump against a stored object the save does not change: the changed object's edit goes.
    @Test func storeTrumpDiscardsAnUpdateThatClashesWithAStoredObject() throws {
        let stack = try uniqueEmailStack()
        try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        let bobID = try stack.seed("Employee", ["name": "Bob", "email": "b@x"])
        stack.context.mergePolicy = NSMergePolicy.mergeByPropertyStoreTrump
        let bob = try stack.context.existingObject(with: bobID)
        bob.setValue("a@x", forKey: "email")
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Ann 30 a@x", "Bob 30 b@x"])
        #expect(bob.managedObjectContext === stack.context)
    }

    @Test func objectTrumpBetweenObjectsOfTheSaveKeepsTheObjectThatHeldTheValues() throws {
        let stack = try uniqueEmailStack()
        let annID = try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        stack.context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        let ann = try stack.context.existingObject(with: annID)
        ann.setValue("Annie", forKey: "name")
        stack.insert("Employee", ["name": "Bob", "email": "a@x", "age": 50])
        try stack.context.save()
        // Ann survives; what she changed stays, what she did not change comes from the new object.
        #expect(try storedEmployees(stack) == ["Annie 50 a@x"])
        #expect(try stack.stored("Employee") { $0.objectID } == [annID])
    }

    @Test(arguments: [NSMergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite, .rollback])
    func twoNewObjectsBecomeOne(policy: NSMergePolicy) throws {
        let stack = try uniqueEmailStack()
        stack.context.mergePolicy = policy
        let first = stack.insert("Employee", ["name": "Ann", "email": "a@x"])
        let second = stack.insert("Employee", ["name": "Ann", "email": "a@x"])
        let third = stack.insert("Employee", ["name": "Cy", "email": "c@x"])
        try stack.context.save()
        #expect(try storedEmployees(stack) == ["Ann 30 a@x", "Cy 30 c@x"])
        #expect([first, second].filter { $0.managedObjectContext == nil }.count == 1)
        #expect(third.managedObjectContext === stack.context)
    }

    /// Two new objects with one unique value: whichever survives keeps the values it was given, and
    /// takes from the other only what it left empty.
    @Test(arguments: [NSMergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump])
    func twoNewObjectsKeepTheSurvivorsOwnValues(policy: NSMergePolicy) throws {
        let stack = try uniqueEmailStack()
        stack.context.mergePolicy = policy
        let ann = stack.insert("Employee", ["name": "Ann", "email": "a@x", "age": 40])
        let bob = stack.insert("Employee", ["name": "Bob", "email": "a@x", "age": 50])
        bob.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "hired")
        try stack.context.save()
        let survivor = try #require([ann, bob].first { $0.managedObjectContext != nil })
        #expect(try storedEmployees(stack) == [survivor === ann ? "Ann 40 a@x" : "Bob 50 a@x"])
        #expect(survivor.value(forKey: "hired") as? Date == Date(timeIntervalSinceReferenceDate: 0), "filled in where it had nothing")
    }

    @Test func aConstraintOnTheSuperentityBindsSubentities() throws {
        let stack = try uniqueEmailStack()
        try stack.seed("Employee", ["name": "Ann", "email": "a@x"])
        stack.insert("Manager", ["name": "Max", "email": "a@x"])
        let error = try #require(stack.context.saveError())
        #expect(error.code == NSManagedObjectConstraintMergeError)
    }
}

@Suite("Merge policies: the store's uniqueness check")
struct StoreUniquenessCheckTests {
    @Test func rowsOfOneRequestClashAndStoredRowsOfChangedObjectsDoNot() throws {
        let stack = try uniqueEmailStack()
        let employee = try #require(stack.model.entitiesByName["Employee"])
        let layout = EntityLayout.of(employee)
        let ids = try stack.coordinator.persistentStores[0].newObjectIDs(for: employee, count: 3)
        func row(_ id: NSManagedObjectID, _ email: String) -> StoreRow {
            var values = [Any?](repeating: nil, count: layout.properties.count)
            values[layout.slotByName["email"]!] = email
            return StoreRow(objectID: id, version: 1, values: values)
        }
        let stored = row(ids[2], "a@x")
        let request = StoreSaveRequest(inserted: [row(ids[0], "a@x"), row(ids[1], "b@x")])
        let conflicts = request.uniquenessConflicts { entity, names, values in
            entity === employee && names == ["email"] && values.first as? String == "a@x" ? [stored] : []
        }
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.stored?.objectID == stored.objectID)
        #expect(conflicts.first?.conflicting == [ids[0]])
        let clash = StoreSaveRequest(inserted: [row(ids[0], "a@x"), row(ids[1], "a@x")])
        let inSave = clash.uniquenessConflicts { _, _, _ in [] }
        #expect(inSave.count == 1)
        #expect(inSave.first?.stored == nil)
        #expect(inSave.first?.conflicting == [ids[0], ids[1]])
        // A stored row the request deletes is not a clash.
        let replacing = StoreSaveRequest(inserted: [row(ids[0], "a@x")], deleted: [(ids[2], 1)])
        #expect(replacing.uniquenessConflicts { _, _, _ in [stored] }.isEmpty)
    }
}
