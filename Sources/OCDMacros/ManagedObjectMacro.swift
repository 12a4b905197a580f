// `@ManagedObject`: the class's key table, which tells the runtime what Linux cannot find by itself.
//
// Decision D2: on Apple, key-value coding finds a class's accessors and `validate<Key>` methods through the
// Objective-C runtime, and key paths carry their names. On Linux neither holds, so the class macro lists them:
// each `@Managed` property's key path and key, the class's other properties, its `primitive<Key>` accessors and
// its `validate<Key>(_:)` methods. The runtime reads the table through NSManagedObject's `managedKeyTable`.

import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// Adds `override class var managedKeyTable`, built from the members of the class it is attached to.
public struct ManagedObjectMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(MacroDiagnostic.managedObjectNotOnClass.at(node))
            return []
        }
        if let generics = classDecl.genericParameterClause {
            context.diagnose(MacroDiagnostic.managedObjectGeneric.at(generics))
            return []
        }
        if classDecl.inheritanceClause == nil {
            context.diagnose(MacroDiagnostic.managedObjectWithoutSuperclass.at(classDecl.name))
            return []
        }

        let className = classDecl.name.trimmed.text
        // A class that can have subclasses roots its key paths at the class whose table is being built:
        // `\Manager.name` never equals `\Employee.name`, so a subclass's table must name inherited
        // properties with its own key paths. `Self.self` passed to a generic function gives that class
        // (a key path written `\Self.name` does not: the runtime cannot resolve it).
        let isFinal = classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) })
        // The generic parameter's name must not be the class's (a class named ManagedSelf).
        let parameter = className == "ManagedSelf" ? "ManagedSelf_" : "ManagedSelf"
        let root = isFinal ? className : parameter
        var lines = KeyTableEntries(className: className, keyPathRoot: root).lines(for: classDecl.memberBlock.members)
        if !isFinal && !lines.isEmpty {
            lines = ["func entries<\(parameter): \(className)>(_: \(parameter).Type) {"] + lines.map { "    " + $0 }
                + ["}", "entries(Self.self)"]
        }
        let access = switch classDecl.modifiers.accessLevel {
        case .open?: "open "
        case .public?: "public "
        case .package?: "package "
        default: ""
        }
        if lines.isEmpty {
            return ["override \(raw: access)class var managedKeyTable: ManagedKeyTable { super.managedKeyTable }"]
        }
        let body = (["var table = super.managedKeyTable"] + lines + ["return table"])
            .map { "    " + $0 }
            .joined(separator: "\n")
        return ["override \(raw: access)class var managedKeyTable: ManagedKeyTable {\n\(raw: body)\n}"]
    }
}

/// The statements that fill a key table, one per member that KVC or validation must find, in member order.
struct KeyTableEntries {
    let className: String
    /// The root type of the key paths: the class, or the generic parameter standing for the class whose
    /// table is built.
    let keyPathRoot: String

    /// Statements for `members`; members under `#if` keep their condition.
    func lines(for members: MemberBlockItemListSyntax) -> [String] {
        members.flatMap { item -> [String] in
            let decl = item.decl
            if let variable = decl.as(VariableDeclSyntax.self) { return lines(for: variable) }
            if let function = decl.as(FunctionDeclSyntax.self) { return lines(for: function) }
            if let ifConfig = decl.as(IfConfigDeclSyntax.self) { return lines(for: ifConfig) }
            return []
        }
    }

    private func lines(for variable: VariableDeclSyntax) -> [String] {
        if Self.isSkipped(variable.modifiers) { return [] }
        let managed = variable.attributes.contains(attributeNamed: "Managed", module: "OpenCoreData")
        // `#if canImport(CoreData) @NSManaged #else @Managed #endif`: the entry follows the same
        // condition, managed where the clause has `@Managed`.
        let conditional = managed ? nil : variable.attributes.lazy.compactMap { element -> IfConfigDeclSyntax? in
            guard case .ifConfigDecl(let ifConfig) = element,
                  ifConfig.clauses.contains(where: { Self.clauseHasManaged($0) }) else { return nil }
            return ifConfig
        }.first
        return variable.bindings.flatMap { binding -> [String] in
            guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier else { return [] }
            // A getter that is async or throws has no key path, so key-value coding cannot reach it.
            if Self.hasEffects(binding.accessorBlock) { return [] }
            guard let conditional else { return [entry(for: name, managed: managed)] }
            var result: [String] = []
            for clause in conditional.clauses {
                var header = clause.poundKeyword.text
                if let condition = clause.condition { header += " \(condition.trimmedDescription)" }
                result += [header, entry(for: name, managed: Self.clauseHasManaged(clause))]
            }
            if !conditional.clauses.contains(where: { $0.poundKeyword.tokenKind == .poundElse }) {
                result += ["#else", entry(for: name, managed: false)]
            }
            return result + ["#endif"]
        }
    }

