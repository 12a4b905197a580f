import Foundation
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// An index the store keeps to speed up fetches: one or more properties, each ascending or descending.
public final class NSFetchIndexDescription: NSObject, NSCopying, @unchecked Sendable {
    /// The index's name.
    public var name: String { willSet { entity?.assertEditable() } }
    /// The indexed properties, in order.
    public var elements: [NSFetchIndexElementDescription] {
        willSet { entity?.assertEditable() }
        didSet { for element in elements { element.indexDescription = self } }
    }
    /// A predicate that limits the index to some rows (a partial index).
    public var partialIndexPredicate: NSPredicate? { willSet { entity?.assertEditable() } }
    /// The entity the index belongs to.
    public internal(set) var entity: NSEntityDescription? {
        get { entityReference?.load(as: NSEntityDescription.self) }
        set { entityReference = newValue?.backreference }
    }
    // Not `weak`: a weak reference would slow every retain of the entity (decision D24).
    private var entityReference: Backreference?

    /// An index named `name` over `elements`.
    public init(name: String, elements: [NSFetchIndexElementDescription]?) {
        self.name = name
        self.elements = elements ?? []
        super.init()
        for element in self.elements { element.indexDescription = self }
    }

    /// A copy belonging to no entity.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSFetchIndexDescription(name: name, elements: elements.map { $0.copy() as! NSFetchIndexElementDescription })
        copy.partialIndexPredicate = partialIndexPredicate
        return copy
    }
}

/// One property of a fetch index.
public final class NSFetchIndexElementDescription: NSObject, NSCopying, @unchecked Sendable {
    /// How the index stores the property.
    public enum CollationType: UInt, Sendable {
        case binary = 0
        case rTree = 1
    }

    /// The indexed property.
    public var property: NSPropertyDescription? { willSet { indexDescription?.entity?.assertEditable() } }
    /// The indexed property's name.
    public var propertyName: String? { property?.name ?? unresolvedPropertyName }
    /// Binary (a B-tree) or R-tree.
    public var collationType: CollationType = .binary { willSet { indexDescription?.entity?.assertEditable() } }
    /// Whether the index is ascending.
    public var isAscending = true { willSet { indexDescription?.entity?.assertEditable() } }
    /// The index the element belongs to.
    public internal(set) weak var indexDescription: NSFetchIndexDescription?

    var unresolvedPropertyName: String?

    /// An element for `property` with a collation type.
    public init(property: NSPropertyDescription, collationType: CollationType) {
        self.property = property
        self.collationType = collationType
        super.init()
    }

    init(propertyName: String, collationType: CollationType, ascending: Bool) {
        self.unresolvedPropertyName = propertyName
        self.collationType = collationType
        self.isAscending = ascending
        super.init()
    }

    /// A copy belonging to no index.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSFetchIndexElementDescription(propertyName: propertyName ?? "", collationType: collationType, ascending: isAscending)
        copy.property = property
        return copy
    }
}
