// @Managed's peers: Xcode-style mutators for to-many relationships, at the property's access level.

import Testing

/// The getter and setter every expansion below starts with, for a property `key` of type `type`.
private func accessors(_ declaration: String, key: String) -> String {
    """
    \(declaration) {
            get {
                managedValue(forKey: "\(key)")
            }
            set {
                setManagedValue(newValue, forKey: "\(key)")
            }
        }
    """
}

@Suite("@Managed to-many mutators")
struct ManagedMutatorTests {
    /// A set of objects gets typed single-object and set mutators, and the NSSet pair. Every spelling of an
    /// optional set is recognized (`?`, `!`, `Optional<…>`, `Swift.Set`); the element type is kept as written.
    @Test(arguments: [
        ("Set<Employee>?", "Employee"), ("Set<Employee>", "Employee"),
        ("Optional<Set<Company.Employee>>", "Company.Employee"), ("Set<Company.Employee>!", "Company.Employee"),
        ("Swift.Set<Company.Employee>?", "Company.Employee"),
    ])
    func aSetOfObjectsGetsSingleSetAndNSSetMutators(type: String, element: String) {
        assertExpansion(
            """
            class Department: NSManagedObject {
                @Managed var employees: \(type)
            }
            """,
            expandsTo: """
                class Department: NSManagedObject {
                    \(accessors("var employees: \(type)", key: "employees"))

                    func addToEmployees(_ value: \(element)) {
                        managedAdd(CollectionOfOne(value), forKey: "employees")
                    }

                    func removeFromEmployees(_ value: \(element)) {
                        managedRemove(CollectionOfOne(value), forKey: "employees")
                    }

                    func addToEmployees(_ values: Set<\(element)>) {
                        managedAdd(values, forKey: "employees")
                    }

                    func removeFromEmployees(_ values: Set<\(element)>) {
                        managedRemove(values, forKey: "employees")
                    }

                    func addToEmployees(_ values: NSSet) {
                        managedAdd(values, forKey: "employees")
                    }

                    func removeFromEmployees(_ values: NSSet) {
                        managedRemove(values, forKey: "employees")
                    }
                }
                """
        )
    }

    /// Core Data's codegen declares unordered to-many relationships as `NSSet?`.
    @Test(arguments: ["NSSet?", "NSSet", "Foundation.NSSet?"])
    func anNSSetGetsSingleObjectAndNSSetMutators(type: String) {
        assertExpansion(
            """
            class Department: NSManagedObject {
                @Managed var employees: \(type)
            }
            """,
            expandsTo: """
                class Department: NSManagedObject {
                    \(accessors("var employees: \(type)", key: "employees"))

                    func addToEmployees(_ value: NSManagedObject) {
                        managedAdd(CollectionOfOne(value), forKey: "employees")
                    }

                    func removeFromEmployees(_ value: NSManagedObject) {
                        managedRemove(CollectionOfOne(value), forKey: "employees")
                    }

                    func addToEmployees(_ values: NSSet) {
                        managedAdd(values, forKey: "employees")
                    }

                    func removeFromEmployees(_ values: NSSet) {
                        managedRemove(values, forKey: "employees")
                    }
                }
                """
        )
    }

