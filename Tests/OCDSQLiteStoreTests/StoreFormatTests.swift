import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import Testing

/// Files this project made before store format 2 kept an ordered many-to-many's order in the other
/// `Z_FOK_` column and externally storable values without Core Data's marker. Such a file (metadata:
/// framework version 1, no `OCDStoreFormat`) is still read and written as it was made; a new file
/// records format 2 and Core Data's layout.
@Suite struct StoreFormatTests {
    private func model() -> NSManagedObjectModel {
        TestModel.make { entities, _ in
            entities["Project"]!.relationshipsByName["members"]!.isOrdered = true
            let photo = NSAttributeDescription()
            photo.name = "photo"
            photo.attributeType = .binaryDataAttributeType
            photo.allowsExternalBinaryDataStorage = true
            entities["Badge"]!.properties.append(photo)
        }
    }

    /// The join table of Project.members and its two order columns, by what they hold.
    private func orderColumns(_ url: URL) throws -> (table: String, projectColumn: String, membersOrder: String, projectsOrder: String) {
        let table = try #require(try RawSQL.rows(url, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' AND sql LIKE '%Z_FOK_%'").first?["name"] as? String)
        let columns = try RawSQL.rows(url, "PRAGMA table_info(\(table))").compactMap { $0["name"] as? String }
        let projectColumn = try #require(columns.first { !$0.hasPrefix("Z_FOK_") && $0.hasSuffix("PROJECTS") })
        let memberColumn = try #require(columns.first { !$0.hasPrefix("Z_FOK_") && $0.hasSuffix("MEMBERS") })
        // Core Data: Z_FOK_<members column> orders a project's members.
        return (table, projectColumn, "Z_FOK_" + memberColumn.dropFirst(2), "Z_FOK_" + projectColumn.dropFirst(2))
    }

    private func memberNames(_ url: URL, _ model: NSManagedObjectModel) throws -> [String] {
        let stack = try SQLiteStack(model: model, url: url)
        return try withExtendedLifetime(stack.context) {
            let project = try #require(try stack.fetch("Project").first)
            return (project.value(forKey: "members") as? NSOrderedSet)?.array.compactMap { ($0 as? NSManagedObject)?.string("name") } ?? []
        }
    }

    @Test func aFileOfTheFirstLayoutIsReadAndWrittenAsItWasMade() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let model = model()
        do {
            let stack = try SQLiteStack(model: model, url: url)
            let project = stack.insert("Project", ["title": "Apollo"])
            let members = ["Ann", "Bob", "Cy"].map { stack.insert("Employee", ["name": $0]) }
            project.setValue(NSOrderedSet(array: members), forKey: "members")
            let badge = stack.insert("Badge", ["number": 1])
            badge.setValue(Data([0x02, 0xAA]), forKey: "photo")
            try stack.context.save()
        }
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(metadata["OCDStoreFormat"] as? Int == 2)
        #expect(try memberNames(url, model) == ["Ann", "Bob", "Cy"])
        #expect(try RawSQL.rows(url, "SELECT ZPHOTO FROM ZBADGE").first?["ZPHOTO"] as? Data == Data([0x01, 0x02, 0xAA]))

        // Make it a file of the first layout: order columns swapped, no marker, no format key.
        let columns = try orderColumns(url)
        try RawSQL.execute(url, "UPDATE \(columns.table) SET \(columns.membersOrder) = \(columns.projectsOrder), \(columns.projectsOrder) = \(columns.membersOrder)")
        try RawSQL.execute(url, "UPDATE ZBADGE SET ZPHOTO = substr(ZPHOTO, 2)")
        metadata["OCDStoreFormat"] = nil
        let plist = try PropertyListSerialization.data(fromPropertyList: metadata.filter { $0.key != NSStoreUUIDKey && $0.key != NSStoreTypeKey }, format: .binary, options: 0)
        try RawSQL.execute(url, "UPDATE Z_METADATA SET Z_PLIST = X'\(plist.map { String(format: "%02X", $0) }.joined())'")
        #expect(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)["OCDStoreFormat"] == nil)

        // Read as it was made, and written so.
        #expect(try memberNames(url, model) == ["Ann", "Bob", "Cy"])
        do {
            let stack = try SQLiteStack(model: model, url: url)
            try withExtendedLifetime(stack.context) {
                let badge = try #require(try stack.fetch("Badge").first)
                #expect(badge.value(forKey: "photo") as? Data == Data([0x02, 0xAA]))
                badge.setValue(Data([0x01]), forKey: "photo")
                let project = try #require(try stack.fetch("Project").first)
                let members = try #require(project.value(forKey: "members") as? NSOrderedSet)
                project.setValue(NSOrderedSet(array: members.array.reversed()), forKey: "members")
                try stack.context.save()
            }
        }
        #expect(try RawSQL.rows(url, "SELECT ZPHOTO FROM ZBADGE").first?["ZPHOTO"] as? Data == Data([0x01]))
        #expect(try memberNames(url, model) == ["Cy", "Bob", "Ann"])
        let legacyOrder = try RawSQL.rows(url, "SELECT \(columns.projectsOrder) AS p FROM \(columns.table) WHERE \(columns.projectsOrder) IS NOT NULL").count
        #expect(legacyOrder == 3, "the first layout keeps a project's order in the other column")
        #expect(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)["OCDStoreFormat"] == nil)
    }
}
