import Foundation
import OCDModel
import OCDStore

// The entry points `@Managed` expands to, and the to-many mutation proxies. They follow the accessor
// pattern of Core Data's guide: access notifications around primitive reads, change notifications around
// primitive writes, so generated and hand-written accessors behave alike.
extension NSManagedObject {
    /// The getter of a `@Managed` property: the modeled value of `key` as the property's type. A nil
    /// scalar reads as zero and an empty to-many as an empty collection, as Xcode's codegen reads them.
    ///
    /// Like the accessors Core Data generates, it reads the stored value itself rather than calling the
    /// overridable `primitiveValue(forKey:)` (a `primitive<Key>` accessor the class declares still wins).
    // Specialized for the plain numbers here, where the accessors' module can call them: a generic
    // call passed `T`'s metadata and returned the value indirectly on every read.
    @_specialize(exported: true, where T == Int64)
    @_specialize(exported: true, where T == Int)
    @_specialize(exported: true, where T == Double)
    @_specialize(exported: true, where T == Bool)
    public func managedValue<T>(forKey key: String) -> T {
        willAccessValue(forKey: key)
        // A number held unboxed (`SlotValues`) goes out as it is: no `NSNumber` made and taken apart. Bit
        // casts of the checked type, not the runtime's general cast.
        if T.self == Int64.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self,
           !hasPrimitiveAccessors, let slot = layout.slot(named: key) {
            // Read without a reference: the object keeps its values, and the word is copied out at once.
            let stored = slots.unretained.words(at: slot)
            if T.self == Double.self {
                if stored.type == SlotValues.doubleType {
                    didAccessValue(forKey: key)
                    return unsafeBitCast(Double(bitPattern: stored.value), to: T.self)
                }
            } else if T.self == Bool.self {
                if stored.type == SlotValues.boolType, let bool = SlotValues.unboxedBool(slots.stored(slot)) {
                    didAccessValue(forKey: key)
                    return unsafeBitCast(bool, to: T.self)
                }
            } else if stored.type == SlotValues.int64Type {
                didAccessValue(forKey: key)
                let integer = Int64(bitPattern: stored.value)
                return T.self == Int64.self ? unsafeBitCast(integer, to: T.self) : unsafeBitCast(Int(integer), to: T.self)
            }
        }
        return convertedManagedValue(forKey: key)
    }

    /// The rest of the getter, apart so that the fast path above makes no `Optional<T>` metadata (a
    /// runtime lookup per call, a third of the fast path's time).
    @inline(never)
    private func convertedManagedValue<T>(forKey key: String) -> T {
        let value = kvcPrimitiveValue(forKey: key)
        didAccessValue(forKey: key)
        guard let converted = ManagedValueCoercion.convert(value, to: T.self) ?? ManagedValueCoercion.scalarReading(value, to: T.self)
                ?? ManagedValueCoercion.unknownCase(value, as: T.self) else {
            fatalError("@Managed property '\(key)' of \(entity.name ?? "?") has type \(T.self), which cannot hold the stored value \(value.map { "\($0) of type \(type(of: $0))" } ?? "nil").")
        }
        return converted
    }

    /// The setter of a `@Managed` property.
    ///
    /// Like Core Data's generated setters, it stores the value itself between the change notifications,
    /// rather than calling the overridable `setPrimitiveValue(_:forKey:)` (a `primitive<Key>` accessor the
    /// class declares still wins).
    @_specialize(exported: true, where T == Int64)
    @_specialize(exported: true, where T == Int)
    @_specialize(exported: true, where T == Double)
    @_specialize(exported: true, where T == Bool)
    public func setManagedValue<T>(_ value: T, forKey key: String) {
        willChangeValue(forKey: key)
        if !setTypedPlainNumber(value, forKey: key) { kvcSetPrimitiveValue(value, forKey: key) }
        didChangeValue(forKey: key)
    }

