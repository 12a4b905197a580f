import Foundation
import Observation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

// "Managed objects and accessors": generic key-value coding, primitive accessors, change notifications,
// mutable set proxies and inverse maintenance on every mutation path.

@Suite struct KeyValueCodingTests {
    @Test func aPlainManagedObjectReadsAndWritesEveryModeledProperty() throws {
        let stack = try TestStack()
        let employee = stack.insert("Employee")
        #expect(type(of: employee) == NSManagedObject.self)
        employee.setValue("Ann", forKey: "name")
        employee.setValue(41, forKey: "age")
        employee.setValue(Date(timeIntervalSince1970: 0), forKey: "hired")
        #expect(employee.value(forKey: "name") as? String == "Ann")
        #expect(employee.value(forKey: "age") as? Int == 41)
        #expect(employee.value(forKey: "age") as? Int16 == 41)
        #expect(employee.value(forKey: "hired") as? Date == Date(timeIntervalSince1970: 0))
        #expect(employee.value(forKey: "salary") as? Double == 0, "the model's default value")
        #expect(employee.value(forKey: "active") as? Bool == true)
        #expect(employee.dictionaryWithValues(forKeys: ["name", "email"])["email"] is NSNull)
    }

    @Test func valueForKeyPathWalksRelationshipsAndMapsToManyIntoSets() throws {
        let stack = try TestStack()
        let company = stack.insert("Company", ["name": "Acme"])
        let dept = stack.insert("Department", ["name": "R&D", "company": company])
        _ = stack.insert("Employee", ["name": "Ann", "salary": 10.0, "department": dept])
        _ = stack.insert("Employee", ["name": "Bob", "salary": 30.0, "department": dept])
        let names = dept.value(forKeyPath: "employees.name")
        #expect((names as? Set<String>) == ["Ann", "Bob"] || (names as? Set<AnyHashable>) == ["Ann", "Bob"])
        #expect(dept.value(forKeyPath: "company.name") as? String == "Acme")
        #expect((dept.value(forKeyPath: "employees.@count") as? NSNumber)?.intValue == 2)
        #expect((dept.value(forKeyPath: "employees.@sum.salary") as? NSNumber)?.doubleValue == 40)
        dept.setValue("Globex", forKeyPath: "company.name")
        #expect(company.value(forKey: "name") as? String == "Globex")
    }

