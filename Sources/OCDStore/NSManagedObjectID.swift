import Foundation
import Synchronization
import OCDModel
import OCDPredicate

/// The identity of a managed object: its entity, the store that holds it, and a key unique within that store
/// (a primary key once saved, a UUID while temporary). Object IDs are immutable and safe to pass between
/// contexts and threads; a context turns one back into an object with `object(with:)`.
public final class NSManagedObjectID: NSObject, NSCopying, @unchecked Sendable {
    /// How the object is identified inside its store.
    package enum Key: Hashable, Sendable {
        /// A row's primary key in the store (`Z_PK` in an SQLite store).
        case permanent(Int64)
        /// An object not yet saved.
        case temporary(UUID)
    }

    /// What the IDs of one entity in one store share (its temporary IDs share one with no store): kept
    /// once and pointed to, so that an ID is four words, not eight.
    package final class Scope: @unchecked Sendable {
        let entity: NSEntityDescription
        /// The store, without keeping it alive (decision D24).
        let storeReference: Backreference?
        // Kept apart from the store so that equality and hashing survive the store object going away.
        let storeIdentifier: String?
        /// `baseHash(storeIdentifier:entity:)`: every ID's hash starts from it.
        let baseHash: Int

        package init(entity: NSEntityDescription, store: NSPersistentStore?, identifier: String?, baseHash: Int? = nil) {
            self.entity = entity
            self.storeReference = store?.backreference
            self.storeIdentifier = identifier
            self.baseHash = baseHash ?? NSManagedObjectID.baseHash(storeIdentifier: identifier, entity: entity)
        }
    }

    package let scope: Scope
    package let key: Key

    /// The entity of the object this ID identifies.
    public var entity: NSEntityDescription { scope.entity }
    /// The store that holds the object; nil while the ID is temporary.
    public var persistentStore: NSPersistentStore? { store }
    /// The store, without keeping it alive (decision D24).
    package var store: NSPersistentStore? { scope.storeReference?.load(as: NSPersistentStore.self) }
    package var storeIdentifier: String? { scope.storeIdentifier }

    /// A permanent ID with a scope of its own whose hash starts from `baseHash` (for tests of hashing).
    package convenience init(entity: NSEntityDescription, store: NSPersistentStore, identifier: String?, baseHash: Int, primaryKey: Int64) {
        self.init(scope: Scope(entity: entity, store: store, identifier: identifier, baseHash: baseHash), primaryKey: primaryKey)
    }

    /// A permanent ID in the store and of the entity of `scope`.
    package init(scope: Scope, primaryKey: Int64) {
        self.scope = scope
        self.key = .permanent(primaryKey)
        // An odd multiplier spreads consecutive keys; dictionaries hash this value again with their seed.
        self.cachedHash = scope.baseHash ^ Int(bitPattern: UInt(bitPattern: Int(primaryKey)) &* 0x9E37_79B9_7F4A_7C15)
    }

    /// The hash every permanent ID of `entity` in the store of `storeIdentifier` starts from. By the
    /// entity's name, as equality compares names.
    package static func baseHash(storeIdentifier: String?, entity: NSEntityDescription) -> Int {
        var hasher = Hasher()
        hasher.combine(storeIdentifier)
        hasher.combine(entity.name)
        return hasher.finalize()
    }

    package init(temporaryFor entity: NSEntityDescription) {
        let scope = EntityLayout.of(entity).temporaryIDScope
        self.scope = scope
        let uuid = TemporaryKeys.next()
        self.key = .temporary(uuid)
        // Temporary keys differ in their last eight bytes (a big-endian counter over one random base): read
        // so that the counter's low bits are the number's, which the multiplication spreads upward.
        let low = UInt64(bigEndian: withUnsafeBytes(of: uuid.uuid) { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) })
        self.cachedHash = scope.baseHash ^ Int(bitPattern: UInt(low &* 0x9E37_79B9_7F4A_7C15))
    }

    /// True until the object is saved or given a permanent ID with `obtainPermanentIDs(for:)`.
    public var isTemporaryID: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The primary key of a permanent ID; nil for a temporary one.
    package var primaryKey: Int64? {
        if case .permanent(let pk) = key { return pk }
        return nil
    }

    /// A URI that archives this ID: `x-coredata://<store UUID>/<Entity>/p<primary key>` for a permanent ID,
    /// `x-coredata:///<Entity>/t<UUID>` for a temporary one. A coordinator resolves it with
    /// `managedObjectID(forURIRepresentation:)`.
    public func uriRepresentation() -> URL {
        let entityName = entity.name ?? ""
        switch key {
        case .permanent(let pk):
            return URL(string: "x-coredata://\(storeIdentifier ?? "")/\(entityName)/p\(pk)")!
        case .temporary(let uuid):
            return URL(string: "x-coredata:///\(entityName)/t\(uuid.uuidString)")!
        }
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSManagedObjectID else { return false }
        return self == other
    }

    public override var hash: Int { cachedHash }

    // Made once: IDs are immutable, and every registry and row-cache lookup hashes one.
    @usableFromInline package let cachedHash: Int

    public static func == (lhs: NSManagedObjectID, rhs: NSManagedObjectID) -> Bool {
        lhs === rhs || (lhs.key == rhs.key && (lhs.scope === rhs.scope || (lhs.storeIdentifier == rhs.storeIdentifier
                        && (lhs.entity === rhs.entity || lhs.entity.name == rhs.entity.name))))
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override var description: String {
        "\(uriRepresentation().absoluteString)"
    }
}

/// Unique keys for temporary IDs: one random UUID per process with a counter folded into its last
/// eight bytes. `UUID()` reads the system's random source on every call, which cost more than the rest of
/// creating an object.
enum TemporaryKeys {
    private static let base = UUID().uuid
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UUID {
        let n = counter.add(1, ordering: .relaxed).newValue
        var bytes = base
        withUnsafeMutableBytes(of: &bytes) { raw in
            let low = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: low ^ n.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: bytes)
    }
}

/// Something that stands for a stored object inside predicate evaluation (a managed object, or a store's
/// row proxy), so that `department == %@` matches whichever of them, or the object ID, the predicate holds.
public protocol StoreObjectReference: AnyObject, PredicateObjectIdentity {
    /// The ID of the object this value stands for.
    var referencedObjectID: NSManagedObjectID { get }
}

extension StoreObjectReference {
    public var predicateIdentity: AnyHashable { AnyHashable(referencedObjectID) }
}

extension NSManagedObjectID: PredicateObjectIdentity {
    public var predicateIdentity: AnyHashable { AnyHashable(self) }
}
