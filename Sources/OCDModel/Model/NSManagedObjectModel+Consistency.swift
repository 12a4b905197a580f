import Foundation

extension NSManagedObjectModel {
    /// What `cdtool model validate` and `cdtool compile` report, one line each: `error:` for what breaks a
    /// store or the object graph, `warning:` for what Xcode warns about.
    package func consistencyProblems() -> [String] {
        let model = self
        var problems: [String] = []
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            let entityName = entity.name ?? "?"
            for property in entity.properties {
                let place = "\(entityName).\(property.name)"
                if let attribute = property as? NSAttributeDescription,
                   attribute.attributeType == .undefinedAttributeType, !attribute.isTransient, !(attribute is NSDerivedAttributeDescription) {
                    problems.append("error: \(place): a stored attribute needs a type")
                }
                guard let relationship = property as? NSRelationshipDescription else { continue }
                guard let destination = relationship.destinationEntity else {
                    problems.append("error: \(place): the destination entity '\(relationship.destinationEntityName ?? "")' is not in the model")
                    continue
                }
                guard let inverse = relationship.inverseRelationship else {
                    if let name = relationship.inverseRelationshipName {
                        problems.append("error: \(place): the inverse '\(name)' is not a relationship of \(destination.name ?? "?")")
                    } else if !relationship.isTransient {
                        problems.append("warning: \(place): no inverse relationship; Core Data cannot keep the object graph consistent")
                    }
                    continue
                }
                if inverse.inverseRelationship !== relationship && inverse.inverseRelationshipName != relationship.name {
                    problems.append("error: \(place): its inverse \(destination.name ?? "?").\(inverse.name) has \(inverse.inverseRelationshipName.map { "the inverse '\($0)'" } ?? "no inverse"), not '\(relationship.name)'")
                }
                if inverse.destinationEntity.map({ !entity.isKindOf(entity: $0) }) ?? true {
                    problems.append("error: \(place): its inverse \(destination.name ?? "?").\(inverse.name) points to \(inverse.destinationEntity?.name ?? "nothing"), not to \(entityName)")
                }
            }
            let names = Set(entity.propertiesByName.keys)
            for group in entity.uniquenessConstraints {
                for case let name as String in group where !names.contains(name) {
                    problems.append("error: \(entityName): the uniqueness constraint names '\(name)', which is not a property")
                }
            }
            for index in entity.indexes {
                for element in index.elements where element.propertyName.map({ !names.contains($0) }) ?? true {
                    problems.append("error: \(entityName): the index '\(index.name)' names '\(element.propertyName ?? "")', which is not a property")
                }
            }
        }
        return problems
    }
}

