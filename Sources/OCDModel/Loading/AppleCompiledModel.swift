import Foundation
import OCDPredicate
import class OCDPredicate.NSComparisonPredicate
import class OCDPredicate.NSCompoundPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Reads Xcode-compiled models (`.mom`): NSKeyedArchiver archives of Apple's model classes, walked by hand
/// (Linux has none of those classes to unarchive into). The keys and packed flags are Apple's, as their
/// `encodeWithCoder:` methods write them (Documentation/Model.md lists them).
enum AppleCompiledModel {
    static func read(_ url: URL, into model: NSManagedObjectModel) throws {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data: Data(contentsOf: url))
        } catch let error as KeyedArchive.Failure {
            throw ModelLoadError(file: url, line: nil, problem: "not a compiled model: \(error.reason)")
        } catch {
            throw ModelLoadError(file: url, line: nil, problem: "cannot read the file: \(error.localizedDescription)")
        }
        do {
            try MomDecoder(archive: archive).decodeModel(into: model)
        } catch let error as KeyedArchive.Failure {
            throw ModelLoadError(file: url, line: nil, problem: error.reason)
        }
    }
}

/// The object table of a keyed archive. References are UIDs (binary archives) or `{"CF$UID": n}`
/// dictionaries (XML ones); `$null` is nil.
struct KeyedArchive {
    struct Failure: Error {
        let reason: String
    }

    typealias Object = [String: Any]
    let objects: [Any]
    let root: Object

    init(data: Data) throws {
        guard let plist = try? PropertyLists.propertyList(from: data) as? [String: Any],
              plist["$archiver"] as? String == "NSKeyedArchiver", let objects = plist["$objects"] as? [Any]
        else { throw Failure(reason: "not an NSKeyedArchiver archive") }
        self.objects = objects
        guard let top = plist["$top"] as? [String: Any], let rootIndex = KeyedArchive.uid(top["root"]),
              rootIndex < objects.count, let root = objects[rootIndex] as? Object
        else { throw Failure(reason: "the archive has no root object") }
        self.root = root
    }

    static func uid(_ value: Any?) -> Int? {
        guard let value else { return nil }
        if let dictionary = value as? [String: Any], dictionary.count == 1, let index = dictionary["CF$UID"] as? Int { return index }
        guard let object = value as? NSObject, String(describing: type(of: object)).contains("KeyedArchiverUID") else { return nil }
        for child in Mirror(reflecting: object).children {
            if let index = child.value as? UInt32 { return Int(index) }
        }
        return nil
    }

    /// The object a reference points to; plain values (numbers, booleans) stand for themselves.
    func resolve(_ value: Any?) -> Any? {
        guard let value else { return nil }
        guard let index = KeyedArchive.uid(value) else { return value }
        guard index < objects.count else { return nil }
        let object = objects[index]
        if let string = object as? String, string == "$null" { return nil }
        return object
    }

    func className(_ object: Object) -> String? {
        (resolve(object["$class"]) as? Object)?["$classname"] as? String
    }

    func string(_ object: Object, _ key: String) -> String? {
        resolve(object[key]) as? String
    }

    func int(_ object: Object, _ key: String) -> Int? {
        switch resolve(object[key]) {
        case let int as Int: return int
        case let number as NSNumber: return number.intValue
        case let double as Double: return Int(exactly: double.rounded(.towardZero))
        default: return nil
        }
    }

    func bool(_ object: Object, _ key: String) -> Bool {
        switch resolve(object[key]) {
        case let bool as Bool: return bool
        case let number as NSNumber: return number.boolValue
        case let int as Int: return int != 0
        default: return false
        }
    }

    /// The elements of an archived NSArray, NSSet or NSOrderedSet.
    func array(_ value: Any?) -> [Any] {
        guard let object = resolve(value) as? Object, let references = object["NS.objects"] as? [Any] else { return [] }
        return references.compactMap { resolve($0) }
    }

    /// The pairs of an archived NSDictionary, keys as strings.
    func dictionary(_ value: Any?) -> [(String, Any)] {
        guard let object = resolve(value) as? Object, let keys = object["NS.keys"] as? [Any], let values = object["NS.objects"] as? [Any] else { return [] }
        return zip(keys, values).compactMap { key, value in
            guard let name = resolve(key) as? String, let resolved = resolve(value) else { return nil }
            return (name, resolved)
        }
    }

