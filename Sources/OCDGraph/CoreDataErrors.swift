import Foundation
import OCDPredicate

// Core Data's error codes (CoreDataErrors.h), in NSCocoaErrorDomain.
public let NSManagedObjectValidationError = 1550
public let NSManagedObjectConstraintValidationError = 1551
public let NSValidationMultipleErrorsError = 1560
public let NSValidationMissingMandatoryPropertyError = 1570
public let NSValidationRelationshipLacksMinimumCountError = 1580
public let NSValidationRelationshipExceedsMaximumCountError = 1590
public let NSValidationRelationshipDeniedDeleteError = 1600
public let NSValidationNumberTooLargeError = 1610
public let NSValidationNumberTooSmallError = 1620
public let NSValidationDateTooLateError = 1630
public let NSValidationDateTooSoonError = 1640
public let NSValidationInvalidDateError = 1650
public let NSValidationStringTooLongError = 1660
public let NSValidationStringTooShortError = 1670
public let NSValidationStringPatternMatchingError = 1680
public let NSValidationInvalidURIError = 1690
public let NSManagedObjectContextLockingError = 132000
public let NSPersistentStoreCoordinatorLockingError = 132010
public let NSManagedObjectReferentialIntegrityError = 133000
public let NSManagedObjectExternalRelationshipError = 133010
public let NSManagedObjectMergeError = 133020
public let NSManagedObjectConstraintMergeError = 133021
public let NSPersistentStoreInvalidTypeError = 134000
public let NSPersistentStoreTypeMismatchError = 134010
public let NSPersistentStoreIncompatibleSchemaError = 134020
public let NSPersistentStoreSaveError = 134030
public let NSPersistentStoreIncompleteSaveError = 134040
public let NSPersistentStoreSaveConflictsError = 134050
public let NSCoreDataError = 134060
public let NSPersistentStoreOperationError = 134070
public let NSPersistentStoreOpenError = 134080
public let NSPersistentStoreTimeoutError = 134090
public let NSPersistentStoreUnsupportedRequestTypeError = 134091
public let NSPersistentStoreIncompatibleVersionHashError = 134100
public let NSSQLiteError = 134180

// Core Data's userInfo keys, with Apple's string values.
public let NSDetailedErrorsKey = "NSDetailedErrors"
public let NSValidationObjectErrorKey = "NSValidationErrorObject"
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
public let NSValidationPredicateErrorKey = "NSValidationErrorPredicate"
public let NSValidationValueErrorKey = "NSValidationErrorValue"
public let NSAffectedStoresErrorKey = "NSAffectedStoresErrorKey"
public let NSAffectedObjectsErrorKey = "NSAffectedObjectsErrorKey"
public let NSPersistentStoreSaveConflictsErrorKey = "conflictList"

