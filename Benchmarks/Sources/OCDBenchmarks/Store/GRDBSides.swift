import Foundation
import GRDB

// The GRDB 7.10.0 sides of the store workloads. GRDB is only imported in this file (its names, such as
// `Configuration` and `Row`, stay out of the rest of the benchmarks).
//
// Two ways per workload where both make sense:
// - "GRDB": its fastest reasonable API, prepared `Statement`s with `setUncheckedArguments` and `Row`
//   cursors read by column index, as GRDB's own performance suite does;
// - "GRDB records": `FetchableRecord & PersistableRecord` structs (`ItemRecord`), the API an application
//   would write.

/// An Item row as a GRDB record, on Core Data's table and columns.
struct ItemRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "ZITEM"
    var pk: Int64
    var entity: Int64
    var opt: Int64
    var i: (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64)

    init(pk: Int64, entity: Int64, index: Int64) {
        self.pk = pk
        self.entity = entity
        opt = 1
        let b = index * 16
        i = (b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9)
    }

    init(row: Row) throws {
        pk = row["Z_PK"]
        entity = row["Z_ENT"]
        opt = row["Z_OPT"]
        i = (row["ZI0"], row["ZI1"], row["ZI2"], row["ZI3"], row["ZI4"], row["ZI5"], row["ZI6"], row["ZI7"], row["ZI8"], row["ZI9"])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["Z_PK"] = pk
        container["Z_ENT"] = entity
        container["Z_OPT"] = opt
        container["ZI0"] = i.0
        container["ZI1"] = i.1
        container["ZI2"] = i.2
        container["ZI3"] = i.3
        container["ZI4"] = i.4
        container["ZI5"] = i.5
        container["ZI6"] = i.6
        container["ZI7"] = i.7
        container["ZI8"] = i.8
        container["ZI9"] = i.9
    }

    static var databaseSelection: [any SQLSelectable] { [
        Column("Z_PK"), Column("Z_ENT"), Column("Z_OPT"), Column("ZI0"), Column("ZI1"), Column("ZI2"), Column("ZI3"),
        Column("ZI4"), Column("ZI5"), Column("ZI6"), Column("ZI7"), Column("ZI8"), Column("ZI9"),
    ] }
    static let persistenceConflictPolicy = PersistenceConflictPolicy(insert: .abort, update: .abort)

    var weightedSum: Int64 {
        i.0 + 2 * i.1 + 3 * i.2 + 4 * i.3 + 5 * i.4 + 6 * i.5 + 7 * i.6 + 8 * i.7 + 9 * i.8 + 10 * i.9
    }
}

/// A person (Person or IndexedPerson) as a GRDB record.
struct PersonRecord: FetchableRecord {
    var pk: Int64
    var entity: Int64
    var opt: Int64
    var name: String
    var age: Int64

    init(row: Row) throws {
        pk = row[0]
        entity = row[1]
        opt = row[2]
        name = row[3]
        age = row[4]
    }
}

/// One GRDB database on a store file: `DatabaseQueue` in WAL mode with the run's `synchronous`.
final class GRDBSide {
    let queue: DatabaseQueue
    let itemEntity: Int64
    /// The existingObject twin: records by Z_PK.
    var registry: [Int64: ItemRecord] = [:]

    init(path: String, synchronous: String) throws {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        // Every side must run with the same pragma: check what the connection ended up with (GRDB applies
        // its own WAL defaults), and set it again if it differs.
        let wanted = ["OFF": 0, "NORMAL": 1, "FULL": 2, "EXTRA": 3][synchronous.uppercased()]
        try queue.writeWithoutTransaction { db in
            if try Int.fetchOne(db, sql: "PRAGMA synchronous") != wanted {
                try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            }
            if try Int.fetchOne(db, sql: "PRAGMA synchronous") != wanted {
                throw BenchmarkError("GRDB's connection runs with another synchronous than \(synchronous)")
            }
        }
        itemEntity = try queue.read { db in try Int64.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'") ?? -1 }
    }

    func close() throws { try queue.close() }

    private static let insertSQL = "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZI0, ZI1, ZI2, ZI3, ZI4, ZI5, ZI6, ZI7, ZI8, ZI9) VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    private func readMax(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [itemEntity]) ?? 0
    }

    private func writeMax(_ db: Database, _ max: Int64) throws {
        try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", arguments: [max, itemEntity])
    }