    /// A plist-typed value: strings, numbers, dates, data, UUIDs, URLs, decimals, arrays, dictionaries.
    /// An archive's object graph may contain cycles, so nesting deeper than any real value is cut off.
    func value(_ raw: Any?, depth: Int = 0) -> Any? {
        guard depth < 64, let resolved = resolve(raw) else { return nil }
        guard let object = resolved as? Object else { return resolved }
        switch className(object) {
        case "NSDate": return (object["NS.time"] as? Double).flatMap { $0.isFinite ? Date(timeIntervalSinceReferenceDate: $0) : nil }
        case "NSUUID": return (resolve(object["NS.uuidbytes"]) as? Data).flatMap(uuid)
        case "NSURL", "NSMutableURL": return string(object, "NS.relative").flatMap { URL(string: $0) }
        case "NSData", "NSMutableData": return resolve(object["NS.data"]) as? Data
        case "NSString", "NSMutableString": return string(object, "NS.string")
        case "NSDecimalNumber": return decimal(object)
        case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
            return array(object).compactMap { value($0, depth: depth + 1) }
        case "NSDictionary", "NSMutableDictionary":
            var result: [String: Any] = [:]
            for (key, element) in dictionary(object) { result[key] = value(element, depth: depth + 1) }
            return result
        default: return nil
        }
    }

    private func uuid(_ data: Data) -> UUID? {
        guard data.count == 16 else { return nil }
        let b = Array(data)
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// NSDecimalNumber archives its mantissa as little-endian bytes, with exponent and sign beside.
    private func decimal(_ object: Object) -> Decimal? {
        // Decimal's exponent is a signed byte: anything else is a damaged archive.
        guard let mantissa = resolve(object["NS.mantissa"]) as? Data, mantissa.count <= 16,
              let exponent = int(object, "NS.exponent"), (-128...127).contains(exponent) else { return nil }
        var magnitude = Decimal(0)
        var scale = Decimal(1)
        for byte in mantissa {
            magnitude += Decimal(Int(byte)) * scale
            scale *= 256
        }
        var result = magnitude * pow(Decimal(10), max(exponent, 0))
        if exponent < 0 { result /= pow(Decimal(10), -exponent) }
        return bool(object, "NS.negative") ? -result : result
    }
}

/// Builds descriptions from a `.mom` archive.
private final class MomDecoder {
    let archive: KeyedArchive
    typealias Object = KeyedArchive.Object
    /// How deep decoding is in nested predicates, expressions and composites: an archive can make them
    /// contain themselves, so depth is bounded rather than trusted.
    private var depth = 0

    private func nested<T>(_ body: () throws -> T) throws -> T {
        depth += 1
        defer { depth -= 1 }
        if depth > 100 { throw fail("predicates, expressions or composites nested more than 100 deep (a cycle in the archive?)") }
        return try body()
    }

    init(archive: KeyedArchive) {
        self.archive = archive
    }

    func fail(_ reason: String) -> KeyedArchive.Failure { KeyedArchive.Failure(reason: reason) }

    func decodeModel(into model: NSManagedObjectModel) throws {
        let root = archive.root
        guard archive.className(root) == "NSManagedObjectModel" else {
            throw fail("the archive's root is \(archive.className(root) ?? "unknown"), not NSManagedObjectModel")
        }
        var decoded: [NSEntityDescription] = []
        for (name, object) in archive.dictionary(root["NSEntities"]).sorted(by: { $0.0 < $1.0 }) {
            guard let object = object as? Object else { throw fail("the entity '\(name)' is not an archived object") }
            decoded.append(try entity(object))
        }
        try model.setReadEntities(decoded) { fail($0.reason) }
        let byName = model.entitiesByName
        model.versionIdentifiers = Set(archive.array(root["NSVersionIdentifiers"]).compactMap { archive.value($0) as? String }.map(AnyHashable.init))
        for (name, members) in archive.dictionary(root["NSConfigurations"]).sorted(by: { $0.0 < $1.0 }) where name != "PF_DEFAULT_CONFIGURATION_NAME" {
            let entities = archive.array(members).compactMap { ($0 as? Object).flatMap { archive.string($0, "NSEntityName") } }.compactMap { byName[$0] }
            model.setEntities(entities.sorted { ($0.name ?? "") < ($1.name ?? "") }, forConfigurationName: name)
        }
        for (name, object) in archive.dictionary(root["NSFetchRequestTemplates"]) {
            guard let object = object as? Object else { continue }
            let request = try fetchRequest(object)
            request.entity = request.entityName.flatMap { byName[$0] }
            model.setFetchRequestTemplate(request, forName: name)
        }
    }

