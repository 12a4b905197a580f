import Foundation

extension NSManagedObjectModel {
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

    /// What a model cannot be used with, in the words of the exceptions Apple's Core Data raises when a
    /// model becomes immutable or its entity is edited. A coordinator stops with them (``markInUse()``);
    /// a model file's reader throws the first as a load error.
    ///
    /// - A property of a subentity named like one it inherits, unless it repeats it exactly (the model
    ///   drops such a repetition when it is used: ``dropIdenticalRedeclarations()``).
    /// - A uniqueness constraint naming no property of the entity, a to-many relationship or a fetched
    ///   property (Apple raises when the constraints are set; here, once the model is used, as an entity's
    ///   constraints may be set before its properties).
    package func usageProblems() -> [(entity: String, reason: String)] {
        var problems: [(entity: String, reason: String)] = []
        for entity in entities {
            let entityName = entity.name ?? ""
            var reported = Set<String>()
            var ancestor = entity.superentity
            while let parent = ancestor {
                for property in entity.ownProperties where !reported.contains(property.name)
                    && parent.ownProperties.contains(where: { $0.name == property.name }) {
                    reported.insert(property.name)
                    problems.append((entityName, "Property named '\(property.name)' in entity '\(entityName)' conflicts with property inherited from parent entity '\(parent.name ?? "")'"))
                }
                ancestor = parent.superentity
            }
            let properties = entity.propertiesByName
            for group in entity.uniquenessConstraints {
                for element in group {
                    let name = (element as? String) ?? (element as? NSPropertyDescription)?.name ?? "\(element)"
                    guard let property = properties[name] else {
                        // A dotted name is an element of a composite attribute (`location.latitude`).
                        if !Self.namesCompositeElement(name, of: entity) {
                            problems.append((entityName, "Can't find property named '\(name)' for a uniqueness constraint of entity '\(entityName)'"))
                        }
                        continue
                    }
                    if let relationship = property as? NSRelationshipDescription, relationship.isToMany {
                        problems.append((entityName, "Cannot create unique constraints for to-many relationships (\(entityName).\(name))."))
                    } else if property is NSFetchedPropertyDescription {
                        problems.append((entityName, "Property type is not valid for unique constraints (\(entityName).\(name))."))
                    }
                }
            }
        }
        return problems
    }

    /// Removes from each subentity the properties that repeat an inherited one exactly (the same kind and
    /// version hash), which Apple's Core Data accepts: the entity inherits the property instead, so a store
    /// maps it to the parent's column. `sub.properties = parent.properties + [extra]`, written before the
    /// two are linked, declares the parent's properties again this way (as copies).
    package func dropIdenticalRedeclarations() {
        for entity in entities {
            guard let parent = entity.superentity else { continue }
            let inherited = parent.propertiesByName
            let repeated = entity.ownProperties.filter { property in
                guard let original = inherited[property.name] else { return false }
                return type(of: original) == type(of: property) && original.versionHash == property.versionHash
            }
            if repeated.isEmpty { continue }
            entity.properties = entity.ownProperties.filter { property in !repeated.contains { $0 === property } }
        }
    }

    /// What `cdtool model validate` and `cdtool compile` report, one line each: `error:` for what breaks a
    /// store or the object graph, `warning:` for what Xcode warns about.
    package func consistencyProblems() -> [String] {
        let model = self
        var problems = usageProblems().map { "error: \($0.entity): \($0.reason)" }
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
            for index in entity.indexes {
                for element in index.elements where element.propertyName.map({ !names.contains($0) }) ?? true {
                    problems.append("error: \(entityName): the index '\(index.name)' names '\(element.propertyName ?? "")', which is not a property")
                }
            }
        }
        return problems
    }
}

