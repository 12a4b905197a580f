import CSQLite
import Foundation

/// Runs SQL on a store file with the C API, outside the store (what `sqlite3` would show).
public enum RawSQL {
    public static func rows(_ url: URL, _ sql: String) throws -> [[String: Any?]] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            throw RawError(message: "cannot open \(url.path)")
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw RawError(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        var rows: [[String: Any?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            var row: [String: Any?] = [:]
            for column in 0..<sqlite3_column_count(statement) {
                let name = String(cString: sqlite3_column_name(statement, column))
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row[name] = sqlite3_column_int64(statement, column)
                case SQLITE_FLOAT: row[name] = sqlite3_column_double(statement, column)
                case SQLITE_TEXT: row[name] = String(cString: sqlite3_column_text(statement, column))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    row[name] = count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, column), count: count)
                default: row[name] = .some(nil)
                }
            }
            rows.append(row)
        }
        return rows
    }

    public static func execute(_ url: URL, _ sql: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw RawError(message: "cannot open \(url.path)")
        }
        defer { sqlite3_close(db) }
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw RawError(message: String(cString: sqlite3_errmsg(db))) }
    }

    public struct RawError: Error { public let message: String }

    /// A connection kept open (to hold a lock, or keep a WAL from being checkpointed).
    public final class Connection {
        let db: OpaquePointer
        public init(_ url: URL, create: Bool = false) throws {
            var db: OpaquePointer?
            let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
            guard sqlite3_open_v2(url.path, &db, flags, nil) == SQLITE_OK, let db else { throw RawError(message: "cannot open \(url.path)") }
            self.db = db
        }
        deinit { sqlite3_close(db) }
        public func execute(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw RawError(message: String(cString: sqlite3_errmsg(db))) }
        }
    }
}