    @Test func primitiveAccessorsSendNoNotificationsAndDoNotMaintainInverses() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department")
        let employee = stack.insert("Employee", ["name": "Ann"])
        try stack.context.save()
        var changes = 0
        let token = employee.observeValue(forKey: "name", options: [.new]) { _, _, _, _, _, _ in changes += 1 }
        employee.setPrimitiveValue("Zed", forKey: "name")
        #expect(changes == 0)
        #expect(!employee.isUpdated, "a primitive set alone does not register a change")
        #expect(employee.primitiveValue(forKey: "name") as? String == "Zed")
        employee.setPrimitiveValue(dept, forKey: "department")
        #expect(employee.value(forKey: "department") as? NSManagedObject === dept)
        #expect((dept.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
        token.invalidate()
    }

    @Test func settingARelationshipMaintainsTheInverseImmediately() throws {
        let stack = try TestStack()
        let d1 = stack.insert("Department", ["name": "one"])
        let d2 = stack.insert("Department", ["name": "two"])
        let ann = stack.insert("Employee", ["name": "Ann"])
        ann.setValue(d1, forKey: "department")
        #expect((d1.value(forKey: "employees") as? Set<NSManagedObject>) == [ann])
        ann.setValue(d2, forKey: "department")
        #expect((d1.value(forKey: "employees") as? Set<NSManagedObject>) == [])
        #expect((d2.value(forKey: "employees") as? Set<NSManagedObject>) == [ann])
        ann.setValue(nil, forKey: "department")
        #expect((d2.value(forKey: "employees") as? Set<NSManagedObject>) == [])
    }

    @Test func oneToOneMovesTheDestinationAwayFromItsPreviousOwner() throws {
        let stack = try TestStack()
        let badge = stack.insert("Badge", ["number": 7])
        let ann = stack.insert("Employee", ["name": "Ann"])
        let bob = stack.insert("Employee", ["name": "Bob"])
        ann.setValue(badge, forKey: "badge")
        #expect(badge.value(forKey: "holder") as? NSManagedObject === ann)
        bob.setValue(badge, forKey: "badge")
        #expect(badge.value(forKey: "holder") as? NSManagedObject === bob)
        #expect(ann.value(forKey: "badge") == nil)
    }

    @Test func toManySetterAndMutableSetProxyUpdateBothSides() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department")
        let ann = stack.insert("Employee", ["name": "Ann"])
        let bob = stack.insert("Employee", ["name": "Bob"])
        dept.setValue(Set([ann, bob]), forKey: "employees")
        #expect(ann.value(forKey: "department") as? NSManagedObject === dept)
        let proxy = dept.mutableSetValue(forKey: "employees")
        proxy.remove(ann)
        #expect(ann.value(forKey: "department") == nil)
        #expect(proxy.count == 1)
        proxy.add(ann)
        #expect(ann.value(forKey: "department") as? NSManagedObject === dept)
        proxy.removeAllObjects()
        #expect(bob.value(forKey: "department") == nil && ann.value(forKey: "department") == nil)
    }

    @Test func manyToManyKeepsBothSetsInStep() throws {
        let stack = try TestStack()
        let p1 = stack.insert("Project", ["title": "p1"])
        let p2 = stack.insert("Project", ["title": "p2"])
        let ann = stack.insert("Employee", ["name": "Ann"])
        ann.mutableSetValue(forKey: "projects").addObjects(from: [p1, p2])
        #expect((p1.value(forKey: "members") as? Set<NSManagedObject>) == [ann])
        p2.mutableSetValue(forKey: "members").remove(ann)
        #expect((ann.value(forKey: "projects") as? Set<NSManagedObject>) == [p1])
    }

    @Test func orderedToManyKeepsOrderAndMaintainsTheInverse() throws {
        let stack = try TestStack()
        let ann = stack.insert("Employee", ["name": "Ann"])
        let bob = stack.insert("Employee", ["name": "Bob"])
        let tasks = (1...3).map { stack.insert("Task", ["title": "t\($0)"]) }
        let ordered = ann.mutableOrderedSetValue(forKey: "tasks")
        ordered.add(tasks[0])
        ordered.add(tasks[2])
        ordered.insert(tasks[1], at: 1)
        #expect((ann.value(forKey: "tasks") as? NSOrderedSet)?.array as? [NSManagedObject] == tasks)
        #expect(tasks[1].value(forKey: "owner") as? NSManagedObject === ann)
        tasks[1].setValue(bob, forKey: "owner")
        #expect((ann.value(forKey: "tasks") as? NSOrderedSet)?.array as? [NSManagedObject] == [tasks[0], tasks[2]])
        #expect(ordered.index(of: tasks[2]) == 1)
        ordered.replaceObject(at: 0, with: tasks[1])
        #expect(tasks[0].value(forKey: "owner") == nil)
        #expect(tasks[1].value(forKey: "owner") as? NSManagedObject === ann)
        #expect((bob.value(forKey: "tasks") as? NSOrderedSet)?.count == 0)
    }

    @Test func generatedMutatorEntryPointsMaintainInverses() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department")
        let ann = stack.insert("Employee", ["name": "Ann"])
        dept.managedAdd([ann], forKey: "employees")
        #expect(ann.value(forKey: "department") as? NSManagedObject === dept)
        dept.managedRemove(NSSet(object: ann), forKey: "employees")
        #expect(ann.value(forKey: "department") == nil)
    }

    @Test func changesNotifyBothSidesOfARelationship() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department")
        let ann = stack.insert("Employee", ["name": "Ann"])
        var deptChanges: [NSKeyValueChange] = []
        var annChanges: [NSKeyValueChange] = []
        let t1 = dept.observeValue(forKey: "employees", options: [.new]) { _, kind, _, _, _, _ in deptChanges.append(kind) }
        let t2 = ann.observeValue(forKey: "department", options: [.new]) { _, kind, _, _, _, _ in annChanges.append(kind) }
        ann.setValue(dept, forKey: "department")
        #expect(annChanges == [.setting])
        #expect(deptChanges == [.insertion])
        t1.invalidate(); t2.invalidate()
    }
}

