// Names the macros derive from declarations: keys, Xcode-style capitalized names, access levels.

import SwiftSyntax

extension TokenSyntax {
    /// The identifier without backticks: the key Core Data uses for a property named by this token.
    var keyName: String {
        identifier?.name ?? trimmed.text
    }
}

extension String {
    /// The first character uppercased, as Xcode's codegen names mutators (`employees` → `Employees`).
    var uppercasingFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }

    /// The first character lowercased, as KVC derives a key from an accessor name (`Name` → `name`).
    var lowercasingFirst: String {
        guard let first else { return self }
        return first.lowercased() + dropFirst()
    }

    /// The text after `prefix` when it starts with an uppercase letter (`validateName`, "validate" → "Name").
    func suffix(afterPrefix prefix: String) -> String? {
        guard hasPrefix(prefix) else { return nil }
        let rest = dropFirst(prefix.count)
        guard let first = rest.first, first.isUppercase else { return nil }
        return String(rest)
    }
}

extension DeclModifierListSyntax {
    /// Whether the list holds the keyword `keyword` (`static`, `class`, `override`…).
    func contains(_ keyword: Keyword) -> Bool {
        contains { $0.name.tokenKind == .keyword(keyword) }
    }

    /// The declaration's access level keyword (`public`, `private`…), ignoring setter-only ones (`private(set)`).
    var accessLevel: Keyword? {
        let levels: [Keyword] = [.open, .public, .package, .internal, .fileprivate, .private]
        for modifier in self where modifier.detail == nil {
            if case .keyword(let keyword) = modifier.name.tokenKind, levels.contains(keyword) {
                return keyword
            }
        }
        return nil
    }
}

extension AttributeListSyntax {
    /// Whether the list holds the attribute `name`, written bare or qualified by `module`
    /// (`@Managed`, `@OpenCoreData.Managed`).
    func contains(attributeNamed name: String, module: String) -> Bool {
        contains { element in
            guard case .attribute(let attribute) = element else { return false }
            let type = attribute.attributeName
            if let identifier = type.as(IdentifierTypeSyntax.self) {
                return identifier.name.text == name
            }
            if let member = type.as(MemberTypeSyntax.self) {
                return member.name.text == name && member.baseType.trimmedDescription == module
            }
            return false
        }
    }
}