// The Swift overlay's names for the same codes (`CocoaError.Code.validationMissingMandatoryProperty` …),
// which Linux Foundation does not declare.
extension CocoaError.Code {
    public static var managedObjectValidation: CocoaError.Code { .init(rawValue: NSManagedObjectValidationError) }
    public static var managedObjectConstraintValidation: CocoaError.Code { .init(rawValue: NSManagedObjectConstraintValidationError) }
    public static var validationMultipleErrors: CocoaError.Code { .init(rawValue: NSValidationMultipleErrorsError) }
    public static var validationMissingMandatoryProperty: CocoaError.Code { .init(rawValue: NSValidationMissingMandatoryPropertyError) }
    public static var validationRelationshipLacksMinimumCount: CocoaError.Code { .init(rawValue: NSValidationRelationshipLacksMinimumCountError) }
    public static var validationRelationshipExceedsMaximumCount: CocoaError.Code { .init(rawValue: NSValidationRelationshipExceedsMaximumCountError) }
    public static var validationRelationshipDeniedDelete: CocoaError.Code { .init(rawValue: NSValidationRelationshipDeniedDeleteError) }
    public static var validationNumberTooLarge: CocoaError.Code { .init(rawValue: NSValidationNumberTooLargeError) }
    public static var validationNumberTooSmall: CocoaError.Code { .init(rawValue: NSValidationNumberTooSmallError) }
    public static var validationDateTooLate: CocoaError.Code { .init(rawValue: NSValidationDateTooLateError) }
    public static var validationDateTooSoon: CocoaError.Code { .init(rawValue: NSValidationDateTooSoonError) }
    public static var validationInvalidDate: CocoaError.Code { .init(rawValue: NSValidationInvalidDateError) }
    public static var validationStringTooLong: CocoaError.Code { .init(rawValue: NSValidationStringTooLongError) }
    public static var validationStringTooShort: CocoaError.Code { .init(rawValue: NSValidationStringTooShortError) }
    public static var validationStringPatternMatching: CocoaError.Code { .init(rawValue: NSValidationStringPatternMatchingError) }
    public static var managedObjectMerge: CocoaError.Code { .init(rawValue: NSManagedObjectMergeError) }
    public static var persistentStoreInvalidType: CocoaError.Code { .init(rawValue: NSPersistentStoreInvalidTypeError) }
    public static var persistentStoreIncompatibleVersionHash: CocoaError.Code { .init(rawValue: NSPersistentStoreIncompatibleVersionHashError) }
    public static var persistentStoreOperation: CocoaError.Code { .init(rawValue: NSPersistentStoreOperationError) }
    public static var persistentStoreSave: CocoaError.Code { .init(rawValue: NSPersistentStoreSaveError) }
    public static var coreData: CocoaError.Code { .init(rawValue: NSCoreDataError) }
    public static var managedObjectContextLocking: CocoaError.Code { .init(rawValue: NSManagedObjectContextLockingError) }
    public static var persistentStoreCoordinatorLocking: CocoaError.Code { .init(rawValue: NSPersistentStoreCoordinatorLockingError) }
    public static var managedObjectReferentialIntegrity: CocoaError.Code { .init(rawValue: NSManagedObjectReferentialIntegrityError) }
    public static var managedObjectExternalRelationship: CocoaError.Code { .init(rawValue: NSManagedObjectExternalRelationshipError) }
    public static var persistentStoreTypeMismatch: CocoaError.Code { .init(rawValue: NSPersistentStoreTypeMismatchError) }
    public static var persistentStoreIncompatibleSchema: CocoaError.Code { .init(rawValue: NSPersistentStoreIncompatibleSchemaError) }
    public static var persistentStoreIncompleteSave: CocoaError.Code { .init(rawValue: NSPersistentStoreIncompleteSaveError) }
    public static var persistentStoreSaveConflicts: CocoaError.Code { .init(rawValue: NSPersistentStoreSaveConflictsError) }
    public static var persistentStoreOpen: CocoaError.Code { .init(rawValue: NSPersistentStoreOpenError) }
    public static var persistentStoreTimeout: CocoaError.Code { .init(rawValue: NSPersistentStoreTimeoutError) }
    public static var persistentStoreUnsupportedRequestType: CocoaError.Code { .init(rawValue: NSPersistentStoreUnsupportedRequestTypeError) }
    public static var sqlite: CocoaError.Code { .init(rawValue: NSSQLiteError) }
}