    @Test(arguments: ["NSOrderedSet?", "NSOrderedSet"])
    func anNSOrderedSetGetsXcodesTenOrderedMutators(type: String) {
        assertExpansion(
            """
            class Playlist: NSManagedObject {
                @Managed var songs: \(type)
            }
            """,
            expandsTo: """
                class Playlist: NSManagedObject {
                    \(accessors("var songs: \(type)", key: "songs"))

                    func insertIntoSongs(_ value: NSManagedObject, at idx: Int) {
                        managedInsert(CollectionOfOne(value), at: NSIndexSet(index: idx), forKey: "songs")
                    }

                    func removeFromSongs(at idx: Int) {
                        managedRemove(at: NSIndexSet(index: idx), forKey: "songs")
                    }

                    func insertIntoSongs(_ values: [NSManagedObject], at indexes: NSIndexSet) {
                        managedInsert(values, at: indexes, forKey: "songs")
                    }

                    func removeFromSongs(at indexes: NSIndexSet) {
                        managedRemove(at: indexes, forKey: "songs")
                    }

                    func replaceSongs(at idx: Int, with value: NSManagedObject) {
                        managedReplace(at: NSIndexSet(index: idx), with: CollectionOfOne(value), forKey: "songs")
                    }

                    func replaceSongs(at indexes: NSIndexSet, with values: [NSManagedObject]) {
                        managedReplace(at: indexes, with: values, forKey: "songs")
                    }

                    func addToSongs(_ value: NSManagedObject) {
                        managedAdd(CollectionOfOne(value), forKey: "songs")
                    }

                    func removeFromSongs(_ value: NSManagedObject) {
                        managedRemove(CollectionOfOne(value), forKey: "songs")
                    }

                    func addToSongs(_ values: NSOrderedSet) {
                        managedAdd(values, forKey: "songs")
                    }

                    func removeFromSongs(_ values: NSOrderedSet) {
                        managedRemove(values, forKey: "songs")
                    }
                }
                """
        )
    }

    /// The mutators' access keyword: the property's, with `open` as `public`; a setter-only `private(set)` is
    /// not an access level of the property.
    @Test(arguments: [
        ("public", "public "), ("open", "public "), ("package", "package "), ("internal", "internal "),
        ("fileprivate", "fileprivate "), ("private", "private "), ("public private(set)", "public "),
        ("private(set)", ""),
    ])
    func mutatorsTakeThePropertysAccessLevel(modifiers: String, access: String) {
        assertExpansion(
            """
            class Department: NSManagedObject {
                @Managed \(modifiers) var staff: NSSet?
            }
            """,
            expandsTo: """
                class Department: NSManagedObject {
                    \(accessors("\(modifiers) var staff: NSSet?", key: "staff"))

                    \(access)func addToStaff(_ value: NSManagedObject) {
                        managedAdd(CollectionOfOne(value), forKey: "staff")
                    }

                    \(access)func removeFromStaff(_ value: NSManagedObject) {
                        managedRemove(CollectionOfOne(value), forKey: "staff")
                    }

                    \(access)func addToStaff(_ values: NSSet) {
                        managedAdd(values, forKey: "staff")
                    }

                    \(access)func removeFromStaff(_ values: NSSet) {
                        managedRemove(values, forKey: "staff")
                    }
                }
                """
        )
    }

    /// Names are capitalized on their first letter only, and keep their key: `` `protocol` `` → `addToProtocol`.
    @Test func mutatorNamesCapitalizeTheFirstLetterOnly() {
        assertExpansion(
            """
            class Spec: NSManagedObject {
                @Managed var `protocol`: NSSet?
                @Managed var uRLs: NSSet?
            }
            """,
            expandsTo: """
                class Spec: NSManagedObject {
                    \(accessors("var `protocol`: NSSet?", key: "protocol"))

                    func addToProtocol(_ value: NSManagedObject) {
                        managedAdd(CollectionOfOne(value), forKey: "protocol")
                    }

                    func removeFromProtocol(_ value: NSManagedObject) {
                        managedRemove(CollectionOfOne(value), forKey: "protocol")
                    }

                    func addToProtocol(_ values: NSSet) {
                        managedAdd(values, forKey: "protocol")
                    }

                    func removeFromProtocol(_ values: NSSet) {
                        managedRemove(values, forKey: "protocol")
                    }
                    \(accessors("var uRLs: NSSet?", key: "uRLs"))

                    func addToURLs(_ value: NSManagedObject) {
                        managedAdd(CollectionOfOne(value), forKey: "uRLs")
                    }

                    func removeFromURLs(_ value: NSManagedObject) {
                        managedRemove(CollectionOfOne(value), forKey: "uRLs")
                    }

                    func addToURLs(_ values: NSSet) {
                        managedAdd(values, forKey: "uRLs")
                    }

                    func removeFromURLs(_ values: NSSet) {
                        managedRemove(values, forKey: "uRLs")
                    }
                }
                """
        )
    }
}
