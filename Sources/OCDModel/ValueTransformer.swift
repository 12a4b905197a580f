import Foundation

// Linux Foundation has no `ValueTransformer`. Core Data models name transformers for their transformable
// attributes (`NSAttributeDescription.valueTransformerName`), and the SQLite store turns values into data
// with them, so OpenCoreData provides Foundation's class with Apple's API (Documentation/Model.md).

/// The name under which a ``ValueTransformer`` is registered, as Foundation's `NSValueTransformerName`.
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The name as a model's `valueTransformerName` writes it.
    public let rawValue: String
    /// The name `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The name `rawValue`.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The name itself.
    public var description: String { rawValue }

    /// Negates a Boolean (`NSNumber`); reversible.
    public static let negateBooleanTransformerName = NSValueTransformerName("NSNegateBoolean")
    /// Whether a value is nil (an `NSNumber` Boolean); not reversible.
    public static let isNilTransformerName = NSValueTransformerName("NSIsNil")
    /// Whether a value is not nil (an `NSNumber` Boolean); not reversible.
    public static let isNotNilTransformerName = NSValueTransformerName("NSIsNotNil")
    /// Apple's transformer for archives of the old, unkeyed `NSArchiver`, which Linux Foundation does not
    /// have: nothing is registered under this name.
    public static let unarchiveFromDataTransformerName = NSValueTransformerName("NSUnarchiveFromData")
    /// Unarchives a keyed archive (`NSKeyedUnarchiver`) into its object; the reverse archives an object.
    public static let keyedUnarchiveFromDataTransformerName = NSValueTransformerName("NSKeyedUnarchiveFromData")
    /// ``NSSecureUnarchiveFromDataTransformer``: unarchives with secure coding, the classes limited to its
    /// `allowedTopLevelClasses`.
    public static let secureUnarchiveFromDataTransformerName = NSValueTransformerName("NSSecureUnarchiveFromData")
}

/// Foundation's abstract class that turns values from one representation into another, for Linux, where
/// Foundation lacks it.
///
/// Subclass it and override ``transformedValue(_:)`` (and ``reverseTransformedValue(_:)`` when the reverse
/// is not the same transformation again), ``transformedValueClass()`` and ``allowsReverseTransformation()``;
/// register an instance with ``setValueTransformer(_:forName:)``. A transformable attribute whose
/// `valueTransformerName` names it is stored by the SQLite store as the `Data` its ``transformedValue(_:)``
/// returns, and read back through ``reverseTransformedValue(_:)``, as Core Data does; transformers that
/// unarchive data (``NSSecureUnarchiveFromDataTransformer`` and its subclasses, and the one registered as
/// ``NSValueTransformerName/keyedUnarchiveFromDataTransformerName``) go the other way.
///
/// Differences from Apple's: ``init(forName:)`` returns a new instance that forwards to the registered one
/// (a Swift initializer cannot return an existing object), so compare transformers by what they do, not by
/// identity, and call it on `ValueTransformer` itself (a subclass's `init(forName:)` stops); and a name that
/// nothing is registered under is looked up as a class name for Foundation's own transformer classes
/// only (`NSSecureUnarchiveFromDataTransformer`), not for an application's.
open class ValueTransformer: NSObject {
    /// The registered transformer an instance made by ``init(forName:)`` forwards to.
    private let registered: ValueTransformer?

    public override init() {
        registered = nil
        super.init()
    }

    /// The transformer registered under `name` (an instance that forwards to it); nil when none is.
    public init?(forName name: NSValueTransformerName) {
        // A subclass's instance would run its own overrides, not the registered transformer's.
        guard Self.self == ValueTransformer.self else {
            preconditionFailure("\(Self.self)(forName:) cannot return the transformer registered as \(name): call ValueTransformer(forName:) instead")
        }
        guard let transformer = Self.registeredTransformer(forName: name) else { return nil }
        registered = transformer
        super.init()
    }

