// `@Managed`: a managed property's accessors, and Xcode-style mutators for to-many relationships.
//
// Decision D2: `@NSManaged` type-checks on Linux but never links, because nothing generates its accessors.
// `@Managed` writes them as calls to NSManagedObject's generic `managedValue(forKey:)` and
// `setManagedValue(_:forKey:)`, keyed by the property's name. Misuse is a compile error, never a crash.

import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// Expands `@Managed var name: T` into `get`/`set` accessors and, for to-many relationships, peer mutators.
public struct ManagedMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        // The peer role reports misuse, so that each error appears once.
        guard case .success(let property) = ManagedProperty.parse(declaration, in: context) else { return [] }
        let key = property.key
        // `@Managed var primitiveName` is the generated primitive accessor of the key "name", as Core Data
        // generates `primitiveName` for a `@dynamic` property: no notifications, no inverse.
        if let rest = key.suffix(afterPrefix: "primitive") {
            let primitiveKey = rest.lowercasingFirst
            return [
                "get { managedPrimitiveValue(forKey: \(literal: primitiveKey)) }",
                "set { setManagedPrimitiveValue(newValue, forKey: \(literal: primitiveKey)) }",
            ]
        }
        return [
            "get { managedValue(forKey: \(literal: key)) }",
            "set { setManagedValue(newValue, forKey: \(literal: key)) }",
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        // The compiler expands the peer role of every declaration that carries the attribute, and the accessor
        // role only of single-variable properties, so this role is the one that reports.
        switch ManagedProperty.parse(declaration, in: context) {
        case .failure(let errors):
            errors.diagnostics.forEach(context.diagnose)
            return []
        case .success(let property):
            return property.mutators
        }
    }
}

/// A property `@Managed` can expand: one instance `var` with a type and nothing else.
struct ManagedProperty {
    /// The property's key: its name without backticks.
    let key: String
    let type: TypeSyntax
    /// The access keyword the mutators copy (`open` becomes `public`).
    let accessLevel: Keyword?

    /// The diagnostics that stop an expansion.
    struct Misuse: Error {
        let diagnostics: [Diagnostic]
    }

    static func parse(
        _ declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) -> Result<ManagedProperty, Misuse> {
        guard let variable = declaration.as(VariableDeclSyntax.self) else {
            return .failure(Misuse(diagnostics: [MacroDiagnostic.managedNotOnVariable.at(declaration)]))
        }
        var errors: [Diagnostic] = []
        if !isInsideClass(context.lexicalContext) {
            errors.append(MacroDiagnostic.managedOutsideClass.at(variable.bindingSpecifier))
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            errors.append(MacroDiagnostic.managedOnLet.at(variable.bindingSpecifier))
        }
        for modifier in variable.modifiers {
            if modifier.name.tokenKind == .keyword(.static) {
                errors.append(MacroDiagnostic.managedOnStatic.at(modifier))
            } else if modifier.name.tokenKind == .keyword(.class) {
                errors.append(MacroDiagnostic.managedOnClassProperty.at(modifier))
            }
        }
        guard variable.bindings.count == 1, let binding = variable.bindings.first,
            let pattern = binding.pattern.as(IdentifierPatternSyntax.self)
        else {
            errors.append(MacroDiagnostic.managedOnSeveralVariables.at(variable.bindings))
            return .failure(Misuse(diagnostics: errors))
        }
        if binding.typeAnnotation == nil {
            errors.append(MacroDiagnostic.managedWithoutType.at(pattern))
        }
        if let initializer = binding.initializer {
            errors.append(MacroDiagnostic.managedWithInitialValue.at(initializer))
        }
        if let accessorBlock = binding.accessorBlock {
            errors.append(
                (hasObservers(accessorBlock) ? MacroDiagnostic.managedWithObservers : .managedWithAccessors)
                    .at(accessorBlock)
            )
        }
        guard errors.isEmpty, let type = binding.typeAnnotation?.type else {
            return .failure(Misuse(diagnostics: errors))
        }
        return .success(
            ManagedProperty(
                key: pattern.identifier.keyName,
                type: type.trimmed,
                accessLevel: variable.modifiers.accessLevel
            )
        )
    }

    /// A class or an extension (of a class, presumably: an extension's extended type is only a name here).
    private static func isInsideClass(_ lexicalContext: [Syntax]) -> Bool {
        guard let innermost = lexicalContext.first else { return false }
        return innermost.is(ClassDeclSyntax.self) || innermost.is(ExtensionDeclSyntax.self)
    }

    private static func hasObservers(_ block: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let accessors) = block.accessors else { return false }
        return accessors.contains {
            $0.accessorSpecifier.tokenKind == .keyword(.willSet) || $0.accessorSpecifier.tokenKind == .keyword(.didSet)
        }
    }
}

// MARK: - To-many mutators

extension ManagedProperty {
    /// The collection a to-many relationship is declared as.
    enum ToMany {
        /// `Set<Element>`: unordered, typed.
        case set(element: TypeSyntax)
        /// `NSSet`: unordered, elements typed `NSManagedObject`.
        case nsSet
        /// `NSOrderedSet`: ordered, elements typed `NSManagedObject`.
        case nsOrderedSet
    }