    // MARK: Entities and properties

    /// One entity of `NSEntities`; references to other entities (parent, destinations) are kept by name
    /// and resolved by the model.
    func entity(_ object: Object) throws -> NSEntityDescription {
        guard let name = archive.string(object, "NSEntityName") else { throw fail("an entity without a name") }
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = archive.string(object, "NSClassNameForEntity") ?? "NSManagedObject"
        entity.isAbstract = archive.bool(object, "NSIsAbstract")
        entity.superentityName = (archive.resolve(object["NSSuperentity"]) as? Object).flatMap { archive.string($0, "NSEntityName") }
        entity.userInfo = archive.value(object["NSUserInfo"]) as? [String: Any]
        entity.versionHashModifier = archive.string(object, "NSVersionHashModifier")
        entity.renamingIdentifier = archive.string(object, "NSRenamingIdentifier").flatMap { $0 == name ? nil : $0 }
        var properties: [NSPropertyDescription] = []
        for (propertyName, value) in archive.dictionary(object["NSProperties"]).sorted(by: { $0.0 < $1.0 }) {
            guard let propertyObject = value as? Object else { throw fail("the property '\(name).\(propertyName)' is not an archived object") }
            properties.append(try property(propertyObject))
        }
        if Set(properties.map(\.name)).count != properties.count {
            throw fail("the entity '\(name)' has two properties with one name")
        }
        entity.properties = properties
        entity.uniquenessConstraints = archive.array(object["NSUniqueTuples"]).map { group in
            archive.array(group).compactMap { archive.value($0) as? String } as [Any]
        }
        entity.compoundIndexes = archive.array(object["NSCompoundIndexes"]).map { group in
            archive.array(group).compactMap { ($0 as? String) ?? ($0 as? Object).flatMap { archive.string($0, "NSPropertyName") } } as [Any]
        }
        entity.indexes = try archive.array(object["NSFetchIndexDescriptions"]).compactMap { $0 as? Object }.map { index in
            let elements = archive.array(index["NSIndexElements"]).compactMap { $0 as? Object }.map { element -> NSFetchIndexElementDescription in
                let propertyName = archive.string(element, "NSPropertyName") ?? ""
                let type: NSFetchIndexElementDescription.CollationType = archive.int(element, "NSFetchIndexElementType") == 1 ? .rTree : .binary
                let description = NSFetchIndexElementDescription(propertyName: propertyName, collationType: type, ascending: archive.bool(element, "NSAscending"))
                description.property = properties.first { $0.name == propertyName }
                return description
            }
            let description = NSFetchIndexDescription(name: archive.string(index, "NSIndexName") ?? "", elements: elements)
            description.partialIndexPredicate = try (archive.resolve(index["NSPartialIndexPredicate"]) as? Object).map(predicate)
            return description
        }
        return entity
    }

    /// `_P`'s bits (Apple's packed property flags); nil in archives from before they existed.
    struct PackedFlags {
        let bits: Int
        var optional: Bool { bits & 0x2 != 0 }
        var transient: Bool { bits & 0x8 != 0 }
        var hasValidationPredicates: Bool { bits & 0x10 == 0 }
        var hasValidationWarnings: Bool { bits & 0x20 == 0 }
        var hasUserInfo: Bool { bits & 0x40 == 0 }
        var hasVersionHashModifier: Bool { bits & 0x80 == 0 }
        var indexedBySpotlight: Bool { bits & 0x100 != 0 }
        var ordered: Bool { bits & 0x400 != 0 }
        var cloudEncryption: Bool { bits & 0x800 != 0 }
    }

    func property(_ object: Object) throws -> NSPropertyDescription {
        try nested { try decodeProperty(object) }
    }

