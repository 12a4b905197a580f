import CSQLiteTwin
import Foundation
import OpenCoreDataRuntime

// The store workloads of issue 6, each on OpenCoreData, the C twin and GRDB (statements and records).
// Item k has ij = k * 16 + j; Z_PK = k + 1 in the prepared files.

struct StoreSizes {
    /// Items (and people) in the files.
    var n: Int64
    /// Separate saves in small_saves.
    var smallSaves: Int64
}

enum StoreWorkloads {
    static func make(files: StoreFiles, sizes: StoreSizes, durable: Bool) throws -> [StoreWorkload] {
        let n = sizes.n
        let sync = files.synchronous
        var workloads: [StoreWorkload] = []

        // MARK: insert_setvalue (and small_saves): fresh copies of the empty store per sample.
        func insertWorkload(key: String, synchronous: String, saves: Int64?, accessors: Bool = false) -> StoreWorkload {
            let count = saves ?? n
            let ocdURL = files.file("\(key)-ocd.sqlite"), cURL = files.file("\(key)-c.sqlite")
            let grdbURL = files.file("\(key)-grdb.sqlite"), recordURL = files.file("\(key)-record.sqlite")
            var stack: OCDStack?
            var twin: OpaquePointer?
            var grdb: GRDBSide?
            let expected = Items.inserted(count)
            let fileExpected = Items.fullRead(count)
            func fileCheck(_ url: URL) -> (Int, Outcome) -> String? {
                StoreSide.expecting(expected, thenFile: url, holds: fileExpected, read: files.summary(of:))
            }
            let ocd = StoreSide("ocd", accessors
                                ? "NSEntityDescription.insertNewObject as! ItemObject + 10 @Managed-style property sets (item.i0 = …), then one save()"
                                : saves == nil
                                ? "NSEntityDescription.insertNewObject + setValue(_:forKey:) of 10 Int64, then one save()"
                                : "insert one object (10 × setValue(_:forKey:)) and save(), \(count) times",
                setUp: {
                    try files.copy(files.empty, to: ocdURL)
                    stack = try OCDStack(model: files.model, url: ocdURL, synchronous: synchronous)
                },
                run: {
                    let context = stack!.context
                    var outcome = Outcome(count: 0, first: 0, last: 0, checksum: 0)
                    for k in 0..<count {
                        let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                        let base = k * 16
                        if accessors {
                            guard let item = object as? ItemObject else { throw BenchmarkError("an Item is a \(type(of: object)), not an ItemObject") }
                            item.i0 = base; item.i1 = base + 1; item.i2 = base + 2; item.i3 = base + 3; item.i4 = base + 4
                            item.i5 = base + 5; item.i6 = base + 6; item.i7 = base + 7; item.i8 = base + 8; item.i9 = base + 9
                        } else {
                            for j in 0..<10 { object.setValue(base + Int64(j), forKey: Items.keys[j]) }
                        }
                        if k == 0 { outcome.first = int64Value(object.value(forKey: "i0")) }
                        outcome.last = int64Value(object.value(forKey: "i0"))
                        outcome.checksum += base
                        outcome.count += 1
                        if saves != nil { try context.save() }
                    }
                    if saves == nil { try context.save() }
                    return outcome
                },
                tearDown: { stack?.close(); stack = nil },
                check: fileCheck(ocdURL))
            let c = StoreSide("c", saves == nil
                              ? "one transaction: INSERT INTO ZITEM … per row (prepared once), Z_MAX raised"
                              : "\(count) transactions: read Z_MAX, raise it, INSERT one row",
                setUp: { try files.copy(files.empty, to: cURL); twin = twin_open(cURL.path, synchronous) },
                run: { Outcome(saves == nil ? twin_insert_items(twin, 0, count) : twin_insert_items_separately(twin, 0, count)) },
                tearDown: { twin_close(twin); twin = nil },
                check: fileCheck(cURL))
            let g = StoreSide("grdb", saves == nil
                              ? "queue.write: one Statement, setUncheckedArguments + execute per row, Z_MAX raised"
                              : "\(count) × queue.write: read Z_MAX, raise it, cachedStatement INSERT",
                setUp: { try files.copy(files.empty, to: grdbURL); grdb = try GRDBSide(path: grdbURL.path, synchronous: synchronous) },
                run: { saves == nil ? try grdb!.insertItems(first: 0, count: count, records: false) : try grdb!.insertItemsSeparately(first: 0, saves: count) },
                tearDown: { try grdb?.close(); grdb = nil },
                check: fileCheck(grdbURL))
            // insert_accessors differs from insert_setvalue on OpenCoreData's side only: its GRDB sides would
            // repeat insert_setvalue's (and take the full run past its 10 minutes).
            var sides = accessors ? [ocd, c] : [ocd, c, g]
            if saves == nil && !accessors {
                sides.append(StoreSide("grdb_record", "queue.write: ItemRecord(…).insert(db) per row, Z_MAX raised",
                    setUp: { try files.copy(files.empty, to: recordURL); grdb = try GRDBSide(path: recordURL.path, synchronous: synchronous) },
                    run: { try grdb!.insertItems(first: 0, count: count, records: true) },
                    tearDown: { try grdb?.close(); grdb = nil },
                    check: fileCheck(recordURL)))
            }
            return StoreWorkload(key: key, unit: saves == nil ? "object" : "save", operations: Int(count),
                                 summary: saves == nil ? "insert \(count) Items with 10 Int64 attributes\(accessors ? " through typed properties" : ""), one save (synchronous = \(synchronous))"
                                                       : "\(count) saves of one new Item each (synchronous = \(synchronous))",
                                 sides: sides, ocdStore: { stack?.store })
        }
        workloads.append(insertWorkload(key: "insert_setvalue", synchronous: sync, saves: nil))
        workloads.append(insertWorkload(key: "insert_accessors", synchronous: sync, saves: nil, accessors: true))

        // MARK: Reads on one copy of an N-item store per side.
        let itemsTemplate = try files.template(items: n)
        let readOCD = files.file("read-ocd.sqlite"), readC = files.file("read-c.sqlite"), readGRDB = files.file("read-grdb.sqlite")
        try files.copy(itemsTemplate, to: readOCD)
        try files.copy(itemsTemplate, to: readC)
        try files.copy(itemsTemplate, to: readGRDB)
        let ocdRead = try OCDStack(model: files.model, url: readOCD, synchronous: sync)
        guard let twinRead = twin_open(readC.path, sync) else { throw BenchmarkError("cannot open \(readC.path)") }
        let grdbRead = try GRDBSide(path: readGRDB.path, synchronous: sync)
        let warmContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        // Registered objects are held weakly, as in Core Data: "warm" means a caller still holds them.
        var warmObjects: [NSManagedObject] = []
        warmContext.persistentStoreCoordinator = ocdRead.coordinator

        func fetchRealized(_ context: NSManagedObjectContext) throws -> [NSManagedObject] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.returnsObjectsAsFaults = false
            return try context.fetch(request)
        }
        func readAll(_ objects: [NSManagedObject]) -> Outcome {
            var sum: Int64 = 0
            for object in objects {
                for j in 0..<10 { sum += Int64(j + 1) * int64Value(object.value(forKey: Items.keys[j])) }
            }
            return Outcome(count: Int64(objects.count), first: int64Value(objects.first?.value(forKey: "i0")),
                           last: int64Value(objects.last?.value(forKey: "i0")), checksum: sum)
        }
        /// The reads of readAll through the `@Managed`-style properties, as code with generated classes reads.
        func readAllAccessors(_ objects: [NSManagedObject]) -> Outcome {
            var sum: Int64 = 0
            for case let item as ItemObject in objects {
                sum += item.i0 + 2 * item.i1 + 3 * item.i2 + 4 * item.i3 + 5 * item.i4
                sum += 6 * item.i5 + 7 * item.i6 + 8 * item.i7 + 9 * item.i8 + 10 * item.i9
            }
            return Outcome(count: Int64(objects.count), first: (objects.first as? ItemObject)?.i0 ?? -1,
                           last: (objects.last as? ItemObject)?.i0 ?? -1, checksum: sum)
        }
        let full = SQLiteSideCheck.expect(Items.fullRead(n))
        let readSidesC = StoreSide("c", "SELECT Z_PK, Z_ENT, Z_OPT, ZI0…ZI9 into an array of structs, then every attribute read",
                                   run: { Outcome(twin_fetch_items(twinRead)) }, check: full)
        let readSidesGRDB = StoreSide("grdb", "Row.fetchCursor, columns read by index", run: { try grdbRead.fetchItems(records: false) }, check: full)
        let readSidesRecord = StoreSide("grdb_record", "ItemRecord.fetchAll (init(row:) by column name)", run: { try grdbRead.fetchItems(records: true) }, check: full)