/// Foundation's set mutations as observers see them: `.set` reports the members replaced and the ones put
/// in their place, `.intersect` names the members kept and reports the others as removed.
@Suite struct SetMutationObservationTests {
    @Test func setAndIntersectReportOnlyTheMembersRemovedAndAdded() throws {
        let stack = try TestStack()
        let ann = stack.insert("Employee", ["name": "Ann"])
        let p1 = stack.insert("Project", ["title": "1"]), p2 = stack.insert("Project", ["title": "2"])
        let p3 = stack.insert("Project", ["title": "3"])
        let projects = ann.mutableSetValue(forKey: "projects")
        projects.addObjects(from: [p1, p2])
        var seen: [(kind: NSKeyValueChange, old: Set<NSManagedObject>?, new: Set<NSManagedObject>?, prior: Bool)] = []
        let token = ann.observeValue(forKey: "projects", options: [.old, .new, .prior]) { _, kind, old, new, _, prior in
            seen.append((kind, old as? Set<NSManagedObject>, new as? Set<NSManagedObject>, prior))
        }
        projects.setSet([p2, p3])
        #expect(seen.map(\.kind) == [.replacement, .replacement])
        #expect(seen.map(\.prior) == [true, false])
        #expect(seen.allSatisfy { $0.old == [p1] })
        #expect(seen[0].new == nil && seen[1].new == [p3])
        #expect(ann.objects("projects") == [p2, p3])

        seen.removeAll()
        projects.intersect([p3, p1])
        #expect(seen.map(\.kind) == [.removal, .removal])
        #expect(seen.allSatisfy { $0.old == [p2] && $0.new == nil })
        #expect(ann.objects("projects") == [p3])
        #expect(p2.objects("members").isEmpty)

        // The accessor pattern of Apple's documentation: the using set of an intersect is the set kept.
        projects.add(p1)
        seen.removeAll()
        let keep: Set<AnyHashable> = [p1]
        ann.willChangeValue(forKey: "projects", withSetMutation: .intersect, using: keep)
        ann.setPrimitiveValue(Set([p1]), forKey: "projects")
        ann.didChangeValue(forKey: "projects", withSetMutation: .intersect, using: keep)
        #expect(seen.map(\.kind) == [.removal, .removal])
        #expect(seen.allSatisfy { $0.old == [p3] })
        token.invalidate()
    }
}

/// The pairing of `willChangeValue(forKey:)` and `didChangeValue(forKey:)` on unobserved attributes,
/// which keep their pending change in a field rather than a list (the fast path of a set).
@Suite struct ChangeNotificationPairingTests {
    private func ann(_ stack: TestStack) throws -> NSManagedObject {
        try stack.context.existingObject(with: try stack.seed("Employee", ["name": "Ann", "age": 40]))
    }

    @Test func aNestedChangeOfOneKeyEndsWithTheOutermostDidChange() throws {
        let stack = try TestStack()
        let ann = try ann(stack)
        ann.willChangeValue(forKey: "age")
        ann.willChangeValue(forKey: "age")
        ann.setPrimitiveValue(41, forKey: "age")
        ann.didChangeValue(forKey: "age")
        #expect(!ann.isUpdated)
        ann.didChangeValue(forKey: "age")
        #expect(ann.isUpdated)
        #expect(ann.changedValues()["age"] as? Int == 41)
        // The pair is over and left nothing pending: the next set is a change of its own.
        ann.setValue(42, forKey: "age")
        #expect(ann.changedValues()["age"] as? Int == 42)
        #expect(ann.changedValuesForCurrentEvent()["age"] as? Int == 40)
    }

    @Test(arguments: [false, true])
    func changesOfTwoKeysInterleavedAreBothRecorded(endingInnerFirst: Bool) throws {
        let stack = try TestStack()
        let ann = try ann(stack)
        ann.willChangeValue(forKey: "age")
        ann.willChangeValue(forKey: "name")
        ann.setPrimitiveValue(41, forKey: "age")
        ann.setPrimitiveValue("Anne", forKey: "name")
        if endingInnerFirst {
            ann.didChangeValue(forKey: "name")
            ann.didChangeValue(forKey: "age")
        } else {
            ann.didChangeValue(forKey: "age")
            ann.didChangeValue(forKey: "name")
        }
        #expect(Set(ann.changedValues().keys) == ["age", "name"])
        let event = ann.changedValuesForCurrentEvent()
        #expect(event["age"] as? Int == 40)
        #expect(event["name"] as? String == "Ann")
    }

