// A writer for the SQLite store's kill test (Tests/OCDSQLiteStoreTests/KillTests.swift): it saves in a
// loop until it is killed. Each save inserts `batchSize` items tagged with the save's number and adds
// `batchSize` to one ledger object's total, so a store holding only whole saves satisfies
// `count(items) == ledger.total` and has exactly `batchSize` items per batch.
//
// Usage: ocd-kill-writer STORE-PATH [BATCH-SIZE]
import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import OCDTestSupport
import class OCDPredicate.NSPredicate

/// Writes a line to standard output at once (the test reads it while the process runs).
func say(_ line: String) {
    FileHandle.standardOutput.write((line + "\n").data(using: .utf8)!)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write("usage: ocd-kill-writer STORE-PATH [BATCH-SIZE]\n".data(using: .utf8)!)
    exit(2)
}
let batchSize = arguments.count > 2 ? Int(arguments[2]) ?? 50 : 50

let model = LedgerModel.make()

let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
do {
    try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: arguments[1]), options: nil)
} catch {
    FileHandle.standardError.write("cannot open the store: \(error)\n".data(using: .utf8)!)
    exit(1)
}
let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
context.persistentStoreCoordinator = coordinator
context.performAndWait {
    do {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Ledger")
        let book = try context.fetch(request).first ?? NSEntityDescription.insertNewObject(forEntityName: "Ledger", into: context)
        var saves = (book.value(forKey: "saves") as? Int) ?? 0
        say("ready \(saves)")
        while true {
            for index in 0..<batchSize {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                object.setValue(saves, forKey: "batch")
                object.setValue(index, forKey: "index")
                object.setValue(String(repeating: "x", count: 200), forKey: "payload")
            }
            book.setValue(((book.value(forKey: "total") as? Int) ?? 0) + batchSize, forKey: "total")
            saves += 1
            book.setValue(saves, forKey: "saves")
            try context.save()
            say("saved \(saves)")
        }
    } catch {
        FileHandle.standardError.write("save failed: \(error)\n".data(using: .utf8)!)
        exit(1)
    }
}
