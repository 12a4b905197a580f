import Foundation
import OCDModel

/// The attribute and entity descriptions tests build models from in code.
public enum ModelDescriptions {
    /// An attribute, optional unless said.
    public static func attribute(_ name: String, _ type: NSAttributeType = .stringAttributeType, optional: Bool = true,
                                 defaultValue: Any? = nil, transient: Bool = false) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        attribute.defaultValue = defaultValue
        attribute.isTransient = transient
        return attribute
    }

    /// An entity of plain `NSManagedObject`s with `properties`.
    public static func entity(_ name: String, _ properties: [NSPropertyDescription] = []) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = "NSManagedObject"
        entity.properties = properties
        return entity
    }
}
