import Foundation

/// How to order objects by one of their properties: the key, the direction, and the comparison method.
///
/// Apple's `NSSortDescriptor`. The supported selectors are the ones Core Data's SQL store supports:
/// `compare:`, `caseInsensitiveCompare:`, `localizedCompare:`, `localizedCaseInsensitiveCompare:` and
/// `localizedStandardCompare:`; or give a comparator closure. Missing values (nil, `NSNull`) sort before all
/// others in ascending order.
public final class NSSortDescriptor: NSObject, NSCopying, @unchecked Sendable {
    /// The key path the objects are compared by, or nil to compare the objects themselves.
    public let key: String?
    /// Whether smaller values come first.
    public let ascending: Bool
    /// The comparison method (`compare:` unless another was given; nil with a comparator).
    public let selector: Selector?
    private let customComparator: Comparator?
    private let components: [String]
    private let method: Method

    enum Method {
        case compare, caseInsensitive, localized, localizedCaseInsensitive, localizedStandard
    }

    /// The selectors a sort descriptor can use here (Core Data's SQL store supports the same ones).
    public static var supportedSelectorNames: Set<String> { Set(supportedSelectors.keys) }

    static let supportedSelectors: [String: Method] = [
        "compare:": .compare,
        "caseInsensitiveCompare:": .caseInsensitive,
        "localizedCompare:": .localized,
        "localizedCaseInsensitiveCompare:": .localizedCaseInsensitive,
        "localizedStandardCompare:": .localizedStandard,
    ]

    /// Sorts by `key` with `compare:`.
    public convenience init(key: String?, ascending: Bool) {
        self.init(key: key, ascending: ascending, selector: nil)
    }

    /// Sorts by `key` with one of the supported comparison selectors.
    ///
    /// Another selector stops with a message: Linux cannot send arbitrary messages (use a comparator).
    public init(key: String?, ascending: Bool, selector: Selector?) {
        let selector = selector ?? .compare
        guard let method = NSSortDescriptor.supportedSelectors[selector.name] else {
            fatalError("NSSortDescriptor: unsupported comparison selector '\(selector.name)'; use one of \(NSSortDescriptor.supportedSelectors.keys.sorted().joined(separator: ", ")) or a comparator")
        }
        self.key = key
        self.ascending = ascending
        self.selector = selector
        self.customComparator = nil
        self.components = key.map { KeyPathComponents($0).components } ?? []
        self.method = method
        super.init()
    }

    /// Sorts by `key`, comparing the two values with `comparator`. (In-memory only: an SQL store cannot run it.)
    public init(key: String?, ascending: Bool, comparator: @escaping Comparator) {
        self.key = key
        self.ascending = ascending
        self.selector = nil
        self.customComparator = comparator
        self.components = key.map { KeyPathComponents($0).components } ?? []
        self.method = .compare
        super.init()
    }