    /// Registers `transformer` under `name`, replacing what was registered there; nil removes it.
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        Registry.lock.withLock {
            Registry.installBuiltIns()
            // A forwarding instance (from `init(forName:)`) registers what it forwards to.
            Registry.transformers[name.rawValue] = transformer.map { $0.registered ?? $0 }
        }
    }

    /// The names transformers are registered under, the built-in ones included.
    open class func valueTransformerNames() -> [NSValueTransformerName] {
        Registry.lock.withLock {
            Registry.installBuiltIns()
            return Registry.transformers.keys.sorted().map(NSValueTransformerName.init(rawValue:))
        }
    }

    /// The registered instance itself (``init(forName:)`` returns a forwarding one): for the SQLite store,
    /// which chooses the direction of a transformation by the transformer's class.
    package static func registeredTransformer(forName name: NSValueTransformerName) -> ValueTransformer? {
        Registry.lock.withLock {
            Registry.installBuiltIns()
            if let transformer = Registry.transformers[name.rawValue] { return transformer }
            // As Foundation does for a class name: an instance, registered under it. Foundation's own
            // classes only: an application's cannot be made from its name without a required `init()`.
            guard let made = Registry.foundationClasses[name.rawValue]?() else { return nil }
            Registry.transformers[name.rawValue] = made
            return made
        }
    }

    /// The class of the values ``transformedValue(_:)`` returns. `NSObject` unless a subclass says more.
    open class func transformedValueClass() -> AnyClass { NSObject.self }

    /// Whether ``reverseTransformedValue(_:)`` may be called. True unless a subclass says otherwise.
    open class func allowsReverseTransformation() -> Bool { true }

    /// `value` transformed. The base class returns `value` unchanged.
    open func transformedValue(_ value: Any?) -> Any? {
        if let registered { return registered.transformedValue(value) }
        return value
    }

    /// `value` transformed back. The base class applies ``transformedValue(_:)`` again, and stops, as
    /// Foundation raises, when the class does not allow reverse transformations.
    open func reverseTransformedValue(_ value: Any?) -> Any? {
        if let registered { return registered.reverseTransformedValue(value) }
        guard type(of: self).allowsReverseTransformation() else {
            preconditionFailure("\(type(of: self)): reverse transformation is not allowed (allowsReverseTransformation() is false)")
        }
        return transformedValue(value)
    }

    /// Whether the transformer is one of those that turn data into objects (archives into what they hold),
    /// whose reverse transformation therefore makes the data a store keeps.
    package var unarchivesData: Bool {
        let transformer = registered ?? self
        return transformer is NSSecureUnarchiveFromDataTransformer || transformer is KeyedUnarchiveFromDataTransformer
    }

    private enum Registry {
        static let lock = NSLock()
        nonisolated(unsafe) static var transformers: [String: ValueTransformer] = [:]
        nonisolated(unsafe) static var builtInsInstalled = false
        /// Foundation's transformer classes a model may name by class name (Xcode writes
        /// `NSSecureUnarchiveFromDataTransformer` for the secure transformer).
        static let foundationClasses: [String: @Sendable () -> ValueTransformer] = [
            "NSSecureUnarchiveFromDataTransformer": { NSSecureUnarchiveFromDataTransformer() },
            "NSKeyedUnarchiveFromDataTransformer": { KeyedUnarchiveFromDataTransformer() },
        ]

        /// Called with `lock` held.
        static func installBuiltIns() {
            guard !builtInsInstalled else { return }
            builtInsInstalled = true
            transformers[NSValueTransformerName.negateBooleanTransformerName.rawValue] = NegateBooleanTransformer()
            transformers[NSValueTransformerName.isNilTransformerName.rawValue] = IsNilTransformer(negated: false)
            transformers[NSValueTransformerName.isNotNilTransformerName.rawValue] = IsNilTransformer(negated: true)
            transformers[NSValueTransformerName.keyedUnarchiveFromDataTransformerName.rawValue] = KeyedUnarchiveFromDataTransformer()
            transformers[NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue] = NSSecureUnarchiveFromDataTransformer()
        }
    }
}