        let freshReads: [(key: String, summary: String, reads: String, read: ([NSManagedObject]) -> Outcome)] = [
            ("fetch_read_fresh", "fetch \(n) Items (returnsObjectsAsFaults = false) in a new context and read every attribute",
             "value(forKey:) of the 10 attributes of each", readAll),
            ("fetch_read_accessors", "fetch_read_fresh, reading the attributes through the Item class's typed properties",
             "item.i0 … item.i9 (Int64 properties as @Managed writes them)", readAllAccessors),
        ]
        for fresh in freshReads {
            workloads.append(StoreWorkload(
                key: fresh.key, unit: "object", operations: Int(n), summary: fresh.summary,
                sides: [
                    StoreSide("ocd", "new context; fetch with returnsObjectsAsFaults = false; \(fresh.reads)",
                              setUp: { ocdRead.newContext() }, run: { try fresh.read(fetchRealized(ocdRead.context)) },
                              tearDown: { ocdRead.newContext() }, check: full),
                    readSidesC, readSidesGRDB, readSidesRecord,
                ],
                ocdStore: { ocdRead.store },
                memoryProbe: {
                    ocdRead.newContext()
                    let before = allocatedBytes()
                    let objects = try fetchRealized(ocdRead.context)
                    _ = fresh.read(objects)
                    let after = allocatedBytes()
                    let perObject = Double(after - before) / Double(max(objects.count, 1))
                    withExtendedLifetime(objects) {}
                    ocdRead.newContext()
                    return perObject
                }))
        }
        workloads.append(StoreWorkload(
            key: "fetch_read_warm", unit: "object", operations: Int(n),
            summary: "the same fetch in a context that already holds every Item (C and GRDB: the same as fresh)",
            sides: [
                StoreSide("ocd", "the same fetch and reads in one context kept across runs, the previous run's objects still held (so registered)",
                          run: {
                              warmObjects = try fetchRealized(warmContext)
                              return readAll(warmObjects)
                          }, check: full),
                readSidesC, readSidesGRDB, readSidesRecord,
            ],
            ocdStore: { ocdRead.store }))
        workloads.append(StoreWorkload(
            key: "fetch_dictionaries", unit: "object", operations: Int(n),
            summary: "fetch the 10 attributes of \(n) Items as dictionaries and read every value",
            sides: [
                StoreSide("ocd", "resultType = .dictionaryResultType, propertiesToFetch = i0…i9; dictionary[key] for each",
                          run: {
                              let request = NSFetchRequest<NSDictionary>(entityName: "Item")
                              request.resultType = .dictionaryResultType
                              request.propertiesToFetch = Items.keys
                              let rows = try ocdRead.context.fetch(request)
                              var sum: Int64 = 0
                              for row in rows {
                                  for j in 0..<10 { sum += Int64(j + 1) * int64Value(row[Items.keys[j]]) }
                              }
                              return Outcome(count: Int64(rows.count), first: int64Value(rows.first?["i0"]),
                                             last: int64Value(rows.last?["i0"]), checksum: sum)
                          }, check: full),
                StoreSide("c", "SELECT ZI0…ZI9, each value read as it is stepped", run: { Outcome(twin_fetch_item_values(twinRead)) }, check: full),
                StoreSide("grdb", "Row.fetchAll (rows kept), values read by index", run: { try grdbRead.fetchItemRows() }, check: full),
            ],
            ocdStore: { ocdRead.store }))
        let idsExpected = SQLiteSideCheck.expect(Outcome(count: n, first: 1, last: n, checksum: n))
        workloads.append(StoreWorkload(
            key: "fetch_object_ids", unit: "object", operations: Int(n),
            summary: "fetch the IDs of \(n) Items",
            sides: [
                StoreSide("ocd", "resultType = .managedObjectIDResultType (first and last Z_PK from the URI)",
                          run: {
                              let request = NSFetchRequest<NSManagedObjectID>(entityName: "Item")
                              request.resultType = .managedObjectIDResultType
                              let ids = try ocdRead.context.fetch(request)
                              return Outcome(count: Int64(ids.count), first: ids.first.map(primaryKey(of:)) ?? 0,
                                             last: ids.last.map(primaryKey(of:)) ?? 0, checksum: Int64(ids.count))
                          }, check: idsExpected),
                StoreSide("c", "SELECT Z_PK into an array of int64", run: { Outcome(twin_fetch_item_keys(twinRead)) }, check: idsExpected),
                StoreSide("grdb", "Int64.fetchAll(SELECT Z_PK)", run: { try grdbRead.fetchItemKeys() }, check: idsExpected),
            ],
            ocdStore: { ocdRead.store }))
        let faultsExpected = SQLiteSideCheck.expect(Items.firstAttributeRead(n))
        workloads.append(StoreWorkload(
            key: "fetch_faults_fire", unit: "object", operations: Int(n),
            summary: "fetch \(n) Items as faults (the default request) in a new context, then fire each by reading i0",
            sides: [
                StoreSide("ocd", "new context; default fetch (faults holding their rows); value(forKey: \"i0\") of each",
                          setUp: { ocdRead.newContext() },
                          run: {
                              let objects = try ocdRead.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
                              var sum: Int64 = 0
                              for object in objects { sum += int64Value(object.value(forKey: "i0")) }
                              return Outcome(count: Int64(objects.count), first: int64Value(objects.first?.value(forKey: "i0")),
                                             last: int64Value(objects.last?.value(forKey: "i0")), checksum: sum)
                          },
                          tearDown: { ocdRead.newContext() }, check: faultsExpected),
                StoreSide("c", "the C twin of fetch_read, reading only ZI0 of each struct", run: { Outcome(twin_fetch_items_touch_first(twinRead)) }, check: faultsExpected),
                StoreSide("grdb", "Row.fetchCursor, all columns selected, ZI0 read", run: { try grdbRead.fetchItems(records: false, firstAttributeOnly: true) }, check: faultsExpected),
                StoreSide("grdb_record", "ItemRecord.fetchAll, i0 read", run: { try grdbRead.fetchItems(records: true, firstAttributeOnly: true) }, check: faultsExpected),
            ],
            ocdStore: { ocdRead.store },
            memoryProbe: {
                ocdRead.newContext()
                let before = allocatedBytes()
                let objects = try ocdRead.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
                let after = allocatedBytes()
                withExtendedLifetime(objects) {}
                ocdRead.newContext()
                return Double(after - before) / Double(max(objects.count, 1))
            }))