    /// Stores an `Int64`, `Int`, `Double` or `Bool` straight into its attribute's word (D27): the typed
    /// form of `setPlainNumber(_:forKey:)`, which would first wrap the value in an `Any?` (7 % of
    /// insert_accessors in an A/B run without this). False (nothing stored) for any other type, another
    /// kind of slot, or a class with primitive accessors.
    @inline(__always)
    private func setTypedPlainNumber<T>(_ value: T, forKey key: String) -> Bool {
        guard T.self == Int64.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self,
              !hasPrimitiveAccessors, let slot = layout.slot(named: key) else { return false }
        let kind = layout.slotPlan.kind(of: slot)
        if kind == .int64 && T.self == Int64.self {
            fireFault()
            slots.setInteger(unsafeBitCast(value, to: Int64.self), at: slot)
        } else if kind == .int64 && T.self == Int.self {
            fireFault()
            slots.setInteger(Int64(unsafeBitCast(value, to: Int.self)), at: slot)
        } else if kind == .double && T.self == Double.self {
            fireFault()
            slots.setDouble(unsafeBitCast(value, to: Double.self), at: slot)
        } else if kind == .bool && T.self == Bool.self {
            fireFault()
            slots.setBool(unsafeBitCast(value, to: Bool.self), at: slot)
        } else {
            return false
        }
        return true
    }

    /// The getter of `@Managed var primitive<Key>`: the stored value without notifications.
    public func managedPrimitiveValue<T>(forKey key: String) -> T {
        let value = primitiveValue(forKey: key)
        guard let converted = ManagedValueCoercion.convert(value, to: T.self) ?? ManagedValueCoercion.scalarReading(value, to: T.self)
                ?? ManagedValueCoercion.unknownCase(value, as: T.self) else {
            fatalError("@Managed primitive accessor of '\(key)' of \(entity.name ?? "?") has type \(T.self), which cannot hold the stored value \(value.map { "\($0) of type \(type(of: $0))" } ?? "nil").")
        }
        return converted
    }

    /// The setter of `@Managed var primitive<Key>`: no notifications, no inverse update.
    public func setManagedPrimitiveValue<T>(_ value: T, forKey key: String) {
        setPrimitiveValue(value, forKey: key)
    }

    // MARK: Generated to-many mutators

    /// Adds `objects` to the to-many relationship `key` (appends them to an ordered one).
    public func managedAdd<S: Sequence>(_ objects: S, forKey key: String) where S.Element: NSManagedObject {
        if let (storage, ordered) = toManyRelationship(key), ordered {
            // An insertion at the end of those not yet members, once each (as NSMutableOrderedSet).
            let current = storage.objects
            var seen = storage.members
            let added = objects.filter { seen.insert(ObjectIdentifier($0)).inserted }
            changeOrdered(key, .insertion, at: IndexSet(integersIn: current.count..<current.count + added.count), to: current + added)
            return
        }
        mutateToMany(key, mutation: .union, objects: Array(objects)) { current, added in current + added }
    }

    /// Adds the managed objects of `objects` (the generated `addTo…(_: NSSet)`); stops on another element.
    public func managedAdd(_ objects: NSSet, forKey key: String) {
        managedAdd(Self.objects(in: objects.allObjects, key: key), forKey: key)
    }

    /// Adds the managed objects of `objects`, in their order for an ordered relationship.
    public func managedAdd(_ objects: NSOrderedSet, forKey key: String) {
        managedAdd(Self.objects(in: objects.array, key: key), forKey: key)
    }

    /// Removes `objects` from the to-many relationship `key`.
    public func managedRemove<S: Sequence>(_ objects: S, forKey key: String) where S.Element: NSManagedObject {
        let removed = Set(objects.map(ObjectIdentifier.init))
        if let (storage, ordered) = toManyRelationship(key), ordered {
            let current = storage.objects
            let indexes = IndexSet(current.indices.filter { removed.contains(ObjectIdentifier(current[$0])) })
            changeOrdered(key, .removal, at: indexes, to: current.filter { !removed.contains(ObjectIdentifier($0)) })
            return
        }
        mutateToMany(key, mutation: .minus, objects: Array(objects)) { current, _ in
            current.filter { !removed.contains(ObjectIdentifier($0)) }
        }
    }

    /// Removes the managed objects of `objects` (the generated `removeFrom…(_: NSSet)`).
    public func managedRemove(_ objects: NSSet, forKey key: String) {
        managedRemove(Self.objects(in: objects.allObjects, key: key), forKey: key)
    }

    /// Removes the managed objects of `objects`.
    public func managedRemove(_ objects: NSOrderedSet, forKey key: String) {
        managedRemove(Self.objects(in: objects.array, key: key), forKey: key)
    }

    /// The `@Managed` macro writes `addTo…` and `removeFrom…` for every `Set<Element>` property, and
    /// cannot tell from the spelling whether `Element` is a managed object. For a set-valued attribute
    /// (a transformable of the app's own type, `Set<Tag>`) these change the attribute's set, as setting
    /// it would: with change notifications, and a nil value read as an empty set. A call that changes no
    /// member records no change.
    @_disfavoredOverload
    public func managedAdd<S: Sequence>(_ values: S, forKey key: String) where S.Element: Hashable {
        changeSetAttribute(key, "addTo") { $0.formUnion(values) }
    }

