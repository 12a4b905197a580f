// The macros that replace `@NSManaged` (decision D2). Their expansions are in Sources/OCDMacros, a compiler
// plugin; this module only declares them, so nothing below the umbrella depends on swift-syntax (D3).
// Documentation/Macros.md shows what each one expands to.

/// Makes a property of an `NSManagedObject` subclass a managed property, as `@NSManaged` does on Apple
/// platforms.
///
/// On Linux `@NSManaged` type-checks but never links: nothing generates its accessors. Write `@Managed`
/// instead, on an instance `var` with an explicit type and no initial value:
///
/// ```swift
/// @ManagedObject
/// final class Department: NSManagedObject {
///     @Managed var name: String?
///     @Managed var employees: Set<Employee>?
/// }
/// ```
///
/// The getter reads `managedValue(forKey: "name")` and the setter calls
/// `setManagedValue(newValue, forKey: "name")`: the key is the property's name, and the type is the
/// property's type. The value lives in the object's managed object context; set defaults in the model or in
/// `awakeFromInsert()`.
///
/// A to-many relationship declared as `Set<Element>`, `NSSet` or `NSOrderedSet` (optional or not) also gets
/// the mutators Xcode's codegen writes, at the property's access level: `addToEmployees(_:)` and
/// `removeFromEmployees(_:)`, and for ordered relationships `insertIntoEmployees(_:at:)`,
/// `removeFromEmployees(at:)` and `replaceEmployees(at:with:)`. They call NSManagedObject's `managedAdd`,
/// `managedRemove`, `managedInsert` and `managedReplace` with the property's key.
///
/// Misuse (a `let`, a `static` property, no type annotation, an initial value, accessors or observers,
/// several variables in one declaration) is a compile error.
@attached(accessor)
@attached(peer, names: arbitrary)
public macro Managed() = #externalMacro(module: "OCDMacros", type: "ManagedMacro")

/// Lists an `NSManagedObject` subclass's keys for the runtime, which on Linux cannot discover them.
///
/// On Apple platforms key-value coding finds a class's accessors and `validate<Key>(_:)` methods through the
/// Objective-C runtime, and `\Employee.name` knows its name. On Linux neither holds. Attach `@ManagedObject`
/// to the class and it adds an override of `managedKeyTable` that records, in member order:
///
/// - each `@Managed` property: its key path and key, for `#Predicate`, `SortDescriptor` and `observe(\.name)`;
/// - each other instance property, stored or computed: a custom accessor that `value(forKey:)` and
///   `setValue(_:forKey:)` call, as KVC calls a class's own accessors;
/// - each `primitive<Key>` property: the primitive accessor for `<key>`;
/// - each `validate<Key>(_ value: inout Any?) throws` method: the validator `validateValue(_:forKey:)` and
///   saves call for `<key>`.
///
/// Members declared in extensions are not listed: the macro sees the class's own body only. `override`
/// members are skipped, because the superclass's table already lists them and dispatch reaches the override.
///
/// ```swift
/// @ManagedObject
/// public final class Employee: NSManagedObject {
///     @Managed public var name: String?
///     public var displayName: String { name ?? "?" }
///     func validateName(_ value: inout Any?) throws { … }
/// }
/// ```
///
/// The class must be a non-generic class with a superclass; anything else is a compile error.
@attached(member, names: named(managedKeyTable))
public macro ManagedObject() = #externalMacro(module: "OCDMacros", type: "ManagedObjectMacro")
