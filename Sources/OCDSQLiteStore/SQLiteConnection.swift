import CSQLite
import Foundation
import Synchronization

/// An SQLite failure: the result code, SQLite's message and the statement that failed. The store turns it
/// into a Core Data `NSError` at its boundary and keeps it as `NSUnderlyingErrorKey` (decision D6).
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
    public let code: Int32
    /// The extended result code.
    public let extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`).
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    /// The codes, the message and the statement.
    public var description: String {
        var text = "SQLite error \(code) (\(extendedCode)): \(message)"
        if let sql { text += " [\(sql)]" }
        return text
    }
}

/// The SQL text of every statement the connection prepares or executes, for tests that count statements
/// ("no per-object query where one query can serve a batch"); optionally also the time spent inside
/// SQLite running them, for the benchmark's split of a workload's time.
public final class SQLStatementLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []
    private let nanoseconds = Atomic<UInt64>(0)
    /// Whether ``sqliteNanoseconds`` is kept. Reading the clock twice per statement costs about 40 ns
    /// (part of it inside the measured time), so a log that measures is for a run whose own time is not
    /// the figure.
    public let measuresSQLiteTime: Bool

    /// - Parameter measuringSQLiteTime: also add up the monotonic time spent in `sqlite3_step` and
    ///   `sqlite3_exec` (reading columns between steps is not counted).
    public init(measuringSQLiteTime: Bool = false) {
        measuresSQLiteTime = measuringSQLiteTime
    }

    /// The statements recorded, in order.
    public var statements: [String] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }

    /// Nanoseconds (monotonic clock) spent running statements inside SQLite since the log was made or
    /// reset; 0 unless the log was made `measuringSQLiteTime`.
    public var sqliteNanoseconds: UInt64 { nanoseconds.load(ordering: .relaxed) }

    func record(_ sql: String) {
        lock.lock()
        entries.append(sql)
        lock.unlock()
    }

    /// `body`'s result; its duration added to ``sqliteNanoseconds`` when the log measures time.
    @inline(__always)
    func measure<T>(_ body: () -> T) -> T {
        guard measuresSQLiteTime else { return body() }
        let start = Self.monotonicNanoseconds()
        let result = body()
        nanoseconds.add(Self.monotonicNanoseconds() &- start, ordering: .relaxed)
        return result
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// Forgets the statements recorded so far.
    public func reset() {
        lock.lock()
        entries.removeAll()
        lock.unlock()
        nanoseconds.store(0, ordering: .relaxed)
    }
}

/// One SQLite connection, used under the coordinator's lock (never from two threads at once). Statements
/// are prepared once and cached by their SQL text.
///
/// The store talks to the C API directly rather than through GRDB (decision D4 allowed either; see
/// Documentation/Architecture.md D19): it needs one serialized connection, cached statements and bulk
/// stepping, which are a few hundred lines, and the hot loops would bypass GRDB's row layer anyway.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    // Unchecked: a connection is used by one thread at a time (its holder's), and the runtime's access
    // checks were about 70 instructions per statement asked for.
    @exclusivity(unchecked) private var cache: [String: Statement] = [:]
    /// The statements asked for last, in no order: a save runs one statement per row, and a small save a
    /// handful in turn (BEGIN, the key maximum's read and write, the INSERT, COMMIT). Comparing their text
    /// (the same string storage, or a length and a memcmp) costs less than hashing it for the cache (the
    /// lookup was 5 % of a small save's instructions with one recent statement, 3 % with eight).
    @exclusivity(unchecked) private var recents: [Statement] = []
    @exclusivity(unchecked) private var nextRecent = 0
    private static let recentLimit = 8
    private static let cacheLimit = 256
    /// Counts and records executed statements when set (tests and benchmarks).
    var log: SQLStatementLog?

    init(path: String, readOnly: Bool, create: Bool) throws {
        var db: OpaquePointer?
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
            if let db { sqlite3_close(db) }
            throw SQLiteError(code: rc & 0xff, extendedCode: extended, message: message, sql: nil)
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5_000)
    }

    deinit {
        for statement in cache.values { sqlite3_finalize(statement.handle) }
        sqlite3_close_v2(handle)
    }

    func error(_ rc: Int32, _ sql: String?) -> SQLiteError {
        SQLiteError(code: rc & 0xff, extendedCode: sqlite3_extended_errcode(handle),
                    message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Runs SQL without results (one or several statements).
    func execute(_ sql: String) throws {
        let rc: Int32
        if let log {
            log.record(sql)
            rc = log.measure { sqlite3_exec(handle, sql, nil, nil, nil) }
        } else {
            rc = sqlite3_exec(handle, sql, nil, nil, nil)
        }
        guard rc == SQLITE_OK else { throw error(rc, sql) }
    }

    /// Runs a transaction control statement (BEGIN, COMMIT, ROLLBACK, savepoints) prepared once, from the
    /// statement cache: `sqlite3_exec` would compile it again on every save.
    func control(_ sql: String) throws {
        let statement = try self.statement(sql)
        while try statement.step() {}
    }

    /// A prepared statement for `sql`, from the cache when it was prepared before; reset and unbound.
    func statement(_ sql: String) throws -> Statement {
        // Lengths first: most recent texts differ in length, and comparing two strings that do not
        // share storage goes through the standard library's general comparison (about 80
        // instructions; a save's delete passed seven recent statements before its own).
        let length = sql.utf8.count
        for recent in recents where recent.sqlLength == length && recent.sql == sql {
            recent.reset()
            return recent
        }
        if let cached = cache[sql] {
            cached.reset()
            remember(cached)
            return cached
        }
        // Statements whose text varies (IN lists, predicates) must not accumulate without bound.
        if cache.count >= Self.cacheLimit {
            for (text, statement) in cache where sqlite3_stmt_busy(statement.handle) == 0 {
                recents.removeAll { $0 === statement }
                sqlite3_finalize(statement.handle)
                cache[text] = nil
            }
            nextRecent = 0
        }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else { throw error(rc, sql) }
        let statement = Statement(handle: raw, connection: self, sql: sql)
        cache[sql] = statement
        remember(statement)
        return statement
    }

    /// Puts `statement` among the recent ones, in turn in place of one of them once they are full.
    private func remember(_ statement: Statement) {
        if recents.count < Self.recentLimit {
            recents.append(statement)
        } else {
            recents[nextRecent] = statement
            nextRecent = (nextRecent + 1) % Self.recentLimit
        }
    }

    func setBusyTimeout(seconds: Double) {
        // Clamped: a timeout beyond Int32's milliseconds (or infinity, meaning "wait forever") trapped.
        let milliseconds = seconds.isNaN ? 0 : min(max(0, seconds) * 1000, Double(Int32.max))
        sqlite3_busy_timeout(handle, Int32(milliseconds))
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// How many transactions are open: nested ones are savepoints.
    private var transactionDepth = 0
    /// Set while a save round runs and its transaction has not begun: the first statement that needs the
    /// transaction begins it (`beginSaveRoundIfNeeded()`), so that a store the round does not touch is
    /// neither locked nor sent a statement.
    private var saveRoundPending = false

    /// Set while a save round runs (`saveTransaction`), begun or pending.
    private(set) var isInSaveRound = false
    /// Why the running save round was rolled back (`abandonSaveRound(_:)`), if it was.
    private var saveRoundAbandonment: (any Error)?
    /// Whether the running round's writes are held in the savepoint `ocd_round` (`holdRoundWrites()`).
    private var roundWritesHeld = false

    /// Holds what the running save round writes from here on in a savepoint that lasts until the round
    /// ends, and is rolled back then if the round fails: in a save across stores, a store written before
    /// another store's write fails must not keep its half. The keys taken before it stay taken.
    func holdRoundWrites() throws {
        guard isInSaveRound, !roundWritesHeld else { return }
        try beginSaveRoundIfNeeded()
        guard transactionDepth > 0 else { return }
        try control("SAVEPOINT ocd_round")
        roundWritesHeld = true
    }

    /// Begins the running save round's transaction if it has not begun: before a statement of the round
    /// that reads what it will write (the version check) or writes.
    func beginSaveRoundIfNeeded() throws {
        guard saveRoundPending else { return }
        try control("BEGIN IMMEDIATE")
        saveRoundPending = false
        transactionDepth = 1
    }

    /// Runs `body` in a transaction (BEGIN IMMEDIATE, so that a writer fails fast rather than deadlocks),
    /// rolled back when it throws. Inside another transaction it is a savepoint, so that its own failure
    /// undoes its own work only; with `savepoint: false` it then just joins the outer one, for work that
    /// leaves nothing half-done when it throws.
    func transaction<T>(savepoint: Bool = true, _ body: () throws -> T) throws -> T {
        try beginSaveRoundIfNeeded()
        if transactionDepth > 0 {
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            guard savepoint else { return try body() }
            try control("SAVEPOINT ocd")
            do {
                let result = try body()
                try control("RELEASE ocd")
                return result
            } catch {
                try? control("ROLLBACK TO ocd")
                try? control("RELEASE ocd")
                // Conservative: a check made inside the savepoint is undone with it.
                roundKeyRoots = []; roundDataVersion = nil
                throw error
            }
        }
        try control("BEGIN IMMEDIATE")
        transactionDepth = 1
        defer { transactionDepth = 0 }
        do {
            let result = try body()
            try control("COMMIT")
            return result
        } catch {
            try? control("ROLLBACK")
            throw error
        }
    }

    /// How a save round's transaction ended: whether what its body did is in the file.
    enum SaveRoundEnd {
        /// Nothing needed the transaction, or it committed.
        case committed
        /// The commit failed or SQLite rolled the transaction back itself: nothing of the round stayed.
        case lost
    }

    /// Runs `body`, one round of a save, in one transaction that begins at the first statement needing it
    /// and is committed even when `body` throws: the nested transactions of the round roll their own work
    /// back, and what they finished (primary keys taken) must stay taken. `ended` learns whether the
    /// round's work reached the file, also when this throws.
    func saveTransaction<T>(_ body: () throws -> T, ended: (SaveRoundEnd) -> Void) throws -> T {
        if transactionDepth > 0 || isInSaveRound { return try body() }
        saveRoundPending = true
        isInSaveRound = true
        defer {
            saveRoundPending = false; transactionDepth = 0; isInSaveRound = false; saveRoundAbandonment = nil
            roundWritesHeld = false
            // A round that did not commit leaves no check of its own (and a lost one, none at all).
            roundKeyRoots = []; roundDataVersion = nil
        }
        let outcome = Result { try body() }
        if roundWritesHeld, case .failure = outcome, sqlite3_get_autocommit(handle) == 0 {
            // The writes go; the keys taken before them commit below. Should even this fail, the
            // commit must not keep the writes: the round is then rolled back whole and lost.
            if (try? control("ROLLBACK TO ocd_round")) == nil { try? control("ROLLBACK") }
        }
        if let abandonment = saveRoundAbandonment {
            ended(.lost)
            _ = try outcome.get()
            throw abandonment
        }
        guard transactionDepth > 0 else {
            ended(.committed)
            return try outcome.get()
        }
        // SQLite ends the transaction itself after some failures (a full disk, an interrupt).
        if sqlite3_get_autocommit(handle) != 0 {
            forgetKeyChecks()
            ended(.lost)
            _ = try outcome.get()
            // Every such failure throws from its statement, so a round that succeeded should not get
            // here; if one does, its writes are gone and the save must not report success.
            throw SQLiteError(code: SQLITE_ABORT, extendedCode: SQLITE_ABORT, message: "SQLite ended the save's transaction before its commit", sql: nil)
        }
        do {
            let versionBefore = dataVersion()
            try control("COMMIT")
            keyChecksCommitted(versionBefore: versionBefore)
        } catch {
            try? control("ROLLBACK")
            forgetKeyChecks()
            ended(.lost)
            // The failure that came first says more; a commit failure after success is the failure.
            _ = try outcome.get()
            throw error
        }
        ended(.committed)
        return try outcome.get()
    }

    /// Rolls the running save round back now, for a write that failed after others of the round succeeded
    /// without a savepoint around them: the round then ends as `.lost`, throwing `error` if nothing else
    /// did. Statements after this run outside any transaction.
    func abandonSaveRound(_ error: any Error) {
        guard isInSaveRound else { return }
        if sqlite3_get_autocommit(handle) == 0 { try? control("ROLLBACK") }
        forgetKeyChecks()
        roundWritesHeld = false
        saveRoundAbandonment = error
        saveRoundPending = false
        transactionDepth = 0
    }

    // MARK: Checked key maxima
    //
    // Taking keys reads `MAX(Z_PK)` as well as `Z_MAX`, as a store written by other code may not keep
    // `Z_MAX`. A check holds until a commit this connection's save rounds did not make: what a round
    // checked counts once the round commits (its raised `Z_MAX` is then in the file), and a round's own
    // writes keep every checked `Z_MAX` at or above its table's keys, as long as no object holds a key
    // of a round whose `Z_MAX` was lost (`keyChecksDisabled`).

    /// The pager's data version, which changes with every commit to the file, this connection's or
    /// another's (another's is seen when this connection next takes a lock); nil when SQLite cannot tell.
    private func dataVersion() -> UInt32? {
        var version: UInt32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK ? version : nil
    }

    /// Root entities (by number) whose `Z_MAX` is in the file at or above their table's largest key, and
    /// the data version then.
    private var checkedKeyRoots: Set<Int> = []
    private var checkedDataVersion: UInt32?
    /// Roots checked in the running save round, counted once it commits, and the data version then.
    private var roundKeyRoots: Set<Int> = []
    private var roundDataVersion: UInt32?
    /// Set for good once objects may hold keys above `Z_MAX` (a lost round whose keys could not be taken
    /// again): inserting them could push a table's keys past a checked `Z_MAX`.
    var keyChecksDisabled = false {
        didSet { if keyChecksDisabled { forgetKeyChecks() } }
    }

    /// Whether `Z_MAX` of the root entity `root` is known to be at or above its table's largest key, so
    /// that taking keys need not read `MAX(Z_PK)`. Call inside the transaction that takes the keys.
    func keyMaximumIsChecked(root: Int) -> Bool {
        guard !keyChecksDisabled, let version = dataVersion() else { return false }
        if version == roundDataVersion && roundKeyRoots.contains(root) { return true }
        return version == checkedDataVersion && checkedKeyRoots.contains(root)
    }

    /// Records that `Z_MAX` of `root` is at or above its table's largest key in the running transaction:
    /// it counts once a save round commits it (a check outside a round is not kept).
    func noteKeyMaximumChecked(root: Int) {
        guard isInSaveRound, !keyChecksDisabled, let version = dataVersion() else { return }
        if version != roundDataVersion {
            roundKeyRoots = []
            roundDataVersion = version
        }
        roundKeyRoots.insert(root)
    }

    /// After a save round's COMMIT: its checks count, and earlier ones still hold, at the new version (no
    /// other connection committed while this one held the write lock).
    private func keyChecksCommitted(versionBefore: UInt32?) {
        defer { roundKeyRoots = []; roundDataVersion = nil }
        guard !keyChecksDisabled, let versionBefore, let versionAfter = dataVersion() else {
            forgetKeyChecks()
            return
        }
        var roots = checkedDataVersion == versionBefore ? checkedKeyRoots : []
        if roundDataVersion == versionBefore { roots.formUnion(roundKeyRoots) }
        checkedKeyRoots = roots
        checkedDataVersion = roots.isEmpty ? nil : versionAfter
    }

    /// Drops every check, the running round's included: after a rollback, its raised `Z_MAX` is not in
    /// the file.
    private func forgetKeyChecks() {
        checkedKeyRoots = []
        checkedDataVersion = nil
        roundKeyRoots = []
        roundDataVersion = nil
    }

    /// Rows of a query, each read by `read`.
    func query<T>(_ sql: String, _ arguments: [SQLValue] = [], _ read: (Statement) throws -> T) throws -> [T] {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        var results: [T] = []
        while try statement.step() { results.append(try read(statement)) }
        return results
    }

    /// What `read` makes of each row of the result, leaving out the rows it answers nil for (without
    /// the second array a `compactMap` of ``query(_:_:_:)`` would build).
    func queryCompacting<T>(_ sql: String, _ arguments: [SQLValue] = [], _ read: (Statement) throws -> T?) throws -> [T] {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        var results: [T] = []
        while try statement.step() {
            if let value = try read(statement) { results.append(value) }
        }
        return results
    }

    /// Runs a statement that returns no rows.
    func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// Registers a deterministic scalar SQL function taking `arity` arguments (-1: any). An error `body`
    /// throws fails the statement with its description, as SQLite's own functions fail.
    func registerFunction(_ name: String, arity: Int32, deterministic: Bool = true,
                          _ body: @escaping ([SQLValue]) throws -> SQLValue) {
        let box = Unmanaged.passRetained(FunctionBox(body)).toOpaque()
        let flags = SQLITE_UTF8 | (deterministic ? SQLITE_DETERMINISTIC : 0)
        sqlite3_create_function_v2(handle, name, arity, flags, box, { context, count, values in
            let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            var arguments: [SQLValue] = []
            arguments.reserveCapacity(Int(count))
            for index in 0..<Int(count) { arguments.append(SQLValue(values![index])) }
            do {
                try box.body(arguments).result(context)
            } catch {
                sqlite3_result_error(context, "\(error)", -1)
            }
        }, nil, nil, { pointer in
            if let pointer { Unmanaged<FunctionBox>.fromOpaque(pointer).release() }
        })
    }
}

private final class FunctionBox {
    let body: ([SQLValue]) throws -> SQLValue
    init(_ body: @escaping ([SQLValue]) throws -> SQLValue) { self.body = body }
}

/// A value bound to or read from SQLite.
enum SQLValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The value of an `sqlite3_value` (a function's argument), as a row's column reads it.
    init(_ value: OpaquePointer?) {
        self = Statement.Column(handle: value).value
    }

    fileprivate func result(_ context: OpaquePointer?) {
        switch self {
        case .null: sqlite3_result_null(context)
        case .integer(let value): sqlite3_result_int64(context, value)
        case .real(let value): sqlite3_result_double(context, value)
        case .text(let value):
            var text = value
            text.withUTF8 { sqlite3_result_text64(context, UnsafeRawPointer($0.baseAddress ?? UnsafePointer(bitPattern: 1)!).assumingMemoryBound(to: CChar.self), UInt64($0.count), SQLITE_TRANSIENT, UInt8(SQLITE_UTF8)) }
        case .blob(let value):
            value.withUnsafeBytes { sqlite3_result_blob64(context, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64($0.count), SQLITE_TRANSIENT) }
        }
    }
}

/// SQLite's "copy the bytes now" destructor.
let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// A cached prepared statement.
final class Statement {
    let handle: OpaquePointer
    /// The connection that prepared and caches the statement, and finalizes it in its `deinit`: a
    /// statement is used only while its connection is held (its cache and callers holding the
    /// connection). `unowned(unsafe)`, as a checked `unowned` read is an atomic retain and release, and
    /// `step()` reads it per row.
    unowned(unsafe) let connection: SQLiteConnection
    let sql: String
    /// The text's length in UTF-8 bytes, which the connection's look among its recent statements
    /// compares before the text.
    let sqlLength: Int

    init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
        sqlLength = sql.utf8.count
    }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ values: [SQLValue]) throws {
        for (index, value) in values.enumerated() { try bind(value, at: Int32(index + 1)) }
    }

    /// Binds an integer without making a ``SQLValue`` (the writes of a save bind most values so).
    @inline(__always)
    func bind(integer value: Int64, at index: Int32) throws {
        let rc = sqlite3_bind_int64(handle, index, value)
        guard rc == SQLITE_OK else { throw connection.error(rc, sql) }
    }

    @inline(__always)
    func bind(real value: Double, at index: Int32) throws {
        let rc = sqlite3_bind_double(handle, index, value)
        guard rc == SQLITE_OK else { throw connection.error(rc, sql) }
    }

    func bind(_ value: SQLValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v):
            // By byte count, not NUL-terminated: a string may contain U+0000.
            var text = v
            // The 64-bit forms: a value over 2 GiB is SQLite's "too big" error, not a trap in Int32(_:).
            rc = text.withUTF8 { sqlite3_bind_text64(handle, index, UnsafeRawPointer($0.baseAddress ?? UnsafePointer(bitPattern: 1)!).assumingMemoryBound(to: CChar.self), UInt64($0.count), SQLITE_TRANSIENT, UInt8(SQLITE_UTF8)) }
        case .blob(let v):
            rc = v.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64($0.count), SQLITE_TRANSIENT) }
        }
        guard rc == SQLITE_OK else { throw connection.error(rc, sql) }
    }

    /// Advances; true when a row is available.
    func step() throws -> Bool {
        let rc: Int32
        if let log = connection.log {
            if sqlite3_stmt_busy(handle) == 0 { log.record(sql) }
            rc = log.measure { sqlite3_step(handle) }
        } else {
            rc = sqlite3_step(handle)
        }
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let failure = connection.error(rc, sql)
        sqlite3_reset(handle)
        throw failure
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func value(_ column: Int32) -> SQLValue { self.column(column).value }
    func text(_ column: Int32) -> String { self.column(column).text }
    func blob(_ column: Int32) -> Data { self.column(column).blob }

    /// The current row's `column`, to read its type and value through: each `sqlite3_column_*` call
    /// enters and leaves the connection's API guard (about 40 instructions, as much as reading an
    /// integer), so a type test and a read cost one guard this way instead of two. The value is
    /// valid until the statement steps, resets or is finalized.
    @inline(__always)
    func column(_ column: Int32) -> Column { Column(handle: sqlite3_column_value(handle, column)) }

    /// One column of the current row: an unprotected `sqlite3_value`, which SQLite's documentation
    /// leaves to one thread at a time, as every statement of a connection is used here (under the
    /// connection's holder).
    struct Column {
        let handle: OpaquePointer?

        /// The storage class (`SQLITE_INTEGER` …).
        var type: Int32 { sqlite3_value_type(handle) }
        var isNull: Bool { type == SQLITE_NULL }
        var int64: Int64 { sqlite3_value_int64(handle) }
        var double: Double { sqlite3_value_double(handle) }
        var text: String {
            guard let pointer = sqlite3_value_text(handle) else { return "" }
            return String(decoding: UnsafeBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(handle))), as: UTF8.self)
        }
        var blob: Data {
            // The bytes after the pointer: asking for the pointer first converts a text value first.
            guard let pointer = sqlite3_value_blob(handle) else { return Data() }
            let count = Int(sqlite3_value_bytes(handle))
            return count > 0 ? Data(bytes: pointer, count: count) : Data()
        }
        var value: SQLValue {
            switch type {
            case SQLITE_INTEGER: return .integer(int64)
            case SQLITE_FLOAT: return .real(double)
            case SQLITE_TEXT: return .text(text)
            case SQLITE_BLOB: return .blob(blob)
            default: return .null
            }
        }
    }
}

/// Registers a collation that orders text with a Foundation comparison (`box` is a retained CollationBox).
func sqlite3_create_collation_v2_shim(_ db: OpaquePointer, _ name: String, _ box: UnsafeMutableRawPointer) {
    sqlite3_create_collation_v2(db, name, SQLITE_UTF8, box, { context, count1, bytes1, count2, bytes2 in
        let box = Unmanaged<CollationBox>.fromOpaque(context!).takeUnretainedValue()
        let left = String(decoding: UnsafeRawBufferPointer(start: bytes1, count: Int(count1)), as: UTF8.self)
        let right = String(decoding: UnsafeRawBufferPointer(start: bytes2, count: Int(count2)), as: UTF8.self)
        return Int32(box.order(left, right).rawValue)
    }, { pointer in
        if let pointer { Unmanaged<CollationBox>.fromOpaque(pointer).release() }
    })
}

/// The name of a result column.
func sqlite3_column_name_shim(_ statement: Statement, _ column: Int32) -> UnsafePointer<CChar> {
    sqlite3_column_name(statement.handle, column)
}