    /// Removes `values` from the set held by the attribute `key` (see `managedAdd(_:forKey:)` for values).
    @_disfavoredOverload
    public func managedRemove<S: Sequence>(_ values: S, forKey key: String) where S.Element: Hashable {
        changeSetAttribute(key, "removeFrom") { $0.subtract(values) }
    }

    private func changeSetAttribute<Element: Hashable>(_ key: String, _ mutator: String, _ change: (inout Set<Element>) -> Void) {
        guard let slot = layout.slot(named: key), layout.properties[slot] is NSAttributeDescription else {
            fatalError("\(mutator)\(key.prefix(1).uppercased() + key.dropFirst()): \(key) of the entity \(entity.name ?? "?") is not an attribute; the members of a to-many relationship are managed objects, not \(Element.self).")
        }
        var set: Set<Element>
        switch value(forKey: key) {
        case nil: set = []
        case let current as Set<Element>: set = current
        case let other?: fatalError("\(mutator)\(key.prefix(1).uppercased() + key.dropFirst()): the attribute \(key) of \(entity.name ?? "?") holds \(type(of: other)), not Set<\(Element.self)>.")
        }
        let before = set
        change(&set)
        // Adding a member already there or removing one that is not changes nothing, and records nothing
        // (a nil attribute stays nil).
        if set == before { return }
        setValue(set, forKey: key)
    }

    /// Inserts `objects` into the ordered relationship `key` at `indexes`.
    public func managedInsert<S: Sequence>(_ objects: S, at indexes: NSIndexSet, forKey key: String) where S.Element: NSManagedObject {
        let (storage, ordered) = toManyStorage(key)
        let current = storage.objects
        let objects = Array(objects)
        checkCount(objects.count, indexes, "insertObjects:atIndexes:", key)
        // As NSMutableOrderedSet: an object already in the relationship stays where it is, and each
        // index is a place in the relationship as it is when its object goes in (beyond its end stops,
        // as Foundation raises).
        var present = storage.members
        var result = current
        for (object, index) in zip(objects, indexes) {
            if index > result.count { outOfBounds("insertObject:atIndex:", index, result.count + 1, key) }
            if present.insert(ObjectIdentifier(object)).inserted { result.insert(object, at: index) }
        }
        guard ordered else {
            let inserted = result.filter { !storage.members.contains(ObjectIdentifier($0)) }
            mutateToMany(key, mutation: .union, objects: inserted) { _, _ in result }
            return
        }
        changeOrdered(key, .insertion, at: IndexSet(result.indices.filter { !storage.members.contains(ObjectIdentifier(result[$0])) }), to: result)
    }

    /// Removes the objects at `indexes` from the ordered relationship `key`.
    public func managedRemove(at indexes: NSIndexSet, forKey key: String) {
        let (storage, ordered) = toManyStorage(key)
        let current = storage.objects
        if indexes.count > 0, indexes.lastIndex >= current.count { outOfBounds("removeObjectsAtIndexes:", indexes.lastIndex, current.count, key) }
        let removed = IndexSet(indexes)
        let rest = current.indices.filter { !removed.contains($0) }.map { current[$0] }
        guard ordered else {
            mutateToMany(key, mutation: .minus, objects: removed.map { current[$0] }) { _, _ in rest }
            return
        }
        changeOrdered(key, .removal, at: removed, to: rest)
    }

