// @ManagedObject's key table: one statement per member the runtime must find, in member order.

import Testing

@Suite("@ManagedObject key table")
struct ManagedObjectTests {
    @Test func listsManagedPropertiesAccessorsPrimitivesAndValidatorsInMemberOrder() {
        assertExpansion(
            """
            @ManagedObject
            public class Employee: NSManagedObject {
                @Managed public var name: String?
                public var fullName: String { name ?? "" }
                var primitiveInt16: Int16
                func validateName(_ value: inout Any?) throws {}
            }
            """,
            expandsTo: """
                public class Employee: NSManagedObject {
                    @Managed public var name: String?
                    public var fullName: String { name ?? "" }
                    var primitiveInt16: Int16
                    func validateName(_ value: inout Any?) throws {}

                    override public class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf: Employee>(_: ManagedSelf.Type) {
                            table.managed(\\ManagedSelf.name, key: "name")
                            table.accessor(\\ManagedSelf.fullName, key: "fullName")
                            table.primitiveAccessor(\\ManagedSelf.primitiveInt16, key: "int16")
                            table.validator(key: "name") { (object: Employee, value: inout Any?) in
                                try object.validateName(&value)
                            }
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// `open` keeps the table overridable by subclasses in other modules; `public` and `package` must be
    /// as visible as their class (an override may not be less accessible); the rest need no keyword.
    @Test(arguments: [
        ("public", "public "), ("open", "open "), ("", ""), ("internal", ""), ("package", "package "),
        ("fileprivate", ""), ("private", ""), ("public final", "public "),
    ])
    func theTableHasTheClassesVisibility(modifiers: String, access: String) {
        let declaration = modifiers.isEmpty ? "class Employee: NSManagedObject" : "\(modifiers) class Employee: NSManagedObject"
        // A final class has no subclasses to name its key paths for.
        let entries = modifiers.hasSuffix("final")
            ? #"        table.managed(\Employee.name, key: "name")"#
            : [
                "        func entries<ManagedSelf: Employee>(_: ManagedSelf.Type) {",
                #"            table.managed(\ManagedSelf.name, key: "name")"#,
                "        }",
                "        entries(Self.self)",
            ].joined(separator: "\n")
        assertExpansion(
            """
            @ManagedObject
            \(declaration) {
                @Managed var name: String?
            }
            """,
            expandsTo: """
                \(declaration) {
                    @Managed var name: String?

                    override \(access)class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                \(entries)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    @Test func aClassWithNothingToListReturnsItsSuperclassesTable() {
        assertExpansion(
            """
            @ManagedObject
            class Note: NSManagedObject {
                init() {}
                static var count = 0
            }
            """,
            expandsTo: """
                class Note: NSManagedObject {
                    init() {}
                    static var count = 0

                    override class var managedKeyTable: ManagedKeyTable {
                        super.managedKeyTable
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// Stored, computed, `let`, `lazy` and private properties are all accessors; each variable of a declaration
    /// with several is listed.
    @Test func everyInstancePropertyIsAnAccessor() {
        assertExpansion(
            """
            @ManagedObject
            class Employee: NSManagedObject {
                let id = UUID()
                private var cache: [String: Int] = [:]
                lazy var formatter = DateFormatter()
                var width = 0, height = 0
                var area: Int {
                    get { width * height }
                    set {}
                }
                fileprivate var `default`: Bool { true }
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    let id = UUID()
                    private var cache: [String: Int] = [:]
                    lazy var formatter = DateFormatter()
                    var width = 0, height = 0
                    var area: Int {
                        get { width * height }
                        set {}
                    }
                    fileprivate var `default`: Bool { true }

                    override class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf: Employee>(_: ManagedSelf.Type) {
                            table.accessor(\\ManagedSelf.id, key: "id")
                            table.accessor(\\ManagedSelf.cache, key: "cache")
                            table.accessor(\\ManagedSelf.formatter, key: "formatter")
                            table.accessor(\\ManagedSelf.width, key: "width")
                            table.accessor(\\ManagedSelf.height, key: "height")
                            table.accessor(\\ManagedSelf.area, key: "area")
                            table.accessor(\\ManagedSelf.`default`, key: "default")
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// Type members belong to no object; an `override` is in the superclass's table already, and dispatch
    /// reaches it from there. Initializers, subscripts, nested types and tuple patterns are not keys.
    @Test func typeMembersOverridesAndNonPropertiesAreSkipped() {
        assertExpansion(
            """
            @ManagedObject
            class Manager: Employee {
                static var shared: Manager?
                class var kind: String { "manager" }
                override var fullName: String { "" }
                override func validateName(_ value: inout Any?) throws {}
                static func validateTitle(_ value: inout Any?) throws {}
                class func validateRank(_ value: inout Any?) throws {}
                init() {}
                subscript(index: Int) -> Int { index }
                enum Nested {}
                var (x, y) = (0, 0)
                @Managed var reports: NSSet?
            }
            """,
            expandsTo: """
                class Manager: Employee {
                    static var shared: Manager?
                    class var kind: String { "manager" }
                    override var fullName: String { "" }
                    override func validateName(_ value: inout Any?) throws {}
                    static func validateTitle(_ value: inout Any?) throws {}
                    class func validateRank(_ value: inout Any?) throws {}
                    init() {}
                    subscript(index: Int) -> Int { index }
                    enum Nested {}
                    var (x, y) = (0, 0)
                    @Managed var reports: NSSet?

                    override class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf: Manager>(_: ManagedSelf.Type) {
                            table.managed(\\ManagedSelf.reports, key: "reports")
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// A computed property whose getter is async or throws has no key path (it cannot be one), so it is
    /// not listed; its neighbours are.
    @Test func effectfulGettersAreSkipped() {
        assertExpansion(
            """
            @ManagedObject
            class Report: NSManagedObject {
                var slow: Int { get async { 1 } }
                var risky: Int { get throws { 1 } }
                var plain: Int { 1 }
            }
            """,
            expandsTo: """
                class Report: NSManagedObject {
                    var slow: Int { get async { 1 } }
                    var risky: Int { get throws { 1 } }
                    var plain: Int { 1 }

                    override class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf: Report>(_: ManagedSelf.Type) {
                            table.accessor(\\ManagedSelf.plain, key: "plain")
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// `primitive<Key>` names the primitive accessor of `<key>`; `primitive` followed by a lowercase letter,
    /// or alone, is an ordinary property.
    @Test func primitiveAccessorsAreKeyedByTheRestOfTheirName() {
        assertExpansion(
            """
            @ManagedObject
            class Employee: NSManagedObject {
                var primitiveName: String?
                var primitiveURL: URL? { nil }
                var primitiveness: Int { 0 }
                var primitive: Int { 0 }
                @Managed var primitiveDate: Date?
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    var primitiveName: String?
                    var primitiveURL: URL? { nil }
                    var primitiveness: Int { 0 }
                    var primitive: Int { 0 }
                    @Managed var primitiveDate: Date?

                    override class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf: Employee>(_: ManagedSelf.Type) {
                            table.primitiveAccessor(\\ManagedSelf.primitiveName, key: "name")
                            table.primitiveAccessor(\\ManagedSelf.primitiveURL, key: "uRL")
                            table.accessor(\\ManagedSelf.primitiveness, key: "primitiveness")
                            table.accessor(\\ManagedSelf.primitive, key: "primitive")
                            table.managed(\\ManagedSelf.primitiveDate, key: "primitiveDate")
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// `try` only where the method throws (typed throws included); an argument label is kept.
    @Test func validatorsCallTheirMethodWithTryOnlyWhenItThrows() {
        assertExpansion(
            """
            @ManagedObject
            class Employee: NSManagedObject {
                func validateName(_ value: inout Any?) throws {}
                func validateAge(_ value: inout Any?) {}
                func validateEmail(value: inout Optional<Any>) throws(ValidationError) -> Void {}
                private func validateSalary(_ v: inout Any?) throws -> () {}
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    func validateName(_ value: inout Any?) throws {}
                    func validateAge(_ value: inout Any?) {}
                    func validateEmail(value: inout Optional<Any>) throws(ValidationError) -> Void {}
                    private func validateSalary(_ v: inout Any?) throws -> () {}

                    override class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf: Employee>(_: ManagedSelf.Type) {
                            table.validator(key: "name") { (object: Employee, value: inout Any?) in
                                try object.validateName(&value)
                            }
                            table.validator(key: "age") { (object: Employee, value: inout Any?) in
                                object.validateAge(&value)
                            }
                            table.validator(key: "email") { (object: Employee, value: inout Any?) in
                                try object.validateEmail(value: &value)
                            }
                            table.validator(key: "salary") { (object: Employee, value: inout Any?) in
                                try object.validateSalary(&value)
                            }
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// Core Data's own validation methods, and methods that a validator closure could not call, are not validators.
    @Test func methodsThatAreNotKeyValidatorsAreSkipped() {
        assertExpansion(
            """
            @ManagedObject
            class Employee: NSManagedObject {
                override func validateForInsert() throws {}
                func validateForInsert() throws {}
                func validateForUpdate() throws {}
                func validateForDelete() throws {}
                func validateValue(_ value: inout Any?) throws {}
                func validateValue(_ value: inout Any?, forKey key: String) throws {}
                func validate(_ value: inout Any?) throws {}
                func validatename(_ value: inout Any?) throws {}
                func validateName(_ value: Any?) throws {}
                func validateName(_ value: inout String?) throws {}
                func validateName(_ value: inout Any?, strict: Bool) throws {}
                func validateName(_ value: inout Any?) async throws {}
                func validateName(_ value: inout Any?) throws -> Bool { true }
                func validateName<T>(_ value: inout Any?, as: T.Type) throws {}
                func validateTitle<T>(_ value: inout Any?) throws {}
                func validateAll() throws {}
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    override func validateForInsert() throws {}
                    func validateForInsert() throws {}
                    func validateForUpdate() throws {}
                    func validateForDelete() throws {}
                    func validateValue(_ value: inout Any?) throws {}
                    func validateValue(_ value: inout Any?, forKey key: String) throws {}
                    func validate(_ value: inout Any?) throws {}
                    func validatename(_ value: inout Any?) throws {}
                    func validateName(_ value: Any?) throws {}
                    func validateName(_ value: inout String?) throws {}
                    func validateName(_ value: inout Any?, strict: Bool) throws {}
                    func validateName(_ value: inout Any?) async throws {}
                    func validateName(_ value: inout Any?) throws -> Bool { true }
                    func validateName<T>(_ value: inout Any?, as: T.Type) throws {}
                    func validateTitle<T>(_ value: inout Any?) throws {}
                    func validateAll() throws {}

                    override class var managedKeyTable: ManagedKeyTable {
                        super.managedKeyTable
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// Members under `#if` are listed under the same condition; a conditional block with nothing to list is left out.
    @Test func conditionalMembersKeepTheirCondition() {
        assertExpansion(
            """
            @ManagedObject
            class Employee: NSManagedObject {
                #if DEBUG
                var debugName: String { "" }
                #elseif os(Linux)
                func validateName(_ value: inout Any?) throws {}
                #else
                init() {}
                #endif
                #if canImport(UIKit)
                init(color: Int) {}
                #endif
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    #if DEBUG
                    var debugName: String { "" }
                    #elseif os(Linux)
                    func validateName(_ value: inout Any?) throws {}
                    #else
                    init() {}
                    #endif
                    #if canImport(UIKit)
                    init(color: Int) {}
                    #endif

                    override class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf: Employee>(_: ManagedSelf.Type) {
                            #if DEBUG
                            table.accessor(\\ManagedSelf.debugName, key: "debugName")
                            #elseif os(Linux)
                            table.validator(key: "name") { (object: Employee, value: inout Any?) in
                                try object.validateName(&value)
                            }
                            #else
                            #endif
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// `@NSManaged` on Apple platforms and `@Managed` here, chosen by `#if` in the attribute list: the entry
    /// follows the same condition, managed where the clause has `@Managed` (it was an accessor entry).
    @Test func anAttributeChosenByIfConfigKeepsItsCondition() {
        assertExpansion(
            """
            @ManagedObject
            class Employee: NSManagedObject {
                #if canImport(CoreData)
                @NSManaged
                #else
                @Managed
                #endif
                var name: String?
                #if os(Linux)
                @Managed
                #endif
                var title: String?
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    #if canImport(CoreData)
                    @NSManaged
                    #else
                    @Managed
                    #endif
                    var name: String?
                    #if os(Linux)
                    @Managed
                    #endif
                    var title: String?

                    override class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf: Employee>(_: ManagedSelf.Type) {
                            #if canImport(CoreData)
                            table.accessor(\\ManagedSelf.name, key: "name")
                            #else
                            table.managed(\\ManagedSelf.name, key: "name")
                            #endif
                            #if os(Linux)
                            table.managed(\\ManagedSelf.title, key: "title")
                            #else
                            table.accessor(\\ManagedSelf.title, key: "title")
                            #endif
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// A class named like the generic parameter gets another parameter name.
    @Test func aClassNamedManagedSelfGetsAnotherParameterName() {
        assertExpansion(
            """
            @ManagedObject
            class ManagedSelf: NSManagedObject {
                @Managed var name: String?
            }
            """,
            expandsTo: """
                class ManagedSelf: NSManagedObject {
                    @Managed var name: String?

                    override class var managedKeyTable: ManagedKeyTable {
                        var table = super.managedKeyTable
                        func entries<ManagedSelf_: ManagedSelf>(_: ManagedSelf_.Type) {
                            table.managed(\\ManagedSelf_.name, key: "name")
                        }
                        entries(Self.self)
                        return table
                    }
                }
                """,
            macros: managedObjectOnly
        )
    }

    /// A nested class is named as written: inside its body the bare name is the class itself. Both macros
    /// expand, as in a real class.
    @Test func aNestedClassIsNamedAsWritten() {
        assertExpansion(
            """
            enum Company {
                @ManagedObject
                final class Employee: NSManagedObject {
                    @Managed var name: String?
                }
            }
            """,
            expandsTo: """
                enum Company {
                    final class Employee: NSManagedObject {
                        var name: String? {
                            get {
                                managedValue(forKey: "name")
                            }
                            set {
                                setManagedValue(newValue, forKey: "name")
                            }
                        }

                        override class var managedKeyTable: ManagedKeyTable {
                            var table = super.managedKeyTable
                            table.managed(\\Employee.name, key: "name")
                            return table
                        }
                    }
                }
                """
        )
    }
}
