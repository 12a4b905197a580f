import Foundation

extension Notification.Name {
    /// Posted at `processPendingChanges()` with the objects inserted, updated, deleted, refreshed and
    /// invalidated since the last one.
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name("NSObjectsChangedInManagingContextNotification")
    /// Posted at the start of `save()`, before validation.
    public static let NSManagedObjectContextWillSave = Notification.Name("NSManagingContextWillSaveChangesNotification")
    /// Posted after a successful save, with the saved objects.
    public static let NSManagedObjectContextDidSave = Notification.Name("NSManagingContextDidSaveChangesNotification")
    /// Posted after a successful save, with the saved objects' IDs.
    public static let NSManagedObjectContextDidSaveObjectIDs = Notification.Name("NSManagedObjectContextDidSaveObjectIDsNotification")
    /// Posted after a context merged another's save, with the IDs of the objects it inserted, updated,
    /// deleted and refreshed.
    public static let NSManagedObjectContextDidMergeChangesObjectIDs = Notification.Name("NSManagedObjectContextDidMergeChangesObjectIDsNotification")
    /// Posted by a coordinator before it adds or removes a store (`NSAddedPersistentStoresKey`,
    /// `NSRemovedPersistentStoresKey`).
    public static let NSPersistentStoreCoordinatorStoresWillChange = Notification.Name("NSPersistentStoreCoordinatorStoresWillChangeNotification")
    /// Posted by a coordinator after it added or removed a store (`NSAddedPersistentStoresKey`,
    /// `NSRemovedPersistentStoresKey`).
    public static let NSPersistentStoreCoordinatorStoresDidChange = Notification.Name("NSPersistentStoreCoordinatorStoresDidChangeNotification")
    /// Posted by a coordinator before it removes a store; no userInfo.
    public static let NSPersistentStoreCoordinatorWillRemoveStore = Notification.Name("NSPersistentStoreCoordinatorWillRemoveStoreNotification")
}

/// userInfo key of the coordinator's store notifications: the stores added (`[NSPersistentStore]`).
public let NSAddedPersistentStoresKey = "added"
/// userInfo key of the coordinator's store notifications: the stores removed.
public let NSRemovedPersistentStoresKey = "removed"
/// userInfo key of the coordinator's store notifications: a store whose identifier changed (not posted:
/// no store here changes its identifier while added).
public let NSUUIDChangedPersistentStoresKey = "changedUUID"

/// userInfo key: the inserted objects (`Set<NSManagedObject>`).
public let NSInsertedObjectsKey = "inserted"
/// userInfo key: the updated objects.
public let NSUpdatedObjectsKey = "updated"
/// userInfo key: the deleted objects.
public let NSDeletedObjectsKey = "deleted"
/// userInfo key: the refreshed objects.
public let NSRefreshedObjectsKey = "refreshed"
/// userInfo key: the invalidated objects.
public let NSInvalidatedObjectsKey = "invalidated"
/// userInfo key: present when every object was invalidated (`reset()`).
public let NSInvalidatedAllObjectsKey = "invalidatedAll"
/// userInfo key: the inserted objects' IDs (`Set<NSManagedObjectID>`).
public let NSInsertedObjectIDsKey = "inserted_objectIDs"
/// userInfo key: the updated objects' IDs.
public let NSUpdatedObjectIDsKey = "updated_objectIDs"
/// userInfo key: the deleted objects' IDs.
public let NSDeletedObjectIDsKey = "deleted_objectIDs"
/// userInfo key: the refreshed objects' IDs.
public let NSRefreshedObjectIDsKey = "refreshed_objectIDs"
/// userInfo key: the invalidated objects' IDs.
public let NSInvalidatedObjectIDsKey = "invalidated_objectIDs"

