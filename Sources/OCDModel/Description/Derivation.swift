import Foundation
import OCDPredicate
import class OCDPredicate.NSExpression

/// What a derived attribute computes, in the forms Core Data's SQLite store supports (the
/// `NSDerivedAttributeDescription` reference): a value of the object itself or of its to-one
/// destination, maybe through `canonical:`, `lowercase:` or `uppercase:`; the `@count` of a to-many
/// relationship or the `@sum` of one of its destinations' attributes; or `now()`.
package enum Derivation: Sendable {
    /// `name`, `canonical:(name)`: an attribute of the object itself.
    case attribute(key: String, function: TextFunction?)
    /// `author.name`, `lowercase:(author.name)`: an attribute of the to-one destination (nil without one).
    case toOne(relationship: String, key: String, function: TextFunction?)
    /// `pages.@count` (`count:(pages)` once compiled): the number of destinations.
    case count(relationship: String)
    /// `pages.words.@sum`, `pages.@sum.words` (`sum:(pages.words)` once compiled): the destinations'
    /// values added up, 0 for none.
    case sum(relationship: String, key: String)
    /// `now()`: the time of the save that inserts or changes the object.
    case now

    /// The string functions a derivation may apply to a value.
    package enum TextFunction: String, Sendable {
        case canonical = "canonical:", lowercase = "lowercase:", uppercase = "uppercase:"
    }

    /// The relationship the value is read through (nil for a value of the object itself or `now()`).
    package var relationship: String? {
        switch self {
        case .toOne(let relationship, _, _), .count(let relationship), .sum(let relationship, _): return relationship
        case .attribute, .now: return nil
        }
    }
}

/// Why a derived attribute's expression is not one Core Data can keep up to date.
package struct DerivationError: Error, CustomStringConvertible, Sendable {
    package let entity: String
    package let attribute: String
    package let expression: String
    package let reason: String

    package var description: String {
        "Invalid keypaths found in derived attribute \(entity).\(attribute) (\(expression)): \(reason)."
    }
}

extension NSDerivedAttributeDescription {
    /// The form of ``derivationExpression`` on objects of `entity` (which declares or inherits the
    /// attribute); throws for an expression Core Data's SQLite store refuses (a multi-step key path, a
    /// derived attribute in the chain, an unsupported function …).
    package func derivation(in entity: NSEntityDescription) throws -> Derivation {
        var sourceType: NSAttributeType?
        let form = try form(in: entity, sourceType: &sourceType)
        let fits: Bool
        switch form {
        case .attribute(_, _?), .toOne(_, _, _?): fits = attributeType == .stringAttributeType
        case .attribute, .toOne: fits = sourceType == attributeType
        case .count, .sum: fits = Self.numberTypes.contains(attributeType)
        case .now: fits = attributeType == .dateAttributeType
        }
        if !fits {
            throw DerivationError(entity: entity.name ?? "?", attribute: name, expression: derivationExpression?.description ?? "nil",
                                  reason: "the derived attribute's type, \(attributeType.modelFileName), cannot hold what the expression gives")
        }
        return form
    }

    /// The types a count or a sum is, and a sum adds up.
    private static let numberTypes: [NSAttributeType] = [.integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
                                                         .decimalAttributeType, .doubleAttributeType, .floatAttributeType]

