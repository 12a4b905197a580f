import Foundation
import Synchronization

/// The classes entities name in `managedObjectClassName`.
///
/// On Apple platforms Core Data finds a class with `NSClassFromString`, which knows every Objective-C class
/// name. On Linux only module-qualified Swift names resolve that way (`MyApp.Person`), so a class can also be
/// registered under the name the model uses: `NSManagedObjectModel.registerManagedObjectClass(Person.self,
/// forName: "Person")`. The `@Managed` macro will register its classes.
enum ManagedObjectClasses {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var registered: [String: AnyClass] = [:]

    /// Changes with every registration, so that a class resolved earlier can be cached until then.
    private static let registrations = Atomic<Int>(0)
    package static var generation: Int { registrations.load(ordering: .acquiring) }

    static func register(_ type: AnyClass, forName name: String) {
        lock.withLock { registered[name] = type }
        registrations.add(1, ordering: .releasing)
    }

    /// The class for a model's class name: a registered one, else the class `NSClassFromString` finds.
    /// Xcode writes ".Person" for "Person in the app's module": registered names are tried with and
    /// without the dot, and so are the names of every module that registered a class.
    static func resolve(_ name: String) -> AnyClass? {
        let bare = name.hasPrefix(".") ? String(name.dropFirst()) : name
        if let found = lock.withLock({ registered[name] ?? registered[bare] }) { return found }
        if let found = NSClassFromString(bare) { return found }
        let modules = lock.withLock { Set(registered.values.compactMap { String(reflecting: $0).split(separator: ".").first.map(String.init) }) }
        for module in modules.sorted() {
            if let found = NSClassFromString("\(module).\(bare)") { return found }
        }
        return nil
    }
}

extension NSManagedObjectModel {
    /// Registers the class an entity's `managedObjectClassName` names, for names that `NSClassFromString`
    /// cannot resolve on Linux (a name without its module, or Xcode's ".Person").
    public static func registerManagedObjectClass(_ type: AnyClass, forName name: String) {
        ManagedObjectClasses.register(type, forName: name)
    }
}

extension NSEntityDescription {
    /// The class `managedObjectClassName` names: a class registered with
    /// ``NSManagedObjectModel/registerManagedObjectClass(_:forName:)``, or one `NSClassFromString` finds by
    /// its module-qualified name. Nil when neither knows the name (the context then uses `NSManagedObject`).
    public var resolvedManagedObjectClass: AnyClass? {
        guard let name = managedObjectClassName, name != "NSManagedObject" else { return nil }
        return ManagedObjectClasses.resolve(name)
    }
}

extension NSManagedObjectModel {
    /// Changes whenever a class is registered: a class resolved from a name stays right until then.
    package static var classRegistrationGeneration: Int { ManagedObjectClasses.generation }
}
