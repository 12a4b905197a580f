import CSQLiteTwin
import Foundation
import OpenCoreDataRuntime

// What the store workloads run on: the model (Item with ten Integer 64 attributes, as in GRDB's suite;
// Person and IndexedPerson with a name and an age), store files that OpenCoreData created (so every side
// works on Core Data's schema), and the OpenCoreData stack.

/// What one run of one side saw: compared with the expected value after every run.
struct Outcome: Equatable, CustomStringConvertible {
    var count: Int64
    var first: Int64
    var last: Int64
    var checksum: Int64

    init(count: Int64, first: Int64, last: Int64, checksum: Int64) {
        self.count = count
        self.first = first
        self.last = last
        self.checksum = checksum
    }

    init(_ twin: twin_outcome) {
        self.init(count: twin.count, first: twin.first, last: twin.last, checksum: twin.checksum)
    }

    /// The outcome of a people fetch: count, first and last age, sum of ages (-1 when not sorted by age or
    /// when a name differs).
    init(peopleAges ages: [Int64], namesMatch: Bool) {
        let sorted = zip(ages, ages.dropFirst()).allSatisfy { $0 <= $1 }
        self.init(count: Int64(ages.count), first: ages.first ?? 0, last: ages.last ?? 0,
                  checksum: sorted && namesMatch ? ages.reduce(0, +) : -1)
    }

    var description: String { "count \(count), first \(first), last \(last), checksum \(checksum)" }

    static let failedTwin = Outcome(count: -1, first: -1, last: -1, checksum: -1)
}

/// Item k (0-based) has attribute ij = k * 16 + j. What the item workloads must see.
enum Items {
    static let keys = (0..<10).map { "i\($0)" }

    /// Every attribute read: count, i0 of the first and last, sum of (j + 1) * ij.
    static func fullRead(_ n: Int64) -> Outcome {
        Outcome(count: n, first: 0, last: n > 0 ? (n - 1) * 16 : 0, checksum: 880 * (n * (n - 1) / 2) + 330 * n)
    }

    /// Only i0 read (faults fired by their first attribute).
    static func firstAttributeRead(_ n: Int64) -> Outcome {
        Outcome(count: n, first: 0, last: n > 0 ? (n - 1) * 16 : 0, checksum: 8 * n * (n - 1))
    }

    /// After `updates` runs of the update workload (each adds 1 to i0): the update's own outcome, and what
    /// the file then holds.
    static func updated(_ n: Int64, updates: Int64) -> (run: Outcome, file: Outcome) {
        let run = Outcome(count: n, first: updates, last: (n - 1) * 16 + updates, checksum: 8 * n * (n - 1) + n * updates)
        var file = fullRead(n)
        file.first += updates
        file.last += updates
        file.checksum += n * updates
        return (run, file)
    }

    /// The outcome of inserting items 0 ..< n: n, i0 of the first and last inserted, sum of i0. (Which
    /// Z_PK each gets is the side's business: OpenCoreData does not hand them out in insertion order.)
    static func inserted(_ n: Int64) -> Outcome {
        Outcome(count: n, first: 0, last: n > 0 ? (n - 1) * 16 : 0, checksum: 8 * n * (n - 1))
    }
}

/// Person and IndexedPerson rows: name `firstNames[k % 16]`, age 18 + (k * 7) % 63.
enum StorePeople {
    static let firstNames = ["Jane", "John", "Alice", "Bob", "Carol", "Dave", "Eve", "Frank",
                             "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Peggy"]

    static func expectedJane(_ n: Int64) -> Outcome {
        let ages = (0..<n).filter { $0 % 16 == 0 }.map { 18 + ($0 * 7) % 63 }.sorted()
        return Outcome(peopleAges: ages, namesMatch: true)
    }
}

enum StoreModel {
    static func make() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        func entity(_ name: String, _ properties: [NSPropertyDescription]) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = "NSManagedObject"
            entity.properties = properties
            return entity
        }
        let item = entity("Item", Items.keys.map { attribute($0, .integer64AttributeType) })
        // Items are ItemObjects: `@Managed`-style accessors for insert_accessors; the other workloads use
        // value(forKey:) and setValue(_:forKey:), which an ItemObject answers as an NSManagedObject does.
        NSManagedObjectModel.registerManagedObjectClass(ItemObject.self, forName: "ItemObject")
        item.managedObjectClassName = "ItemObject"
        let person = entity("Person", [attribute("name", .stringAttributeType), attribute("age", .integer64AttributeType)])
        let indexedName = attribute("name", .stringAttributeType), indexedAge = attribute("age", .integer64AttributeType)
        let indexed = entity("IndexedPerson", [indexedName, indexedAge])
        let nameElement = NSFetchIndexElementDescription(property: indexedName, collationType: .binary)
        let ageElement = NSFetchIndexElementDescription(property: indexedAge, collationType: .binary)
        indexed.indexes = [NSFetchIndexDescription(name: "byNameAndAge", elements: [nameElement, ageElement])]
        let model = NSManagedObjectModel()
        model.entities = [item, person, indexed] + GraphModel.entities(attribute: attribute, entity: entity)
        return model
    }
}