    /// Replaces the objects at `indexes` of the ordered relationship `key` with `objects`.
    ///
    /// A relationship holds each member once, as `NSMutableOrderedSet` does: when the replacements
    /// together leave every member once (a swap, any permutation), all are made; otherwise only those
    /// bringing in an object that is not yet a member are.
    public func managedReplace<S: Sequence>(at indexes: NSIndexSet, with objects: S, forKey key: String) where S.Element: NSManagedObject {
        let (storage, ordered) = toManyStorage(key)
        let current = storage.objects
        let objects = Array(objects)
        checkCount(objects.count, indexes, "replaceObjectsAtIndexes:withObjects:", key)
        if indexes.count > 0, indexes.lastIndex >= current.count { outOfBounds("replaceObjectsAtIndexes:withObjects:", indexes.lastIndex, current.count, key) }
        let pairs = zip(indexes, objects).filter { current[$0.0] !== $0.1 }
        var result = current
        for (index, object) in pairs { result[index] = object }
        var seen = Set<ObjectIdentifier>()
        if !result.allSatisfy({ seen.insert(ObjectIdentifier($0)).inserted }) {
            result = current
            var incoming = storage.members
            for (index, object) in pairs where incoming.insert(ObjectIdentifier(object)).inserted { result[index] = object }
        }
        let replaced = IndexSet(current.indices.filter { current[$0] !== result[$0] })
        guard ordered else {
            let changed = Set(current.map(ObjectIdentifier.init)).symmetricDifference(result.map(ObjectIdentifier.init))
            let involved = (current + result).filter { changed.contains(ObjectIdentifier($0)) }
            if !replaced.isEmpty { mutateToMany(key, mutation: .set, objects: involved) { _, _ in result } }
            return
        }
        changeOrdered(key, .replacement, at: replaced, to: result)
    }

    /// Moves the objects at `indexes` of the ordered relationship `key` so that they start at `index`
    /// of what is left, in their order. Observers are told of one replacement at the indexes whose
    /// member changed.
    func managedMove(at indexes: IndexSet, to index: Int, forKey key: String) {
        let current = toManyStorage(key).storage.objects
        if let last = indexes.last, last >= current.count { outOfBounds("moveObjectsAtIndexes:toIndex:", last, current.count, key) }
        var rest = current.indices.filter { !indexes.contains($0) }.map { current[$0] }
        if index < 0 || index > rest.count { outOfBounds("moveObjectsAtIndexes:toIndex:", index, rest.count + 1, key) }
        rest.insert(contentsOf: indexes.map { current[$0] }, at: index)
        changeOrdered(key, .replacement, at: IndexSet(current.indices.filter { current[$0] !== rest[$0] }), to: rest)
    }

    /// Stops, as Foundation's `NSMutableOrderedSet` raises, for an index past the relationship's end.
    private func outOfBounds(_ method: String, _ index: Int, _ count: Int, _ key: String) -> Never {
        let bounds = count == 0 ? "beyond bounds for empty ordered set" : "beyond bounds [0 .. \(count - 1)]"
        fatalError("*** -[NSMutableOrderedSet \(method)]: index \(index) \(bounds) (the relationship \(key) of \(entity.name ?? "?")).")
    }

    /// Stops, as Foundation raises, when a call gives a different number of objects and indexes.
    private func checkCount(_ count: Int, _ indexes: NSIndexSet, _ method: String, _ key: String) {
        if count != indexes.count {
            fatalError("*** -[NSMutableOrderedSet \(method)]: count of array (\(count)) differs from count of index set (\(indexes.count)) (the relationship \(key) of \(entity.name ?? "?")).")
        }
    }

    /// The to-many relationship `key`: its members (firing the fault) and whether it is ordered; nil
    /// for any other key.
    private func toManyRelationship(_ key: String) -> (storage: ToManyStorage, ordered: Bool)? {
        guard let slot = layout.slot(named: key), let relationship = layout.properties[slot] as? NSRelationshipDescription,
              relationship.isToMany else { return nil }
        return (toMany(slot), relationship.isOrdered)
    }

    /// ``toManyRelationship(_:)``, stopping for a key that is not a to-many relationship.
    private func toManyStorage(_ key: String) -> (storage: ToManyStorage, ordered: Bool) {
        guard let found = toManyRelationship(key) else {
            fatalError("\(key) is not a to-many relationship of the entity \(entity.name ?? "?").")
        }
        return found
    }

    /// Sets the ordered to-many relationship `key` to `members`, announced as a change of `kind` at
    /// `indexes` (nothing happens for no indexes), through the overridable indexed notifications.
    private func changeOrdered(_ key: String, _ kind: NSKeyValueChange, at indexes: IndexSet, to members: [NSManagedObject]) {
        guard !indexes.isEmpty else { return }
        willChange(kind, valuesAt: indexes, forKey: key)
        setPrimitiveValue(members, forKey: key)
        didChange(kind, valuesAt: indexes, forKey: key)
    }

    private static func objects(in elements: [Any], key: String) -> [NSManagedObject] {
        elements.map { element in
            guard let object = element as? NSManagedObject else {
                fatalError("Unacceptable type of value for to-many relationship: property = \"\(key)\"; given type = \(type(of: element)); value = \(element).")
            }
            return object
        }
    }