        // MARK: fire_faults: the faults are fetched untimed; the run fires each from the row cache.
        do {
            var faults: [NSManagedObject] = []
            var registryLoaded = false
            // fire_faults_accessors reads through the typed property, which makes no NSNumber: what is left
            // is the firing itself.
            for (key, typed) in [("fire_faults", false), ("fire_faults_accessors", true)] {
            func i0(_ object: NSManagedObject?) -> Int64 {
                guard let object else { return -1 }
                return typed ? (object as? ItemObject)?.i0 ?? -1 : int64Value(object.value(forKey: "i0"))
            }
            workloads.append(StoreWorkload(
                key: key, unit: "object", operations: Int(n),
                summary: "fire \(n) fetched faults from the row cache by reading i0\(typed ? " through the typed property" : "") (the fetch is untimed set-up)",
                sides: [
                    StoreSide("ocd", "set-up: new context, default fetch (faults holding their rows); run: \(typed ? "(object as! ItemObject).i0" : "value(forKey: \"i0\")") of each",
                              setUp: {
                                  ocdRead.newContext()
                                  faults = try ocdRead.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
                                  guard faults.allSatisfy(\.isFault) else { throw BenchmarkError("fetched objects are not faults") }
                              },
                              run: {
                                  var sum: Int64 = 0
                                  for object in faults { sum += i0(object) }
                                  return Outcome(count: Int64(faults.count), first: i0(faults.first), last: i0(faults.last), checksum: sum)
                              },
                              tearDown: { faults = []; ocdRead.newContext() }, check: faultsExpected),
                    StoreSide("c", "ZI0 of each row already loaded into a C array (the registry of existing_object)",
                              setUp: {
                                  if !registryLoaded {
                                      guard twin_load_registry(twinRead) != 0 else { throw BenchmarkError("twin_load_registry failed") }
                                      registryLoaded = true
                                  }
                              },
                              run: { Array(1...max(n, 1)).withUnsafeBufferPointer { Outcome(twin_lookup_registry(twinRead, $0.baseAddress, Int64($0.count))) } },
                              check: faultsExpected),
                ],
                ocdStore: { ocdRead.store }))
            }
        }

