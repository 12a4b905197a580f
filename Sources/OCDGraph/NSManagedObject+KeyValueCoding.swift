import Foundation
import Observation
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSExpression

extension NSManagedObject {
    // MARK: Key-value coding

    /// The value of the property `key`: a class-provided accessor if the class has one for the key,
    /// otherwise the modeled property's value (firing the fault). To-many relationships answer
    /// `Set<NSManagedObject>` (`NSOrderedSet` when ordered). Stops on a key the entity does not have, as
    /// Apple raises `NSUnknownKeyException`.
    func kvcValue(forKey key: String) -> Any? {
        if hasClassAccessors, let accessor = keyTable.accessors[key] { return accessor.get(self) }
        guard let slot = layout.slot(named: key) else {
            if let value = builtInValue(forKey: key) { return value }
            fatalError("[<\(Swift.type(of: self)) \(addressString)> valueForUndefinedKey:]: the entity \(entity.name ?? "?") is not key value coding-compliant for the key \"\(key)\".")
        }
        willAccessValue(forKey: key)
        let value = publicValue(slot: slot)
        didAccessValue(forKey: key)
        return value
    }

    /// Sets the property `key`: through a class-provided accessor if the class has one, otherwise the
    /// modeled property with change notifications and inverse maintenance. Stops on an unknown key or a
    /// value of the wrong type, as Apple raises.
    func kvcSetValue(_ value: Any?, forKey key: String) {
        if hasClassAccessors, let accessor = keyTable.accessors[key] {
            guard let set = accessor.set else {
                fatalError("[<\(Swift.type(of: self)) \(addressString)> setValue:forUndefinedKey:]: the property \"\(key)\" of \(entity.name ?? "?") is read-only.")
            }
            set(self, value)
            return
        }
        guard layout.slot(named: key) != nil else {
            fatalError("[<\(Swift.type(of: self)) \(addressString)> setValue:forUndefinedKey:]: the entity \(entity.name ?? "?") is not key value coding-compliant for the key \"\(key)\".")
        }
        willChangeValue(forKey: key)
        setPrimitiveValue(value, forKey: key)
        didChangeValue(forKey: key)
    }

    /// The value at a dotted key path; a to-many step maps the rest of the path over its members and answers
    /// a set. Collection operators (`@count`, `@sum.salary` …) work as in key-value coding.
    func kvcValue(forKeyPath keyPath: String) -> Any? {
        guard keyPath.contains(".") || keyPath.hasPrefix("@") else { return value(forKey: keyPath) }
        let components = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
        if components[0].hasPrefix("@") {
            return NSExpression(forKeyPath: keyPath).expressionValue(with: self, context: nil)
        }
        let first = value(forKey: components[0])
        guard components.count == 2, let first else { return first }
        if let object = first as? NSManagedObject { return object.value(forKeyPath: components[1]) }
        if components[1].hasPrefix("@") || ManagedValueCoercion.managedObjects(in: first) != nil {
            return NSExpression(forKeyPath: keyPath).expressionValue(with: self, context: nil)
        }
        return NSExpression(forKeyPath: components[1]).expressionValue(with: first, context: nil)
    }

    /// Sets the value at a dotted key path on the object the path's prefix reaches (nothing if it is nil
    /// or no managed object). A path into a composite attribute (`location.latitude`, or
    /// `place.location.latitude` through a to-one) sets that element: the composite's dictionary with it
    /// set, as a change of the composite. Core Data's documentation names elements by such paths; its
    /// dictionaries cannot be changed in place.
    func kvcSetValue(_ value: Any?, forKeyPath keyPath: String) {
        guard keyPath.contains(".") else { return setValue(value, forKey: keyPath) }
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var object: NSManagedObject = self
        for index in components.indices {
            let key = components[index]
            if index == components.count - 1 { return object.setValue(value, forKey: key) }
            if let slot = object.layout.slot(named: key), let composite = object.layout.properties[slot] as? NSCompositeAttributeDescription {
                let current = object.value(forKey: key) as? [String: Any] ?? [:]
                return object.setValue(Self.setting(value, at: components[(index + 1)...], in: current, of: composite, keyPath: keyPath), forKey: key)
            }
            guard let next = object.value(forKey: key) as? NSManagedObject else { return }
            object = next
        }
    }

    /// `dictionary`, a value of `composite`, with `value` at the element `path` names.
    private static func setting(_ value: Any?, at path: ArraySlice<String>, in dictionary: [String: Any], of composite: NSCompositeAttributeDescription,
                                keyPath: String) -> [String: Any] {
        guard let key = path.first, let element = composite.elements.first(where: { $0.name == key }) else {
            fatalError("setValue(_:forKeyPath:): \(keyPath) names no element of the composite attribute \(composite.name).")
        }
        var result = dictionary
        if path.count == 1 {
            result[key] = value is NSNull ? nil : value
        } else if let nested = element as? NSCompositeAttributeDescription {
            result[key] = setting(value, at: path.dropFirst(), in: dictionary[key] as? [String: Any] ?? [:], of: nested, keyPath: keyPath)
        } else {
            fatalError("setValue(_:forKeyPath:): \(keyPath) goes past the element \(key) of \(composite.name), which is no composite.")
        }
        return result
    }