    /// Sorts by a Swift key path whose root names its key paths (the `@Managed` macro provides the names;
    /// ``KeyPathNaming`` explains how to provide them by hand).
    public convenience init<Root: KeyPathNaming, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        guard let name = Root.keyName(for: keyPath) else {
            fatalError("NSSortDescriptor: \(Root.self) has no key name for \(keyPath)")
        }
        self.init(key: name, ascending: ascending)
    }

    /// A comparator that compares the sort key's values with this descriptor's method and direction.
    public var comparator: Comparator {
        { [self] a, b in
            do {
                return try self.orderValues(Value(a), Value(b))
            } catch {
                fatalError("NSSortDescriptor: \(error)")
            }
        }
    }

    /// The same descriptor in the opposite direction.
    public var reversedSortDescriptor: Any {
        if let customComparator {
            return NSSortDescriptor(key: key, ascending: !ascending, comparator: customComparator)
        }
        return NSSortDescriptor(key: key, ascending: !ascending, selector: selector)
    }

    /// Orders two objects by this descriptor. Stops with Apple's reason when the values cannot be compared
    /// (a string with a number); ``compareThrowing(_:to:)`` throws instead.
    public func compare(_ object1: Any, to object2: Any) -> ComparisonResult {
        do {
            return try compareThrowing(object1, to: object2)
        } catch {
            fatalError("NSSortDescriptor: \(error)")
        }
    }

    /// Orders two objects by this descriptor, throwing ``PredicateEvaluationError`` for an unknown key or
    /// values that cannot be compared.
    public func compareThrowing(_ object1: Any, to object2: Any) throws -> ComparisonResult {
        try compareValues(Value(object1), Value(object2))
    }

    func compareValues(_ object1: Value, _ object2: Value) throws -> ComparisonResult {
        try compareKeys(sortKey(of: object1), sortKey(of: object2))
    }

    /// The value this descriptor sorts `object` by.
    func sortKey(of object: Value) throws -> Value {
        try KeyValueCoding.value(forKeyPath: components[...], of: object)
    }

    /// Orders two sort keys (from `sortKey(of:)`) in this descriptor's direction.
    func compareKeys(_ a: Value, _ b: Value) throws -> ComparisonResult {
        let order = try orderValues(a, b)
        return ascending ? order : order.reversed
    }

    private func orderValues(_ a: Value, _ b: Value) throws -> ComparisonResult {
        if let customComparator {
            return customComparator(a.anyValue as Any, b.anyValue as Any)
        }
        switch (a.isNilOrNull, b.isNilOrNull) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: break
        }
        if case .string(let x) = a, case .string(let y) = b {
            switch method {
            case .compare: return try Comparison.order(a, b, options: [])
            case .caseInsensitive: return try Comparison.order(a, b, options: .caseInsensitive)
            case .localized: return x.compare(y, options: [], range: nil, locale: .current)
            case .localizedCaseInsensitive: return x.compare(y, options: .caseInsensitive, range: nil, locale: .current)
            case .localizedStandard: return x.compare(y, options: [.caseInsensitive, .numeric], range: nil, locale: .current)
            }
        }
        return try Comparison.order(a, b, options: [])
    }

    // MARK: NSObject

    public override var description: String {
        "(\(key ?? "SELF"), \(ascending ? "ascending" : "descending"), \(selector?.name ?? "comparator"))"
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSSortDescriptor else { return false }
        return key == other.key && ascending == other.ascending && selector == other.selector
            && customComparator == nil && other.customComparator == nil
    }

    public override var hash: Int { description.hashValue }

    /// The descriptor itself: sort descriptors are immutable.
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// Sort descriptors made in code are always evaluable; present for Apple's API.
    public func allowEvaluation() {}
}

/// A type that knows the Core Data key names of its Swift key paths.
///
/// Linux key paths carry no names, so `NSSortDescriptor(keyPath:ascending:)`, `#Predicate` conversion and
/// `observe(\.name)` ask the root type. The `@Managed` macro writes this for managed object subclasses; any
/// type can write it by hand:
///
/// ```swift
/// extension Person: KeyPathNaming {
///     static func keyName(for keyPath: AnyKeyPath) -> String? {
///         [\Person.name: "name", \Person.age: "age"][keyPath]
///     }
/// }
/// ```
public protocol KeyPathNaming {
    /// The key name of `keyPath` (rooted at this type), or nil if it has none.
    static func keyName(for keyPath: AnyKeyPath) -> String?
}

extension Array {
    /// The elements sorted by `sortDescriptors` in order of precedence; elements that compare equal keep
    /// their order. Stops with Apple's reason if two values cannot be compared.
    public func sorted(using sortDescriptors: [NSSortDescriptor]) -> [Element] {
        do {
            return try sortedThrowing(using: sortDescriptors)
        } catch {
            fatalError("NSSortDescriptor: \(error)")
        }
    }

    /// Like ``sorted(using:)``, throwing ``PredicateEvaluationError`` for an unknown key or incomparable values.
    public func sortedThrowing(using sortDescriptors: [NSSortDescriptor]) throws -> [Element] {
        // Each element's sort keys are read once, not once per comparison; indices are sorted rather than
        // the elements, which generic code could only move through value witnesses.
        let keys: [[Value]] = try map { element in
            let value = Value(element as Any)
            return try sortDescriptors.map { try $0.sortKey(of: value) }
        }
        var order = [Int](keys.indices)
        try order.sort { a, b in
            for (index, descriptor) in sortDescriptors.enumerated() {
                switch try descriptor.compareKeys(keys[a][index], keys[b][index]) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return a < b
        }
        return order.map { self[$0] }
    }

    /// The elements that satisfy `predicate` (Apple: `NSArray.filtered(using:)`).
    public func filtered(using predicate: NSPredicate) -> [Element] {
        filter { predicate.evaluate(with: $0) }
    }
}

extension NSArray {
    /// The array sorted by `sortDescriptors` (Apple's `sortedArray(using:)`).
    public func sortedArray(using sortDescriptors: [NSSortDescriptor]) -> [Any] {
        (self as? [Any] ?? []).sorted(using: sortDescriptors)
    }

    /// The objects that satisfy `predicate` (Apple's `filtered(using:)`).
    public func filtered(using predicate: NSPredicate) -> [Any] {
        (self as? [Any] ?? []).filtered(using: predicate)
    }
}
