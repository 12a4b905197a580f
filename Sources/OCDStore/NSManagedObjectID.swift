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
    /// once and pointed to, so that an ID is three words (with the object header, a 48-byte allocation).
    package final class Scope: @unchecked Sendable {
        package let entity: NSEntityDescription
        /// The store, without keeping it alive (decision D24).
        let storeReference: Backreference?
        // Kept apart from the store so that equality and hashing survive the store object going away.
        let storeIdentifier: String?
        /// `baseHash(storeIdentifier:entity:)`: every ID's hash starts from it.
        package let baseHash: Int
        /// The scope of an entity's temporary IDs: its IDs' keys are `TemporaryKeys` numbers.
        package let isTemporary: Bool

        package init(entity: NSEntityDescription, store: NSPersistentStore?, identifier: String?, baseHash: Int? = nil, temporary: Bool = false) {
            self.entity = entity
            self.storeReference = store?.backreference
            self.storeIdentifier = identifier
            self.baseHash = baseHash ?? NSManagedObjectID.baseHash(storeIdentifier: identifier, entity: entity)
            self.isTemporary = temporary
        }

        /// Whether the IDs of this scope equal those of `other` with the same key: the same kind, store
        /// identifier and entity name (`==`'s rule; a scope is one object per entity and store in the
        /// usual case, but IDs made from URIs or by other coordinators bring their own).
        package func isEquivalent(to other: Scope) -> Bool {
            self === other || (isTemporary == other.isTemporary && storeIdentifier == other.storeIdentifier
                               && (entity === other.entity || entity.name == other.entity.name))
        }
    }

    package let scope: Scope
    /// The primary key, or a temporary ID's number (see `TemporaryKeys`), as the scope says: one word,
    /// where a `Key` takes 17 bytes and made every ID 16 bytes bigger (an allocation of 64 bytes, not 48).
    package let rawKey: Int64

    /// The key as a ``Key``.
    package var key: Key {
        scope.isTemporary ? .temporary(TemporaryKeys.uuid(of: UInt64(bitPattern: rawKey))) : .permanent(rawKey)
    }

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
        precondition(!scope.isTemporary, "a primary key in the scope of temporary IDs")
        self.scope = scope
        self.rawKey = primaryKey
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
        precondition(scope.isTemporary, "an entity layout's temporary-ID scope is made temporary")
        self.scope = scope
        let number = TemporaryKeys.next()
        self.rawKey = Int64(bitPattern: number)
        // Consecutive numbers: the multiplication spreads their low bits upward.
        self.cachedHash = scope.baseHash ^ Int(bitPattern: UInt(number &* 0x9E37_79B9_7F4A_7C15))
    }

    /// True until the object is saved or given a permanent ID with `obtainPermanentIDs(for:)`.
    public var isTemporaryID: Bool { scope.isTemporary }

    /// The primary key of a permanent ID; nil for a temporary one.
    package var primaryKey: Int64? { scope.isTemporary ? nil : rawKey }

    /// A URI that archives this ID: `x-coredata://<store UUID>/<Entity>/p<primary key>` for a permanent ID,
    /// `x-coredata:///<Entity>/t<UUID>` for a temporary one. A coordinator resolves it with
    /// `managedObjectID(forURIRepresentation:)`.
    public func uriRepresentation() -> URL {
        // Percent-encoded: a store identifier is any string a file's metadata holds, and an entity
        // name of a model read from a file may have any character (a URI of neither is then nil).
        let entityName = Self.uriComponent(entity.name ?? "")
        let text: String
        switch key {
        case .permanent(let pk): text = "x-coredata://\(Self.uriComponent(storeIdentifier ?? ""))/\(entityName)/p\(pk)"
        case .temporary(let uuid): text = "x-coredata:///\(entityName)/t\(uuid.uuidString)"
        }
        return URL(string: text) ?? URL(string: "x-coredata:///")!
    }

    private static let uriCharacters = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        .union(CharacterSet(charactersIn: "-._~"))

    /// `text` with every character but ASCII letters, digits and `-._~` percent-encoded: what a UUID or
    /// a plain entity name keeps as it is.
    private static func uriComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: uriCharacters) ?? ""
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = ObjectCast.object(object, as: NSManagedObjectID.self) else { return false }
        return self == other
    }

    public override var hash: Int { cachedHash }

    // Made once: IDs are immutable, and every registry and row-cache lookup hashes one.
    @usableFromInline package let cachedHash: Int

    public static func == (lhs: NSManagedObjectID, rhs: NSManagedObjectID) -> Bool {
        lhs === rhs || (lhs.rawKey == rhs.rawKey && lhs.scope.isEquivalent(to: rhs.scope))
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override var description: String {
        "\(uriRepresentation().absoluteString)"
    }
}

/// Unique keys for temporary IDs: a counter, whose UUID (for URIs) is one random UUID per process with
/// the number folded into its last eight bytes. `UUID()` reads the system's random source on every call,
/// which cost more than the rest of creating an object.
enum TemporaryKeys {
    private static let base = UUID().uuid
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 {
        counter.add(1, ordering: .relaxed).newValue
    }

    /// The UUID of number `n`: unique in the process, and across processes as the random base is.
    static func uuid(of n: UInt64) -> UUID {
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