    /// The values of `keys`, with `NSNull` for nil.
    public func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        var result: [String: Any] = [:]
        for key in keys { result[key] = value(forKey: key) ?? NSNull() }
        return result
    }

    /// Sets several keys at once; `NSNull` means nil.
    public func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues { setValue(value is NSNull ? nil : value, forKey: key) }
    }

    private func builtInValue(forKey key: String) -> Any? {
        switch key {
        case "self": return self
        case "objectID": return objectID
        case "entity": return entity
        case "managedObjectContext": return managedObjectContext
        default: return nil
        }
    }

    var addressString: String { "0x" + String(UInt(bitPattern: ObjectIdentifier(self)), radix: 16) }

    // MARK: Primitive values

    /// The stored value of `key`, without access notifications (a custom primitive accessor wins).
    /// A to-many relationship answers a `Set<NSManagedObject>` (an `NSOrderedSet` when ordered).
    func kvcPrimitiveValue(forKey key: String) -> Any? {
        if hasPrimitiveAccessors, let accessor = keyTable.primitiveAccessors[key] {
            // The class's storage holds the value once the fault has filled it.
            fireFault()
            return accessor.get(self)
        }
        guard let slot = layout.slot(named: key) else {
            fatalError("primitiveValueForKey: \(key) is not a property of the entity \(entity.name ?? "?").")
        }
        return publicValue(slot: slot)
    }

    /// Stores `value` straight into the word of `key`'s attribute when it is that attribute's own kind of
    /// plain number (an `Int64` or `Int` for an integer, a `Double`, a `Bool`), recognized by its
    /// metadata: what `normalize` would keep as it is, without the casts and copies of the general path.
    /// False (nothing stored) otherwise.
    @inline(__always)
    func setPlainNumber(_ value: Any?, forKey key: String) -> Bool {
        guard !hasPrimitiveAccessors, let slot = layout.slot(named: key) else { return false }
        let kind = layout.slotPlan.kind(of: slot)
        guard kind != .any else { return false }
        let held = SlotValues.words(value)
        switch kind {
        case .int64 where held.type == SlotValues.int64Type:
            fireFault()
            slots.setInteger(Int64(bitPattern: held.value), at: slot)
        case .int64 where held.type == Self.intType:
            fireFault()
            slots.setInteger(Int64(Int(bitPattern: UInt(held.value))), at: slot)
        case .double where held.type == SlotValues.doubleType:
            fireFault()
            slots.setDouble(Double(bitPattern: held.value), at: slot)
        case .bool where held.type == SlotValues.boolType:
            fireFault()
            slots.setBool(SlotValues.unboxedBool(value)!, at: slot)
        default:
            return false
        }
        return true
    }

    private static var intType: UnsafeRawPointer { unsafeBitCast(Int.self as Any.Type, to: UnsafeRawPointer.self) }

    /// Sets the stored value of `key` without change notifications and without updating an inverse
    /// relationship (a custom primitive accessor wins). Stops on a value of the wrong type.
    func kvcSetPrimitiveValue(_ value: Any?, forKey key: String) {
        if setPlainNumber(value, forKey: key) { return }
        // A typed optional arrives boxed (`Optional<Set<T>>.none` inside `Any?`): unwrap it to nil or its value.
        var value = value
        // A protocol cast per set costs a conformance lookup: plain scalars and class instances skip it.
        while let inner = value, !ManagedValueCoercion.isPlainValue(inner), let optional = inner as? AnyOptionalValue {
            value = optional.wrappedValue
        }
        guard let slot = layout.slot(named: key) else {
            fatalError("setPrimitiveValue:forKey: \(key) is not a property of the entity \(entity.name ?? "?").")
        }
        // Before the class's own setter: filling a fault writes the row through that setter, over the value.
        fireFault()
        if hasPrimitiveAccessors, let accessor = keyTable.primitiveAccessors[key], let set = accessor.set {
            set(self, value)
            // The subclass keeps the value; the slot mirrors it for saving and change tracking.
        }
        let property = layout.properties[slot]
        if layout.kinds[slot] == .toOne || layout.kinds[slot] == .toMany, let relationship = property as? NSRelationshipDescription {
            if relationship.isToMany {
                let objects = checkedToMany(value, relationship)
                let storage = toMany(slot)
                storage.replace(with: objects)
            } else {
                slots[slot] = checkedToOne(value, relationship)
            }
        } else {
            slots[slot] = AttributeValues.normalize(value, for: property as! NSAttributeDescription)
        }
    }

    /// A slot's value in its public form: to-many as a Swift set (or `NSOrderedSet`), to-one as the object.
    func publicValue(slot: Int) -> Any? {
        fireFault()
        if layout.kinds[slot] == .toMany, let relationship = layout.properties[slot] as? NSRelationshipDescription {
            return publicValue(ofToMany: toMany(slot), relationship)
        }
        // A number held plainly becomes its `NSNumber` from its word, read in place (the object keeps its
        // values meanwhile), without first copying it into an `Any` and retaining the values around that.
        if let number = SlotValues.number(slots.unretained.words(at: slot)) { return number }
        return slots[slot]
    }

    func publicValue(ofToMany storage: ToManyStorage, _ relationship: NSRelationshipDescription) -> Any {
        relationship.isOrdered ? NSOrderedSet(array: storage.objects) : Set(storage.objects)
    }

    private func checkedToOne(_ value: Any?, _ relationship: NSRelationshipDescription) -> NSManagedObject? {
        guard let value, !isNSNull(value) else { return nil }
        guard let object = value as? NSManagedObject,
              relationship.destinationEntity.map({ object.entity.isKindOf(entity: $0) }) ?? true else {
            fatalError("Unacceptable type of value for to-one relationship: property = \"\(relationship.name)\"; desired type = \(relationship.destinationEntity?.name ?? "?"); given type = \(Swift.type(of: value)); value = \(value).")
        }
        checkSameContext(object, relationship)
        return object
    }

    private func checkedToMany(_ value: Any?, _ relationship: NSRelationshipDescription) -> [NSManagedObject] {
        guard let value, !isNSNull(value) else { return [] }
        guard let objects = ManagedValueCoercion.managedObjects(in: value) else {
            fatalError("Unacceptable type of value for to-many relationship: property = \"\(relationship.name)\"; desired type = NSSet; given type = \(Swift.type(of: value)); value = \(value).")
        }
        for object in objects {
            if let destination = relationship.destinationEntity, !object.entity.isKindOf(entity: destination) {
                fatalError("Unacceptable type of value for to-many relationship: property = \"\(relationship.name)\"; desired type = \(destination.name ?? "?"); given type = \(object.entity.name ?? "?"); value = \(object).")
            }
            checkSameContext(object, relationship)
        }
        return objects
    }

    private func checkSameContext(_ object: NSManagedObject, _ relationship: NSRelationshipDescription) {
        if let mine = contextReference, let theirs = object.contextReference, mine !== theirs {
            fatalError("Illegal attempt to establish a relationship '\(relationship.name)' between objects in different contexts (source = \(objectID), destination = \(object.objectID)).")
        }
    }

    // MARK: Access notifications

    /// Fires the fault (for any key, or nil) and lets Swift Observation record the read.
    func noteWillAccess(_ key: String?) {
        if ConcurrencyDebug.isEnabled { assertQueue(forAccessTo: key) }
        fireFault()
        // Outside `withObservationTracking` a read reports nothing, and needs no registrar to say so.
        guard let key, ObservationProbe.mayBeTracking else { return }
        reportAccess(key)
    }

    // Apart from the read, which then touches no `ObservationRegistrar` (a resilient type: its
    // metadata was fetched and stack space sized for it on every read).
    @inline(never)
    private func reportAccess(_ key: String) {
        guard let slot = layout.slot(named: key) else { return }
        observationRegistrar.access(self, keyPath: EntityRuntime.of(layout).observationPaths[slot])
    }

    @inline(never)
    private func assertQueue(forAccessTo key: String?) {
        managedObjectContext?.assertQueue("access to \(key ?? "a fault") of \(objectID)")
    }


    // MARK: Change notifications

    /// Announces a change of `key`: records the old value for observers, the current event and inverse
    /// maintenance.
    func noteWillChange(_ key: String) {
        if ConcurrencyDebug.isEnabled { assertQueue(forChangeOf: key) }
        beginChange(key, kind: .setting, objects: nil)
    }

    @inline(never)
    private func assertQueue(forChangeOf key: String) {
        managedObjectContext?.assertQueue("change of \(key) of \(objectID)")
    }

    /// Completes a change of `key`: marks the object changed, updates an inverse relationship, and
    /// notifies observers.
    func noteDidChange(_ key: String) {
        endChange(key, kind: .setting, objects: nil)
    }

    /// Announces a mutation of the to-many relationship `key` by `objects`.
    func noteWillChange(_ key: String, mutation: NSKeyValueSetMutationKind, objects: Set<AnyHashable>) {
        if ConcurrencyDebug.isEnabled { assertQueue(forChangeOf: key) }
        var objects = objects
        if mutation == .intersect, let slot = layout.slot(named: key), layout.kinds[slot] == .toMany {
            // Intersect names the members kept; observers are told of the others, which it removes.
            fireFault()
            objects = Self.members(toMany(slot).objects, notIn: objects)
        }
        beginChange(key, kind: Self.changeKind(mutation), objects: objects)
    }

    /// Completes a mutation of the to-many relationship `key`.
    func noteDidChange(_ key: String, mutation: NSKeyValueSetMutationKind, objects: Set<AnyHashable>) {
        var objects = objects
        if mutation == .intersect, let slot = layout.slot(named: key),
           let old = pendingChanges.last(where: { $0.slot == slot })?.change.oldObjects {
            objects = Self.members(old, notIn: objects)
        }
        endChange(key, kind: Self.changeKind(mutation), objects: objects)
    }

    private static func members(_ members: [NSManagedObject], notIn objects: Set<AnyHashable>) -> Set<AnyHashable> {
        let named = Set(objects.compactMap { ($0.base as? NSManagedObject).map(ObjectIdentifier.init) })
        return Set(members.lazy.filter { !named.contains(ObjectIdentifier($0)) }.map(AnyHashable.init))
    }

    /// Announces a change of the members at `indexes` of the ordered to-many relationship `key`.
    func noteWillChange(_ key: String, kind: NSKeyValueChange, indexes: IndexSet) {
        if ConcurrencyDebug.isEnabled { assertQueue(forChangeOf: key) }
        beginChange(key, kind: kind, objects: nil, indexes: kind == .setting ? nil : indexes)
    }

    /// Completes a change of the members at `indexes` of the ordered to-many relationship `key`.
    func noteDidChange(_ key: String, kind: NSKeyValueChange, indexes: IndexSet) {
        endChange(key, kind: kind, objects: nil, indexes: kind == .setting ? nil : indexes)
    }

    private static func changeKind(_ mutation: NSKeyValueSetMutationKind) -> NSKeyValueChange {
        switch mutation {
        case .union: return .insertion
        case .minus: return .removal
        case .intersect: return .removal
        case .set: return .replacement
        }
    }

    private func beginChange(_ key: String, kind: NSKeyValueChange, objects: Set<AnyHashable>?, indexes: IndexSet? = nil) {
        guard let slot = layout.slot(named: key) else {
            // An unmodeled property: observers only.
            notifyObservers(key, kind: kind, old: nil, new: nil, indexes: indexes, isPrior: true)
            return
        }
        fireFault()
        if !pendingChanges.isEmpty, let index = pendingChanges.firstIndex(where: { $0.slot == slot }) {
            pendingChanges[index].change.depth += 1
            return
        }
        if Int(fastPendingSlot) == slot + 1 {
            // Nested in a change of the same key: counted in the list from now on, as the general path
            // counts it (the old value stays unkept).
            fastPendingSlot = 0
            pendingChanges.append((slot, PendingChange(oldObjects: nil, oldValue: nil, depth: 2)))
            return
        }
        // A persistent attribute of an object nobody observes (no `Extras`: no observers, no registrar, no
        // old values kept beside the snapshot): the change keeps no old value, and the event's is read
        // only if the snapshot no longer holds it. The general path below made, copied and destroyed
        // an `Any?` per set. (An observer added before the matching didChange is told no old value.)
        if layout.kinds[slot] == .attribute, slot < 32, extras == nil, !hasPrimitiveAccessors {
            if fastPendingSlot == 0 {
                fastPendingSlot = UInt8(slot + 1)
            } else {
                pendingChanges.append((slot, PendingChange(oldObjects: nil, oldValue: nil, depth: 1)))
            }
            if eventAttributeMask & (1 << UInt32(slot)) == 0, contextReference != nil, !status.contains(.awakingFromFetch) {
                recordEventStartValue(slot: slot)
            }
            return
        }
        var change = PendingChange(oldObjects: nil, oldValue: nil, depth: 1)
        let property = layout.properties[slot]
        // Not while awakeFromFetch runs: change processing is off there, so nothing would list the object
        // for the event and its recorded values would outlive it.
        let recordsEventValue = !property.isTransient && !hasEventOldValue(slot) && contextReference != nil
            && !status.contains(.awakingFromFetch)
        if layout.kinds[slot] == .toOne || layout.kinds[slot] == .toMany, let relationship = property as? NSRelationshipDescription {
            if relationship.isToMany {
                // Copies of a to-many's members cost O(n): take them only for what needs them (inverse
                // maintenance, observers, the event's old values), so that adding to a large relationship
                // one object at a time stays linear.
                if inverseUpdateDepth == 0 || !observers.isEmpty { change.oldObjects = toMany(slot).objects }
                if recordsEventValue || !observers.isEmpty { change.oldValue = publicValue(ofToMany: toMany(slot), relationship) }
            } else {
                let old = slots[slot] as? NSManagedObject
                change.oldObjects = old.map { [$0] } ?? []
                change.oldValue = old
            }
        } else {
            // As held: an unboxed number is boxed only if an observer or the event's values hand it out.
            // A class with primitive accessors keeps the value itself; its slot may be out of date.
            change.oldValue = hasPrimitiveAccessors ? storedAttributeValue(slot: slot) : slots.stored(slot)
        }
        pendingChanges.append((slot, change))
        // Persistent properties only, as Apple documents for changedValuesForCurrentEvent().
        if recordsEventValue { recordEventOldValue(change.oldValue, slot: slot) }
        if extras != nil { registrarWillSet(slot: slot) }
        if !observers.isEmpty {
            let (old, _) = observedValues(kind: kind, key: key, change: change, objects: objects, indexes: indexes, slot: slot, isPrior: true)
            notifyObservers(key, kind: kind, old: old, new: nil, indexes: indexes, isPrior: true)
        }
    }

    private func endChange(_ key: String, kind: NSKeyValueChange, objects: Set<AnyHashable>?, indexes: IndexSet? = nil) {
        guard let slot = layout.slot(named: key) else {
            // An unmodeled key (a property the class keeps itself): its value is read only for an
            // observer that asked for it, as key-value observing does; nobody else may be able to read it.
            if observers.contains(where: { $0.isValid && $0.key == key && $0.options.contains(.new) }) {
                var new = value(forKey: key)
                if let indexes {
                    // The members at the indexes, for a change at indexes (none for a removal).
                    let members = (new as? NSOrderedSet)?.array ?? (new as? [Any]) ?? []
                    new = kind == .removal ? nil : indexes.compactMap { $0 < members.count ? members[$0] : nil }
                }
                notifyObservers(key, kind: kind, old: nil, new: new, indexes: indexes, isPrior: false)
            } else {
                notifyObservers(key, kind: kind, old: nil, new: nil, indexes: indexes, isPrior: false)
            }
            // A class that does not let its context ignore such changes has its objects marked updated
            // (saved with no column written: nothing modeled changed).
            if !Swift.type(of: self).contextShouldIgnoreUnmodeledPropertyChanges, !status.contains(.fault),
               let context = managedObjectContext, context.unmodeledChangesIgnored == 0 {
                tellContextOfChange()
            }
            return
        }
        if Int(fastPendingSlot) == slot + 1 {
            // Begun on the fast path (an attribute: no inverse to update, no old value kept), so no
            // pending change is made here either; an observer may have come since (Extras).
            fastPendingSlot = 0
            tellContextOfChange()
            if extras != nil {
                notifyEndOfChange(key, kind: kind, objects: objects, indexes: indexes, slot: slot, change: PendingChange(oldObjects: nil, oldValue: nil, depth: 0))
            }
            return
        }
        guard let index = pendingChanges.lastIndex(where: { $0.slot == slot }) else {
            fatalError("didChangeValueForKey: \(key) without a matching willChangeValueForKey: on \(objectID).")
        }
        pendingChanges[index].change.depth -= 1
        if pendingChanges[index].change.depth > 0 { return }
        let change = pendingChanges.remove(at: index).change
        if layout.kinds[slot] == .toOne || layout.kinds[slot] == .toMany,
           let relationship = layout.properties[slot] as? NSRelationshipDescription {
            if relationship.isToMany { (slots[slot] as? ToManyStorage)?.markModified() }
            if inverseUpdateDepth == 0, let inverse = relationship.inverseRelationship {
                updateInverse(inverse, of: relationship, slot: slot, oldObjects: change.oldObjects ?? [])
            }
        }
        tellContextOfChange()
        if extras != nil { notifyEndOfChange(key, kind: kind, objects: objects, indexes: indexes, slot: slot, change: change) }
    }

    /// Lists the object for the context's event, unless that would do nothing.
    @inline(__always)
    private func tellContextOfChange() {
        if !status.contains(.awakingFromFetch) && !changeNeedsNothingFromContext {
            managedObjectContext?.objectDidChange(self)
        }
    }

    /// The end of a change for Swift Observation and key-value observers.
    private func notifyEndOfChange(_ key: String, kind: NSKeyValueChange, objects: Set<AnyHashable>?, indexes: IndexSet?, slot: Int, change: PendingChange) {
        registrarDidSet(slot: slot)
        if !observers.isEmpty {
            let (old, new) = observedValues(kind: kind, key: key, change: change, objects: objects, indexes: indexes, slot: slot, isPrior: false)
            notifyObservers(key, kind: kind, old: old, new: new, indexes: indexes, isPrior: false)
        }
    }

    // The registrar's calls apart: a function that holds an `ObservationRegistrar?` (a resilient type)
    // fetches its metadata and sizes stack space for it on entry, on every set.
    @inline(never)
    private func registrarWillSet(slot: Int) {
        registrar?.willSet(self, keyPath: EntityRuntime.of(layout).observationPaths[slot])
    }

    @inline(never)
    private func registrarDidSet(slot: Int) {
        registrar?.didSet(self, keyPath: EntityRuntime.of(layout).observationPaths[slot])
    }

    /// Whether `objectDidChange(_:)` would do nothing for this object, known without loading its context
    /// (a lock and a retain per set): it is listed for the event's values already, and it is deleted, or
    /// inserted and not yet announced while no context collects the changes made during `willSave()`.
    private var changeNeedsNothingFromContext: Bool {
        guard status.contains(.listedForEventValues) else { return false }
        if status.contains(.deleted) { return true }
        return status.contains(.inserted) && !status.contains(.insertionAnnounced)
            && NSManagedObjectContext.contextsCollectingWillSaveChanges.load(ordering: .relaxed) == 0
    }

    /// Old and new values as an observer sees them: whole values for a setting, the inserted or removed
    /// objects for a set mutation, and for a change at indexes of an ordered relationship the arrays of
    /// the members at those indexes before (removal, replacement) and after it (insertion, replacement),
    /// as key-value observing reports them. Before the change, the new value is not read.
    private func observedValues(kind: NSKeyValueChange, key: String, change: PendingChange, objects: Set<AnyHashable>?,
                                indexes: IndexSet?, slot: Int, isPrior: Bool) -> (Any?, Any?) {
        if let indexes, kind != .setting, layout.kinds[slot] == .toMany, (layout.properties[slot] as? NSRelationshipDescription)?.isOrdered == true {
            func members(of ordered: [NSManagedObject]) -> [NSManagedObject] {
                indexes.compactMap { $0 < ordered.count ? ordered[$0] : nil }
            }
            let old = kind == .insertion ? nil : members(of: change.oldObjects ?? [])
            let new = kind == .removal || isPrior ? nil : members(of: toMany(slot).objects)
            return (old, new)
        }
        switch kind {
        case .setting:
            return (SlotValues.boxed(change.oldValue), publicValue(slot: slot))
        case .insertion:
            let old = Set((change.oldObjects ?? []).map(ObjectIdentifier.init))
            let inserted = (objects ?? []).compactMap { $0.base as? NSManagedObject }.filter { !old.contains(ObjectIdentifier($0)) }
            return (nil, Set(inserted))
        case .removal:
            let old = Set((change.oldObjects ?? []).map(ObjectIdentifier.init))
            let removed = (objects ?? []).compactMap { $0.base as? NSManagedObject }.filter { old.contains(ObjectIdentifier($0)) }
            return (Set(removed), nil)
        case .replacement:
            guard let objects else { return (SlotValues.boxed(change.oldValue), publicValue(slot: slot)) }
            // A `.set` mutation: the members it replaced and the ones it put in their place, as
            // key-value observing reports a set replacement (not the whole old and new sets).
            let oldMembers = change.oldObjects ?? []
            let old = Set(oldMembers.map(ObjectIdentifier.init))
            let given = objects.compactMap { $0.base as? NSManagedObject }
            let kept = Set(given.map(ObjectIdentifier.init))
            let replaced = Set(oldMembers.filter { !kept.contains(ObjectIdentifier($0)) })
            return (replaced, isPrior ? nil : Set(given.filter { !old.contains(ObjectIdentifier($0)) }))
        }
    }

    // MARK: Inverse relationships

    /// Makes the inverse side agree with a change of `relationship` from `oldObjects` to its current value.
    private func updateInverse(_ inverse: NSRelationshipDescription, of relationship: NSRelationshipDescription, slot: Int, oldObjects: [NSManagedObject]) {
        let current: [NSManagedObject]
        if relationship.isToMany {
            current = toMany(slot).objects
        } else {
            current = (slots[slot] as? NSManagedObject).map { [$0] } ?? []
        }
        let oldSet = Set(oldObjects.map(ObjectIdentifier.init))
        let newSet = Set(current.map(ObjectIdentifier.init))
        for removed in oldObjects where !newSet.contains(ObjectIdentifier(removed)) {
            removed.inverseRemove(self, via: inverse)
        }
        for added in current where !oldSet.contains(ObjectIdentifier(added)) {
            added.inverseAdd(self, via: inverse, forward: relationship)
        }
    }

    /// `source` now points here through `forward`: make `inverse` point back to it.
    private func inverseAdd(_ source: NSManagedObject, via inverse: NSRelationshipDescription, forward: NSRelationshipDescription) {
        guard let slot = layout.slot(named: inverse.name) else { return }
        fireFault()
        beginInverseUpdate()
        defer { endInverseUpdate() }
        if inverse.isToMany {
            let storage = toMany(slot)
            guard !storage.contains(source) else { return }
            if inverse.isOrdered {
                // Appended: an insertion at the end, as the indexed notifications of an ordered relationship say.
                let end: IndexSet = [storage.objects.count]
                willChange(.insertion, valuesAt: end, forKey: inverse.name)
                storage.append(source)
                didChange(.insertion, valuesAt: end, forKey: inverse.name)
                return
            }
            // One set for both notifications: wrapping an object in an AnyHashable is a dynamic cast.
            let changed: Set<AnyHashable> = [source]
            willChangeValue(forKey: inverse.name, withSetMutation: .union, using: changed)
            storage.append(source)
            didChangeValue(forKey: inverse.name, withSetMutation: .union, using: changed)
        } else {
            let previous = slots[slot] as? NSManagedObject
            guard previous !== source else { return }
            // A to-one inverse had another owner: that owner loses this object.
            if let previous { previous.inverseRemove(self, via: forward) }
            willChangeValue(forKey: inverse.name)
            slots[slot] = source
            didChangeValue(forKey: inverse.name)
        }
    }

    /// `source` no longer points here: remove it from `inverse`.
    private func inverseRemove(_ source: NSManagedObject, via inverse: NSRelationshipDescription) {
        guard let slot = layout.slot(named: inverse.name), !status.contains(.transitioning) else { return }
        fireFault()
        beginInverseUpdate()
        defer { endInverseUpdate() }
        if inverse.isToMany {
            let storage = toMany(slot)
            guard storage.contains(source) else { return }
            // Searched from the end, where the members most recently added (and so most often removed
            // again) are.
            if inverse.isOrdered, let index = storage.objects.lastIndex(where: { $0 === source }) {
                let at: IndexSet = [index]
                willChange(.removal, valuesAt: at, forKey: inverse.name)
                storage.remove(at: index)
                didChange(.removal, valuesAt: at, forKey: inverse.name)
                return
            }
            let changed: Set<AnyHashable> = [source]
            willChangeValue(forKey: inverse.name, withSetMutation: .minus, using: changed)
            storage.remove(source)
            didChangeValue(forKey: inverse.name, withSetMutation: .minus, using: changed)
        } else {
            guard slots[slot] as? NSManagedObject === source else { return }
            willChangeValue(forKey: inverse.name)
            slots[slot] = nil
            didChangeValue(forKey: inverse.name)
        }
    }


    // MARK: Observation

    /// Whether the object has made its `ObservationRegistrar` (for tests of when it does).
    package var hasObservationRegistrar: Bool { registrar != nil }
    /// The values as held (for tests of how a value is held: D26, D27).
    package var heldValuesForTesting: SlotValues { slots }

    var observationRegistrar: ObservationRegistrar {
        if let registrar { return registrar }
        let created = ObservationRegistrar()
        registrar = created
        return created
    }


    /// One key path per key, so that Swift Observation can tell keys apart; the value is never read.
    subscript(observationKey key: String) -> Int { 0 }

    /// Runs `replace`, which replaces the values of a realized object wholesale (a refresh, a rollback,
    /// a merge policy taking the stored row, turning into a fault), inside change notifications for its
    /// properties, as Core Data sends them (Core Data Programming Guide, "Faulting and Uniquing"): Swift
    /// Observation learns of every property, key-value observers of the keys they observe. A new value
    /// is read only for observers that asked for it, and never from a fault (it is reported as nil).
    @inline(__always)
    func notifyingWholesaleChange(_ replace: () -> Void) {
        // Observers and the registrar live in `Extras`: without them, nothing to tell, and the function
        // below (which holds an `ObservationRegistrar?`, a resilient type) is not entered.
        guard extras != nil else { replace(); return }
        notifyingObservedWholesaleChange(replace)
    }

    @inline(never)
    private func notifyingObservedWholesaleChange(_ replace: () -> Void) {
        guard registrar != nil || observers.contains(where: \.isValid) else { replace(); return }
        let paths = EntityRuntime.of(layout).observationPaths
        for path in paths { registrar?.willSet(self, keyPath: path) }
        var keys: [String] = []
        for observer in observers where observer.isValid {
            // An observer of a key that depends on modeled ones is told through theirs.
            for key in [observer.key] + observer.affectingKeys.sorted() where layout.slot(named: key) != nil && !keys.contains(key) {
                keys.append(key)
            }
        }
        let wantsOld = Set(observers.filter { $0.isValid && ($0.options.contains(.old) || $0.options.contains(.prior)) }.map(\.key))
        var oldValues: [String: Any?] = [:]
        for key in keys where wantsOld.contains(key) { oldValues[key] = .some(wholesaleOldValue(key)) }
        for key in keys { notifyObservers(key, kind: .setting, old: oldValues[key] ?? nil, new: nil, isPrior: true) }
        replace()
        for path in paths { registrar?.didSet(self, keyPath: path) }
        for key in keys {
            // A fault is not fired to report its new value: reading it would register the object again
            // in the middle of a save, a reset or a rollback.
            let wantsNew = !isFault && observers.contains { $0.isValid && $0.key == key && $0.options.contains(.new) }
            notifyObservers(key, kind: .setting, old: oldValues[key] ?? nil, new: wantsNew ? value(forKey: key) : nil, isPrior: false)
        }
    }

    /// The value of `key` before a wholesale change, read without loading anything: a fault's values and
    /// a to-many relationship not loaded yet would come from the store, registering objects in a context
    /// that is being reset or refreshed, so they are reported as nil.
    private func wholesaleOldValue(_ key: String) -> Any? {
        if isFault { return nil }
        if let slot = layout.slot(named: key), layout.kinds[slot] == .toMany, !(slots[slot] is ToManyStorage) { return nil }
        return value(forKey: key)
    }

    /// Tells key-value observers and Observation that `slot` took a value the store computed (a derived
    /// attribute after a save), whose old value was `old`: as for any other change of the key, without
    /// making it a change of the object's. Called once the save's bookkeeping is done, so that what an
    /// observer changes is the next save's.
    func announceStoreComputedChange(slot: Int, old: Any?) {
        guard extras != nil else { return }
        let key = layout.properties[slot].name
        // The prior notification comes late (the value is already in): the registrar and observers that
        // asked for it still see the old value they are given.
        registrarWillSet(slot: slot)
        notifyObservers(key, kind: .setting, old: old, new: nil, isPrior: true)
        registrarDidSet(slot: slot)
        notifyObservers(key, kind: .setting, old: old, new: value(forKey: key), isPrior: false)
    }

    func notifyObservers(_ key: String, kind: NSKeyValueChange, old: Any?, new: Any?, indexes: IndexSet? = nil, isPrior: Bool) {
        guard !observers.isEmpty else { return }
        for observer in observers where observer.isValid {
            if observer.key != key {
                if !observer.affectingKeys.isEmpty, observer.affectingKeys.contains(key) { notifyDependentObserver(observer, isPrior: isPrior) }
                continue
            }
            if isPrior && !observer.options.contains(.prior) { continue }
            observer.handler(kind, observer.options.contains(.old) ? old : nil,
                             observer.options.contains(.new) && !isPrior ? new : nil, indexes, isPrior)
        }
    }

    /// Tells an observer of a key that another key it depends on changes (key-value observing's
    /// dependent keys): before the change its key's value is read if the observer wants the old one,
    /// and after it the observer is told of a setting of its key, as Foundation does.
    private func notifyDependentObserver(_ observer: KeyObserver, isPrior: Bool) {
        let options = observer.options
        if isPrior {
            observer.valuesBeforeAffectingChanges.append(options.contains(.old) ? value(forKey: observer.key) : nil)
            if options.contains(.prior) { observer.handler(.setting, observer.valuesBeforeAffectingChanges.last ?? nil, nil, nil, true) }
            return
        }
        // No value read before the change (the observation started in the middle of it): no old value.
        let old = observer.valuesBeforeAffectingChanges.popLast() ?? nil
        // Never read from a fault (a wholesale change may have just made the object one): reading would fire it.
        let new = options.contains(.new) && !isFault ? value(forKey: observer.key) : nil
        observer.handler(.setting, options.contains(.old) ? old : nil, new, nil, false)
    }
}