        // MARK: predicate_sort: name == "Jane" sorted by age, without and with an index on (name, age).
        let peopleTemplate = try files.template(people: n)
        let peopleOCD = files.file("people-ocd.sqlite"), peopleC = files.file("people-c.sqlite"), peopleGRDB = files.file("people-grdb.sqlite")
        try files.copy(peopleTemplate, to: peopleOCD)
        try files.copy(peopleTemplate, to: peopleC)
        try files.copy(peopleTemplate, to: peopleGRDB)
        let ocdPeople = try OCDStack(model: files.model, url: peopleOCD, synchronous: sync)
        guard let twinPeople = twin_open(peopleC.path, sync) else { throw BenchmarkError("cannot open \(peopleC.path)") }
        let grdbPeople = try GRDBSide(path: peopleGRDB.path, synchronous: sync)
        let jane = StorePeople.expectedJane(n)
        for (key, entity, table) in [("predicate_sort_noindex", "Person", "ZPERSON"), ("predicate_sort_index", "IndexedPerson", "ZINDEXEDPERSON")] {
            let check = SQLiteSideCheck.expect(jane)
            workloads.append(StoreWorkload(
                key: key, unit: "match", operations: Int(jane.count),
                summary: "fetch \(entity) where name == \"Jane\" sorted by age (\(jane.count) of \(n)) in a new context, read name and age\(table == "ZINDEXEDPERSON" ? "; NSFetchIndexDescription on (name, age)" : ", no index")",
                sides: [
                    StoreSide("ocd", "NSPredicate(format: \"name == %@\", \"Jane\"), NSSortDescriptor(key: \"age\"), returnsObjectsAsFaults = false",
                              setUp: { ocdPeople.newContext() },
                              run: {
                                  let request = NSFetchRequest<NSManagedObject>(entityName: entity)
                                  request.predicate = NSPredicate(format: "name == %@", "Jane")
                                  request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
                                  request.returnsObjectsAsFaults = false
                                  let people = try ocdPeople.context.fetch(request)
                                  var namesMatch = true
                                  let ages = people.map { person -> Int64 in
                                      namesMatch = namesMatch && (person.value(forKey: "name") as? String) == "Jane"
                                      return int64Value(person.value(forKey: "age"))
                                  }
                                  return Outcome(peopleAges: ages, namesMatch: namesMatch)
                              },
                              tearDown: { ocdPeople.newContext() }, check: check),
                    StoreSide("c", "SELECT … WHERE ZNAME = ? ORDER BY ZAGE into structs (names strdup'ed)",
                              run: { Outcome(twin_fetch_people_named(twinPeople, table, "Jane")) }, check: check),
                    StoreSide("grdb", "Row.fetchCursor of the same SQL", run: { try grdbPeople.fetchPeople(table: table, named: "Jane", records: false) }, check: check),
                    StoreSide("grdb_record", "PersonRecord.fetchAll(db, sql:)", run: { try grdbPeople.fetchPeople(table: table, named: "Jane", records: true) }, check: check),
                ],
                repeatable: true,
                ocdStore: { ocdPeople.store }))
        }