    private func entry(for name: TokenSyntax, managed: Bool) -> String {
        let keyPath = "\\\(keyPathRoot).\(name.trimmed.text)"
        let key = name.keyName
        if managed {
            return "table.managed(\(keyPath), key: \(literal(key)))"
        }
        if let rest = key.suffix(afterPrefix: "primitive") {
            return "table.primitiveAccessor(\(keyPath), key: \(literal(rest.lowercasingFirst)))"
        }
        return "table.accessor(\(keyPath), key: \(literal(key)))"
    }

    private static func clauseHasManaged(_ clause: IfConfigClauseSyntax) -> Bool {
        guard case .attributes(let attributes) = clause.elements else { return false }
        return attributes.contains(attributeNamed: "Managed", module: "OpenCoreData")
    }

    private static func hasEffects(_ block: AccessorBlockSyntax?) -> Bool {
        guard case .accessors(let accessors)? = block?.accessors else { return false }
        return accessors.contains { $0.effectSpecifiers != nil }
    }

    /// Methods Core Data calls itself, not validators of a key named after them.
    private static let notValidators: Set<String> = [
        "validateForInsert", "validateForUpdate", "validateForDelete", "validateValue",
    ]

    /// A `validate<Key>(_ value: inout Any?) [throws]` instance method.
    private func lines(for function: FunctionDeclSyntax) -> [String] {
        if Self.isSkipped(function.modifiers) { return [] }
        let name = function.name.keyName
        guard !Self.notValidators.contains(name), let rest = name.suffix(afterPrefix: "validate"),
            function.genericParameterClause == nil
        else { return [] }
        let signature = function.signature
        let parameters = signature.parameterClause.parameters
        guard parameters.count == 1, let parameter = parameters.first, Self.isInoutOptionalAny(parameter.type),
            signature.effectSpecifiers?.asyncSpecifier == nil, Self.returnsVoid(signature.returnClause)
        else { return [] }
        let label = parameter.firstName.tokenKind == .wildcard ? "" : "\(parameter.firstName.trimmed.text): "
        let call = "object.\(function.name.trimmed.text)(\(label)&value)"
        let body = signature.effectSpecifiers?.throwsClause != nil ? "try \(call)" : call
        let key = literal(rest.lowercasingFirst)
        return ["table.validator(key: \(key)) { (object: \(className), value: inout Any?) in \(body) }"]
    }

    /// Each clause's statements under the same `#if`; nothing when no clause has any.
    private func lines(for ifConfig: IfConfigDeclSyntax) -> [String] {
        var result: [String] = []
        var any = false
        for clause in ifConfig.clauses {
            var header = clause.poundKeyword.text
            if let condition = clause.condition { header += " \(condition.trimmedDescription)" }
            result.append(header)
            if case .decls(let members) = clause.elements {
                let inner = lines(for: members)
                any = any || !inner.isEmpty
                result += inner
            }
        }
        return any ? result + ["#endif"] : []
    }

    /// Type members belong to no object; an override is in the superclass's table already, and the
    /// superclass's entry dispatches to it.
    private static func isSkipped(_ modifiers: DeclModifierListSyntax) -> Bool {
        modifiers.contains(.static) || modifiers.contains(.class) || modifiers.contains(.override)
    }

    private func literal(_ key: String) -> String {
        StringLiteralExprSyntax(content: key).description
    }

    /// `inout Any?` or `inout Optional<Any>`.
    private static func isInoutOptionalAny(_ type: TypeSyntax) -> Bool {
        guard let attributed = type.as(AttributedTypeSyntax.self),
            attributed.specifiers.contains(where: {
                $0.as(SimpleTypeSpecifierSyntax.self)?.specifier.tokenKind == .keyword(.inout)
            })
        else { return false }
        let base = attributed.baseType.trimmedDescription.filter { !$0.isWhitespace }
        return ["Any?", "Optional<Any>", "Swift.Optional<Any>"].contains(base)
    }

    /// No return clause, `-> Void` or `-> ()`.
    private static func returnsVoid(_ clause: ReturnClauseSyntax?) -> Bool {
        guard let clause else { return true }
        return ["Void", "()", "Swift.Void"].contains(clause.type.trimmedDescription.filter { !$0.isWhitespace })
    }
}
