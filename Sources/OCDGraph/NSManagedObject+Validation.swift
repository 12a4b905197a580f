import Foundation
import OCDStore
import OCDModel
import OCDPredicate
import class OCDPredicate.NSPredicate

// Validation: the model's constraints, then the class's `validate<Key>` methods, with Core Data's error
// codes and userInfo keys, and messages localized through the model's localization dictionary.
extension NSManagedObject {
    /// Validates `value` for the property `key`: the model's constraints (optionality, validation
    /// predicates such as minimum and maximum, relationship counts), then the class's `validate<Key>`
    /// method, which may replace the value. Throws Core Data's validation error.
    func modelValidateValue(_ value: inout Any?, forKey key: String) throws {
        guard let property = entity.propertiesByName[key] else {
            // A key the model does not define (a property the class keeps itself): key-value coding's
            // own validation, the class's `validate<Key>` method if it has one, else the value is valid.
            if let validator = keyTable.validators[key] { try validator(self, &value) }
            return
        }
        var errors: [NSError] = []
        modelErrors(for: property, value: value, into: &errors)
        if errors.isEmpty, let validator = keyTable.validators[key] {
            try validator(self, &value)
        }
        if let error = Self.combine(errors) { throw error }
    }

    /// Validates the object for a save that inserts it. Throws one error, or
    /// `NSValidationMultipleErrorsError` with the errors under `NSDetailedErrorsKey`.
    func modelValidateForInsert() throws {
        try validateProperties()
    }

    /// Validates the object for a save that updates it.
    func modelValidateForUpdate() throws {
        try validateProperties()
    }

    /// Validates the object for a save that deletes it: a Deny delete rule with objects at its destination
    /// fails with `NSValidationRelationshipDeniedDeleteError`. Objects the save deletes too do not count:
    /// Apple's guide asks that they be "first transferred elsewhere (or deleted!)" (they stay listed when
    /// their inverse does not nullify, or there is none).
    func modelValidateForDelete() throws {
        var errors: [NSError] = []
        for (slot, relationship) in layout.relationships where relationship.deleteRule == .denyDeleteRule {
            let hasDestination: Bool
            if relationship.isToMany {
                hasDestination = toMany(slot).objects.contains { !$0.isDeleted }
            } else {
                fireFault()
                hasDestination = (slots[slot] as? NSManagedObject).map { !$0.isDeleted } ?? (slots[slot] != nil)
            }
            if hasDestination {
                errors.append(validationError(NSValidationRelationshipDeniedDeleteError, key: relationship.name, value: publicValue(slot: slot)))
            }
        }
        if let error = Self.combine(errors) { throw error }
    }

    private func validateProperties() throws {
        fireFault()
        var errors: [NSError] = []
        let checks = EntityRuntime.of(layout).attributeChecks
        let validators = keyTable.validators
        let properties = layout.properties
        // By index, the property read only when needed: most slots need no check, and binding each
        // property (as `enumerated()` does) retained and released it.
        for index in properties.indices {
            if validators.isEmpty || validators[properties[index].name] == nil {
                switch checks[index] {
                case .none:
                    continue
                case .mandatory:
                    if hasPrimitiveAccessors ? validatedValue(slot: index) == nil : slots.isNil(index) {
                        modelErrors(for: properties[index], value: nil, into: &errors)
                    }
                    continue
                case .full:
                    break
                }
            }
            let property = properties[index]
            if let relationship = property as? NSRelationshipDescription, relationship.isToMany,
               !(slots[index] is ToManyStorage), relationship.minCount == 0, relationship.maxCount == 0,
               validators[property.name] == nil {
                // Not loaded, so not changed, and no count to check: loading it would only cost.
                continue
            }
            if let relationship = property as? NSRelationshipDescription, let error = danglingReference(relationship, slot: index) {
                errors.append(error)
                continue
            }
            var value = validatedValue(slot: index)
            let before = errors.count
            modelErrors(for: property, value: value, into: &errors)
            if errors.count == before, let validator = validators[property.name] {
                do {
                    try validator(self, &value)
                } catch let error as NSError {
                    errors.append(error)
                }
            }
        }
        if let error = Self.combine(errors) { throw error }
    }

    /// The value validation checks: for an attribute a class keeps itself behind a custom primitive
    /// accessor, the accessor's (the slot may be out of date; the save writes the accessor's value).
    private func validatedValue(slot: Int) -> Any? {
        if hasPrimitiveAccessors, layout.properties[slot] is NSAttributeDescription,
           keyTable.primitiveAccessors[layout.properties[slot].name] != nil {
            // Numbers as `NSNumber`s, as `publicValue` hands every other attribute's out.
            return SlotValues.boxed(storedAttributeValue(slot: slot))
        }
        return publicValue(slot: slot)
    }

    /// A relationship to an object outside this object's context (never inserted, or deleted and saved)
    /// would be saved as a link to nothing: Core Data refuses it.
    private func danglingReference(_ relationship: NSRelationshipDescription, slot: Int) -> NSError? {
        let destinations: [NSManagedObject]
        if relationship.isToMany {
            destinations = (slots[slot] as? ToManyStorage)?.objects ?? []
        } else {
            destinations = (slots[slot] as? NSManagedObject).map { [$0] } ?? []
        }
        guard let context = managedObjectContext,
              let invalid = destinations.first(where: { $0.managedObjectContext !== context }) else { return nil }
        return validationError(NSManagedObjectValidationError, key: relationship.name, value: invalid,
                               message: "Dangling reference to an invalid object.")
    }

