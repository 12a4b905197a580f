import Foundation

/// What deleting an object does to the objects a relationship points to. Apple's raw values.
public enum NSDeleteRule: UInt, Sendable {
    /// Nothing: the destination objects keep pointing at the deleted object.
    case noActionDeleteRule = 0
    /// The destination objects' inverse relationship is cleared.
    case nullifyDeleteRule = 1
    /// The destination objects are deleted too.
    case cascadeDeleteRule = 2
    /// The delete fails at save while the relationship is not empty.
    case denyDeleteRule = 3

    /// The rule named as in a model file's `deletionRule` ("Nullify", "Cascade", "Deny", "No Action").
    public init?(modelFileName: String) {
        switch modelFileName {
        case "No Action": self = .noActionDeleteRule
        case "Nullify": self = .nullifyDeleteRule
        case "Cascade": self = .cascadeDeleteRule
        case "Deny": self = .denyDeleteRule
        default: return nil
        }
    }

    /// The name Xcode writes for the rule.
    public var modelFileName: String {
        switch self {
        case .noActionDeleteRule: return "No Action"
        case .nullifyDeleteRule: return "Nullify"
        case .cascadeDeleteRule: return "Cascade"
        case .denyDeleteRule: return "Deny"
        }
    }
}

/// A relationship from one entity to another: to-one, to-many, or ordered to-many.
public final class NSRelationshipDescription: NSPropertyDescription, @unchecked Sendable {
    /// The entity the relationship points to.
    public var destinationEntity: NSEntityDescription? {
        get { destinationReference?.load(as: NSEntityDescription.self) }
        set {
            assertEditable()
            destinationReference = newValue?.backreference
            destinationEntityName = newValue?.name
        }
    }
    /// The relationship back from the destination, kept consistent by the context.
    public var inverseRelationship: NSRelationshipDescription? {
        get { inverseReference?.load(as: NSRelationshipDescription.self) }
        set {
            assertEditable()
            inverseReference = newValue?.backreference
            inverseRelationshipName = newValue?.name
        }
    }
    // Back-references rather than `weak` (decision D24).
    private var destinationReference: Backreference?
    private var inverseReference: Backreference?
    /// The most objects the relationship may hold: 1 for to-one, 0 (the default, as on Apple platforms) for
    /// unbounded.
    public var maxCount = 0 { willSet { assertEditable() } }
    /// The fewest objects the relationship must hold at save.
    public var minCount = 0 { willSet { assertEditable() } }
    /// What deleting the source object does to the destination objects.
    public var deleteRule: NSDeleteRule = .nullifyDeleteRule { willSet { assertEditable() } }
    /// Whether a to-many relationship keeps its objects in order (an `NSOrderedSet`).
    public var isOrdered = false { willSet { assertEditable() } }

    /// Whether the relationship may hold more than one object.
    public var isToMany: Bool { maxCount != 1 }

    /// The destination's name, kept for relationships whose destination is resolved later or is absent.
    package var destinationEntityName: String?
    /// The inverse's name, resolved once all entities are known.
    package var inverseRelationshipName: String?

    override func versionHashInput() -> [UInt8] {
        var bytes = Array(SHA2.sha256(propertyHashBytes()))
        bytes += Array((destinationEntity?.name ?? destinationEntityName ?? "").utf8)
        let inverse = inverseRelationship?.name ?? inverseRelationshipName
        if let inverse, !isOwnInverse {
            bytes += Array(inverse.utf8)
        }
        // Readers refuse counts beyond Int32; a count set in code is truncated as Core Data's int field would.
        bytes.appendLittleEndian(Int32(truncatingIfNeeded: maxCount))
        bytes.appendLittleEndian(Int32(truncatingIfNeeded: minCount))
        if isOrdered { bytes.appendLittleEndian(UInt16(1)) }
        return bytes
    }

    /// A relationship that is its own inverse (`spouse` ↔ `spouse` on one entity) leaves the inverse out of
    /// its hash (spec/sqlite-store-format.md §7).
    private var isOwnInverse: Bool {
        if let inverse = inverseRelationship { return inverse === self }
        return inverseRelationshipName == name && (destinationEntity?.name ?? destinationEntityName) == entity?.name
    }

    override func makeEmptyCopy() -> NSPropertyDescription { NSRelationshipDescription() }

    override func copySettings(from other: NSPropertyDescription) {
        super.copySettings(from: other)
        guard let other = other as? NSRelationshipDescription else { return }
        destinationEntity = other.destinationEntity
        destinationEntityName = other.destinationEntity?.name ?? other.destinationEntityName
        inverseRelationship = other.inverseRelationship
        inverseRelationshipName = other.inverseRelationship?.name ?? other.inverseRelationshipName
        maxCount = other.maxCount
        minCount = other.minCount
        deleteRule = other.deleteRule
        isOrdered = other.isOrdered
    }
}
