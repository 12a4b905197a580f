import Foundation
import OCDModel
import OCDPredicate
import class OCDPredicate.NSExpression

/// Pieces of models with derived attributes that both the object-graph suite (on either store) and the
/// SQLite store's own tests build.
public enum DerivedModels {
    /// A derived attribute `name` of `type` whose value is `format` (`"pages.@count"`, `"now()"` …).
    public static func derived(_ name: String, _ type: NSAttributeType, _ format: String) -> NSDerivedAttributeDescription {
        let attribute = NSDerivedAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.derivationExpression = NSExpression(format: format)
        return attribute
    }

    /// A tree: Node has a name and parent ⇄ children, and reads `parentName = parent.name` and
    /// `childCount = children.@count` through a relationship of the entity to itself.
    public static func tree() -> NSManagedObjectModel {
        let node = NSEntityDescription()
        node.name = "Node"
        node.managedObjectClassName = "NSManagedObject"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let (children, parent) = RelationshipPairs.toMany("children", from: node, to: node, inverse: "parent")
        node.properties = [name, derived("parentName", .stringAttributeType, "parent.name"),
                           derived("childCount", .integer64AttributeType, "children.@count"), parent, children]
        let model = NSManagedObjectModel()
        model.entities = [node]
        return model
    }
}
