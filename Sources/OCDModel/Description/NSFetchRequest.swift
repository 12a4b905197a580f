import Foundation
import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// What a fetch request returns its results as. Apple's raw values.
public struct NSFetchRequestResultType: OptionSet, Sendable {
    public let rawValue: UInt
    /// Apple's raw values.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Managed objects (the default).
    public static let managedObjectResultType = NSFetchRequestResultType([])
    /// Object IDs.
    public static let managedObjectIDResultType = NSFetchRequestResultType(rawValue: 1)
    /// Dictionaries of property values.
    public static let dictionaryResultType = NSFetchRequestResultType(rawValue: 2)
    /// The number of matching objects.
    public static let countResultType = NSFetchRequestResultType(rawValue: 4)
}

/// The types a fetch can return: managed objects, object IDs, dictionaries and numbers.
public protocol NSFetchRequestResult: AnyObject {}

extension NSNumber: NSFetchRequestResult {}
extension NSDictionary: NSFetchRequestResult {}

/// A request a persistent store answers. Apple's `NSPersistentStoreRequest`.
public class NSPersistentStoreRequest: NSObject, @unchecked Sendable {
    /// The kinds of store request.
    public enum RequestType: UInt, Sendable {
        case fetchRequestType = 1
        case saveRequestType = 2
        case batchInsertRequestType = 5
        case batchUpdateRequestType = 6
        case batchDeleteRequestType = 7
    }

    /// The kind of this request.
    public var requestType: RequestType { .fetchRequestType }

    /// The stores the request goes to (nil: every store). The store layer sits above this one, so they
    /// are kept untyped here and read as `affectedStores` (`[NSPersistentStore]?`) there.
    package var affectedStoreObjects: [AnyObject]?
}

/// A description of what to fetch: an entity, a predicate, an order, limits, and the form of the results.
///
/// Apple's `NSFetchRequest`. This layer holds the description (fetch request templates and fetched
/// properties in models use it); a managed object context executes it.
///
/// Unlike Apple's, `ResultType` is not constrained to `NSFetchRequestResult`: on Apple platforms that
/// protocol is `@objc`, so `NSFetchRequest<NSFetchRequestResult>` satisfies its own constraint; a Swift
/// protocol existential does not, and Core Data code writes that type everywhere.
public final class NSFetchRequest<ResultType>: NSPersistentStoreRequest, NSCopying, @unchecked Sendable {
    /// The entity to fetch.
    public var entity: NSEntityDescription? {
        willSet { assertEditable() }
        didSet { if let name = entity?.name { storedEntityName = name } }
    }
    /// The model that stores this request as a template: once it is in use, the request cannot change.
    weak var owningModel: NSManagedObjectModel?

    private func assertEditable() {
        owningModel?.assertEditable()
    }
    /// Whether a fetch may set `entity` from `entityName`: a request no model keeps as a template.
    package var isResolvableByName: Bool { owningModel == nil }
    private var storedEntityName: String?
    /// The entity's name; set when the request is made by name and its model is not known yet.
    public var entityName: String? { entity?.name ?? storedEntityName }
    /// Which objects to fetch; nil for all.
    public var predicate: NSPredicate? { willSet { assertEditable() } }
    /// The order of the results.
    public var sortDescriptors: [NSSortDescriptor]? { willSet { assertEditable() } }
    /// The most results to return; 0 for no limit.
    public var fetchLimit = 0 { willSet { assertEditable() } }
    /// How many results to skip.
    public var fetchOffset = 0 { willSet { assertEditable() } }
    /// How many objects to fetch at a time; 0 for all at once.
    public var fetchBatchSize = 0 { willSet { assertEditable() } }
    /// Whether objects of subentities match too.
    public var includesSubentities = true { willSet { assertEditable() } }
    /// Whether unsaved changes in the context are included.
    public var includesPendingChanges = true { willSet { assertEditable() } }
    /// Whether objects come back as faults.
    public var returnsObjectsAsFaults = true { willSet { assertEditable() } }
    /// Whether property values are fetched with the objects.
    public var includesPropertyValues = true { willSet { assertEditable() } }
    /// The form of the results.
    public var resultType: NSFetchRequestResultType = .managedObjectResultType { willSet { assertEditable() } }
    /// The properties (or `NSExpressionDescription`s, or names) to fetch, for dictionary results.
    public var propertiesToFetch: [Any]? { willSet { assertEditable() } }
    /// The properties to group by, for dictionary results.
    public var propertiesToGroupBy: [Any]? { willSet { assertEditable() } }
    /// A predicate on the groups, with `propertiesToGroupBy`.
    public var havingPredicate: NSPredicate? { willSet { assertEditable() } }
    /// Whether equal dictionary results are returned once.
    public var returnsDistinctResults = false { willSet { assertEditable() } }
    /// Relationship key paths whose destinations are fetched with the objects.
    public var relationshipKeyPathsForPrefetching: [String]? { willSet { assertEditable() } }
    /// Whether the fetch updates the objects the context has already realized with the values the store
    /// holds now, as `refresh(_:mergeChanges: true)` would (their unsaved changes are applied again on
    /// top). By default a fetched object keeps the values it has. Such a fetch reads its rows at once,
    /// even with a `fetchBatchSize`.
    public var shouldRefreshRefetchedObjects = false { willSet { assertEditable() } }