/// The run's files: templates made once, and a copy per sample where a workload changes its file.
final class StoreFiles: @unchecked Sendable {
    let folder: URL
    let model: NSManagedObjectModel
    let synchronous: String
    /// An empty store that OpenCoreData created.
    let empty: URL
    private var populated: [String: URL] = [:]

    init(synchronous: String) throws {
        self.synchronous = synchronous
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-store-bench-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        model = StoreModel.make()
        empty = folder.appendingPathComponent("empty.sqlite")
        do {
            let stack = try OCDStack(model: model, url: empty, synchronous: synchronous)
            stack.close()
        }
        try Self.checkpoint(empty)
    }

    /// Removes the run's files (called before exit, which runs no deinit).
    func removeAll() { try? FileManager.default.removeItem(at: folder) }

    /// Folds the WAL into the main file, so that copying the main file alone copies everything.
    static func checkpoint(_ url: URL) throws {
        guard let twin = twin_open(url.path, "OFF") else { throw BenchmarkError("cannot open \(url.path)") }
        defer { twin_close(twin) }
        guard twin_exec(twin, "PRAGMA wal_checkpoint(TRUNCATE)") != 0 else { throw BenchmarkError(String(cString: twin_error(twin))) }
    }

    /// A template holding n items, or n Person and n IndexedPerson rows (written by the C twin into a copy
    /// of the empty store, Z_MAX raised).
    func template(items n: Int64) throws -> URL {
        try template(named: "items-\(n)") { twin in
            twin_insert_items(twin, 0, n).count == n
        }
    }

    func template(people n: Int64) throws -> URL {
        try template(named: "people-\(n)") { twin in
            let names = StorePeople.firstNames.map { strdup($0) }
            defer { names.forEach { free($0) } }
            return names.map { UnsafePointer($0) }.withUnsafeBufferPointer { buffer in
                twin_insert_people(twin, "ZPERSON", "Person", buffer.baseAddress, Int64(names.count), n).count == n
                    && twin_insert_people(twin, "ZINDEXEDPERSON", "IndexedPerson", buffer.baseAddress, Int64(names.count), n).count == n
            }
        }
    }

    func template(named name: String, fill: (OpaquePointer) -> Bool) throws -> URL {
        if let url = populated[name] { return url }
        let url = folder.appendingPathComponent("\(name).sqlite")
        try copy(empty, to: url)
        guard let twin = twin_open(url.path, "OFF") else { throw BenchmarkError("cannot open \(url.path)") }
        let filled = fill(twin)
        let message = String(cString: twin_error(twin))
        twin_close(twin)
        guard filled else { throw BenchmarkError("cannot fill \(name): \(message)") }
        try Self.checkpoint(url)
        populated[name] = url
        return url
    }

    /// A fresh copy of `template` for one side's sample.
    func copy(_ template: URL, to url: URL) throws {
        remove(url)
        try FileManager.default.copyItem(at: template, to: url)
    }

    func file(_ name: String) -> URL { folder.appendingPathComponent(name) }

    func remove(_ url: URL) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    /// What a store file holds, read by the C twin on its own connection.
    func summary(of url: URL) -> Outcome {
        guard let twin = twin_open(url.path, synchronous) else { return .failedTwin }
        defer { twin_close(twin) }
        return Outcome(twin_item_summary(twin))
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// OpenCoreData on one store file: coordinator, SQLite store (WAL, the run's `synchronous`), a context.
final class OCDStack {
    let coordinator: NSPersistentStoreCoordinator
    let store: SQLiteStore
    var context: NSManagedObjectContext

    init(model: NSManagedObjectModel, url: URL, synchronous: String) throws {
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let options: [AnyHashable: Any] = [NSSQLitePragmasOption: ["journal_mode": "WAL", "synchronous": synchronous]]
        store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options) as! SQLiteStore
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    func newContext() {
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    func close() {
        context.reset()
        try? coordinator.remove(store)
    }
}

/// An Int64 attribute value as `value(forKey:)` returns it.
@inline(__always)
func int64Value(_ value: Any?) -> Int64 {
    // NSNumber first: it is what value(forKey:) returns, as on Apple platforms, and `as? Int64` of an
    // NSNumber takes Foundation's slow bridging path on Linux.
    if let value = value as? NSNumber { return value.int64Value }
    if let value = value as? Int64 { return value }
    if let value = value as? Int { return Int64(value) }
    return Int64.min
}

/// Z_PK of a permanent object ID, from its URI (…/Item/p123).
func primaryKey(of objectID: NSManagedObjectID) -> Int64 {
    let last = objectID.uriRepresentation().lastPathComponent
    return Int64(last.dropFirst()) ?? -1
}
