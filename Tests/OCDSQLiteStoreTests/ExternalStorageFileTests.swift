import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import OCDTestSupport
import Testing

/// Files in `.<name>_SUPPORT/_EXTERNAL_DATA` (Core Data's choice for large externally storable values)
/// are removed once a committed save no longer refers to them: a deleted row's, and a replaced value's.
/// They were left on disk for good, keeping data the user deleted. A save that does not commit keeps them.
@Suite struct ExternalStorageFileTests {
    private func model() -> NSManagedObjectModel {
        TestModel.make { entities, _ in
            let photo = NSAttributeDescription()
            photo.name = "photo"
            photo.attributeType = .binaryDataAttributeType
            photo.allowsExternalBinaryDataStorage = true
            entities["Badge"]!.properties.append(photo)
        }
    }

    /// Badges 1…count, each row's photo column turned into a reference to a file of its own, as Core Data
    /// writes a large value.
    private func storeWithFiles(_ url: URL, count: Int) throws -> [URL] {
        let folder = url.deletingLastPathComponent().appendingPathComponent(".Store_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stack = try SQLiteStack(model: model(), url: url)
        try withExtendedLifetime(stack.context) {
            for number in 1...count { stack.insert("Badge", ["number": number]) }
            try stack.context.save()
        }
        var files: [URL] = []
        for key in 1...count {
            let name = UUID().uuidString
            try Data([0x89, 0x50, UInt8(key)]).write(to: folder.appendingPathComponent(name))
            try RawSQL.execute(url, "UPDATE ZBADGE SET ZPHOTO = X'02\(Data(name.utf8).map { String(format: "%02X", $0) }.joined())00' WHERE ZNUMBER = \(key)")
            files.append(folder.appendingPathComponent(name))
        }
        return files
    }

    private func badge(_ number: Int, in stack: TestStack) throws -> NSManagedObject {
        try #require(try stack.fetch("Badge", "number == %@", number).first)
    }

    @Test func aReplacedValueOrADeletedRowRemovesItsFileOnceSaved() throws {
        let folder = TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let url = folder.file()
        let files = try storeWithFiles(url, count: 4)
        let stack = try SQLiteStack(model: model(), url: url)
        try withExtendedLifetime(stack.context) {
            let read = try badge(1, in: stack).value(forKey: "photo") as? Data
            #expect(read == Data([0x89, 0x50, 1]))
            try badge(1, in: stack).setValue(Data([7]), forKey: "photo")
            try badge(2, in: stack).setValue(nil, forKey: "photo")
            stack.context.delete(try badge(3, in: stack))
            try badge(4, in: stack).setValue(40, forKey: "number")
            #expect(files.allSatisfy { FileManager.default.fileExists(atPath: $0.path) }, "nothing is removed before the save")
            try stack.context.save()
        }
        #expect(!FileManager.default.fileExists(atPath: files[0].path), "replaced")
        #expect(!FileManager.default.fileExists(atPath: files[1].path), "set to nil")
        #expect(!FileManager.default.fileExists(atPath: files[2].path), "its row deleted")
        #expect(FileManager.default.fileExists(atPath: files[3].path), "another column changed: still referred to")
        let reader = try SQLiteStack(model: model(), url: url)
        try withExtendedLifetime(reader.context) {
            let replaced = try badge(1, in: reader).value(forKey: "photo") as? Data
            let kept = try badge(40, in: reader).value(forKey: "photo") as? Data
            #expect(replaced == Data([7]))
            #expect(kept == Data([0x89, 0x50, 4]))
        }
    }

    /// Only names Core Data writes (UUIDs) are removed: a damaged column naming `.` leaves the folder and
    /// the other rows' files alone.
    @Test func aColumnNamingTheFolderRemovesNothing() throws {
        let folder = TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let url = folder.file()
        let files = try storeWithFiles(url, count: 2)
        try RawSQL.execute(url, "UPDATE ZBADGE SET ZPHOTO = X'022E00' WHERE ZNUMBER = 1")
        let stack = try SQLiteStack(model: model(), url: url)
        try withExtendedLifetime(stack.context) {
            stack.context.delete(try badge(1, in: stack))
            try stack.context.save()
        }
        #expect(FileManager.default.fileExists(atPath: files[1].path))
        #expect(FileManager.default.fileExists(atPath: files[1].deletingLastPathComponent().path))
    }

    @Test func aSaveThatFailsKeepsTheFiles() throws {
        let folder = TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let url = folder.file()
        let files = try storeWithFiles(url, count: 2)
        let stack = try SQLiteStack(model: model(), url: url)
        try withExtendedLifetime(stack.context) {
            let first = try badge(1, in: stack), second = try badge(2, in: stack)
            stack.context.delete(first)
            second.setValue(Data([9]), forKey: "photo")
            // Another writer changed badge 2 since it was read: the save's version check fails and the
            // merge policy (error) refuses it, so the delete before it is rolled back too.
            try RawSQL.execute(url, "UPDATE ZBADGE SET Z_OPT = Z_OPT + 1 WHERE ZNUMBER = 2")
            #expect(throws: (any Error).self) { try stack.context.save() }
        }
        #expect(files.allSatisfy { FileManager.default.fileExists(atPath: $0.path) })
        let count = try RawSQL.rows(url, "SELECT COUNT(*) AS n FROM ZBADGE").first?["n"] as? Int64
        #expect(count == 2)
    }
}