extension NSManagedObject: Observable {}

extension NSManagedObject: PredicateKeyValueCoding {
    /// Key-value coding for the predicate evaluator: as `value(forKey:)`, but an unknown key is an error
    /// the evaluator reports rather than a stop.
    public func predicateValue(forKey key: String) throws -> Any? {
        if keyTable.accessors[key] == nil, layout.slot(named: key) == nil {
            switch key {
            case "self", "objectID", "entity", "managedObjectContext": return value(forKey: key)
            default: throw PredicateEvaluationError.unknownKey(key, in: self)
            }
        }
        return value(forKey: key)
    }
}

extension NSManagedObject: StoreObjectReference {
    public var referencedObjectID: NSManagedObjectID { objectID }
}

extension NSManagedObject: KeyPathNaming {
    /// The key of a managed property's key path, from the class's ``managedKeyTable``.
    public class func keyName(for keyPath: AnyKeyPath) -> String? {
        // A class's table starts from its superclass's (`super.managedKeyTable`), so one lookup suffices.
        ManagedKeyTable.of(self).keyNames[keyPath]
    }
}


/// Attribute values in their stored form: numbers as `NSNumber` (or unboxed, see `SlotValues`: an `Int` or
/// `Int64` of an integer attribute as an `Int64`, a `Double` of a double one, a `Bool` of a boolean one),
/// strings as `String`, and so on.
enum AttributeValues {
    static func normalize(_ value: Any?, for attribute: NSAttributeDescription) -> Any? {
        guard let value else { return nil }
        // Casts that fail cost a conformance lookup: only values that can be NSNull or an Optional try them.
        if Swift.type(of: value) is AnyClass {
            if isNSNull(value) { return nil }
        } else if !ManagedValueCoercion.isPlainValue(value), let optional = value as? AnyOptionalValue {
            guard let wrapped = optional.wrappedValue else { return nil }
            return normalize(wrapped, for: attribute)
        }
        let normalized: Any?
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            // Held unboxed (see `SlotValues`): no `NSNumber` for the common integer types.
            let type = Swift.type(of: value)
            if type == Int64.self { normalized = value }
            else if type == Int.self { normalized = Int64(value as! Int) }
            else if type == Int32.self { normalized = Int64(value as! Int32) }
            else if type == Int16.self { normalized = Int64(value as! Int16) }
            else { normalized = plainOrNumber(value, attribute.attributeType) }
        case .doubleAttributeType:
            if Swift.type(of: value) == Double.self { normalized = value }
            else { normalized = plainOrNumber(value, attribute.attributeType) }
        case .booleanAttributeType:
            if Swift.type(of: value) == Bool.self { normalized = value }
            else { normalized = plainOrNumber(value, attribute.attributeType) }
        case .floatAttributeType:
            // Held as a Float, as the store reads it back: 0.1 set as a Double must compare in memory as
            // the stored 0.1f does in SQL.
            normalized = ManagedValueCoercion.number(from: value).map { number in
                number.objCType[0] == 0x66 && number.objCType[1] == 0 ? number : NSNumber(value: number.floatValue)
            }
        case .decimalAttributeType:
            if let decimal = value as? Decimal { normalized = decimal }
            else if let number = ManagedValueCoercion.number(from: value) { normalized = number.finiteDecimalValue }
            else { normalized = nil }
        case .stringAttributeType:
            // An enum with a String raw value is stored as that value.
            normalized = (value as? String) ?? ((value as? any RawRepresentable)?.rawValue as? String)
        case .dateAttributeType:
            normalized = value as? Date
        case .binaryDataAttributeType:
            normalized = value as? Data
        case .UUIDAttributeType:
            normalized = value as? UUID
        case .URIAttributeType:
            normalized = value as? URL
        case .objectIDAttributeType:
            normalized = value as? NSManagedObjectID
        case .compositeAttributeType:
            normalized = (attribute as? NSCompositeAttributeDescription).flatMap { composite(value, composite: $0) }
        default:
            normalized = value
        }
        guard let normalized else {
            fatalError("Unacceptable type of value for attribute: property = \"\(attribute.name)\"; desired type = \(attribute.attributeValueClassName ?? "\(attribute.attributeType)"); given type = \(Swift.type(of: value)); value = \(value).")
        }
        return normalized
    }
}