    private func decodeProperty(_ object: Object) throws -> NSPropertyDescription {
        let kind = archive.className(object) ?? ""
        let property: NSPropertyDescription
        let packed = archive.int(object, "_P").flatMap { $0 != 0 ? PackedFlags(bits: $0) : nil }
        switch kind {
        case "NSRelationshipDescription":
            let relationship = NSRelationshipDescription()
            relationship.maxCount = archive.int(object, "NSMaxCount") ?? 0
            relationship.minCount = archive.int(object, "NSMinCount") ?? 0
            guard (0...Int(Int32.max)).contains(relationship.maxCount), (0...Int(Int32.max)).contains(relationship.minCount) else {
                throw fail("the relationship counts \(relationship.minCount)...\(relationship.maxCount) are out of range")
            }
            relationship.deleteRule = NSDeleteRule(rawValue: UInt(max(0, archive.int(object, "NSDeleteRule") ?? 1))) ?? .nullifyDeleteRule
            relationship.destinationEntityName = archive.string(object, "_NSDestinationEntityName")
                ?? (archive.resolve(object["NSDestinationEntity"]) as? Object).flatMap { archive.string($0, "NSEntityName") }
            relationship.inverseRelationshipName = archive.string(object, "_NSInverseRelationshipName")
                ?? (archive.resolve(object["NSInverseRelationship"]) as? Object).flatMap { archive.string($0, "NSPropertyName") }
            relationship.isOrdered = packed?.ordered ?? archive.bool(object, "NSIsOrdered")
            property = relationship
        case "NSFetchedPropertyDescription":
            let fetched = NSFetchedPropertyDescription()
            if let request = archive.resolve(object["NSFetchRequest"]) as? Object {
                let decoded = try fetchRequest(request)
                if decoded.entityName?.isEmpty ?? true, let name = archive.string(object, "_NSFetchRequestEntityName") {
                    fetched.fetchRequest = NSFetchRequest<NSFetchRequestResult>(entityName: name)
                    fetched.fetchRequest?.predicate = decoded.predicate
                } else {
                    fetched.fetchRequest = decoded
                }
            }
            property = fetched
        case "NSExpressionDescription":
            let description = NSExpressionDescription()
            description.expression = try (archive.resolve(object["NSExpression"]) as? Object).map(expression)
            description.expressionResultType = NSAttributeType(rawValue: UInt(max(0, archive.int(object, "NSExpressionType") ?? 0))) ?? .undefinedAttributeType
            property = description
        case "NSAttributeDescription", "NSDerivedAttributeDescription", "NSCompositeAttributeDescription":
            let attribute: NSAttributeDescription
            if kind == "NSDerivedAttributeDescription" {
                let derived = NSDerivedAttributeDescription()
                derived.derivationExpression = try (archive.resolve(object["NSDerivationExpression"]) as? Object).map(expression)
                attribute = derived
            } else if kind == "NSCompositeAttributeDescription" {
                let composite = NSCompositeAttributeDescription()
                composite.elements = try archive.array(object["NSCompositeElements"]).compactMap { $0 as? Object }.compactMap { try self.property($0) as? NSAttributeDescription }
                attribute = composite
            } else {
                attribute = NSAttributeDescription()
            }
            let typeValue = UInt(max(0, archive.int(object, "NSAttributeType") ?? 0))
            guard let type = NSAttributeType(rawValue: typeValue) else { throw fail("an attribute of unknown type \(typeValue)") }
            attribute.attributeType = type
            if let className = archive.string(object, "NSAttributeValueClassName"), className != type.attributeValueClassName {
                attribute.attributeValueClassName = className
            }
            attribute.defaultValue = archive.value(object["NSDefaultValue"])
            attribute.valueTransformerName = archive.string(object, "NSValueTransformerName")
            let flags = archive.int(object, "NSFlagsKey") ?? 0
            attribute.allowsExternalBinaryDataStorage = flags & 0x4 != 0
            attribute.preservesValueInHistoryOnDeletion = flags & 0x10 != 0
            attribute.allowsCloudEncryption = packed?.cloudEncryption ?? archive.bool(object, "NSAllowsCloudEncryption")
            property = attribute
        default:
            throw fail("a property of unknown class '\(kind)'")
        }
        guard let name = archive.string(object, "NSPropertyName") else { throw fail("a property without a name") }
        property.name = name
        property.isOptional = packed?.optional ?? archive.bool(object, "NSIsOptional")
        property.isTransient = packed?.transient ?? archive.bool(object, "NSIsTransient")
        property.isIndexed = archive.bool(object, "NSIsIndexed")
        property.isIndexedBySpotlight = packed?.indexedBySpotlight ?? archive.bool(object, "NSIndexedBySpotlight")
        property.renamingIdentifier = archive.string(object, "NSRenamingIdentifier").flatMap { $0 == name ? nil : $0 }
        if packed?.hasUserInfo ?? true { property.userInfo = archive.value(object["NSUserInfo"]) as? [String: Any] }
        if packed?.hasVersionHashModifier ?? true { property.versionHashModifier = archive.string(object, "NSVersionHashModifier") }
        let predicates = try (packed?.hasValidationPredicates ?? true)
            ? archive.array(object["NSValidationPredicates"]).compactMap { $0 as? Object }.map(predicate) : []
        let warnings: [Any] = (packed?.hasValidationWarnings ?? true) ? archive.array(object["NSValidationWarnings"]).compactMap { archive.value($0) } : []
        if !predicates.isEmpty {
            property.setValidation(predicates, warnings: warnings.count == predicates.count ? warnings : predicates.map { _ in "" })
        }
        return property
    }

