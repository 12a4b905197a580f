// @Managed's accessors: every managed property reads and writes through the object, keyed by its name.

import Testing

@Suite("@Managed accessors")
struct ManagedAccessorTests {
    /// Attributes, transformables and to-one relationships: a getter and a setter keyed by the name, no mutators.
    @Test(arguments: [
            "String?", "String", "Int16", "Int64", "Double?", "Bool", "Decimal?", "Date", "Date?", "Data", "UUID?",
            "URL?", "[String]", "[String: Int]?", "Department?", "Department", "Set<String>?", "Set<Int64>",
            "Set<Foundation.UUID>", "NSArray?",
        ])
    func attributesAndToOneRelationshipsGetAccessorsOnly(type: String) {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed var value: \(type)
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    var value: \(type) {
                        get {
                            managedValue(forKey: "value")
                        }
                        set {
                            setManagedValue(newValue, forKey: "value")
                        }
                    }
                }
                """
        )
    }

    @Test func accessorsKeepThePropertysModifiersAndAttributes() {
        assertExpansion(
            """
            public class Employee: NSManagedObject {
                @objc @Managed public private(set) var name: String?
            }
            """,
            expandsTo: """
                public class Employee: NSManagedObject {
                    @objc public private(set) var name: String? {
                        get {
                            managedValue(forKey: "name")
                        }
                        set {
                            setManagedValue(newValue, forKey: "name")
                        }
                    }
                }
                """
        )
    }

    @Test func aBacktickedNameIsKeyedWithoutBackticks() {
        assertExpansion(
            """
            class Course: NSManagedObject {
                @Managed var `class`: String?
            }
            """,
            expandsTo: """
                class Course: NSManagedObject {
                    var `class`: String? {
                        get {
                            managedValue(forKey: "class")
                        }
                        set {
                            setManagedValue(newValue, forKey: "class")
                        }
                    }
                }
                """
        )
    }

    @Test func aPropertyInAnExtensionOfTheClassExpands() {
        assertExpansion(
            """
            extension Employee {
                @Managed var nickname: String?
            }
            """,
            expandsTo: """
                extension Employee {
                    var nickname: String? {
                        get {
                            managedValue(forKey: "nickname")
                        }
                        set {
                            setManagedValue(newValue, forKey: "nickname")
                        }
                    }
                }
                """
        )
    }
}

@Suite struct ManagedPrimitiveAccessorTests {
    @Test func aPrimitivePropertyExpandsToPrimitiveAccessorsOfItsKey() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed var primitiveName: String?
                @Managed var primitiveReports: Set<Employee>
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    var primitiveName: String? {
                        get {
                            managedPrimitiveValue(forKey: "name")
                        }
                        set {
                            setManagedPrimitiveValue(newValue, forKey: "name")
                        }
                    }
                    var primitiveReports: Set<Employee> {
                        get {
                            managedPrimitiveValue(forKey: "reports")
                        }
                        set {
                            setManagedPrimitiveValue(newValue, forKey: "reports")
                        }
                    }
                }
                """
        )
    }
}
