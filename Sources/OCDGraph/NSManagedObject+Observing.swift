import Foundation
import OCDPredicate

/// Closure-based key-value observing of managed objects (Foundation's `observe(_:options:changeHandler:)`).
public protocol ManagedKeyValueObserving: NSManagedObject {}

extension NSManagedObject: ManagedKeyValueObserving {}

extension ManagedKeyValueObserving {
    /// The key of a managed property's key path, where Objective-C Core Data code writes
    /// `#keyPath(Employee.name)`: `Employee.keyPathString(\.name)` is `"name"`. Stops when the class's
    /// ``NSManagedObject/managedKeyTable`` does not name the key path.
    public static func keyPathString<Value>(_ keyPath: KeyPath<Self, Value>) -> String {
        guard let key = keyName(for: keyPath) else {
            fatalError("keyPathString(_:): the key path \(keyPath) of \(Self.self) has no key name. Mark the class @ManagedObject (or list the property in its managedKeyTable).")
        }
        return key
    }

    /// Observes the property at `keyPath` (a `@Managed` or class-provided property; its name comes from
    /// the class's ``NSManagedObject/managedKeyTable``). The observation lasts while the returned token
    /// lives. Changes are reported for the accessors' change notifications: setters, `setValue(_:forKey:)`,
    /// to-many mutations (kind `.insertion`/`.removal` with the objects involved) and inverse updates.
    public func observe<Value>(_ keyPath: KeyPath<Self, Value>, options: NSKeyValueObservingOptions = [],
                               changeHandler: @escaping (Self, NSKeyValueObservedChange<Value>) -> Void) -> NSKeyValueObservation {
        guard let key = Self.keyName(for: keyPath) else {
            fatalError("observe(_:): the key path \(keyPath) of \(Self.self) has no key name. Mark the class @ManagedObject (or list the property in its managedKeyTable).")
        }
        return observeValue(forKey: key, options: options) { object, kind, old, new, indexes, isPrior in
            changeHandler(object, NSKeyValueObservedChange(
                kind: kind,
                newValue: new.flatMap { ManagedValueCoercion.convert($0, to: Value.self) },
                oldValue: old.flatMap { ManagedValueCoercion.convert($0, to: Value.self) },
                indexes: indexes, isPrior: isPrior))
        }
    }

    /// Observes the property `key` by name, with untyped values (`NSNull`-free: nil is nil).
    public func observeValue(forKey key: String, options: NSKeyValueObservingOptions = [],
                             changeHandler: @escaping (Self, NSKeyValueChange, Any?, Any?, IndexSet?, Bool) -> Void) -> NSKeyValueObservation {
        // Keys of this object only: a key path through a relationship ("department.name") is not followed.
        // Followed to the keys those depend on in turn, as Foundation does (a cycle ends where it began).
        var affecting = Set<String>()
        var toAsk = [key]
        while let next = toAsk.popLast() {
            for other in Swift.type(of: self).keyPathsForValuesAffectingValue(forKey: next)
            where !other.contains(".") && other != key && affecting.insert(other).inserted {
                toAsk.append(other)
            }
        }
        let observer = KeyObserver(key: key, options: options, affectingKeys: affecting) { [unowned self] kind, old, new, indexes, isPrior in
            changeHandler(self, kind, old, new, indexes, isPrior)
        }
        observers.append(observer)
        if options.contains(.initial) {
            changeHandler(self, .setting, nil, options.contains(.new) ? value(forKey: key) : nil, nil, false)
        }
        return NSKeyValueObservation { [weak self, weak observer] in
            guard let observer else { return }
            observer.isValid = false
            // Removed after the access to `observers` ends: releasing the observer may run code that
            // touches the list again.
            guard let self, let index = self.observers.firstIndex(where: { $0 === observer }) else { return }
            let removed = self.observers.remove(at: index)
            withExtendedLifetime(removed) {}
        }
    }
}