/// Foundation's transformer that unarchives data with secure coding (`NSKeyedUnarchiver`), accepting only
/// archives whose top-level object is of one of ``allowedTopLevelClasses``; the reverse archives an object
/// of one of those classes. Registered as ``NSValueTransformerName/secureUnarchiveFromDataTransformerName``;
/// subclass it and override ``allowedTopLevelClasses`` for classes of your own.
///
/// On Linux the check is this class's own, made on the top-level object: Linux Foundation's archiver and
/// unarchiver stop the process (rather than fail) on a class that secure coding does not allow, so they
/// run without their secure-coding flag, and a value or archive of another class gives nil.
open class NSSecureUnarchiveFromDataTransformer: ValueTransformer {
    /// The classes an archive's top-level object may have: `NSArray`, `NSDictionary`, `NSSet`,
    /// `NSString`, `NSNumber`, `NSDate`, `NSData`, `NSURL`, `NSUUID` and `NSNull`, as on Apple platforms.
    open class var allowedTopLevelClasses: [AnyClass] {
        [NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self, NSData.self,
         NSURL.self, NSUUID.self, NSNull.self]
    }

    /// True: archiving is the reverse transformation.
    open override class func allowsReverseTransformation() -> Bool { true }
    /// `NSObject`: the class of the objects unarchived is one of ``allowedTopLevelClasses``.
    open override class func transformedValueClass() -> AnyClass { NSObject.self }

    /// The object `value` (a keyed archive) holds; nil when it is not data, not an archive, or holds an
    /// object of a class that is not allowed.
    open override func transformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data, let object = KeyedArchives.rootObject(of: data) else { return nil }
        return isAllowed(object) ? object : nil
    }

    /// `value` archived; nil when it is not of an allowed class or cannot be archived.
    open override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let value, isAllowed(value) else { return nil }
        return KeyedArchives.archive(value)
    }

    private func isAllowed(_ value: Any) -> Bool {
        // Swift values bridge: an array is an NSArray, a string an NSString.
        let object = value as AnyObject
        guard let instance = object as? NSObject else { return false }
        return type(of: self).allowedTopLevelClasses.contains { instance.isKind(of: $0) }
    }
}

/// `NSKeyedUnarchiveFromData`: keyed archives without secure coding.
final class KeyedUnarchiveFromDataTransformer: ValueTransformer {
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        return KeyedArchives.rootObject(of: data)
    }
    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let value else { return nil }
        return KeyedArchives.archive(value)
    }
}

/// `NSNegateBoolean`: the negation of a Boolean, as an `NSNumber`; its own reverse.
final class NegateBooleanTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSNumber.self }
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? {
        let flag = (value as? Bool) ?? (value as? NSNumber)?.boolValue ?? false
        return NSNumber(value: !flag)
    }
}

/// `NSIsNil` and `NSIsNotNil`: whether a value is (not) nil, as an `NSNumber` Boolean; not reversible.
final class IsNilTransformer: ValueTransformer {
    private let negated: Bool
    init(negated: Bool) {
        self.negated = negated
        super.init()
    }
    override class func transformedValueClass() -> AnyClass { NSNumber.self }
    override class func allowsReverseTransformation() -> Bool { false }
    override func transformedValue(_ value: Any?) -> Any? {
        let isNil = value == nil || value is NSNull
        return NSNumber(value: negated ? !isNil : isNil)
    }
}

