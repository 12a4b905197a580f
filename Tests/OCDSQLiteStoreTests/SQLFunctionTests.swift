import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
import Testing
import class OCDPredicate.NSPredicate

/// The SQL functions behind folded comparisons compare as NSPredicate does, per value type.
@Suite struct SQLFunctionTests {
    @Test func aNumberAndAStringWithTheSameTextAreDifferentConstants() throws {
        let folder = TemporaryFolder()
        let sqlite = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let memory = try TestStack()
        try withExtendedLifetime((sqlite.context, memory.context)) {
            for stack in [sqlite.context, memory.context] {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Project", into: stack)
                object.setValue("1", forKey: "title")
                try stack.save()
            }
            // Same connection, same operator and options: the string "1" first, then the number 1.
            for argument in ["1" as Any, NSNumber(value: 1) as Any, "1" as Any] {
                let inSQL = try sqlite.fetch("Project", "title ==[c] %@", argument).count
                let inMemory = try memory.fetch("Project", "title ==[c] %@", argument).count
                #expect(inSQL == inMemory, "\(argument) (\(type(of: argument)))")
            }
            #expect(try sqlite.fetch("Project", "title ==[c] %@", "1").count == 1)
        }
    }
}