    /// One to-many mutation with its set-mutation notifications (which also update the inverse).
    func mutateToMany(_ key: String, mutation: NSKeyValueSetMutationKind, objects: [NSManagedObject],
                      _ transform: ([NSManagedObject], [NSManagedObject]) -> [NSManagedObject]) {
        guard let slot = layout.slot(named: key), let relationship = layout.properties[slot] as? NSRelationshipDescription,
              relationship.isToMany else {
            fatalError("\(key) is not a to-many relationship of the entity \(entity.name ?? "?").")
        }
        fireFault()
        let storage = toMany(slot)
        let result = transform(storage.objects, objects)
        if result.count == storage.objects.count && zip(result, storage.objects).allSatisfy({ $0 === $1 }) { return }
        let using = Set(objects.map { AnyHashable($0) })
        willChangeValue(forKey: key, withSetMutation: mutation, using: using)
        setPrimitiveValue(result, forKey: key)
        didChangeValue(forKey: key, withSetMutation: mutation, using: using)
    }

    // MARK: Mutable proxies

    /// A mutable set whose changes go to the to-many relationship `key`, with change notifications and
    /// inverse maintenance. It has `NSMutableSet`'s methods but is not an `NSMutableSet` (see
    /// Documentation/Graph.md: Linux Foundation's `NSMutableSet` cannot be subclassed safely).
    public func mutableSetValue(forKey key: String) -> ManagedMutableSet {
        guard let slot = layout.slot(named: key), let relationship = layout.properties[slot] as? NSRelationshipDescription,
              relationship.isToMany, !relationship.isOrdered else {
            fatalError("mutableSetValueForKey: \(key) is not an unordered to-many relationship of the entity \(entity.name ?? "?").")
        }
        return ManagedMutableSet(object: self, key: key)
    }

    /// A mutable ordered set whose changes go to the ordered to-many relationship `key`.
    public func mutableOrderedSetValue(forKey key: String) -> ManagedMutableOrderedSet {
        guard let slot = layout.slot(named: key), let relationship = layout.properties[slot] as? NSRelationshipDescription,
              relationship.isToMany, relationship.isOrdered else {
            fatalError("mutableOrderedSetValueForKey: \(key) is not an ordered to-many relationship of the entity \(entity.name ?? "?").")
        }
        return ManagedMutableOrderedSet(object: self, key: key)
    }
}

/// What both relationship proxies share: the object, the key, and reading the members (which fires the
/// relationship fault and counts as an access).
public class ManagedRelationshipProxy {
    let object: NSManagedObject
    let key: String

    init(object: NSManagedObject, key: String) {
        self.object = object
        self.key = key
    }

    var members: [NSManagedObject] {
        object.willAccessValue(forKey: key)
        defer { object.didAccessValue(forKey: key) }
        return object.toMany(object.layout.slot(named: key)!).objects
    }
}

/// The proxy `mutableSetValue(forKey:)` returns: `NSMutableSet`'s methods over a to-many relationship.
public final class ManagedMutableSet: ManagedRelationshipProxy, Sequence {

    /// The number of members.
    public var count: Int { members.count }
    /// The members, in no particular order.
    public var allObjects: [Any] { members }
    /// The members as a Swift set.
    public var set: Set<NSManagedObject> { Set(members) }
    /// Whether `object` is a member (by identity).
    public func contains(_ object: Any) -> Bool { members.contains { $0 === object as AnyObject } }
    /// `object` if it is a member, else nil.
    public func member(_ object: Any) -> Any? { contains(object) ? object : nil }
    /// One of the members, or nil when there are none.
    public func anyObject() -> Any? { members.first }
    /// Iterates the members.
    public func makeIterator() -> IndexingIterator<[NSManagedObject]> { members.makeIterator() }