        // MARK: update_all: one file per side, i0 += 1 per run (expected values follow the run index).
        do {
            let urls = ["ocd", "c", "grdb", "grdb_record"].map { files.file("update-\($0).sqlite") }
            for url in urls { try files.copy(itemsTemplate, to: url) }
            let ocdUpdate = try OCDStack(model: files.model, url: urls[0], synchronous: sync)
            guard let twinUpdate = twin_open(urls[1].path, sync) else { throw BenchmarkError("cannot open \(urls[1].path)") }
            let grdbUpdate = try GRDBSide(path: urls[2].path, synchronous: sync)
            let recordUpdate = try GRDBSide(path: urls[3].path, synchronous: sync)
            func check(_ url: URL) -> (Int, Outcome) -> String? {
                { index, outcome in
                    let (run, file) = Items.updated(n, updates: Int64(index + 1))
                    if outcome != run { return "run \(index): got \(outcome), expected \(run)" }
                    let held = files.summary(of: url)
                    return held == file ? nil : "run \(index): the file holds \(held), expected \(file)"
                }
            }
            workloads.append(StoreWorkload(
                key: "update_all", unit: "object", operations: Int(n),
                summary: "fetch every Item, set i0 = i0 + 1 on each, save",
                sides: [
                    StoreSide("ocd", "new context; fetch (returnsObjectsAsFaults = false); setValue(i0 + 1, forKey: \"i0\") on each; save()",
                              setUp: { ocdUpdate.newContext() },
                              run: {
                                  let objects = try fetchRealized(ocdUpdate.context)
                                  var outcome = Outcome(count: 0, first: 0, last: 0, checksum: 0)
                                  for object in objects {
                                      let value = int64Value(object.value(forKey: "i0")) + 1
                                      object.setValue(value, forKey: "i0")
                                      if outcome.count == 0 { outcome.first = value }
                                      outcome.last = value
                                      outcome.checksum += value
                                      outcome.count += 1
                                  }
                                  try ocdUpdate.context.save()
                                  return outcome
                              },
                              tearDown: { ocdUpdate.newContext() }, check: check(urls[0])),
                    StoreSide("c", "read every row into structs, then one transaction of UPDATE … SET Z_OPT, ZI0 WHERE Z_PK = ? AND Z_OPT = ?",
                              run: { Outcome(twin_update_items(twinUpdate)) }, check: check(urls[1])),
                    StoreSide("grdb", "queue.write: Row cursor, then one UPDATE statement per row (WHERE Z_PK AND Z_OPT)",
                              run: { try grdbUpdate.updateItems(records: false) }, check: check(urls[2])),
                    StoreSide("grdb_record", "queue.write: ItemRecord.fetchAll, then item.update(db) per record",
                              run: { try recordUpdate.updateItems(records: true) }, check: check(urls[3])),
                ],
                ocdStore: { ocdUpdate.store }))
        }