extension AttributeValues {
    /// A composite attribute's value: a dictionary by element name (Core Data's in-memory form), each
    /// element's value normalized as that attribute's would be but kept in its public form (numbers as
    /// `NSNumber`s, so `dictionary["count"] as? Int` answers), `NSNull` as no value. Keys that name no
    /// element are kept as given (Core Data's store ignores them). Nil for a value that is no dictionary.
    static func composite(_ value: Any, composite: NSCompositeAttributeDescription) -> [String: Any]? {
        var result: [String: Any]
        if let dictionary = value as? [String: Any] {
            result = dictionary
        } else if let dictionary = value as? NSDictionary {
            result = [:]
            for (key, element) in dictionary { if let key = key as? String { result[key] = element } }
        } else {
            return nil
        }
        for element in composite.elements {
            guard let given = result[element.name] else { continue }
            result[element.name] = SlotValues.boxed(normalize(given, for: element))
        }
        return result
    }

    /// `value` as a number in the plain form its slot holds in a word (D27) when the number is exactly
    /// that, else as an `NSNumber` (kept as given: a fraction on an integer attribute, a float on a double
    /// one), or nil if it is no number.
    static func plainOrNumber(_ value: Any, _ type: NSAttributeType) -> Any? {
        guard let number = ManagedValueCoercion.number(from: value) else { return nil }
        return plainNumber(number, for: type) ?? number
    }