    /// Adds `element` to the relationship (a managed object; anything else stops), updating its inverse.
    public func add(_ element: Any) { object.managedAdd([Self.managed(element, key)], forKey: key) }
    /// Removes `element` from the relationship.
    public func remove(_ element: Any) { object.managedRemove([Self.managed(element, key)], forKey: key) }
    /// Adds the objects of `array`.
    public func addObjects(from array: [Any]) { object.managedAdd(array.map { Self.managed($0, key) }, forKey: key) }
    /// Adds the objects of `other` (a union set mutation).
    public func union(_ other: Set<AnyHashable>) { addObjects(from: other.map(\.base)) }
    /// Adds the objects of `other`.
    public func union(_ other: NSSet) { object.managedAdd(other, forKey: key) }
    /// Removes the objects of `other` (a minus set mutation).
    public func minus(_ other: Set<AnyHashable>) { object.managedRemove(other.map { Self.managed($0.base, key) }, forKey: key) }
    /// Removes the objects of `other`.
    public func minus(_ other: NSSet) { object.managedRemove(other, forKey: key) }
    /// Keeps only the members in `other` (an intersect set mutation naming the objects kept).
    public func intersect(_ other: Set<AnyHashable>) {
        let keep = Set(other.compactMap { ($0.base as? NSManagedObject).map(ObjectIdentifier.init) })
        guard members.contains(where: { !keep.contains(ObjectIdentifier($0)) }) else { return }
        // Foundation's intersect mutation names the objects kept, not the ones removed.
        object.willChangeValue(forKey: key, withSetMutation: .intersect, using: other)
        object.setPrimitiveValue(members.filter { keep.contains(ObjectIdentifier($0)) }, forKey: key)
        object.didChangeValue(forKey: key, withSetMutation: .intersect, using: other)
    }
    /// Removes every member.
    public func removeAllObjects() { intersect([]) }
    /// Makes `other` the members (a set mutation reporting the members replaced and added).
    public func setSet(_ other: Set<AnyHashable>) {
        let objects = other.map { Self.managed($0.base, key) }
        object.mutateToMany(key, mutation: .set, objects: objects) { _, new in new }
    }

    static func managed(_ element: Any, _ key: String) -> NSManagedObject {
        guard let object = element as? NSManagedObject else {
            fatalError("Unacceptable type of value for to-many relationship: property = \"\(key)\"; given type = \(type(of: element)); value = \(element).")
        }
        return object
    }
}

/// The proxy `mutableOrderedSetValue(forKey:)` returns: `NSMutableOrderedSet`'s methods over an ordered
/// to-many relationship.
public final class ManagedMutableOrderedSet: ManagedRelationshipProxy, Sequence {

    public var count: Int { members.count }
    /// The members in order.
    public var array: [Any] { members }
    /// The first member, or nil.
    public var firstObject: Any? { members.first }
    /// The last member, or nil.
    public var lastObject: Any? { members.last }
    /// The member at `index` (out of range stops).
    public func object(at index: Int) -> Any { members[index] }
    /// The member at `index`.
    public subscript(index: Int) -> Any { members[index] }
    /// The index of `element`, or `NSNotFound`.
    public func index(of element: Any) -> Int { members.firstIndex { $0 === element as AnyObject } ?? NSNotFound }
    /// Whether `element` is a member.
    public func contains(_ element: Any) -> Bool { index(of: element) != NSNotFound }
    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[NSManagedObject]> { members.makeIterator() }

    /// Appends `element` (a managed object) unless it is a member.
    public func add(_ element: Any) { object.managedAdd([ManagedMutableSet.managed(element, key)], forKey: key) }
    /// Appends the objects of `array` that are not members.
    public func addObjects(from array: [Any]) { object.managedAdd(array.map { ManagedMutableSet.managed($0, key) }, forKey: key) }
    /// Inserts `element` at `index`.
    public func insert(_ element: Any, at index: Int) {
        object.managedInsert([ManagedMutableSet.managed(element, key)], at: NSIndexSet(index: index), forKey: key)
    }
    /// Inserts `elements` at `indexes`.
    public func insert(_ elements: [Any], at indexes: IndexSet) {
        object.managedInsert(elements.map { ManagedMutableSet.managed($0, key) }, at: NSIndexSet(indexSet: indexes), forKey: key)
    }
    /// Removes `element`.
    public func remove(_ element: Any) { object.managedRemove([ManagedMutableSet.managed(element, key)], forKey: key) }
    /// Removes the member at `index`.
    public func removeObject(at index: Int) { object.managedRemove(at: NSIndexSet(index: index), forKey: key) }
    /// Removes the members at `indexes`.
    public func removeObjects(at indexes: IndexSet) { object.managedRemove(at: NSIndexSet(indexSet: indexes), forKey: key) }
    /// Replaces the member at `index` with `element`.
    public func replaceObject(at index: Int, with element: Any) {
        object.managedReplace(at: NSIndexSet(index: index), with: [ManagedMutableSet.managed(element, key)], forKey: key)
    }
    /// Removes every member.
    public func removeAllObjects() { object.managedRemove(members, forKey: key) }
    /// Moves the objects at `indexes` so that they start at `index`.
    public func moveObjects(at indexes: IndexSet, to index: Int) { object.managedMove(at: indexes, to: index, forKey: key) }
}