    private func form(in entity: NSEntityDescription, sourceType: inout NSAttributeType?) throws -> Derivation {
        let expression = derivationExpression
        func fail(_ reason: String) -> DerivationError {
            DerivationError(entity: entity.name ?? "?", attribute: name, expression: expression?.description ?? "nil", reason: reason)
        }
        guard let expression else { throw fail("there is no derivation expression") }

        /// An attribute `key` of `owner` that a derivation may read.
        func readable(_ key: String, of owner: NSEntityDescription) throws -> NSAttributeDescription {
            guard let property = owner.propertiesByName[key] else {
                throw fail("\(owner.name ?? "?") has no property '\(key)'")
            }
            guard let attribute = property as? NSAttributeDescription else {
                throw fail("'\(key)' of \(owner.name ?? "?") is a relationship where an attribute must be")
            }
            if attribute is NSDerivedAttributeDescription { throw fail("derived attribute found in dependency chain ('\(key)')") }
            if attribute.isTransient { throw fail("'\(key)' of \(owner.name ?? "?") is transient and has no stored value") }
            sourceType = attribute.attributeType
            return attribute
        }
        func relationship(_ key: String, toMany: Bool) throws -> NSRelationshipDescription {
            guard let relationship = entity.relationshipsByName[key] else {
                throw fail(entity.propertiesByName[key] == nil ? "\(entity.name ?? "?") has no property '\(key)'" : "non-terminal attribute '\(key)' not followed by a function")
            }
            if relationship.isToMany != toMany {
                throw fail("'\(key)' is a \(relationship.isToMany ? "to-many" : "to-one") relationship, where a \(toMany ? "to-many" : "to-one") one must be")
            }
            if relationship.destinationEntity == nil { throw fail("'\(key)' has no destination entity") }
            return relationship
        }
        /// `name` or `author.name`, as the argument of a string function or alone.
        func value(_ path: [String], _ function: Derivation.TextFunction?) throws -> Derivation {
            switch path.count {
            case 1:
                let attribute = try readable(path[0], of: entity)
                if let function, attribute.attributeType != .stringAttributeType {
                    throw fail("\(function.rawValue) needs a string attribute, and '\(path[0])' is not one")
                }
                return .attribute(key: path[0], function: function)
            case 2:
                if path[1].hasPrefix("@") { return try aggregate(path) }
                let through = try relationship(path[0], toMany: false)
                let attribute = try readable(path[1], of: through.destinationEntity!)
                if let function, attribute.attributeType != .stringAttributeType {
                    throw fail("\(function.rawValue) needs a string attribute, and '\(path.joined(separator: "."))' is not one")
                }
                return .toOne(relationship: path[0], key: path[1], function: function)
            default:
                // An operator over a to-many relationship; anything longer, or through a to-one, is more than one step.
                if path.count == 3, entity.relationshipsByName[path[0]]?.isToMany == true, path.contains(where: { $0.hasPrefix("@") }) {
                    return try aggregate(path)
                }
                throw fail("multi-step keypath")
            }
        }
        /// `pages.@count`, `pages.words.@sum`, `pages.@sum.words`.
        func aggregate(_ path: [String]) throws -> Derivation {
            switch path.count {
            case 2 where path[1].lowercased() == "@count":
                _ = try relationship(path[0], toMany: true)
                return .count(relationship: path[0])
            case 3 where path[2].lowercased() == "@sum" || path[1].lowercased() == "@sum":
                let key = path[2].lowercased() == "@sum" ? path[1] : path[2]
                let through = try relationship(path[0], toMany: true)
                // Summed through the members' key to their owner; a many-to-many has none.
                if through.inverseRelationship.map({ $0.isToMany }) ?? true {
                    throw fail("@sum of a many-to-many relationship (Core Data counts those, and sums only one-to-many ones)")
                }
                try sumOf(key, through)
                return .sum(relationship: path[0], key: key)
            default:
                throw fail("unsupported function (only @count and @sum of a to-many relationship)")
            }
        }
        func sumOf(_ key: String, _ through: NSRelationshipDescription) throws {
            let attribute = try readable(key, of: through.destinationEntity!)
            if !Self.numberTypes.contains(attribute.attributeType) { throw fail("@sum needs a number attribute, and '\(key)' is not one") }
        }
        func keyPath(_ argument: NSExpression?) throws -> [String] {
            guard let argument, argument.expressionType == .keyPath else { throw fail("the function's argument must be a key path") }
            return argument.keyPath.split(separator: ".").map(String.init)
        }

        switch expression.expressionType {
        case .keyPath:
            return try value(expression.keyPath.split(separator: ".").map(String.init), nil)
        case .function:
            guard expression.operand.expressionType == .constantValue else { throw fail("unsupported function") }
            let arguments = expression.arguments ?? []
            switch expression.function {
            case "now":
                return .now
            case "count:" where arguments.count == 1:
                return try aggregate(keyPath(arguments.first) + ["@count"])
            case "sum:" where arguments.count == 1:
                let path = try keyPath(arguments.first)
                guard path.count == 2 else { throw fail("sum: needs a to-many relationship and an attribute of its destination") }
                return try aggregate(path + ["@sum"])
            case let name:
                guard let function = Derivation.TextFunction(rawValue: name), arguments.count == 1 else {
                    throw fail("unsupported function '\(name)'")
                }
                let path = try keyPath(arguments.first)
                if path.count > 2 || path.contains(where: { $0.hasPrefix("@") }) {
                    throw fail("\(name) takes an attribute or a to-one key path")
                }
                return try value(path, function)
            }
        default:
            throw fail("the expression must be a key path or a function of one")
        }
    }
}

/// The derived attributes of a model in use, by entity (a subentity's include those it inherits),
/// analysed once: the coordinator checks them when a store is added, and stores keep them.
package final class DerivationPlan: @unchecked Sendable {
    package struct Derived: Sendable {
        package let name: String
        package let derivation: Derivation
        /// The entity that declares the attribute (its triggers are named after it).
        package let declaringEntity: String
    }

    /// By entity name.
    package let byEntity: [String: [Derived]]

    /// Whether the model has no derived attribute (most models: then nothing more is asked).
    package var isEmpty: Bool { byEntity.isEmpty }

    private init(model: NSManagedObjectModel) throws {
        var byEntity: [String: [Derived]] = [:]
        for entity in model.entities {
            let attributes = entity.propertiesByName.values.compactMap { $0 as? NSDerivedAttributeDescription }.sorted { $0.name < $1.name }
            for attribute in attributes {
                let derived = Derived(name: attribute.name, derivation: try attribute.derivation(in: entity),
                                      declaringEntity: attribute.entity?.name ?? entity.name ?? "")
                byEntity[entity.name ?? "", default: []].append(derived)
            }
        }
        self.byEntity = byEntity
    }

    /// The plan of `model`; throws ``DerivationError`` for a derivation Core Data cannot keep. Kept on
    /// the model once it is in use (an editable model may still change).
    package static func of(_ model: NSManagedObjectModel) throws -> DerivationPlan {
        if let plan = model.derivationPlanCache.load(as: DerivationPlan.self) { return plan }
        let plan = try DerivationPlan(model: model)
        return model.isEditable ? plan : model.derivationPlanCache.storeIfNil(plan)
    }
}
