import Foundation
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// The type of an attribute, with Apple's raw values (they are part of version hashes).
public enum NSAttributeType: UInt, Sendable, CaseIterable {
    case undefinedAttributeType = 0
    case integer16AttributeType = 100
    case integer32AttributeType = 200
    case integer64AttributeType = 300
    case decimalAttributeType = 400
    case doubleAttributeType = 500
    case floatAttributeType = 600
    case stringAttributeType = 700
    case booleanAttributeType = 800
    case dateAttributeType = 900
    case binaryDataAttributeType = 1000
    case UUIDAttributeType = 1100
    case URIAttributeType = 1200
    case transformableAttributeType = 1800
    case objectIDAttributeType = 2000
    case compositeAttributeType = 2100

    /// The name Xcode writes in a model file's `attributeType`, e.g. `"Integer 16"`.
    public var modelFileName: String {
        switch self {
        case .undefinedAttributeType: return "Undefined"
        case .integer16AttributeType: return "Integer 16"
        case .integer32AttributeType: return "Integer 32"
        case .integer64AttributeType: return "Integer 64"
        case .decimalAttributeType: return "Decimal"
        case .doubleAttributeType: return "Double"
        case .floatAttributeType: return "Float"
        case .stringAttributeType: return "String"
        case .booleanAttributeType: return "Boolean"
        case .dateAttributeType: return "Date"
        case .binaryDataAttributeType: return "Binary"
        case .UUIDAttributeType: return "UUID"
        case .URIAttributeType: return "URI"
        case .transformableAttributeType: return "Transformable"
        case .objectIDAttributeType: return "Object ID"
        case .compositeAttributeType: return "Composite"
        }
    }

    /// The type named as in a model file, or nil.
    public init?(modelFileName: String) {
        guard let type = NSAttributeType.allCases.first(where: { $0.modelFileName == modelFileName }) else { return nil }
        self = type
    }

    /// The Swift type a value of this type has: `Int16`, `String`, `Date`, `Decimal` …
    public var attributeValueClassName: String? {
        switch self {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
             .floatAttributeType, .booleanAttributeType:
            return "NSNumber"
        case .decimalAttributeType: return "NSDecimalNumber"
        case .stringAttributeType: return "NSString"
        case .dateAttributeType: return "NSDate"
        case .binaryDataAttributeType: return "NSData"
        case .UUIDAttributeType: return "NSUUID"
        case .URIAttributeType: return "NSURL"
        case .objectIDAttributeType: return "NSManagedObjectID"
        case .undefinedAttributeType, .transformableAttributeType, .compositeAttributeType: return nil
        }
    }
}

/// An attribute: a value of one of Core Data's types.
public class NSAttributeDescription: NSPropertyDescription, @unchecked Sendable {
    // Unchecked exclusivity here and on `defaultValue`: read for every value decoded, encoded or defaulted,
    // written only while the model is editable (one thread, nothing held `inout`).
    /// The attribute's type.
    @exclusivity(unchecked) public var attributeType: NSAttributeType = .undefinedAttributeType { willSet { assertEditable() } }
    /// The value used for a new object.
    @exclusivity(unchecked) public var defaultValue: Any? { willSet { assertEditable() } }
    /// The class of the values, by name: set for transformable attributes (`customClassName` in a model
    /// file), otherwise the class for the attribute type.
    public var attributeValueClassName: String? {
        get { customValueClassName ?? attributeType.attributeValueClassName }
        set {
            assertEditable()
            customValueClassName = newValue
        }
    }
    private var customValueClassName: String?
    /// The name of the value transformer of a transformable attribute.
    public var valueTransformerName: String? { willSet { assertEditable() } }
    /// Whether large binary values may be kept in files beside the store.
    public var allowsExternalBinaryDataStorage = false { willSet { assertEditable() } }
    /// Whether the value is kept in the persistent history when the object is deleted.
    public var preservesValueInHistoryOnDeletion = false { willSet { assertEditable() } }
    /// Whether CloudKit should encrypt the value (kept for model fidelity).
    public var allowsCloudEncryption = false { willSet { assertEditable() } }
    /// Whether generated code uses a scalar type (`Int16`) rather than an object (`NSNumber?`).
    public var usesScalarValueType = false { willSet { assertEditable() } }

    override func versionHashInput() -> [UInt8] {
        var bytes = Array(SHA2.sha256(propertyHashBytes()))
        bytes.appendLittleEndian(Int32(attributeType.rawValue))
        if allowsExternalBinaryDataStorage { bytes.append(1) }
        if preservesValueInHistoryOnDeletion { bytes.append(1) }
        return bytes
    }

