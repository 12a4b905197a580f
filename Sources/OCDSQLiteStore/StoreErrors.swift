import Foundation
import OCDStore

// Core Data's error codes (the graph layer declares the public constants; the store sits below it).
let NSValidationErrorCode = 1550
let NSFileReadNoSuchFileErrorCode = 260
let NSFileReadCorruptFileErrorCode = 259
let NSFileReadNoPermissionErrorCode = 257
let NSFileWriteNoPermissionErrorCode = 513
let NSFileWriteOutOfSpaceErrorCode = 640
let NSPersistentStoreInvalidTypeErrorCode = 134000
let NSPersistentStoreTypeMismatchErrorCode = 134010
let NSPersistentStoreSaveErrorCode = 134030
let NSCoreDataErrorCode = 134060
let NSPersistentStoreOpenErrorCode = 134080
let NSPersistentStoreTimeoutErrorCode = 134090
let NSPersistentStoreIncompatibleVersionHashErrorCode = 134100

/// Option: SQLite pragmas to apply when the store opens, as `[name: value]`.
public let NSSQLitePragmasOption = "NSSQLitePragmasOption"
/// Option: true runs SQLite's `ANALYZE` when the store opens (statistics for the query planner).
public let NSSQLiteAnalyzeOption = "NSSQLiteAnalyzeOption"
/// Option: true runs SQLite's `VACUUM` when the store opens (the file shrinks to its contents).
public let NSSQLiteManualVacuumOption = "NSSQLiteManualVacuumOption"

/// The userInfo key under which Core Data reports SQLite's result code.
public let NSSQLiteErrorDomain = "NSSQLiteErrorDomain"

extension SQLiteStore {
    static func error(_ code: Int, _ description: String, path: String? = nil, underlying: Error? = nil,
                      extra: [String: Any] = [:]) -> NSError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let path { info[NSFilePathErrorKey] = path }
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        if let sqlite = underlying as? SQLiteError { info[NSSQLiteErrorDomain] = Int(sqlite.code) }
        info.merge(extra) { _, new in new }
        return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: info)
    }

    /// A failure while opening or reading the file: Apple's file error codes, SQLite's code kept.
    static func error(opening failure: SQLiteError, path: String) -> NSError {
        switch failure.code {
        case SQLITE_NOTADB_CODE, SQLITE_CORRUPT_CODE:
            return error(NSFileReadCorruptFileErrorCode, "The file “\((path as NSString).lastPathComponent)” couldn’t be opened because it isn’t in the correct format (\(failure.message)).", path: path, underlying: failure)
        case SQLITE_CANTOPEN_CODE:
            // "No such file" only when there is none: apps take 260 for a first launch. A folder or an
            // unreadable file at the path is a file that cannot be read.
            if FileManager.default.fileExists(atPath: path) {
                return error(NSFileReadNoPermissionErrorCode, "The store file “\(path)” exists but couldn’t be opened (\(failure.message)): is it a folder, or unreadable?", path: path, underlying: failure)
            }
            return error(NSFileReadNoSuchFileErrorCode, "The store file “\(path)” couldn’t be opened or created (\(failure.message)).", path: path, underlying: failure)
        case SQLITE_PERM_CODE, SQLITE_READONLY_CODE, SQLITE_AUTH_CODE:
            return error(NSFileWriteNoPermissionErrorCode, "The store file “\(path)” is not writable (\(failure.message)).", path: path, underlying: failure)
        case SQLITE_BUSY_CODE, SQLITE_LOCKED_CODE:
            return error(NSPersistentStoreTimeoutErrorCode, "The store file “\(path)” is locked by another connection (\(failure.message)).", path: path, underlying: failure)
        default:
            return error(NSPersistentStoreOpenErrorCode, "The store file “\(path)” couldn’t be opened: \(failure.message)", path: path, underlying: failure)
        }
    }

    /// A failure while reading or writing an open store.
    static func error(_ failure: SQLiteError, writing: Bool) -> NSError {
        switch failure.code {
        case SQLITE_NOTADB_CODE, SQLITE_CORRUPT_CODE:
            return error(NSFileReadCorruptFileErrorCode, "The store file is damaged: \(failure.message)", underlying: failure)
        case SQLITE_BUSY_CODE, SQLITE_LOCKED_CODE:
            return error(NSPersistentStoreTimeoutErrorCode, "The store file is locked by another connection: \(failure.message)", underlying: failure)
        case SQLITE_FULL_CODE:
            return error(NSFileWriteOutOfSpaceErrorCode, "The disk is full: \(failure.message)", underlying: failure)
        case SQLITE_READONLY_CODE, SQLITE_PERM_CODE:
            return error(NSFileWriteNoPermissionErrorCode, "The store file is not writable: \(failure.message)", underlying: failure)
        case SQLITE_CONSTRAINT_CODE:
            return error(NSPersistentStoreSaveErrorCode, "A uniqueness constraint failed: \(failure.message)", underlying: failure)
        default:
            return error(writing ? NSPersistentStoreSaveErrorCode : NSCoreDataErrorCode, "SQLite error: \(failure.message)", underlying: failure)
        }
    }
}

// SQLite's primary result codes, as Int32 constants Swift can switch on.
let SQLITE_PERM_CODE: Int32 = 3
let SQLITE_BUSY_CODE: Int32 = 5
let SQLITE_LOCKED_CODE: Int32 = 6
let SQLITE_READONLY_CODE: Int32 = 8
let SQLITE_CORRUPT_CODE: Int32 = 11
let SQLITE_FULL_CODE: Int32 = 13
let SQLITE_CANTOPEN_CODE: Int32 = 14
let SQLITE_CONSTRAINT_CODE: Int32 = 19
let SQLITE_AUTH_CODE: Int32 = 23
let SQLITE_NOTADB_CODE: Int32 = 26