    // MARK: Fetch requests

    func fetchRequest(_ object: Object) throws -> NSFetchRequest<NSFetchRequestResult> {
        let entityName: String
        switch archive.resolve(object["NSEntity"]) {
        case let name as String: entityName = name
        case let entity as Object: entityName = archive.string(entity, "NSEntityName") ?? ""
        default: entityName = ""
        }
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: entityName)
        request.predicate = try (archive.resolve(object["NSPredicate"]) as? Object).map(predicate)
        request.sortDescriptors = try archive.array(object["NSSortDescriptors"]).compactMap { $0 as? Object }.map(sortDescriptor)
        if request.sortDescriptors?.isEmpty == true { request.sortDescriptors = nil }
        request.fetchLimit = archive.int(object, "NSFetchLimit") ?? 0
        request.fetchOffset = archive.int(object, "NSFetchOffset") ?? 0
        request.fetchBatchSize = archive.int(object, "NSBatchSize") ?? 0
        if archive.bool(object, "NSHasFetchRequestFlags") {
            let flags = archive.int(object, "NSFetchRequestFlags") ?? 0
            request.returnsDistinctResults = flags & 0x1 != 0
            request.includesSubentities = flags & 0x2 != 0
            request.includesPropertyValues = flags & 0x4 != 0
            request.returnsObjectsAsFaults = flags & 0x8 != 0
            request.includesPendingChanges = flags & 0x10 != 0
            request.shouldRefreshRefetchedObjects = flags & 0x20 != 0
            request.resultType = NSFetchRequestResultType(rawValue: UInt(max(0, archive.int(object, "NSResultType") ?? 0)))
        }
        let keyPaths = archive.array(object["NSRelationshipKeyPathsForPrefetching"]).compactMap { archive.value($0) as? String }
        if !keyPaths.isEmpty { request.relationshipKeyPathsForPrefetching = keyPaths }
        return request
    }

    func sortDescriptor(_ object: Object) throws -> NSSortDescriptor {
        let selector = archive.string(object, "NSSelector") ?? "compare:"
        guard NSSortDescriptor.supportedSelectorNames.contains(selector) else {
            throw fail("a sort descriptor with the selector '\(selector)', which cannot run here")
        }
        return NSSortDescriptor(key: archive.string(object, "NSKey"), ascending: archive.bool(object, "NSAscending"), selector: Selector(selector))
    }

    // MARK: Predicates and expressions

    func predicate(_ object: Object) throws -> NSPredicate {
        try nested { try decodePredicate(object) }
    }

