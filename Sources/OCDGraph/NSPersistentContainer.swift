import Foundation
import OCDModel
import OCDStore

/// How a container adds one store: type, URL, configuration and options.
open class NSPersistentStoreDescription: NSObject, NSCopying, @unchecked Sendable {
    /// The store type (`NSSQLiteStoreType` by default, as on Apple platforms).
    public var type: String = NSSQLiteStoreType
    /// The model configuration whose entities the store holds (nil: all).
    public var configuration: String?
    /// Where the store lives (`/dev/null` for an SQLite store in memory; an in-memory store has no file).
    public var url: URL?
    /// Store options.
    public private(set) var options: [String: NSObject] = [:]
    /// SQLite pragmas (used by the SQLite store).
    public private(set) var sqlitePragmas: [String: NSObject] = [:]
    /// Whether the store is opened read-only.
    public var isReadOnly: Bool {
        get { (options[NSReadOnlyPersistentStoreOption] as? NSNumber)?.boolValue ?? false }
        set { options[NSReadOnlyPersistentStoreOption] = NSNumber(value: newValue) }
    }
    /// Seconds to wait for the store (for an SQLite store, for another connection's lock): the option
    /// `NSPersistentStoreTimeoutOption`, which this property reads and sets, as on Apple platforms; 240
    /// until set. The container passes it to the store either way.
    public var timeout: TimeInterval {
        get { (options[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue ?? 240 }
        set { options[NSPersistentStoreTimeoutOption] = NSNumber(value: newValue) }
    }
    /// Whether `loadPersistentStores` adds the store on another thread.
    public var shouldAddStoreAsynchronously = false
    /// Whether an older store is migrated on open: the option `NSMigratePersistentStoresAutomaticallyOption`,
    /// which this property reads and sets, as on Apple platforms; true until set. No store migrates yet.
    public var shouldMigrateStoreAutomatically: Bool {
        get { (options[NSMigratePersistentStoresAutomaticallyOption] as? NSNumber)?.boolValue ?? true }
        set { options[NSMigratePersistentStoresAutomaticallyOption] = NSNumber(value: newValue) }
    }
    /// Whether a mapping model is inferred for migration: the option `NSInferMappingModelAutomaticallyOption`,
    /// read and set by this property; true until set.
    public var shouldInferMappingModelAutomatically: Bool {
        get { (options[NSInferMappingModelAutomaticallyOption] as? NSNumber)?.boolValue ?? true }
        set { options[NSInferMappingModelAutomaticallyOption] = NSNumber(value: newValue) }
    }

    /// A description of the store at `url`.
    public init(url: URL) {
        self.url = url
        super.init()
    }

    /// A description of an SQLite store at `/dev/null`, as Apple's: a store that lives in memory only,
    /// until a URL or another type is given.
    public override init() {
        self.url = URL(fileURLWithPath: "/dev/null")
        super.init()
    }

    /// Sets the store option `key` (`NSPersistentHistoryTrackingKey`, `NSSQLiteAnalyzeOption` …); nil
    /// removes it.
    public func setOption(_ option: NSObject?, forKey key: String) { options[key] = option }
    /// Sets the SQLite pragma `name` applied when the store opens (`NSSQLitePragmasOption`); nil removes it.
    public func setValue(_ value: NSObject?, forPragmaNamed name: String) { sqlitePragmas[name] = value }

    var storeOptions: [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for (key, value) in options { result[key] = value }
        if result[NSPersistentStoreTimeoutOption] == nil { result[NSPersistentStoreTimeoutOption] = NSNumber(value: timeout) }
        if !sqlitePragmas.isEmpty { result["NSSQLitePragmasOption"] = sqlitePragmas }
        return result
    }

    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSPersistentStoreDescription()
        copy.type = type
        copy.configuration = configuration
        copy.url = url
        copy.options = options
        copy.sqlitePragmas = sqlitePragmas
        copy.shouldAddStoreAsynchronously = shouldAddStoreAsynchronously
        return copy
    }

    open override var description: String {
        "<NSPersistentStoreDescription: type: \(type), url: \(url?.absoluteString ?? "nil"), configuration: \(configuration ?? "nil")>"
    }
}

/// A whole Core Data stack: a model, a coordinator, its stores and a main-queue context. Its members are
/// `open`, as Apple's are: a subclass can, say, configure every background context by overriding
/// ``newBackgroundContext()``, which ``performBackgroundTask(_:)`` calls.
open class NSPersistentContainer: NSObject, @unchecked Sendable {
    /// The container's name: the default store's file name and the model's resource name.
    open var name: String { storedName }
    /// The model the container was made with, or found by its name.
    open var managedObjectModel: NSManagedObjectModel { storedModel }
    /// The coordinator of the container's stores, made for ``managedObjectModel``.
    open var persistentStoreCoordinator: NSPersistentStoreCoordinator { storedCoordinator }
    private let storedName: String
    private let storedModel: NSManagedObjectModel
    private let storedCoordinator: NSPersistentStoreCoordinator
    /// The stores `loadPersistentStores` adds. By default one SQLite store named after the container in
    /// `defaultDirectoryURL()`.
    open var persistentStoreDescriptions: [NSPersistentStoreDescription]

