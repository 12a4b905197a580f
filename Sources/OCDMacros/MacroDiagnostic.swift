// The errors the macros report instead of expanding. Each names what is wrong and what to write instead.

import SwiftDiagnostics
import SwiftSyntax

/// A misuse of `@Managed` or `@ManagedObject`, reported as a compile error at the offending syntax.
enum MacroDiagnostic: String, DiagnosticMessage {
    // @Managed
    case managedNotOnVariable
    case managedOutsideClass
    case managedOnLet
    case managedOnStatic
    case managedOnClassProperty
    case managedOnSeveralVariables
    case managedWithoutType
    case managedWithInitialValue
    case managedWithAccessors
    case managedWithObservers
    // @ManagedObject
    case managedObjectNotOnClass
    case managedObjectWithoutSuperclass
    case managedObjectGeneric

    var message: String {
        switch self {
        case .managedNotOnVariable:
            "@Managed applies to a 'var' property of an NSManagedObject subclass"
        case .managedOutsideClass:
            "@Managed applies to properties of an NSManagedObject subclass or of an extension of one"
        case .managedOnLet:
            "@Managed needs 'var' instead of 'let': it gives the property a getter and a setter"
        case .managedOnStatic:
            "@Managed applies to instance properties; a 'static' property belongs to no managed object"
        case .managedOnClassProperty:
            "@Managed applies to instance properties; a 'class' property belongs to no managed object"
        case .managedOnSeveralVariables:
            "@Managed applies to one variable per declaration; declare each managed property with its own 'var'"
        case .managedWithoutType:
            "@Managed needs an explicit type, as Core Data's codegen writes it"
        case .managedWithInitialValue:
            "a managed property's value lives in the managed object context; "
                + "set defaults in the model or in awakeFromInsert()"
        case .managedWithAccessors:
            "@Managed generates this property's getter and setter; remove its accessor block"
        case .managedWithObservers:
            "@Managed generates this property's getter and setter, "
                + "which cannot be combined with 'willSet' or 'didSet'"
        case .managedObjectNotOnClass:
            "@ManagedObject applies to a class that inherits from NSManagedObject"
        case .managedObjectWithoutSuperclass:
            "@ManagedObject applies to a subclass of NSManagedObject; this class has no superclass"
        case .managedObjectGeneric:
            "generic NSManagedObject subclasses are not supported"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "OpenCoreData", id: rawValue) }

    var severity: DiagnosticSeverity { .error }

    /// The diagnostic at `node`.
    func at(_ node: some SyntaxProtocol) -> Diagnostic {
        Diagnostic(node: Syntax(node), message: self)
    }
}