    /// The plain `Int64`, `Double` or `Bool` that `number` is for an attribute of `type`, judged by its
    /// storage type: signed integers of 16 to 64 bits for integers, a double for doubles, a char or bool
    /// of 0 or 1 for booleans. Nil otherwise.
    static func plainNumber(_ number: NSNumber, for type: NSAttributeType) -> Any? {
        let code = UInt8(bitPattern: number.objCType.pointee)
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            // q, l, i, s: signed types whose every value an Int64 holds (not c, which is also a Bool's).
            return code == 0x71 || code == 0x6C || code == 0x69 || code == 0x73 ? number.int64Value : nil
        case .doubleAttributeType:
            return code == 0x64 ? number.doubleValue : nil
        case .booleanAttributeType:
            guard code == 0x63 || code == 0x42 else { return nil }
            let integer = number.int64Value
            return integer == 0 || integer == 1 ? integer == 1 : nil
        default:
            return nil
        }
    }
}

/// Unwraps an `Optional` hidden in an `Any`.
protocol AnyOptionalValue { var wrappedValue: Any? { get } }
extension Optional: AnyOptionalValue {
    var wrappedValue: Any? { self.map { $0 as Any } }
}

/// The observation key path of each property name, made once: instantiating a key path with a subscript
/// argument costs microseconds, and every property read reports one to Swift Observation.
enum ObservationKeyPaths {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: [String: KeyPath<NSManagedObject, Int>] = [:]

    static func path(for key: String) -> KeyPath<NSManagedObject, Int> {
        lock.lock()
        defer { lock.unlock() }
        if let path = paths[key] { return path }
        let path = \NSManagedObject.[observationKey: key]
        paths[key] = path
        return path
    }
}