    private let lock = NSLock()
    private var mainContext: NSManagedObjectContext?

    /// The main-queue context, for the user interface or a program's main flow.
    open var viewContext: NSManagedObjectContext {
        lock.lock()
        defer { lock.unlock() }
        if let mainContext { return mainContext }
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        context.name = "viewContext"
        mainContext = context
        return context
    }

    /// A container for `model`.
    public init(name: String, managedObjectModel model: NSManagedObjectModel) {
        self.storedName = name
        self.storedModel = model
        self.storedCoordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let url = Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        self.persistentStoreDescriptions = [NSPersistentStoreDescription(url: url)]
        super.init()
    }

    /// A container whose model is the `<name>.momd` (or `.mom`, `.ocdmodel`, `.xcdatamodeld`) found in the
    /// main bundle or beside the executable. Stops when there is none, as Apple's container cannot work
    /// without a model.
    public convenience init(name: String) {
        let (model, failure) = Self.findModel(named: name)
        guard let model else {
            if let failure {
                fatalError("NSPersistentContainer(name:): the model \(name) cannot be loaded: \(failure)")
            }
            fatalError("NSPersistentContainer(name:): no model named \(name) (.momd, .mom, .ocdmodel or .xcdatamodeld) in the main bundle or beside the executable. Use init(name:managedObjectModel:).")
        }
        self.init(name: name, managedObjectModel: model)
    }

    /// The first model of the name that loads, or why the last one found did not.
    private static func findModel(named name: String) -> (NSManagedObjectModel?, Error?) {
        var folders: [URL] = [Bundle.main.bundleURL]
        if let resources = Bundle.main.resourceURL { folders.append(resources) }
        folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        var failure: Error?
        for folder in folders {
            for ext in ["momd", "mom", "ocdmodel", "xcdatamodeld"] {
                let url = folder.appendingPathComponent("\(name).\(ext)")
                guard FileManager.default.fileExists(atPath: url.path) else { continue }
                do { return (try NSManagedObjectModel(validatingContentsOf: url), nil) } catch { failure = error }
            }
        }
        return (nil, failure)
    }

    /// Where stores go by default: the user's application support folder (`~/.local/share` on Linux).
    open class func defaultDirectoryURL() -> URL {
        FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSTemporaryDirectory())
    }

    /// Adds every store of `persistentStoreDescriptions`, calling `block` once per store.
    open func loadPersistentStores(completionHandler block: @escaping (NSPersistentStoreDescription, Error?) -> Void) {
        for description in persistentStoreDescriptions {
            if let url = description.url, description.type != NSInMemoryStoreType, url.standardizedFileURL.path != "/dev/null" {
                try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            }
            persistentStoreCoordinator.addPersistentStore(with: description, completionHandler: block)
        }
    }

    /// A new private-queue context on the container's coordinator.
    open func newBackgroundContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new private-queue context, asynchronously.
    open func performBackgroundTask(_ block: @escaping @Sendable (NSManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `body` on a new private-queue context and returns its result.
    open func performBackgroundTask<T, E: Error>(_ body: @escaping (NSManagedObjectContext) throws(E) -> T) async throws(E) -> sending T {
        let context = newBackgroundContext()
        nonisolated(unsafe) let body = body
        return try await context.perform { () throws(E) -> T in try body(context) }
    }
}
