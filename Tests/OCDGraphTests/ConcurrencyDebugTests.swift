import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore

@Suite struct ConcurrencyDebugTests {
    @Test func useOffTheQueueStopsWhenDebuggingIsOn() async {
        await #expect(processExitsWith: .failure) {
            NSManagedObjectContext.concurrencyDebugEnabled = true
            let stack = try TestStack()
            _ = stack.context.insertedObjects
            _ = try stack.fetch("Employee")
        }
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