    override func makeEmptyCopy() -> NSPropertyDescription { NSAttributeDescription() }

    override func copySettings(from other: NSPropertyDescription) {
        super.copySettings(from: other)
        guard let other = other as? NSAttributeDescription else { return }
        attributeType = other.attributeType
        defaultValue = other.defaultValue
        customValueClassName = other.customValueClassName
        valueTransformerName = other.valueTransformerName
        allowsExternalBinaryDataStorage = other.allowsExternalBinaryDataStorage
        preservesValueInHistoryOnDeletion = other.preservesValueInHistoryOnDeletion
        allowsCloudEncryption = other.allowsCloudEncryption
        usesScalarValueType = other.usesScalarValueType
    }
}

/// An attribute whose value a save computes from an expression (`pages.@count`, `now()`, `canonical:(name)`;
/// the forms are ``derivation(in:)``'s).
public final class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// How the value is computed.
    public var derivationExpression: NSExpression? { willSet { assertEditable() } }

    override var isReadOnly: Bool { true }

    // spec/sqlite-store-format.md §7: the hash of a derived attribute covers only its expression's format
    // (from Apple's code; not yet confirmed on a store).
    override func versionHashInput() -> [UInt8] {
        Array((derivationExpression?.description ?? "").utf8)
    }

    override func makeEmptyCopy() -> NSPropertyDescription { NSDerivedAttributeDescription() }

    override func copySettings(from other: NSPropertyDescription) {
        super.copySettings(from: other)
        derivationExpression = (other as? NSDerivedAttributeDescription)?.derivationExpression
    }
}

/// An attribute made of several attributes stored together (Xcode 15's composite attributes).
public final class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The attributes the composite is made of.
    public var elements: [NSAttributeDescription] = [] {
        willSet { assertEditable() }
        didSet { entityDidChange() }
    }

    override func entityDidChange() {
        for element in elements { element.entity = entity }
    }

    public override init() {
        super.init()
        attributeType = .compositeAttributeType
    }

    // spec/sqlite-store-format.md §7: the attribute hash, then the element hashes sorted by name
    // (from Apple's code; not yet confirmed on a store).
    override func versionHashInput() -> [UInt8] {
        var bytes = super.versionHashInput()
        for element in elements.sorted(by: { $0.name < $1.name }) { bytes += Array(element.versionHash) }
        return bytes
    }

    override func makeEmptyCopy() -> NSPropertyDescription { NSCompositeAttributeDescription() }

    override func copySettings(from other: NSPropertyDescription) {
        super.copySettings(from: other)
        elements = (other as? NSCompositeAttributeDescription)?.elements.map { $0.copy() as! NSAttributeDescription } ?? []
    }

    /// The stored attributes at the ends of the composite's tree, with their paths below it (`["lat"]`,
    /// `["where", "lat"]` through a nested composite): a store keeps one column each (Core Data's
    /// `ZLAT`). Transient elements are not stored.
    package var leafElements: [(path: [String], attribute: NSAttributeDescription)] {
        elements.flatMap { element -> [(path: [String], attribute: NSAttributeDescription)] in
            if element.isTransient { return [] }
            if let nested = element as? NSCompositeAttributeDescription {
                return nested.leafElements.map { ([element.name] + $0.path, $0.attribute) }
            }
            return Self.canBeElement(element) ? [([element.name], element)] : []
        }
    }

    /// Whether Core Data allows `element` in a composite: any attribute but an undefined, object-ID or
    /// derived one, or binary data stored outside the file (NSAttributeType.compositeAttributeType).
    package static func canBeElement(_ element: NSAttributeDescription) -> Bool {
        switch element.attributeType {
        case .undefinedAttributeType, .objectIDAttributeType: return false
        case .binaryDataAttributeType: return !element.allowsExternalBinaryDataStorage
        default: return !(element is NSDerivedAttributeDescription)
        }
    }

    /// The value a new object starts with: the composite's own default (a dictionary) with each
    /// element's default filled in at its path, as Core Data merges them; nil when neither has one.
    package var mergedDefaultValue: [String: Any]? {
        var result = defaultValue as? [String: Any] ?? [:]
        var any = defaultValue != nil
        for element in elements {
            if let nested = element as? NSCompositeAttributeDescription {
                if let value = nested.mergedDefaultValue {
                    var inner = result[element.name] as? [String: Any] ?? [:]
                    inner.merge(value) { mine, _ in mine }
                    result[element.name] = inner
                    any = true
                }
            } else if result[element.name] == nil, let value = element.defaultValue {
                result[element.name] = value
                any = true
            }
        }
        return any ? result : nil
    }
}