    /// Items first ..< first + n in one transaction, as the C twin. Outcome: n, first and last Z_PK, sum of ZI0.
    func insertItems(first: Int64, count n: Int64, records: Bool) throws -> Outcome {
        try queue.write { db in
            let max = try readMax(db)
            var sum: Int64 = 0
            if records {
                for k in 0..<n {
                    try ItemRecord(pk: max + 1 + k, entity: itemEntity, index: first + k).insert(db)
                    sum += (first + k) * 16
                }
            } else {
                let statement = try db.makeStatement(sql: Self.insertSQL)
                for k in 0..<n {
                    let b = (first + k) * 16
                    statement.setUncheckedArguments([max + 1 + k, itemEntity, b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9])
                    try statement.execute()
                    sum += b
                }
            }
            try writeMax(db, max + n)
            return Outcome(count: n, first: first * 16, last: (first + n - 1) * 16, checksum: sum)
        }
    }

    /// `saves` transactions of one item each.
    func insertItemsSeparately(first: Int64, saves: Int64) throws -> Outcome {
        var outcome = Outcome(count: 0, first: 0, last: 0, checksum: 0)
        for k in 0..<saves {
            let pk = try queue.write { db -> Int64 in
                let pk = try readMax(db) + 1
                let b = (first + k) * 16
                try db.cachedStatement(sql: Self.insertSQL).execute(arguments: [pk, itemEntity, b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9])
                try writeMax(db, pk)
                return pk
            }
            if k == 0 { outcome.first = (first + k) * 16 }
            outcome.last = (first + k) * 16
            outcome.checksum += (first + k) * 16
            _ = pk
            outcome.count += 1
        }
        return outcome
    }

    /// Every item with every attribute: Row cursor by index, or `[ItemRecord]`.
    func fetchItems(records: Bool, firstAttributeOnly: Bool = false) throws -> Outcome {
        try queue.read { db in
            if records {
                let items = try ItemRecord.fetchAll(db)
                var sum: Int64 = 0
                for item in items { sum += firstAttributeOnly ? item.i.0 : item.weightedSum }
                return Outcome(count: Int64(items.count), first: items.first?.i.0 ?? 0, last: items.last?.i.0 ?? 0, checksum: sum)
            }
            let cursor = try Row.fetchCursor(db, sql: "SELECT Z_PK, Z_ENT, Z_OPT, ZI0, ZI1, ZI2, ZI3, ZI4, ZI5, ZI6, ZI7, ZI8, ZI9 FROM ZITEM")
            var outcome = Outcome(count: 0, first: 0, last: 0, checksum: 0)
            while let row = try cursor.next() {
                let i0: Int64 = row[3]
                if firstAttributeOnly {
                    outcome.checksum += i0
                } else {
                    var sum = i0
                    for j in 1..<10 { sum += Int64(j + 1) * (row[3 + j] as Int64) }
                    outcome.checksum += sum
                }
                if outcome.count == 0 { outcome.first = i0 }
                outcome.last = i0
                outcome.count += 1
            }
            return outcome
        }
    }