        // MARK: delete_all: a fresh copy of the N-item store per sample.
        do {
            let urls = ["ocd", "c", "grdb", "grdb_record"].map { files.file("delete-\($0).sqlite") }
            var stack: OCDStack?
            var twin: OpaquePointer?
            var grdb: GRDBSide?
            let expected = Outcome(count: n, first: 1, last: n, checksum: n * (n + 1) / 2)
            let empty = Outcome(count: 0, first: 0, last: 0, checksum: 0)
            func check(_ url: URL) -> (Int, Outcome) -> String? {
                StoreSide.expecting(expected, thenFile: url, holds: empty, read: files.summary(of:))
            }
            workloads.append(StoreWorkload(
                key: "delete_all", unit: "object", operations: Int(n),
                summary: "fetch every Item, delete each, save",
                sides: [
                    StoreSide("ocd", "default fetch (faults); context.delete(_:) of each; save()",
                              setUp: { try files.copy(itemsTemplate, to: urls[0]); stack = try OCDStack(model: files.model, url: urls[0], synchronous: sync) },
                              run: {
                                  let context = stack!.context
                                  let objects = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
                                  let keys = objects.isEmpty ? (0, 0) : (primaryKey(of: objects[0].objectID), primaryKey(of: objects[objects.count - 1].objectID))
                                  for object in objects { context.delete(object) }
                                  try context.save()
                                  return Outcome(count: Int64(objects.count), first: keys.0, last: keys.1, checksum: Int64(objects.count) * (Int64(objects.count) + 1) / 2)
                              },
                              tearDown: { stack?.close(); stack = nil }, check: check(urls[0])),
                    StoreSide("c", "SELECT Z_PK, Z_OPT, then one transaction of DELETE … WHERE Z_PK = ? AND Z_OPT = ?",
                              setUp: { try files.copy(itemsTemplate, to: urls[1]); twin = twin_open(urls[1].path, sync) },
                              run: { Outcome(twin_delete_items(twin)) },
                              tearDown: { twin_close(twin); twin = nil }, check: check(urls[1])),
                    StoreSide("grdb", "queue.write: Row cursor of Z_PK, Z_OPT, one DELETE statement per row",
                              setUp: { try files.copy(itemsTemplate, to: urls[2]); grdb = try GRDBSide(path: urls[2].path, synchronous: sync) },
                              run: { try grdb!.deleteItems(records: false) },
                              tearDown: { try grdb?.close(); grdb = nil }, check: check(urls[2])),
                    StoreSide("grdb_record", "queue.write: ItemRecord.fetchAll, item.delete(db) per record",
                              setUp: { try files.copy(itemsTemplate, to: urls[3]); grdb = try GRDBSide(path: urls[3].path, synchronous: sync) },
                              run: { try grdb!.deleteItems(records: true) },
                              tearDown: { try grdb?.close(); grdb = nil }, check: check(urls[3])),
                ],
                ocdStore: { stack?.store }))
        }