/// The userInfo keys the context posts with, as `AnyHashable`s made once: converting a `String` key
/// costs a failing dynamic cast, and a notification's dictionary built from them about twice the time.
/// (`nonisolated(unsafe)`: AnyHashable is not Sendable, but these wrap immutable `String`s.)
enum PostedKey {
    nonisolated(unsafe) static let inserted = AnyHashable(NSInsertedObjectsKey)
    nonisolated(unsafe) static let updated = AnyHashable(NSUpdatedObjectsKey)
    nonisolated(unsafe) static let deleted = AnyHashable(NSDeletedObjectsKey)
    nonisolated(unsafe) static let refreshed = AnyHashable(NSRefreshedObjectsKey)
    nonisolated(unsafe) static let invalidatedAll = AnyHashable(NSInvalidatedAllObjectsKey)
    nonisolated(unsafe) static let insertedIDs = AnyHashable(NSInsertedObjectIDsKey)
    nonisolated(unsafe) static let updatedIDs = AnyHashable(NSUpdatedObjectIDsKey)
    nonisolated(unsafe) static let deletedIDs = AnyHashable(NSDeletedObjectIDsKey)
}

/// The userInfo of a notification posted with the same three keys every time, made once: a post copies
/// it and sets the values through the indices it keeps. Filling a new dictionary hashed each key (an
/// `AnyHashable` of a `String`), and compared it with a colliding one through a dynamic cast, about
/// 1,500 instructions a key, 7 % of a small save; a copy keeps its original's layout, so the indices
/// stay valid for it.
struct UserInfoTemplate: @unchecked Sendable {
    private let dictionary: [AnyHashable: Any]
    private let indices: (Dictionary<AnyHashable, Any>.Index, Dictionary<AnyHashable, Any>.Index, Dictionary<AnyHashable, Any>.Index)

    init(_ first: AnyHashable, _ second: AnyHashable, _ third: AnyHashable) {
        let dictionary: [AnyHashable: Any] = [first: NSNull(), second: NSNull(), third: NSNull()]
        self.dictionary = dictionary
        indices = (dictionary.index(forKey: first)!, dictionary.index(forKey: second)!, dictionary.index(forKey: third)!)
    }

    /// The userInfo with the three keys' values.
    func filled(_ first: Any, _ second: Any, _ third: Any) -> [AnyHashable: Any] {
        var userInfo = dictionary
        userInfo.values[indices.0] = first
        userInfo.values[indices.1] = second
        userInfo.values[indices.2] = third
        return userInfo
    }

    /// `NSManagedObjectContextDidSave`'s: the inserted, updated and deleted objects.
    static let savedObjects = UserInfoTemplate(PostedKey.inserted, PostedKey.updated, PostedKey.deleted)
    /// `NSManagedObjectContextDidSaveObjectIDs`'s: their IDs.
    static let savedObjectIDs = UserInfoTemplate(PostedKey.insertedIDs, PostedKey.updatedIDs, PostedKey.deletedIDs)
}

extension NSManagedObjectContext {
    /// The Swift names of the context's notifications: ObjectsDidChange, posted at the end of each event
    /// with the objects inserted, updated, deleted, refreshed and invalidated.
    public static let didChangeObjectsNotification = Notification.Name.NSManagedObjectContextObjectsDidChange
    /// WillSave, posted before a save runs `willSave()` on its objects.
    public static let willSaveObjectsNotification = Notification.Name.NSManagedObjectContextWillSave
    /// DidSave, posted after a save with the objects it inserted, updated and deleted.
    public static let didSaveObjectsNotification = Notification.Name.NSManagedObjectContextDidSave
    /// DidSaveObjectIDs, posted after a save with the IDs of those objects.
    public static let didSaveObjectIDsNotification = Notification.Name.NSManagedObjectContextDidSaveObjectIDs
    /// DidMergeChangesObjectIDs, posted after a merge with the IDs of the objects it changed.
    public static let didMergeChangesObjectIDsNotification = Notification.Name.NSManagedObjectContextDidMergeChangesObjectIDs

    /// The Swift names of the notifications' userInfo keys.
    public enum NotificationKey: String, Sendable {
        case insertedObjects = "inserted"
        case updatedObjects = "updated"
        case deletedObjects = "deleted"
        case refreshedObjects = "refreshed"
        case invalidatedObjects = "invalidated"
        case invalidatedAllObjects = "invalidatedAll"
        case insertedObjectIDs = "inserted_objectIDs"
        case updatedObjectIDs = "updated_objectIDs"
        case deletedObjectIDs = "deleted_objectIDs"
        case refreshedObjectIDs = "refreshed_objectIDs"
        case invalidatedObjectIDs = "invalidated_objectIDs"
    }
}
