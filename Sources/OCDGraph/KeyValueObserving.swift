import Foundation

// Key-value observing's types, which Linux Foundation does not have (decision D9). Names and raw values
// are Foundation's on Apple platforms.

/// What an observation reports.
public struct NSKeyValueObservingOptions: OptionSet, Sendable {
    /// Foundation's values.
    public let rawValue: UInt
    /// The options of `rawValue`.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Report the new value.
    public static let new = NSKeyValueObservingOptions(rawValue: 0x01)
    /// Report the old value.
    public static let old = NSKeyValueObservingOptions(rawValue: 0x02)
    /// Report once immediately, when the observation starts.
    public static let initial = NSKeyValueObservingOptions(rawValue: 0x04)
    /// Report before each change as well as after it.
    public static let prior = NSKeyValueObservingOptions(rawValue: 0x08)
}

/// The kind of a change.
public enum NSKeyValueChange: UInt, Sendable {
    /// The value was set (an attribute, a to-one, or a to-many as a whole).
    case setting = 1
    /// Objects were inserted into a to-many relationship.
    case insertion = 2
    /// Objects were removed from a to-many relationship.
    case removal = 3
    /// Objects of a to-many relationship were replaced by others.
    case replacement = 4
}

/// How a to-many relationship is being mutated (`willChangeValue(forKey:withSetMutation:using:)`).
public enum NSKeyValueSetMutationKind: UInt, Sendable {
    /// The objects given are added (an insertion).
    case union = 1
    /// The objects given are removed (a removal).
    case minus = 2
    /// Only the objects given are kept: the others are removed (a removal).
    case intersect = 3
    /// The objects given become the members (a replacement).
    case set = 4
}

/// One change, as a closure observer receives it.
public struct NSKeyValueObservedChange<Value> {
    /// Foundation's name for the change kinds.
    public typealias Kind = NSKeyValueChange
    /// What kind of change it is.
    public let kind: Kind
    /// The new value (`.new`); for an insertion into a to-many relationship, the inserted objects.
    public let newValue: Value?
    /// The old value (`.old`); for a removal, the removed objects.
    public let oldValue: Value?
    /// The indexes changed in an ordered to-many relationship.
    public let indexes: IndexSet?
    /// True for the notification sent before the change (`.prior`).
    public let isPrior: Bool
}

/// A closure-based observation; it ends when `invalidate()` is called or the token is released.
public final class NSKeyValueObservation: @unchecked Sendable {
    private var cancel: (() -> Void)?
    private let lock = NSLock()

    init(cancel: @escaping () -> Void) { self.cancel = cancel }

    /// Ends the observation.
    public func invalidate() {
        lock.lock()
        let cancel = self.cancel
        self.cancel = nil
        lock.unlock()
        cancel?()
    }

    deinit { invalidate() }
}

/// One registered observer of one key of one object.
final class KeyObserver {
    let key: String
    let options: NSKeyValueObservingOptions
    /// The other keys of the object whose changes change `key` too (the class's
    /// `keyPathsForValuesAffectingValue(forKey:)`, read when the observation starts).
    let affectingKeys: Set<String>
    /// Called with (kind, old, new, indexes, isPrior); old/new are key-value coding values.
    let handler: (NSKeyValueChange, Any?, Any?, IndexSet?, Bool) -> Void
    var isValid = true
    /// The observed key's values read before each change of an affecting key not yet ended (innermost
    /// last): reported as the old value when the change ends.
    var valuesBeforeAffectingChanges: [Any?] = []

    init(key: String, options: NSKeyValueObservingOptions, affectingKeys: Set<String> = [],
         handler: @escaping (NSKeyValueChange, Any?, Any?, IndexSet?, Bool) -> Void) {
        self.key = key
        self.options = options
        self.affectingKeys = affectingKeys
        self.handler = handler
    }
}