    private func modelErrors(for property: NSPropertyDescription, value: Any?, into errors: inout [NSError]) {
        let value = value.flatMap { isNSNull($0) ? nil : $0 }
        if let relationship = property as? NSRelationshipDescription {
            if relationship.isToMany {
                let count = ManagedValueCoercion.managedObjects(in: value ?? [Any]())?.count ?? 0
                // Apple checks counts on the (never nil) set: empty passes unless minCount says otherwise.
                if relationship.minCount > 0 && count < relationship.minCount {
                    errors.append(validationError(NSValidationRelationshipLacksMinimumCountError, key: property.name, value: value))
                } else if relationship.maxCount > 0 && count > relationship.maxCount {
                    errors.append(validationError(NSValidationRelationshipExceedsMaximumCountError, key: property.name, value: value))
                }
            } else if value == nil && !relationship.isOptional {
                errors.append(validationError(NSValidationMissingMandatoryPropertyError, key: property.name, value: nil))
            }
            return
        }
        guard let value else {
            if !property.isOptional {
                errors.append(validationError(NSValidationMissingMandatoryPropertyError, key: property.name, value: nil))
            }
            return
        }
        for (index, predicate) in property.validationPredicates.enumerated() {
            let passed = (try? predicate.evaluateThrowing(with: value)) ?? false
            if passed { continue }
            let warning = index < property.validationWarnings.count ? property.validationWarnings[index] : nil
            if let code = warning as? Int {
                errors.append(validationError(code, key: property.name, value: value, predicate: predicate))
            } else {
                let text = (warning as? String).map { managedObjectModel?.localizedErrorString($0) ?? $0 }
                errors.append(validationError(NSManagedObjectValidationError, key: property.name, value: value, predicate: predicate, message: text))
            }
        }
    }

    private var managedObjectModel: NSManagedObjectModel? { entity.managedObjectModel }

    /// A validation error for `key` with Core Data's userInfo keys and a localized message.
    func validationError(_ code: Int, key: String, value: Any?, predicate: NSPredicate? = nil, message: String? = nil) -> NSError {
        let entityName = entity.name ?? ""
        let propertyName = managedObjectModel?.localizedName(ofProperty: key, inEntity: entityName) ?? key
        var userInfo: [String: Any] = [
            NSValidationObjectErrorKey: self,
            NSValidationKeyErrorKey: key,
            NSLocalizedDescriptionKey: message ?? ValidationMessages.text(for: code, property: propertyName),
        ]
        if let value { userInfo[NSValidationValueErrorKey] = value }
        if let predicate { userInfo[NSValidationPredicateErrorKey] = predicate }
        return coreDataError(code, userInfo)
    }

    /// One error as itself; several as `NSValidationMultipleErrorsError` (nested multiple errors flattened).
    static func combine(_ errors: [NSError]) -> NSError? {
        let flat = errors.flatMap { error -> [NSError] in
            if error.domain == NSCocoaErrorDomain, error.code == NSValidationMultipleErrorsError,
               let details = error.userInfo[NSDetailedErrorsKey] as? [NSError] { return details }
            return [error]
        }
        switch flat.count {
        case 0: return nil
        case 1: return flat[0]
        default:
            return coreDataError(NSValidationMultipleErrorsError, [
                NSDetailedErrorsKey: flat,
                NSLocalizedDescriptionKey: ValidationMessages.text(for: NSValidationMultipleErrorsError, property: ""),
            ])
        }
    }
}

/// The messages of Core Data's validation errors (CoreData.framework's English strings table);
/// `%{PROPERTY}@` is the property's localized name.
enum ValidationMessages {
    static let templates: [Int: String] = [
        NSManagedObjectValidationError: "%{PROPERTY}@ is not valid.",
        NSValidationMultipleErrorsError: "Multiple validation errors occurred.",
        NSValidationMissingMandatoryPropertyError: "%{PROPERTY}@ is a required value.",
        NSValidationRelationshipLacksMinimumCountError: "Too few items in %{PROPERTY}@.",
        NSValidationRelationshipExceedsMaximumCountError: "Too many items in %{PROPERTY}@.",
        NSValidationRelationshipDeniedDeleteError: "Items cannot be deleted from %{PROPERTY}@.",
        NSValidationNumberTooLargeError: "%{PROPERTY}@ is too large.",
        NSValidationNumberTooSmallError: "%{PROPERTY}@ is too small.",
        NSValidationDateTooLateError: "%{PROPERTY}@ is too late.",
        NSValidationDateTooSoonError: "%{PROPERTY}@ is too soon.",
        NSValidationInvalidDateError: "%{PROPERTY}@ is invalid.",
        NSValidationStringTooLongError: "%{PROPERTY}@ is too long.",
        NSValidationStringTooShortError: "%{PROPERTY}@ is too short.",
        NSValidationStringPatternMatchingError: "%{PROPERTY}@ is invalid.",
    ]

    static func text(for code: Int, property: String) -> String {
        (templates[code] ?? "%{PROPERTY}@ is not valid.").replacingOccurrences(of: "%{PROPERTY}@", with: property)
    }
}
