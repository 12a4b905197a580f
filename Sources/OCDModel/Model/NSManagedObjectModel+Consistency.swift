import Foundation

extension NSManagedObjectModel {
    /// What `cdtool model validate` and `cdtool compile` report, one line each: `error:` for what breaks a
    /// store or the object graph, `warning:` for what Xcode warns about.
    /// Whether `name` is `composite.element` (or deeper) of one of `entity`'s composite attributes.
    static func namesCompositeElement(_ name: String, of entity: NSEntityDescription) -> Bool {
        let parts = name.split(separator: ".").map(String.init)
        guard parts.count > 1, var composite = entity.propertiesByName[parts[0]] as? NSCompositeAttributeDescription else { return false }
        for (index, part) in parts.dropFirst().enumerated() {
            guard let element = composite.elements.first(where: { $0.name == part }) else { return false }
            if index == parts.count - 2 { return true }
            guard let nested = element as? NSCompositeAttributeDescription else { return false }
            composite = nested
        }
        return false
    }

    package func consistencyProblems() -> [String] {
        let model = self
        var problems: [String] = []
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            let entityName = entity.name ?? "?"
            for property in entity.ownProperties {
                let place = "\(entityName).\(property.name)"
                if let attribute = property as? NSAttributeDescription,
                   attribute.attributeType == .undefinedAttributeType, !attribute.isTransient, !(attribute is NSDerivedAttributeDescription) {
                    problems.append("error: \(place): a stored attribute needs a type")
                }
                if let composite = property as? NSCompositeAttributeDescription {
                    func check(_ composite: NSCompositeAttributeDescription, _ path: String) {
                        for element in composite.elements {
                            if let nested = element as? NSCompositeAttributeDescription {
                                check(nested, path + "." + element.name)
                            } else if !NSCompositeAttributeDescription.canBeElement(element) {
                                problems.append("error: \(path).\(element.name): a composite cannot hold an undefined, object-ID or derived attribute, or binary data stored outside the file (it is not stored)")
                            }
                        }
                    }
                    check(composite, place)
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
                // A dotted name is an element of a composite attribute (`location.latitude`).
                for case let name as String in group where !names.contains(name) && !Self.namesCompositeElement(name, of: entity) {
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