    /// The to-many collection the property's type names, looking through `?`, `!` and `Optional<…>`.
    var toMany: ToMany? {
        var type = type
        if let optional = type.as(OptionalTypeSyntax.self) {
            type = optional.wrappedType
        } else if let unwrapped = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            type = unwrapped.wrappedType
        } else if let named = Self.standardName(of: type), named.name == "Optional", named.arguments.count == 1 {
            type = named.arguments[0]
        }
        switch Self.standardName(of: type) {
        case ("Set", let arguments)? where arguments.count == 1:
            let element = arguments[0]
            // A set of values (`Set<String>`) is a transformable attribute, not a relationship.
            if let elementName = Self.standardName(of: element), elementName.arguments.isEmpty,
                Self.valueTypeNames.contains(elementName.name)
            {
                return nil
            }
            return .set(element: element)
        case ("NSSet", [])?: return .nsSet
        case ("NSOrderedSet", [])?: return .nsOrderedSet
        default: return nil
        }
    }

    /// Xcode's mutators for a to-many relationship, at the property's access level.
    var mutators: [DeclSyntax] {
        guard let toMany, key.suffix(afterPrefix: "primitive") == nil else { return [] }
        let name = key.uppercasingFirst
        let literal = StringLiteralExprSyntax(content: key)
        let access = switch accessLevel {
        case nil: ""
        case .open?: "public "
        case let level?: "\(TokenSyntax.keyword(level).text) "
        }
        func mutator(_ signature: String, _ body: String) -> DeclSyntax {
            "\(raw: access)func \(raw: signature) {\n    \(raw: body)\n}"
        }
        switch toMany {
        case .set(let element):
            return [
                mutator("addTo\(name)(_ value: \(element))", "managedAdd(CollectionOfOne(value), forKey: \(literal))"),
                mutator("removeFrom\(name)(_ value: \(element))", "managedRemove(CollectionOfOne(value), forKey: \(literal))"),
                mutator("addTo\(name)(_ values: Set<\(element)>)", "managedAdd(values, forKey: \(literal))"),
                mutator("removeFrom\(name)(_ values: Set<\(element)>)", "managedRemove(values, forKey: \(literal))"),
                mutator("addTo\(name)(_ values: NSSet)", "managedAdd(values, forKey: \(literal))"),
                mutator("removeFrom\(name)(_ values: NSSet)", "managedRemove(values, forKey: \(literal))"),
            ]
        case .nsSet:
            return [
                mutator("addTo\(name)(_ value: NSManagedObject)", "managedAdd(CollectionOfOne(value), forKey: \(literal))"),
                mutator(
                    "removeFrom\(name)(_ value: NSManagedObject)",
                    "managedRemove(CollectionOfOne(value), forKey: \(literal))"
                ),
                mutator("addTo\(name)(_ values: NSSet)", "managedAdd(values, forKey: \(literal))"),
                mutator("removeFrom\(name)(_ values: NSSet)", "managedRemove(values, forKey: \(literal))"),
            ]
        case .nsOrderedSet:
            return [
                mutator(
                    "insertInto\(name)(_ value: NSManagedObject, at idx: Int)",
                    "managedInsert(CollectionOfOne(value), at: NSIndexSet(index: idx), forKey: \(literal))"
                ),
                mutator("removeFrom\(name)(at idx: Int)", "managedRemove(at: NSIndexSet(index: idx), forKey: \(literal))"),
                mutator(
                    "insertInto\(name)(_ values: [NSManagedObject], at indexes: NSIndexSet)",
                    "managedInsert(values, at: indexes, forKey: \(literal))"
                ),
                mutator("removeFrom\(name)(at indexes: NSIndexSet)", "managedRemove(at: indexes, forKey: \(literal))"),
                mutator(
                    "replace\(name)(at idx: Int, with value: NSManagedObject)",
                    "managedReplace(at: NSIndexSet(index: idx), with: CollectionOfOne(value), forKey: \(literal))"
                ),
                mutator(
                    "replace\(name)(at indexes: NSIndexSet, with values: [NSManagedObject])",
                    "managedReplace(at: indexes, with: values, forKey: \(literal))"
                ),
                mutator("addTo\(name)(_ value: NSManagedObject)", "managedAdd(CollectionOfOne(value), forKey: \(literal))"),
                mutator(
                    "removeFrom\(name)(_ value: NSManagedObject)",
                    "managedRemove(CollectionOfOne(value), forKey: \(literal))"
                ),
                mutator("addTo\(name)(_ values: NSOrderedSet)", "managedAdd(values, forKey: \(literal))"),
                mutator("removeFrom\(name)(_ values: NSOrderedSet)", "managedRemove(values, forKey: \(literal))"),
            ]
        }
    }

    /// The name and generic arguments of a type written bare (`Set<T>`) or qualified by the standard library or
    /// Foundation (`Swift.Set<T>`, `Foundation.NSSet`); nil for any other type.
    private static func standardName(of type: TypeSyntax) -> (name: String, arguments: [TypeSyntax])? {
        let name: TokenSyntax
        let clause: GenericArgumentClauseSyntax?
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            (name, clause) = (identifier.name, identifier.genericArgumentClause)
        } else if let member = type.as(MemberTypeSyntax.self),
            ["Swift", "Foundation"].contains(member.baseType.trimmedDescription)
        {
            (name, clause) = (member.name, member.genericArgumentClause)
        } else {
            return nil
        }
        let arguments = clause?.arguments.compactMap { $0.argument.as(TypeSyntax.self)?.trimmed } ?? []
        return (name.text, arguments)
    }

    /// Standard value types: a `Set` of one of them is an attribute. Any other element is taken for an
    /// NSManagedObject subclass.
    private static let valueTypeNames: Set<String> = [
        "String", "Substring", "Character", "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8",
        "UInt16", "UInt32", "UInt64", "Float", "Double", "Decimal", "Date", "Data", "UUID", "URL",
    ]
}