/// Keyed archives made and read without stopping the process: Linux Foundation's
/// `NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(_:)` stops on data that is not an archive (its
/// decoding failure policy raises, which on Linux is a fatal error), and `NSKeyedArchiver` stops on a value
/// that does not adopt `NSCoding` (a Swift struct), where both could fail instead.
package enum KeyedArchives {
    /// The root object of the keyed archive `data`; nil when `data` is not one or its root cannot be
    /// decoded, whole. Without secure coding's class checks, which Linux Foundation also answers by stopping.
    package static func rootObject(of data: Data) -> Any? {
        guard (try? PropertyLists.check(data)) != nil else { return nil }
        // Class names are plain strings in the archive: only one that names the class is walked.
        if data.range(of: Data("NSDecimalNumber".utf8)) != nil || data.range(of: Data("NSDate".utf8)) != nil,
           let archive = try? KeyedArchive(data: data), hashesADecimal(archive) || holdsADateThatIsNoNumber(archive) { return nil }
        guard let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: data) else { return nil }
        unarchiver.requiresSecureCoding = false
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        defer { unarchiver.finishDecoding() }
        let root = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
        // A part that failed to decode is left out, or leaves a collection that crashes when used.
        return unarchiver.error == nil ? root : nil
    }

    /// Whether the archive holds a decimal number in a set or as a dictionary's key (as Core Data on
    /// Apple platforms writes a transformable set of decimals): decoding that collection hashes the
    /// NSDecimalNumber, which Linux Foundation never finishes. Members are under `NS.objects` (Apple's
    /// archives) or `NS.object.0`, `NS.object0`… (Linux Foundation's ordered and counted sets), keys under
    /// `NS.keys` or `NS.key.0`….
    private static func hashesADecimal(_ archive: KeyedArchive) -> Bool {
        let decimals = Set(archive.objects.indices.filter { index in
            (archive.objects[index] as? KeyedArchive.Object).map { archive.className($0) == "NSDecimalNumber" } ?? false
        })
        guard !decimals.isEmpty else { return false }
        func isDecimal(_ reference: Any) -> Bool { KeyedArchive.uid(reference).map(decimals.contains) ?? false }
        for case let object as KeyedArchive.Object in archive.objects {
            let prefix: String
            switch archive.className(object) {
            case "NSSet", "NSMutableSet", "NSCountedSet", "NSOrderedSet", "NSMutableOrderedSet": prefix = "NS.object"
            case "NSDictionary", "NSMutableDictionary": prefix = "NS.key"
            default: continue
            }
            for (key, value) in object where key.hasPrefix(prefix) {
                if let references = value as? [Any], references.contains(where: isDecimal) { return true }
                if isDecimal(value) { return true }
            }
        }
        return false
    }

    /// Whether the archive holds a date whose seconds are no number (NaN, an infinity): Linux Foundation
    /// stops describing one. Found among the archive's objects, wherever the date is held.
    private static func holdsADateThatIsNoNumber(_ archive: KeyedArchive) -> Bool {
        for case let object as KeyedArchive.Object in archive.objects where archive.className(object) == "NSDate" {
            if let seconds = object["NS.time"] as? Double, !seconds.isFinite { return true }
        }
        return false
    }

    /// A keyed archive of `value` (without secure coding); nil when it holds something Linux Foundation's
    /// archiver would stop on: a value that does not adopt `NSCoding`, looked for through arrays,
    /// dictionaries, sets and ordered sets (an object that adopts it but encodes such a value in its
    /// `encode(with:)` is not seen), a decimal number (whose `hash` never returns there), or nesting
    /// beyond a thousand levels. A Foundation collection that contains itself cannot be looked into:
    /// Linux Foundation bridges its elements without end.
    package static func archive(_ value: Any) -> Data? {
        guard isArchivable(value, depth: 0) else { return nil }
        return try? NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: false)
    }

    private static func isArchivable(_ value: Any, depth: Int) -> Bool {
        guard depth < 1_000 else { return false }
        if value is Decimal || value is NSDecimalNumber { return false }
        if let ordered = value as? NSOrderedSet { return ordered.array.allSatisfy { isArchivable($0, depth: depth + 1) } }
        if let array = value as? [Any] { return array.allSatisfy { isArchivable($0, depth: depth + 1) } }
        if let dictionary = value as? [AnyHashable: Any] {
            return dictionary.allSatisfy { isArchivable($0.key.base, depth: depth + 1) && isArchivable($0.value, depth: depth + 1) }
        }
        if let set = value as? Set<AnyHashable> { return set.allSatisfy { isArchivable($0.base, depth: depth + 1) } }
        // Swift strings, numbers, data, dates, URLs and UUIDs bridge to Foundation classes that adopt it.
        return (value as AnyObject) is NSCoding
    }
}
