import Foundation
import OCDModel

/// The model of the SQLite store's process tests (the kill test and the two-process conflict test): Items
/// saved in batches, and one Ledger that every save updates. `ocd-kill-writer` and the tests build it here,
/// so that their version hashes agree.
public enum LedgerModel {
    public static func make() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let item = NSEntityDescription()
        item.name = "Item"
        item.managedObjectClassName = "NSManagedObject"
        item.properties = [attribute("batch", .integer64AttributeType), attribute("index", .integer64AttributeType), attribute("payload", .stringAttributeType)]
        let ledger = NSEntityDescription()
        ledger.name = "Ledger"
        ledger.managedObjectClassName = "NSManagedObject"
        ledger.properties = [attribute("total", .integer64AttributeType), attribute("saves", .integer64AttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [item, ledger]
        return model
    }
}