    /// The dictionary-result twin: the ten values only, as `Row`s kept in an array.
    func fetchItemRows() throws -> Outcome {
        try queue.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT ZI0, ZI1, ZI2, ZI3, ZI4, ZI5, ZI6, ZI7, ZI8, ZI9 FROM ZITEM")
            var sum: Int64 = 0
            for row in rows {
                for j in 0..<10 { sum += Int64(j + 1) * (row[j] as Int64) }
            }
            return Outcome(count: Int64(rows.count), first: rows.first?[0] ?? 0, last: rows.last?[0] ?? 0, checksum: sum)
        }
    }

    func fetchItemKeys() throws -> Outcome {
        try queue.read { db in
            let keys = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM ZITEM")
            return Outcome(count: Int64(keys.count), first: keys.first ?? 0, last: keys.last ?? 0, checksum: Int64(keys.count))
        }
    }

    func countItems(records: Bool) throws -> Outcome {
        let n = try queue.read { db in
            records ? Int64(try ItemRecord.fetchCount(db)) : try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM ZITEM") ?? -1
        }
        return Outcome(count: n, first: n, last: n, checksum: n)
    }

    /// Reads every item, then ZI0 += 1 and Z_OPT += 1 per row in one transaction (WHERE Z_PK = ? AND
    /// Z_OPT = ? with statements; records: `update(db)`, GRDB's own UPDATE … WHERE Z_PK = ?).
    func updateItems(records: Bool) throws -> Outcome {
        try queue.write { db in
            var outcome = Outcome(count: 0, first: 0, last: 0, checksum: 0)
            if records {
                let items = try ItemRecord.fetchAll(db)
                for var item in items {
                    item.i.0 += 1
                    item.opt += 1
                    try item.update(db)
                    if outcome.count == 0 { outcome.first = item.i.0 }
                    outcome.last = item.i.0
                    outcome.checksum += item.i.0
                    outcome.count += 1
                }
                return outcome
            }
            var rows: [(pk: Int64, opt: Int64, i0: Int64)] = []
            let cursor = try Row.fetchCursor(db, sql: "SELECT Z_PK, Z_ENT, Z_OPT, ZI0, ZI1, ZI2, ZI3, ZI4, ZI5, ZI6, ZI7, ZI8, ZI9 FROM ZITEM")
            while let row = try cursor.next() { rows.append((row[0], row[2], row[3])) }
            let statement = try db.makeStatement(sql: "UPDATE ZITEM SET Z_OPT = ?, ZI0 = ? WHERE Z_PK = ? AND Z_OPT = ?")
            for row in rows {
                let value = row.i0 + 1
                statement.setUncheckedArguments([row.opt + 1, value, row.pk, row.opt])
                try statement.execute()
                guard db.changesCount == 1 else { throw DatabaseError(message: "row \(row.pk) changed underneath") }
                if outcome.count == 0 { outcome.first = value }
                outcome.last = value
                outcome.checksum += value
                outcome.count += 1
            }
            return outcome
        }
    }

    func deleteItems(records: Bool) throws -> Outcome {
        try queue.write { db in
            var outcome = Outcome(count: 0, first: 0, last: 0, checksum: 0)
            var keys: [(pk: Int64, opt: Int64)] = []
            if records {
                for item in try ItemRecord.fetchAll(db) {
                    try item.delete(db)
                    keys.append((item.pk, item.opt))
                }
            } else {
                let cursor = try Row.fetchCursor(db, sql: "SELECT Z_PK, Z_OPT FROM ZITEM")
                while let row = try cursor.next() { keys.append((row[0], row[1])) }
                let statement = try db.makeStatement(sql: "DELETE FROM ZITEM WHERE Z_PK = ? AND Z_OPT = ?")
                for key in keys {
                    statement.setUncheckedArguments([key.pk, key.opt])
                    try statement.execute()
                    guard db.changesCount == 1 else { throw DatabaseError(message: "row \(key.pk) changed underneath") }
                }
            }
            for key in keys {
                if outcome.count == 0 { outcome.first = key.pk }
                outcome.last = key.pk
                outcome.checksum += key.pk
                outcome.count += 1
            }
            return outcome
        }
    }

    func loadRegistry() throws {
        let items = try queue.read { db in try ItemRecord.fetchAll(db) }
        registry = Dictionary(uniqueKeysWithValues: items.map { ($0.pk, $0) })
    }

    func lookUp(_ keys: [Int64]) -> Outcome {
        var outcome = Outcome(count: 0, first: 0, last: 0, checksum: 0)
        for key in keys {
            guard let item = registry[key] else { continue }
            if outcome.count == 0 { outcome.first = item.i.0 }
            outcome.last = item.i.0
            outcome.checksum += item.i.0
            outcome.count += 1
        }
        return outcome
    }

    /// name == ? ORDER BY age, as records (PersonRecord) or a Row cursor.
    func fetchPeople(table: String, named name: String, records: Bool) throws -> Outcome {
        try queue.read { db in
            let sql = "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE FROM \(table) WHERE ZNAME = ? ORDER BY ZAGE"
            var ages: [Int64] = []
            var namesMatch = true
            if records {
                for person in try PersonRecord.fetchAll(db, sql: sql, arguments: [name]) {
                    ages.append(person.age)
                    namesMatch = namesMatch && person.name == name
                }
            } else {
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: [name])
                while let row = try cursor.next() {
                    ages.append(row[4])
                    namesMatch = namesMatch && (row[3] as String) == name
                }
            }
            return Outcome(peopleAges: ages, namesMatch: namesMatch)
        }
    }
}