    /// An observer that relates one more object from inside the relationship's own notification nests
    /// inverse updates on the department, one per employee: deeper than the byte that counts them.
    @Test func inverseUpdatesNestDeeperThanTheirByteCounter() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department")
        let employees = (0..<300).map { _ in stack.insert("Employee") }
        var next = 1
        let token = dept.observeValue(forKey: "employees") { _, kind, _, _, _, isPrior in
            guard !isPrior, kind == .insertion, next < employees.count else { return }
            next += 1
            employees[next - 1].setValue(dept, forKey: "department")
        }
        employees[0].setValue(dept, forKey: "department")
        token.invalidate()
        #expect(next == employees.count)
        #expect((dept.value(forKey: "employees") as? Set<NSManagedObject>)?.count == employees.count)
        #expect(employees.allSatisfy { $0.value(forKey: "department") as? NSManagedObject === dept })
        // The counting is back to zero: a change of the relationship updates the inverse again.
        let last = stack.insert("Employee")
        dept.mutableSetValue(forKey: "employees").add(last)
        #expect(last.value(forKey: "department") as? NSManagedObject === dept)
    }

    @Test func anObserverAddedWithinAChangeIsToldItsNewValue() throws {
        let stack = try TestStack()
        let ann = try ann(stack)
        ann.willChangeValue(forKey: "age")
        var seen: [Int?] = []
        let token = ann.observeValue(forKey: "age", options: [.new]) { _, _, _, new, _, isPrior in
            if !isPrior { seen.append(new as? Int) }
        }
        ann.setPrimitiveValue(41, forKey: "age")
        ann.didChangeValue(forKey: "age")
        #expect(seen == [41])
        ann.setValue(42, forKey: "age")
        #expect(seen == [41, 42])
        token.invalidate()
    }
}

@Suite struct KeyValueCodingStops {
    @Test func anUnknownKeyStopsWithApplesMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack()
            let employee = stack.insert("Employee")
            _ = employee.value(forKey: "nickname")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("is not key value coding-compliant for the key \"nickname\""), "stopped with another message: \(output)")
    }

    /// An index past an ordered relationship's end stops, as `NSMutableOrderedSet` raises.
    @Test func anOrderedIndexPastTheEndStops() async {
        let insert = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack()
            let employee = stack.insert("Employee", ["name": "Ann"])
            employee.mutableOrderedSetValue(forKey: "tasks").insert(stack.insert("Task"), at: 2)
        }
        let inserted = String(decoding: insert?.standardErrorContent ?? [], as: UTF8.self)
        #expect(inserted.contains("insertObject:atIndex:]: index 2 beyond bounds [0 .. 0] (the relationship tasks of Employee)"), "\(inserted)")
        let remove = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack()
            let employee = stack.insert("Employee", ["name": "Ann"])
            employee.mutableOrderedSetValue(forKey: "tasks").add(stack.insert("Task"))
            employee.mutableOrderedSetValue(forKey: "tasks").removeObject(at: 1)
        }
        let removed = String(decoding: remove?.standardErrorContent ?? [], as: UTF8.self)
        #expect(removed.contains("removeObjectsAtIndexes:]: index 1 beyond bounds [0 .. 0]"), "\(removed)")
    }

    @Test func aValueOfTheWrongTypeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack()
            let employee = stack.insert("Employee")
            employee.setValue(42, forKey: "name")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Unacceptable type of value for attribute: property = \"name\""), "stopped with another message: \(output)")
    }

    @Test func aDidChangeWithoutItsWillChangeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack()
            let employee = stack.insert("Employee")
            employee.didChangeValue(forKey: "age")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("didChangeValueForKey: age without a matching willChangeValueForKey:"), "stopped with another message: \(output)")
    }

    @Test func aDidChangeOfAnotherKeyThanTheOnePendingStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack()
            let employee = stack.insert("Employee")
            employee.willChangeValue(forKey: "age")
            employee.didChangeValue(forKey: "name")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("didChangeValueForKey: name without a matching willChangeValueForKey:"), "stopped with another message: \(output)")
    }

    @Test func relatingObjectsOfTwoContextsStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let stack = try TestStack()
            let other = stack.newContext()
            let dept = stack.insert("Department", into: other)
            let employee = stack.insert("Employee")
            employee.setValue(dept, forKey: "department")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Illegal attempt to establish a relationship 'department' between objects in different contexts"), "stopped with another message: \(output)")
    }
}

@Suite struct AuditGapTests {
    @Test func theMutableSetProxyNotifiesObserversAndMovesObjectsBetweenOwners() throws {
        let stack = try TestStack()
        let d1 = stack.insert("Department"), d2 = stack.insert("Department")
        let ann = stack.insert("Employee", ["name": "Ann", "department": d1])
        var kinds: [NSKeyValueChange] = []
        let token = d2.observeValue(forKey: "employees", options: [.new]) { _, kind, _, _, _, _ in kinds.append(kind) }
        d2.mutableSetValue(forKey: "employees").add(ann)
        #expect(kinds == [.insertion])
        #expect(d1.objects("employees").isEmpty)
        #expect(ann.object("department") === d2)
        token.invalidate()
    }

