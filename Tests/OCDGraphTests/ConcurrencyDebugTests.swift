import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

@Suite struct ConcurrencyDebugTests {
    @Test func useOffTheQueueStopsWhenDebuggingIsOn() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            NSManagedObjectContext.concurrencyDebugEnabled = true
            let stack = try TestStack()
            _ = stack.context.insertedObjects
            _ = try stack.fetch("Employee")
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("CoreData concurrency violation:"), "stopped with another message: \(output)")
    }

    @Test func useInsidePerformAndWaitIsAllowedWhenDebuggingIsOn() async {
        await #expect(processExitsWith: .success) {
            NSManagedObjectContext.concurrencyDebugEnabled = true
            let stack = try TestStack()
            try stack.context.performAndWait {
                _ = stack.insert("Employee", ["name": "Ann"])
                try stack.context.save()
                // Reentrant: a nested performAndWait runs at once.
                stack.context.performAndWait { _ = stack.context.hasChanges }
            }
            let count = try await stack.context.perform { try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) }
            if count != 1 { exit(1) }
        }
    }
}
