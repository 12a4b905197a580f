import Foundation
import OCDGraph
import OCDModel
import OCDPredicate
import OCDSQLiteStore
import OCDStore
import Testing
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSComparisonPredicate
import class OCDPredicate.NSCompoundPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSSortDescriptor

/// Regressions for the SQLite store review: each test failed (or crashed) before its fix.
@Suite struct SQLiteReviewRegressionTests {
    @Test func aRefetchWithABatchSizeSeesAnotherContextsSave() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let other = stack.newContext()
        try withExtendedLifetime((stack.context, other)) {
            for index in 0..<30 { stack.insert("Project", ["title": "P\(index)"]) }
            try stack.context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Project")
            request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
            _ = try stack.fetch("Project")   // faults holding rows, never fired
            let theirs = try #require(try stack.fetch("Project", "title == 'P7'", in: other).first)
            theirs.setValue("Renamed", forKey: "title")
            try other.save()
            request.fetchBatchSize = 10
            let titles = try stack.context.fetch(request).map { $0.value(forKey: "title") as? String }
            #expect(titles.contains("Renamed"))
            #expect(!titles.contains("P7"))
            // And the object can be changed and saved: its version is the store's.
            let renamed = try #require(try stack.context.fetch(request).first { $0.value(forKey: "title") as? String == "Renamed" })
            renamed.setValue("Again", forKey: "title")
            try stack.context.save()
        }
    }

    @Test func refreshingAnUnfiredFaultDropsItsCachedRow() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let other = stack.newContext()
        try withExtendedLifetime((stack.context, other)) {
            stack.insert("Company", ["name": "Old"])
            try stack.context.save()
            stack.context.reset()
            let fault = try #require(try stack.fetch("Company").first)
            #expect(fault.isFault)
            let theirs = try #require(try stack.fetch("Company", in: other).first)
            theirs.setValue("New", forKey: "name")
            try other.save()
            stack.context.refresh(fault, mergeChanges: false)
            #expect(fault.value(forKey: "name") as? String == "New")
        }
    }

    @Test func prefetchingForThousandsOfObjectsIsChunked() throws {
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: TestModel.make(), url: folder.file())
        try withExtendedLifetime(stack.context) {
            for index in 0..<1_200 {
                let department = stack.insert("Department", ["name": "D\(index)"])
                stack.insert("Employee", ["name": "E\(index)", "department": department])
            }
            try stack.context.save()
            stack.context.reset()
            let log = SQLStatementLog()
            stack.sqliteStore.statementLog = log
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.relationshipKeyPathsForPrefetching = ["employees"]
            let departments = try stack.context.fetch(request)
            stack.sqliteStore.statementLog = nil
            #expect(departments.count == 1_200)
            #expect(departments.allSatisfy { ($0.value(forKey: "employees") as? Set<NSManagedObject>)?.count == 1 })
            // The fetch, 3 chunks of destination keys, 3 chunks of destination rows.
            #expect(log.statements.count == 7, "\(log.statements.count) statements")
        }
    }

    @Test func aUniqueValueFreedByAnUpdateCanBeTakenByAnInsertInTheSameSave() throws {
        let model = TestModel.make { entities, _ in entities["Project"]!.uniquenessConstraints = [["title"]] }
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: model, url: folder.file())
        try withExtendedLifetime(stack.context) {
            let first = stack.insert("Project", ["title": "x"])
            try stack.context.save()
            first.setValue("z", forKey: "title")
            stack.insert("Project", ["title": "x"])
            try stack.context.save()
            #expect(try RawSQL.rows(folder.file(), "SELECT ZTITLE FROM ZPROJECT ORDER BY ZTITLE").compactMap { $0["ZTITLE"] as? String } == ["x", "z"])
        }
    }

    @Test func stringsKeepEmbeddedNULCharacters() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        do {
            let stack = try SQLiteStack(model: TestModel.make(), url: url)
            try withExtendedLifetime(stack.context) {
                stack.insert("Company", ["name": "a\u{0}b"])
                try stack.context.save()
            }
        }
        let stack = try SQLiteStack(model: TestModel.make(), url: url)
        try withExtendedLifetime(stack.context) {
            let name = try stack.fetch("Company").first?.value(forKey: "name") as? String
            #expect(name == "a\u{0}b")
        }
    }

    @Test func aFoldedComparisonWithAConstantUsedTwiceBindsItEachTime() throws {
        let folder = TemporaryFolder()
        let sqlite = try SQLiteStack(model: TestModel.make(), url: folder.file())
        let memory = try TestStack()
        try withExtendedLifetime((sqlite.context, memory.context)) {
            for stack in [sqlite, memory] {
                stack.insert("Project", ["title": "Alpha"])
                stack.insert("Project", ["title": "beta"])
                try stack.context.save()
            }
            let inList = try sqlite.fetch("Project", "%@ IN[c] {'ALPHA', 'BETA'} AND title BEGINSWITH[c] %@", "alpha", "A").count
            #expect(inList == (try memory.fetch("Project", "%@ IN[c] {'ALPHA', 'BETA'} AND title BEGINSWITH[c] %@", "alpha", "A").count))
            #expect(inList == 1)
            // BETWEEN with options has no format syntax: built in code, followed by another bound value.
            let between = NSComparisonPredicate(leftExpression: NSExpression(forKeyPath: "title"),
                                                rightExpression: NSExpression(forConstantValue: ["a", "B"]),
                                                modifier: .direct, type: .between, options: [.caseInsensitive])
            let predicate = NSCompoundPredicate(andPredicateWithSubpredicates: [between, NSPredicate(format: "title != %@", "zzz")])
            let request = NSFetchRequest<NSManagedObject>(entityName: "Project")
            request.predicate = predicate
            let inSQL = try sqlite.context.fetch(request).count
            #expect(inSQL == (try memory.context.fetch(request).count))
            #expect(inSQL == 1)
        }
    }

    @Test func namesThatAreNotIdentifiersCannotReachSQL() throws {
        let model = TestModel.make { entities, _ in entities["Badge"]!.name = "Badge; DROP TABLE Z_METADATA" }
        let folder = TemporaryFolder()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.file(), options: nil)
        } throws: { error in
            (error as NSError).code == 134080 && (error as NSError).localizedDescription.contains("cannot name an SQLite table")
        }
    }
}