    private func decodePredicate(_ object: Object) throws -> NSPredicate {
        switch archive.className(object) {
        case "NSTruePredicate": return NSPredicate(value: true)
        case "NSFalsePredicate": return NSPredicate(value: false)
        case "NSCompoundPredicate":
            let type = NSCompoundPredicate.LogicalType(rawValue: UInt(max(0, archive.int(object, "NSCompoundPredicateType") ?? 1))) ?? .and
            let subpredicates = try archive.array(object["NSSubpredicates"]).compactMap { $0 as? Object }.map(predicate)
            if type == .not && subpredicates.count != 1 { throw fail("a NOT predicate with \(subpredicates.count) subpredicates") }
            return NSCompoundPredicate(type: type, subpredicates: subpredicates)
        case "NSComparisonPredicate":
            guard let left = archive.resolve(object["NSLeftExpression"]) as? Object,
                  let right = archive.resolve(object["NSRightExpression"]) as? Object,
                  let op = archive.resolve(object["NSPredicateOperator"]) as? Object
            else { throw fail("a comparison predicate without its expressions or operator") }
            let lhs = try expression(left), rhs = try expression(right)
            let modifier = NSComparisonPredicate.Modifier(rawValue: UInt(max(0, archive.int(op, "NSModifier") ?? 0))) ?? .direct
            let optionBits = archive.int(op, "NSOptions") ?? archive.int(op, "NSFlags") ?? 0
            let options = NSComparisonPredicate.Options(rawValue: UInt(optionBits & 0xF))
            if let selector = archive.string(op, "NSSelectorName") {
                return NSComparisonPredicate(leftExpression: lhs, rightExpression: rhs, customSelector: Selector(selector))
            }
            var typeValue = archive.int(op, "NSOperatorType") ?? 4
            if archive.className(op) == "NSSubstringPredicateOperator" {
                typeValue = [8, 9, 99][min(2, max(0, archive.int(op, "NSPosition") ?? 2))]
            }
            guard let type = NSComparisonPredicate.Operator(rawValue: UInt(max(0, typeValue))), type != .customSelector else {
                throw fail("a comparison with the unknown operator \(typeValue)")
            }
            return NSComparisonPredicate(leftExpression: lhs, rightExpression: rhs, modifier: modifier, type: type, options: options)
        default:
            throw fail("a predicate of unknown class '\(archive.className(object) ?? "?")'")
        }
    }

    func expression(_ object: Object) throws -> NSExpression {
        try nested { try decodeExpression(object) }
    }

    private func decodeExpression(_ object: Object) throws -> NSExpression {
        func child(_ key: String) throws -> NSExpression {
            guard let value = archive.resolve(object[key]) as? Object else { throw fail("an expression without its \(key)") }
            return try expression(value)
        }
        switch archive.className(object) {
        case "NSConstantValueExpression":
            if let className = archive.string(object, "NSConstantValueClassName") { return NSExpression(forConstantValue: className) }
            return NSExpression(forConstantValue: archive.value(object["NSConstantValue"]))
        case "NSSelfExpression":
            return NSExpression.expressionForEvaluatedObject()
        case "NSAnyKeyExpression":
            return NSExpression.expressionForAnyKey()
        case "NSVariableExpression":
            return NSExpression(forVariable: archive.string(object, "NSVariable") ?? "")
        case "NSKeyPathSpecifierExpression":
            return NSExpression(forKeyPath: archive.string(object, "NSKeyPath") ?? "")
        case "NSKeyPathExpression", "NSFunctionExpression":
            let selector = archive.string(object, "NSSelectorName") ?? ""
            let arguments = try archive.array(object["NSArguments"]).compactMap { $0 as? Object }.map(expression)
            let operandObject = archive.resolve(object["NSOperand"]) as? Object
            if let operandObject, archive.string(operandObject, "NSConstantValueClassName") == "_NSPredicateUtilities" {
                guard let function = try? NSExpression(validatingFunction: selector, arguments: arguments) else {
                    throw fail("the function '\(selector)', which is not supported here")
                }
                return function
            }
            let operand = try operandObject.map(expression) ?? NSExpression.expressionForEvaluatedObject()
            return NSExpression(forFunction: operand, selectorName: selector, arguments: arguments)
        case "NSAggregateExpression":
            return NSExpression(forAggregate: try archive.array(object["NSCollection"]).compactMap { $0 as? Object }.map(expression))
        case "NSSetExpression":
            let left = try child("NSLeftExpression"), right = try child("NSRightExpression")
            switch archive.int(object, "NSExpressionType") {
            case 6: return NSExpression(forIntersectSet: left, with: right)
            case 7: return NSExpression(forMinusSet: left, with: right)
            default: return NSExpression(forUnionSet: left, with: right)
            }
        case "NSSubqueryExpression":
            guard let subpredicate = archive.resolve(object["NSSubpredicate"]) as? Object else { throw fail("a subquery without its predicate") }
            return NSExpression(forSubquery: try child("NSExpression"), usingIteratorVariable: archive.string(object, "NSVariable") ?? "", predicate: try predicate(subpredicate))
        case "NSTernaryExpression":
            guard let condition = archive.resolve(object["NSPredicate"]) as? Object else { throw fail("a TERNARY without its condition") }
            return NSExpression(forConditional: try predicate(condition), trueExpression: try child("NSTrueExpression"), falseExpression: try child("NSFalseExpression"))
        default:
            throw fail("an expression of unknown class '\(archive.className(object) ?? "?")'")
        }
    }
}
