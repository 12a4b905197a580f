import Foundation
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// A property of an entity: an attribute, a relationship, a fetched property, or an expression.
///
/// Apple's `NSPropertyDescription`. A property belongs to at most one entity. Like the whole model, it is
/// editable until a persistent store coordinator uses the model; changing it after that stops with Apple's
/// message ("Can't modify an immutable model.").
public class NSPropertyDescription: NSObject, NSCopying, @unchecked Sendable {
    /// The property's name: the key of `value(forKey:)`.
    public var name: String { willSet { assertEditable() } }
    /// The entity the property belongs to; set when the property is added to an entity.
    public internal(set) var entity: NSEntityDescription! {
        get { entityReference?.load(as: NSEntityDescription.self) }
        set {
            entityReference = newValue?.backreference
            entityDidChange()
        }
    }
    private var entityReference: Backreference?

    /// Composites pass their entity on to their elements, so edits to those are checked too.
    func entityDidChange() {}
    /// Whether the property may be nil when an object is saved. True by default, as on Apple platforms.
    public var isOptional = true { willSet { assertEditable() } }
    /// Whether the property is kept only in memory and never saved to a store.
    /// Unchecked exclusivity: read per value in saves, written only while the model is editable.
    @exclusivity(unchecked) public var isTransient = false { willSet { assertEditable() } }
    /// Whether the property is indexed in the store (deprecated on Apple platforms in favour of fetch indexes).
    public var isIndexed = false { willSet { assertEditable() } }
    /// Whether Spotlight indexes the property (kept for model fidelity; no effect on Linux).
    public var isIndexedBySpotlight = false { willSet { assertEditable() } }
    /// Arbitrary information for the application.
    public var userInfo: [AnyHashable: Any]? { willSet { assertEditable() } }
    /// A string mixed into the version hash, to mark a change the hash would not otherwise see.
    public var versionHashModifier: String? { willSet { assertEditable() } }
    /// The property's name in the previous model version, for lightweight migration. Unset, it is the
    /// property's name, as Apple's documentation says.
    public var renamingIdentifier: String? {
        get { explicitRenamingIdentifier ?? name }
        set { assertEditable(); explicitRenamingIdentifier = newValue }
    }
    /// The identifier the model gives (nil when it gives none): what a model file writes.
    package var explicitRenamingIdentifier: String?
    /// The predicates a value must satisfy to be valid, each with its warning (`NSString` or the key of a
    /// localized message), in the same order.
    public private(set) var validationPredicates: [NSPredicate] = []
    /// The warnings that go with `validationPredicates`.
    public private(set) var validationWarnings: [Any] = []

    /// A property with no name yet.
    public override init() {
        self.name = ""
        super.init()
        backreference.attach(self)
    }

    deinit {
        backreference.clear()
    }

    /// How an inverse relationship refers back to this one (decision D24).
    package let backreference = Backreference()

    /// Sets the validation predicates and their warnings (arrays of the same length).
    public func setValidationPredicates(_ predicates: [NSPredicate]?, withValidationWarnings warnings: [String]?) {
        assertEditable()
        let predicates = predicates ?? []
        let warnings = warnings ?? []
        if predicates.count != warnings.count {
            fatalError("NSPropertyDescription: \(predicates.count) validation predicates but \(warnings.count) warnings: they must pair up")
        }
        setValidation(predicates, warnings: warnings)
    }

    /// Sets validation predicates with warnings of any kind: `momc` stores Core Data error codes as warnings.
    package func setValidation(_ predicates: [NSPredicate], warnings: [Any]) {
        assertEditable()
        validationPredicates = predicates
        validationWarnings = warnings
    }

    /// Whether the property cannot be set (derived attributes); part of the version hash.
    var isReadOnly: Bool { false }

    /// The property's version hash: SHA-256 of what identifies it in a store (spec/sqlite-store-format.md §7).
    public var versionHash: Data { SHA2.sha256(versionHashInput()) }

    /// The bytes every kind of property starts its hash with: name, flags, modifier.
    func propertyHashBytes() -> [UInt8] {
        var bytes = Array(name.utf8)
        let flags = UInt16((isOptional ? 1 : 0) | (isTransient ? 2 : 0) | (isReadOnly ? 4 : 0))
        bytes.appendLittleEndian(flags)
        if let versionHashModifier { bytes += Array(versionHashModifier.utf8) }
        return bytes
    }

    /// What `versionHash` hashes; subclasses add their own parts.
    func versionHashInput() -> [UInt8] { propertyHashBytes() }

    func assertEditable() {
        entity?.assertEditable()
    }

    /// A copy with the same settings, belonging to no entity.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = makeEmptyCopy()
        copy.copySettings(from: self)
        return copy
    }

    func makeEmptyCopy() -> NSPropertyDescription { NSPropertyDescription() }

    func copySettings(from other: NSPropertyDescription) {
        name = other.name
        isOptional = other.isOptional
        isTransient = other.isTransient
        isIndexed = other.isIndexed
        isIndexedBySpotlight = other.isIndexedBySpotlight
        userInfo = other.userInfo
        versionHashModifier = other.versionHashModifier
        explicitRenamingIdentifier = other.explicitRenamingIdentifier
        validationPredicates = other.validationPredicates
        validationWarnings = other.validationWarnings
    }

    public override var description: String {
        "(\(type(of: self))), name \(name), isOptional \(isOptional), isTransient \(isTransient), entity \(entity?.name ?? "nil")"
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