    @Test func objectIDsForRelationshipNamedAnswersWithoutLoadingTheRelationship() throws {
        let stack = try TestStack()
        let dept = stack.insert("Department", ["name": "R&D"])
        let people = ["a", "b"].map { stack.insert("Employee", ["name": $0, "department": dept]) }
        try stack.context.save()
        let reader = stack.newContext()
        try withExtendedLifetime(reader) {
            let fetched = try #require(try stack.fetch("Department", in: reader).first)
            #expect(Set(fetched.objectIDs(forRelationshipNamed: "employees")) == Set(people.map(\.objectID)))
            #expect(fetched.hasFault(forRelationshipNamed: "employees"))
        }
    }

    @Test func hasPersistentChangedValuesIsTrueOnlyForPersistentChanges() throws {
        let stack = try TestStack()
        let ann = stack.insert("Employee", ["name": "Ann"])
        try stack.context.save()
        ann.setValue("scratch", forKey: "cache")
        #expect(ann.isUpdated && !ann.hasPersistentChangedValues)
        ann.setValue(44, forKey: "age")
        #expect(ann.hasPersistentChangedValues)
    }

    @Test func contextNameUserInfoAndStalenessInterval() throws {
        let stack = try TestStack()
        #expect(stack.context.stalenessInterval == -1)
        #expect(stack.context.undoManager == nil)
        stack.context.name = "importer"
        stack.context.userInfo["batch"] = 3
        #expect(stack.context.name == "importer")
        #expect(stack.context.userInfo["batch"] as? Int == 3)
    }

    @Test func fetchOptionsByEntityBatchSizeFaultsAndPropertyValues() throws {
        let stack = try TestStack()
        for name in ["a", "b", "c"] { _ = try stack.seed("Employee", ["name": name]) }
        let reader = stack.newContext()
        try withExtendedLifetime(reader) {
            let request = NSFetchRequest<NSManagedObject>()
            request.entity = stack.model.entitiesByName["Employee"]
            request.fetchBatchSize = 2
            #expect(try reader.fetch(request).count == 3, "a batch size still returns every result")
            reader.reset()
            request.returnsObjectsAsFaults = false
            #expect(try reader.fetch(request).allSatisfy { !$0.isFault })
            reader.reset()
            request.returnsObjectsAsFaults = true
            request.includesPropertyValues = false
            let faults = try reader.fetch(request)
            #expect(faults.allSatisfy { $0.isFault })
            #expect(Set(faults.compactMap { $0.string("name") }) == ["a", "b", "c"], "the faults fill from the store")
        }
    }
}

/// A Department class with its own `employees` setter, counted, as a class with a hand-written accessor.
final class CountingDepartment: NSManagedObject, @unchecked Sendable {
    static let className = String(reflecting: CountingDepartment.self)
    var setterCalls = 0
    var employees: Set<NSManagedObject> {
        get {
            willAccessValue(forKey: "employees")
            defer { didAccessValue(forKey: "employees") }
            return primitiveValue(forKey: "employees") as? Set<NSManagedObject> ?? []
        }
        set {
            setterCalls += 1
            willChangeValue(forKey: "employees")
            setPrimitiveValue(newValue, forKey: "employees")
            didChangeValue(forKey: "employees")
        }
    }
    override class var managedKeyTable: ManagedKeyTable {
        var table = super.managedKeyTable
        table.accessor(\CountingDepartment.employees, key: "employees")
        return table
    }
}

@Suite struct MutableProxyAccessorTests {
    /// Spec: the proxy of `mutableSetValue(forKey:)` changes the relationship itself, with set-mutation
    /// notifications and the inverse kept, and never calls the class's own setter (as Apple's proxy calls
    /// the class's add/remove mutators or works on the primitive value, not `setEmployees:`).
    @Test func theMutableSetProxyDoesNotCallTheClassesSetter() throws {
        NSManagedObjectModel.registerManagedObjectClass(CountingDepartment.self, forName: CountingDepartment.className)
        let stack = try TestStack(model: TestModel.make { entities, _ in
            entities["Department"]!.managedObjectClassName = CountingDepartment.className
        })
        let department = try #require(stack.insert("Department", ["name": "R&D"]) as? CountingDepartment)
        let ann = stack.insert("Employee", ["name": "Ann"])
        let bob = stack.insert("Employee", ["name": "Bob"])
        let proxy = department.mutableSetValue(forKey: "employees")
        proxy.add(ann)
        proxy.addObjects(from: [bob])
        proxy.remove(ann)
        #expect(department.setterCalls == 0)
        #expect(department.employees == [bob])
        #expect(bob.object("department") === department && ann.object("department") == nil)
        // setValue(_:forKey:) does go through the class's accessor.
        department.setValue(Set([ann]), forKey: "employees")
        #expect(department.setterCalls == 1)
        #expect(ann.object("department") === department && bob.object("department") == nil)
    }
}