    /// A request with no entity yet.
    public override init() {
        super.init()
    }

    /// A request for the entity named `entityName`.
    public convenience init(entityName: String) {
        self.init()
        self.storedEntityName = entityName
    }

    /// A copy of the request's settings.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSFetchRequest<ResultType>()
        copy.storedEntityName = storedEntityName
        copy.entity = entity
        copy.predicate = predicate
        copy.sortDescriptors = sortDescriptors
        copy.fetchLimit = fetchLimit
        copy.fetchOffset = fetchOffset
        copy.fetchBatchSize = fetchBatchSize
        copy.includesSubentities = includesSubentities
        copy.includesPendingChanges = includesPendingChanges
        copy.returnsObjectsAsFaults = returnsObjectsAsFaults
        copy.includesPropertyValues = includesPropertyValues
        copy.resultType = resultType
        copy.propertiesToFetch = propertiesToFetch
        copy.propertiesToGroupBy = propertiesToGroupBy
        copy.havingPredicate = havingPredicate
        copy.returnsDistinctResults = returnsDistinctResults
        copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        copy.shouldRefreshRefetchedObjects = shouldRefreshRefetchedObjects
        copy.affectedStoreObjects = affectedStoreObjects
        return copy
    }

    public override var description: String {
        "<NSFetchRequest> (entity: \(entityName ?? "nil"); predicate: (\(predicate?.predicateFormat ?? "nil")); sortDescriptors: (\(sortDescriptors.map { "\($0)" } ?? "nil")); type: \(resultType.rawValue))"
    }
}

/// A property whose value is the result of a fetch, evaluated lazily: `$FETCH_SOURCE` is the object and
/// `$FETCHED_PROPERTY` this description. Never stored; never part of the version hash.
public final class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    /// The fetch that gives the property's value.
    public var fetchRequest: NSFetchRequest<NSFetchRequestResult>? { willSet { assertEditable() } }

    override func makeEmptyCopy() -> NSPropertyDescription { NSFetchedPropertyDescription() }

    override func copySettings(from other: NSPropertyDescription) {
        super.copySettings(from: other)
        fetchRequest = ((other as? NSFetchedPropertyDescription)?.fetchRequest?.copy()) as? NSFetchRequest<NSFetchRequestResult>
    }
}

/// A computed column of a dictionary fetch: an expression (`sum:(salary)`) and its result type.
public final class NSExpressionDescription: NSPropertyDescription, @unchecked Sendable {
    /// The expression to compute.
    public var expression: NSExpression? { willSet { assertEditable() } }
    /// The type of its result.
    public var expressionResultType: NSAttributeType = .undefinedAttributeType { willSet { assertEditable() } }

    override func makeEmptyCopy() -> NSPropertyDescription { NSExpressionDescription() }

    override func copySettings(from other: NSPropertyDescription) {
        super.copySettings(from: other)
        guard let other = other as? NSExpressionDescription else { return }
        expression = other.expression
        expressionResultType = other.expressionResultType
    }
}