        // MARK: count.
        let countExpected = SQLiteSideCheck.expect(Outcome(count: n, first: n, last: n, checksum: n))
        workloads.append(StoreWorkload(
            key: "count", unit: "count", operations: 1,
            summary: "count the \(n) Items",
            sides: [
                StoreSide("ocd", "context.count(for: NSFetchRequest(entityName: \"Item\"))",
                          run: {
                              let count = Int64(try ocdRead.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")))
                              return Outcome(count: count, first: count, last: count, checksum: count)
                          }, check: countExpected),
                StoreSide("c", "SELECT COUNT(*) FROM ZITEM (prepared per call)", run: { Outcome(twin_count_items(twinRead)) }, check: countExpected),
                StoreSide("grdb", "Int64.fetchOne(SELECT COUNT(*))", run: { try grdbRead.countItems(records: false) }, check: countExpected),
                StoreSide("grdb_record", "ItemRecord.fetchCount(db)", run: { try grdbRead.countItems(records: true) }, check: countExpected),
            ],
            repeatable: true,
            ocdStore: { ocdRead.store }))

        // MARK: small_saves.
        workloads.append(insertWorkload(key: "small_saves", synchronous: sync, saves: sizes.smallSaves))

        // MARK: existing_object: N registered objects looked up by ID.
        do {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = ocdRead.coordinator
            var objects: [NSManagedObject] = []
            var ids: [NSManagedObjectID] = []
            let keys: [Int64] = Array(1...max(n, 1))
            var registryLoaded = false
            let expected = SQLiteSideCheck.expect(Items.firstAttributeRead(n))
            workloads.append(StoreWorkload(
                key: "existing_object", unit: "lookup", operations: Int(n),
                summary: "look up \(n) registered objects by ID (C: an array indexed by Z_PK; GRDB: a [Z_PK: ItemRecord] dictionary; both read i0 of what they find)",
                sides: [
                    StoreSide("ocd", "existingObject(with:) for each ID of the \(n) objects the context holds, checked identical to the fetched object (no value read)",
                              setUp: {
                                  if objects.isEmpty {
                                      objects = try fetchRealized(context)
                                      ids = objects.map(\.objectID)
                                  }
                              },
                              run: {
                                  var outcome = Outcome(count: 0, first: 0, last: Int64(ids.count) - 1, checksum: 0)
                                  for (index, id) in ids.enumerated() where try context.existingObject(with: id) === objects[index] {
                                      outcome.checksum += Int64(index)
                                      outcome.count += 1
                                  }
                                  return outcome
                              }, check: SQLiteSideCheck.expect(Outcome(count: n, first: 0, last: n - 1, checksum: n * (n - 1) / 2))),
                    StoreSide("c", "registry[Z_PK] in a C array of the loaded rows",
                              setUp: {
                                  if !registryLoaded {
                                      guard twin_load_registry(twinRead) != 0 else { throw BenchmarkError("twin_load_registry failed") }
                                      registryLoaded = true
                                  }
                              },
                              run: { keys.withUnsafeBufferPointer { Outcome(twin_lookup_registry(twinRead, $0.baseAddress, Int64($0.count))) } },
                              check: expected),
                    StoreSide("grdb", "a Swift [Int64: ItemRecord] of the loaded records",
                              setUp: { if grdbRead.registry.isEmpty { try grdbRead.loadRegistry() } },
                              run: { grdbRead.lookUp(keys) },
                              check: expected),
                ],
                repeatable: true,
                ocdStore: { ocdRead.store }))
        }

        if durable {
            workloads.append(insertWorkload(key: "insert_setvalue_durable", synchronous: "FULL", saves: nil))
            workloads.append(insertWorkload(key: "small_saves_durable", synchronous: "FULL", saves: sizes.smallSaves))
        }
        return workloads
    }
}

enum SQLiteSideCheck {
    static func expect(_ outcome: Outcome) -> (Int, Outcome) -> String? { StoreSide.expecting { _ in outcome } }
}