// The overlay's shortcuts on `CocoaError` itself, for `catch CocoaError.validationMissingMandatoryProperty`
// and `error.code == CocoaError.persistentStoreSaveConflicts`.
extension CocoaError {
    public static var managedObjectValidation: CocoaError.Code { .managedObjectValidation }
    public static var managedObjectConstraintValidation: CocoaError.Code { .managedObjectConstraintValidation }
    public static var validationMultipleErrors: CocoaError.Code { .validationMultipleErrors }
    public static var validationMissingMandatoryProperty: CocoaError.Code { .validationMissingMandatoryProperty }
    public static var validationRelationshipLacksMinimumCount: CocoaError.Code { .validationRelationshipLacksMinimumCount }
    public static var validationRelationshipExceedsMaximumCount: CocoaError.Code { .validationRelationshipExceedsMaximumCount }
    public static var validationRelationshipDeniedDelete: CocoaError.Code { .validationRelationshipDeniedDelete }
    public static var validationNumberTooLarge: CocoaError.Code { .validationNumberTooLarge }
    public static var validationNumberTooSmall: CocoaError.Code { .validationNumberTooSmall }
    public static var validationDateTooLate: CocoaError.Code { .validationDateTooLate }
    public static var validationDateTooSoon: CocoaError.Code { .validationDateTooSoon }
    public static var validationInvalidDate: CocoaError.Code { .validationInvalidDate }
    public static var validationStringTooLong: CocoaError.Code { .validationStringTooLong }
    public static var validationStringTooShort: CocoaError.Code { .validationStringTooShort }
    public static var validationStringPatternMatching: CocoaError.Code { .validationStringPatternMatching }
    public static var managedObjectContextLocking: CocoaError.Code { .managedObjectContextLocking }
    public static var persistentStoreCoordinatorLocking: CocoaError.Code { .persistentStoreCoordinatorLocking }
    public static var managedObjectReferentialIntegrity: CocoaError.Code { .managedObjectReferentialIntegrity }
    public static var managedObjectExternalRelationship: CocoaError.Code { .managedObjectExternalRelationship }
    public static var managedObjectMerge: CocoaError.Code { .managedObjectMerge }
    public static var managedObjectConstraintMerge: CocoaError.Code { .managedObjectConstraintMerge }
    public static var persistentStoreInvalidType: CocoaError.Code { .persistentStoreInvalidType }
    public static var persistentStoreTypeMismatch: CocoaError.Code { .persistentStoreTypeMismatch }
    public static var persistentStoreIncompatibleSchema: CocoaError.Code { .persistentStoreIncompatibleSchema }
    public static var persistentStoreSave: CocoaError.Code { .persistentStoreSave }
    public static var persistentStoreIncompleteSave: CocoaError.Code { .persistentStoreIncompleteSave }
    public static var persistentStoreSaveConflicts: CocoaError.Code { .persistentStoreSaveConflicts }
    public static var coreData: CocoaError.Code { .coreData }
    public static var persistentStoreOperation: CocoaError.Code { .persistentStoreOperation }
    public static var persistentStoreOpen: CocoaError.Code { .persistentStoreOpen }
    public static var persistentStoreTimeout: CocoaError.Code { .persistentStoreTimeout }
    public static var persistentStoreUnsupportedRequestType: CocoaError.Code { .persistentStoreUnsupportedRequestType }
    public static var persistentStoreIncompatibleVersionHash: CocoaError.Code { .persistentStoreIncompatibleVersionHash }
    public static var sqlite: CocoaError.Code { .sqlite }

    // The overlay's readers of Core Data's userInfo keys.

    /// The object that failed validation (`NSValidationObjectErrorKey`).
    public var validationObject: Any? { userInfo[NSValidationObjectErrorKey] }
    /// The key that failed validation (`NSValidationKeyErrorKey`).
    public var validationKey: String? { userInfo[NSValidationKeyErrorKey] as? String }
    /// The predicate that failed validation (`NSValidationPredicateErrorKey`).
    public var validationPredicate: OCDPredicate.NSPredicate? { userInfo[NSValidationPredicateErrorKey] as? OCDPredicate.NSPredicate }
    /// The value that failed validation (`NSValidationValueErrorKey`).
    public var validationValue: Any? { userInfo[NSValidationValueErrorKey] }
    /// The stores the error concerns (`NSAffectedStoresErrorKey`).
    public var affectedStores: [AnyObject]? { (userInfo[NSAffectedStoresErrorKey] as? [Any])?.map { $0 as AnyObject } }
    /// The objects the error concerns (`NSAffectedObjectsErrorKey`).
    public var affectedObjects: [AnyObject]? { (userInfo[NSAffectedObjectsErrorKey] as? [Any])?.map { $0 as AnyObject } }
    /// The conflicts of a save's optimistic-locking failure (`NSPersistentStoreSaveConflictsErrorKey`).
    public var persistentStoreSaveConflicts: [NSMergeConflict]? { userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] }
}

/// An error in NSCocoaErrorDomain with Core Data's code.
func coreDataError(_ code: Int, _ userInfo: [String: Any] = [:]) -> NSError {
    NSError(domain: NSCocoaErrorDomain, code: code, userInfo: userInfo)
}
