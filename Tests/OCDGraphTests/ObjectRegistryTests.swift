import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import Synchronization

// A context's registered objects (decision D21): held unretained unless `retainsRegisteredObjects`, an
// object leaves from its `deinit`, lookups never hand out an object whose deinitialization has begun.
// Everything here goes through the public context API.

@Suite("Object registry: registered objects held unretained")
struct ObjectRegistryTests {
    @Test func aReleasedUnchangedFetchedObjectLeavesTheRegistry() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D", "budget": 10])
        weak var released: NSManagedObject?
        do {
            let department = try #require(try stack.fetch("Department").first)
            released = department
            #expect(department.objectID == id)
            #expect(department.string("name") == "R&D")
            #expect(!department.hasChanges)
            #expect(stack.context.registeredObjects == [department])
            #expect(stack.context.registeredObject(for: id) === department)
        }
        #expect(released == nil)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(stack.context.registeredObject(for: id) == nil)

        // A new fault, not a stale pointer: it fulfils from the store.
        let fault = stack.context.object(with: id)
        #expect(fault.isFault)
        #expect(fault.objectID == id)
        #expect(stack.context.registeredObject(for: id) === fault)
        #expect(stack.context.registeredObjects == [fault])
        #expect(fault.string("name") == "R&D")
        #expect(fault.int("budget") == 10)
        #expect(!fault.isFault)
        #expect(try stack.context.existingObject(with: id) === fault)
    }

    /// Thousands of objects registered, two thirds released in an interleaved order (each leaving the
    /// table from its `deinit`, the entries after it shifting back), then registered again: every lookup
    /// still finds exactly the objects alive, through the table's growth and deletions.
    @Test func manyObjectsLeaveAndReturnWithoutLosingAnother() throws {
        let stack = try TestStack()
        for index in 0..<3_000 { _ = stack.insert("Department", ["name": "D\(index)", "budget": index]) }
        try stack.context.save()
        stack.context.reset()
        var kept: [NSManagedObject] = []
        var releasedIDs: [NSManagedObjectID] = []
        do {
            let all = try stack.fetch("Department", sortedBy: "budget")
            #expect(all.count == 3_000)
            for (index, object) in all.enumerated() {
                if index % 3 == 1 { kept.append(object) } else { releasedIDs.append(object.objectID) }
            }
        }
        #expect(stack.context.registeredObjects.count == kept.count)
        for object in kept { #expect(stack.context.registeredObject(for: object.objectID) === object) }
        for id in releasedIDs { #expect(stack.context.registeredObject(for: id) == nil) }
        // Registered again, alongside the kept ones.
        let faults = releasedIDs.map { stack.context.object(with: $0) }
        #expect(stack.context.registeredObjects.count == 3_000)
        for (id, fault) in zip(releasedIDs, faults) { #expect(stack.context.registeredObject(for: id) === fault) }
        for object in kept { #expect(try stack.context.existingObject(with: object.objectID) === object) }
    }

    @Test func anUnfiredFaultFromObjectWithLeavesWhenReleased() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        weak var released: NSManagedObject?
        do {
            let fault = stack.context.object(with: id)
            released = fault
            #expect(fault.isFault)
            #expect(stack.context.registeredObject(for: id) === fault)
        }
        #expect(released == nil)
        #expect(stack.context.registeredObject(for: id) == nil)
        let realized = try stack.context.existingObject(with: id)
        #expect(!realized.isFault)
        #expect(realized.string("name") == "R&D")
    }

    @Test func anObjectAndTheToOneFaultItHoldsLeaveTogether() throws {
        let stack = try TestStack()
        let setup = stack.newContext()
        let department = stack.insert("Department", ["name": "R&D"], into: setup)
        let employee = stack.insert("Employee", ["name": "Ann", "department": department], into: setup)
        try setup.save()
        let employeeID = employee.objectID, departmentID = department.objectID

        weak var releasedEmployee: NSManagedObject?
        weak var releasedDepartment: NSManagedObject?
        do {
            let fetched = try #require(try stack.fetch("Employee").first)
            // Firing the employee registers a fault for its department, held by the employee only.
            let destination = try #require(fetched.object("department"))
            releasedEmployee = fetched
            releasedDepartment = destination
            #expect(destination.objectID == departmentID)
            #expect(stack.context.registeredObjects.count == 2)
        }
        #expect(releasedEmployee == nil)
        #expect(releasedDepartment == nil)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(stack.context.registeredObject(for: employeeID) == nil)
        #expect(stack.context.registeredObject(for: departmentID) == nil)
        #expect(stack.context.object(with: employeeID).object("department")?.string("name") == "R&D")
    }

    @Test func aChangedObjectStaysRegisteredUntilSavedThenLeaves() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        weak var changed: NSManagedObject?
        do {
            let department = try #require(try stack.fetch("Department").first)
            department.setValue("Research", forKey: "name")
            changed = department
        }
        // The context's updated objects hold it.
        #expect(changed != nil)
        #expect(stack.context.registeredObject(for: id)?.string("name") == "Research")
        #expect(stack.context.updatedObjects.count == 1)
        try stack.context.save()
        #expect(changed == nil)
        #expect(stack.context.registeredObject(for: id) == nil)
        #expect(stack.context.object(with: id).string("name") == "Research")
    }

    @Test func retainsRegisteredObjectsKeepsObjectsUntilTurnedOff() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        #expect(!stack.context.retainsRegisteredObjects)
        stack.context.retainsRegisteredObjects = true
        #expect(stack.context.retainsRegisteredObjects)
        weak var kept: NSManagedObject?
        do {
            let object = try #require(try stack.fetch("Department").first)
            kept = object
        }
        #expect(kept != nil)
        #expect(kept?.objectID == id)
        #expect(stack.context.registeredObject(for: id) != nil)
        #expect(stack.context.registeredObject(for: id) === kept)
        #expect(stack.context.object(with: id) === kept)
        #expect(stack.context.registeredObjects.count == 1)
        #expect(kept?.string("name") == "R&D")

        stack.context.retainsRegisteredObjects = false
        #expect(kept == nil)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(stack.context.registeredObject(for: id) == nil)
    }

    @Test func turningRetainingOnKeepsObjectsAlreadyRegistered() throws {
        let stack = try TestStack()
        let ids = [try stack.seed("Department", ["name": "A"]), try stack.seed("Department", ["name": "B"])]
        weak var first: NSManagedObject?
        weak var second: NSManagedObject?
        do {
            let objects = ids.map { stack.context.object(with: $0) }
            first = objects[0]
            second = objects[1]
            stack.context.retainsRegisteredObjects = true
        }
        #expect(first != nil)
        #expect(second != nil)
        #expect(Set(stack.context.registeredObjects.map(\.objectID)) == Set(ids))
        #expect(stack.context.registeredObject(for: ids[0]) === first)
        #expect(stack.context.registeredObject(for: ids[1]) === second)
        #expect(first?.string("name") == "A")

        // Turning it on again holds no second reference: one turn off releases them.
        stack.context.retainsRegisteredObjects = true
        stack.context.retainsRegisteredObjects = false
        #expect(first == nil)
        #expect(second == nil)
        #expect(stack.context.registeredObjects.isEmpty)
    }

    @Test func aSavedObjectIsRegisteredUnderItsPermanentIDOnly() throws {
        let stack = try TestStack()
        weak var released: NSManagedObject?
        let temporary: NSManagedObjectID
        let permanent: NSManagedObjectID
        do {
            let department = stack.insert("Department", ["name": "R&D"])
            released = department
            temporary = department.objectID
            #expect(temporary.isTemporaryID)
            #expect(stack.context.registeredObject(for: temporary) === department)
            try stack.context.save()
            permanent = department.objectID
            #expect(!permanent.isTemporaryID)
            #expect(permanent != temporary)
            #expect(stack.context.registeredObject(for: permanent) === department)
            #expect(stack.context.registeredObject(for: temporary) == nil)
            #expect(stack.context.object(with: permanent) === department)
            #expect(try stack.context.existingObject(with: permanent) === department)
            #expect(stack.context.registeredObjects == [department])
        }
        // Unchanged after the save: released, it leaves from its permanent ID.
        #expect(released == nil)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(stack.context.registeredObject(for: permanent) == nil)
        #expect(stack.context.registeredObject(for: temporary) == nil)
        let fault = stack.context.object(with: permanent)
        #expect(fault.isFault)
        #expect(fault.string("name") == "R&D")
    }

    @Test func obtainPermanentIDsMovesTheEntryAndTheObjectLeavesFromItsNewID() throws {
        let stack = try TestStack()
        weak var released: NSManagedObject?
        let temporary: NSManagedObjectID
        let permanent: NSManagedObjectID
        do {
            let department = stack.insert("Department", ["name": "R&D"])
            released = department
            temporary = department.objectID
            try stack.context.obtainPermanentIDs(for: [department])
            permanent = department.objectID
            #expect(!permanent.isTemporaryID)
            #expect(stack.context.registeredObject(for: permanent) === department)
            #expect(stack.context.registeredObject(for: temporary) == nil)
            #expect(stack.context.registeredObjects == [department])
        }
        // Still inserted: the context holds it.
        #expect(released != nil)
        try stack.context.save()
        #expect(released == nil)
        #expect(stack.context.registeredObject(for: permanent) == nil)
        #expect(stack.context.registeredObject(for: temporary) == nil)
        #expect(try stack.context.existingObject(with: permanent).string("name") == "R&D")
    }

    /// An object listed twice takes one permanent ID and is registered under it alone; once released,
    /// no entry is left pointing at it (a review found the batch move leaving one under a second ID).
    @Test func anObjectListedTwiceTakesOnePermanentID() throws {
        let stack = try TestStack()
        weak var released: NSManagedObject?
        let permanent: NSManagedObjectID
        do {
            let department = stack.insert("Department", ["name": "R&D"])
            let other = stack.insert("Department", ["name": "Sales"])
            released = department
            try stack.context.obtainPermanentIDs(for: [department, other, department])
            permanent = department.objectID
            #expect(!permanent.isTemporaryID && !other.objectID.isTemporaryID)
            #expect(stack.context.registeredObjects.count == 2)
            #expect(stack.context.registeredObject(for: permanent) === department)
            // The keys handed out are the two objects' only: the next one follows them.
            let keys = [permanent, other.objectID].compactMap { stack.store.primaryKey(of: $0) }.sorted()
            let third = stack.insert("Department", ["name": "Support"])
            try stack.context.obtainPermanentIDs(for: [third])
            // A new store hands out 1, 2, 3: no key was taken for the second listing.
            #expect(keys == [1, 2])
            #expect(stack.store.primaryKey(of: third.objectID) == 3)
            try stack.context.save()
        }
        #expect(released == nil)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(try stack.context.existingObject(with: permanent).string("name") == "R&D")
    }

    @Test func aRetainedObjectStaysRetainedAcrossItsMoveToAPermanentID() throws {
        let stack = try TestStack()
        stack.context.retainsRegisteredObjects = true
        weak var kept: NSManagedObject?
        let permanent: NSManagedObjectID
        do {
            let department = stack.insert("Department", ["name": "R&D"])
            kept = department
            try stack.context.obtainPermanentIDs(for: [department])
            permanent = department.objectID
        }
        try stack.context.save()
        #expect(kept != nil)
        #expect(stack.context.registeredObject(for: permanent) === kept)
        #expect(stack.context.registeredObjects.count == 1)
        stack.context.retainsRegisteredObjects = false
        #expect(kept == nil)
        #expect(stack.context.registeredObject(for: permanent) == nil)
    }

    @Test func rollbackReleasesARetainedInsertedObject() throws {
        let stack = try TestStack()
        stack.context.retainsRegisteredObjects = true
        weak var inserted: NSManagedObject?
        let temporary: NSManagedObjectID
        do {
            let department = stack.insert("Department", ["name": "new"])
            inserted = department
            temporary = department.objectID
        }
        #expect(inserted != nil)
        stack.context.rollback()
        #expect(inserted == nil)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(stack.context.registeredObject(for: temporary) == nil)
    }

    @Test func resetEmptiesTheRegistryAndAnOldObjectsDeinitLeavesItsSuccessorRegistered() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        var old: NSManagedObject?
        do {
            let fetched = try #require(try stack.fetch("Department").first)
            old = fetched
        }
        let inserted = stack.insert("Department", ["name": "new"])
        let insertedID = inserted.objectID
        #expect(stack.context.registeredObjects.count == 2)

        stack.context.reset()
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(stack.context.registeredObject(for: id) == nil)
        #expect(stack.context.registeredObject(for: insertedID) == nil)
        #expect(old?.managedObjectContext == nil)

        // The same ID, another object; the old one's deinit must not remove the new entry.
        let fresh = try #require(try stack.fetch("Department").first)
        #expect(fresh !== old)
        #expect(fresh.objectID == id)
        #expect(stack.context.registeredObject(for: id) === fresh)
        weak let released = old
        old = nil
        #expect(released == nil)
        #expect(stack.context.registeredObject(for: id) === fresh)
        #expect(stack.context.registeredObjects == [fresh])
        #expect(stack.context.object(with: id) === fresh)
        #expect(fresh.string("name") == "R&D")
    }

    @Test func resetReleasesRetainedObjectsAndTheContextKeepsRetainingNewOnes() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        stack.context.retainsRegisteredObjects = true
        weak var first: NSManagedObject?
        do {
            let object = try #require(try stack.fetch("Department").first)
            first = object
        }
        #expect(first != nil)
        stack.context.reset()
        #expect(first == nil)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(stack.context.registeredObject(for: id) == nil)
        #expect(stack.context.retainsRegisteredObjects)

        weak var second: NSManagedObject?
        do { second = stack.context.object(with: id) }
        #expect(second != nil)
        #expect(stack.context.registeredObject(for: id) === second)
        #expect(second?.string("name") == "R&D")
    }

    @Test func anObjectDeletedBySaveLeavesTheRegistryWhileStillAlive() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        let department = try stack.context.existingObject(with: id)
        stack.context.delete(department)
        #expect(stack.context.registeredObject(for: id) === department)
        try stack.context.save()
        #expect(stack.context.registeredObject(for: id) == nil)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(department.managedObjectContext == nil)
        #expect(throws: NSError.self) { try stack.context.existingObject(with: id) }
    }

    /// Objects a test holds after their context went away: faults without a context, released normally.
    @Test func objectsOutlivingTheirContextCanBeReleased() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        var survivors: [NSManagedObject] = []
        weak var releasedContext: NSManagedObjectContext?
        do {
            let context = stack.newContext()
            releasedContext = context
            survivors.append(context.object(with: id))
            survivors.append(try #require(try stack.fetch("Department", in: context).first))
            survivors.append(stack.insert("Department", ["name": "unsaved"], into: context))
            #expect(survivors[0] === survivors[1])
        }
        #expect(releasedContext == nil)
        for object in survivors { #expect(object.managedObjectContext == nil) }
        #expect(survivors[0].objectID == id)
        weak let fetched = survivors[0]
        weak let inserted = survivors[2]
        survivors.removeAll()
        #expect(fetched == nil)
        #expect(inserted == nil)
    }

    /// A context with `retainsRegisteredObjects` that goes away must release its objects: nothing else
    /// holds them once the test drops its references.
    @Test func aRetainingContextReleasesItsObjectsWhenItGoesAway() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        weak var fault: NSManagedObject?
        weak var inserted: NSManagedObject?
        weak var releasedContext: NSManagedObjectContext?
        do {
            let context = stack.newContext()
            releasedContext = context
            context.retainsRegisteredObjects = true
            fault = context.object(with: id)
            let new = stack.insert("Department", ["name": "unsaved"], into: context)
            inserted = new
            #expect(fault != nil)
            #expect(context.registeredObjects.count == 2)
        }
        #expect(releasedContext == nil)
        #expect(fault == nil)
        #expect(inserted == nil)
    }

    /// One thread releases fetched objects one by one while the context's queue looks them up by ID, lists
    /// them and registers new faults for the IDs it misses. No lookup may return an object of another ID
    /// (or a dead one); a new fault registered while its predecessor dies stays registered.
    @Test(.timeLimit(.minutes(1)))
    func lookupsRaceWithReleasesOnAnotherThread() throws {
        let stack = try TestStack()
        let context = stack.context
        let count = 150
        let names: [NSManagedObjectID: String] = try context.performAndWait {
            for index in 0..<count { stack.insert("Department", ["name": "D\(index)"]) }
            try context.save()
            return Dictionary(uniqueKeysWithValues: try stack.fetch("Department").map { ($0.objectID, $0.string("name") ?? "") })
        }
        let ids = Array(names.keys)
        #expect(ids.count == count)
        #expect(context.performAndWait { context.registeredObjects.isEmpty })

        var wrongIDs = 0, listedWrong = 0, replacementsLost = 0, wrongValues = 0
        // Lookups that found an object, and new faults registered, while the other thread was releasing.
        var hitsWhileReleasing = 0, replacedWhileReleasing = 0
        let started = Date()
        var rounds = 0
        while rounds < 250 && Date().timeIntervalSince(started) < 1.2 {
            rounds += 1
            let owner = ReleasingOwner()
            owner.objects = try context.performAndWait {
                // Realized or fault, alternately: both kinds must leave cleanly.
                let fetched = try stack.fetch("Department")
                if rounds.isMultiple(of: 2) { for object in fetched { _ = object.value(forKey: "name") } }
                return fetched.shuffled()
            }
            let keepReplacements = rounds.isMultiple(of: 3)
            var replacements: [NSManagedObjectID: NSManagedObject] = [:]
            let go = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                go.wait()
                owner.releaseAll()
                done.signal()
            }
            go.signal()
            repeat {
                context.performAndWait {
                    for id in ids.shuffled() {
                        let releasing = !owner.isDrained
                        if let object = context.registeredObject(for: id) {
                            if releasing { hitsWhileReleasing += 1 }
                            if object.objectID != id { wrongIDs += 1 }
                        } else if keepReplacements, replacements[id] == nil {
                            // Registered while the previous object may still be in its deinit.
                            replacements[id] = context.object(with: id)
                            if releasing { replacedWhileReleasing += 1 }
                        }
                    }
                    for object in context.registeredObjects where names[object.objectID] == nil { listedWrong += 1 }
                }
            } while !owner.isDrained
            done.wait()

            try context.performAndWait {
                for (id, replacement) in replacements {
                    if context.registeredObject(for: id) !== replacement { replacementsLost += 1 }
                    if replacement.objectID != id { wrongIDs += 1 }
                    if replacement.string("name") != names[id] { wrongValues += 1 }
                }
                // Every object the other thread held is gone; only the kept replacements remain.
                if Set(context.registeredObjects.map(ObjectIdentifier.init)) != Set(replacements.values.map(ObjectIdentifier.init)) {
                    listedWrong += 1
                }
                for id in ids where replacements[id] == nil && context.registeredObject(for: id) != nil { listedWrong += 1 }
                replacements = [:]
                // The store still answers every ID through a new fault.
                let sample = ids.prefix(5)
                for id in sample where try context.existingObject(with: id).string("name") != names[id] { wrongValues += 1 }
            }
        }
        #expect(rounds >= 2)
        #expect(wrongIDs == 0)
        #expect(listedWrong == 0)
        #expect(replacementsLost == 0)
        #expect(wrongValues == 0)
        #expect(context.performAndWait { context.registeredObjects.isEmpty })
        // The two threads did overlap: lookups found objects, and faults replaced released ones, while the
        // other thread was still releasing.
        #expect(hitsWhileReleasing > 0)
        #expect(replacedWhileReleasing > 0)
    }

    /// The registry keys objects by ID value, not by ID instance: an ID rebuilt from its URI (another
    /// instance, equal) finds the registered object, and a key's hash agrees with the ID's equality.
    @Test func anEqualIDOfAnotherInstanceFindsTheRegisteredObject() throws {
        let stack = try TestStack()
        let id = try stack.seed("Department", ["name": "R&D"])
        let other = try stack.seed("Department", ["name": "Sales"])
        let object = try stack.context.existingObject(with: id)
        let rebuilt = try #require(stack.coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation()))
        #expect(rebuilt !== id)
        #expect(rebuilt == id)
        #expect(stack.context.registeredObject(for: rebuilt) === object)
        #expect(try stack.context.existingObject(with: rebuilt) === object)

        // The table hashes with the ID's cached hash and compares with `==`: equal IDs hash alike.
        #expect(rebuilt.hash == id.hash)
        #expect(other != id)
        var keys: Set<NSManagedObjectID> = [id, other]
        #expect(!keys.insert(rebuilt).inserted)
        #expect(keys.count == 2)
    }
}

/// Fetched objects owned by one thread, which releases them one at a time.
private final class ReleasingOwner: @unchecked Sendable {
    /// Set before the owning thread starts; touched by that thread only afterwards.
    var objects: [NSManagedObject] = []
    private let drained = Atomic<Bool>(false)

    var isDrained: Bool { drained.load(ordering: .acquiring) }

    /// Releases the objects one by one, pausing now and then so that the lookups overlap the releases.
    func releaseAll() {
        while !objects.isEmpty {
            objects.removeLast()
            if objects.count.isMultiple(of: 10) { usleep(20) }
        }
        drained.store(true, ordering: .releasing)
    }
}
