import Foundation

/// Prints predicates and expressions the way Apple's `predicateFormat` and `description` do
/// (spec/predicates.md §10): upper-case operators with their options (`LIKE[cd]`), double-quoted strings,
/// numbers as `NSNumber` describes them, dates as `CAST(<seconds>, "NSDate")`, compound subpredicates in
/// parentheses.
struct FormatPrinter {
    private(set) var output = ""

    mutating func write(_ predicate: NSPredicate) {
        switch predicate {
        case let comparison as NSComparisonPredicate:
            write(comparison)
        case let compound as NSCompoundPredicate:
            write(compound)
        default:
            switch predicate.kind {
            case .constant(let value): output += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
            case .block: output += "BLOCKPREDICATE(\(String(UInt(bitPattern: ObjectIdentifier(predicate).hashValue), radix: 16)))"
            case .subclass: output += "\(type(of: predicate))"
            }
        }
    }

    private mutating func write(_ comparison: NSComparisonPredicate) {
        switch comparison.comparisonPredicateModifier {
        case .any: output += "ANY "
        case .all: output += "ALL "
        case .direct: break
        }
        write(comparison.leftExpression)
        output += " "
        switch comparison.op {
        case .standard(let op): output += FormatPrinter.operatorText(op)
        case .utiConformsTo: output += "UTI-CONFORMS-TO"
        case .utiEquals: output += "UTI-EQUALS"
        case .selector(let name): output += name
        }
        if !comparison.options.isEmpty {
            output += "["
            if comparison.options.contains(.caseInsensitive) { output += "c" }
            if comparison.options.contains(.diacriticInsensitive) { output += "d" }
            if comparison.options.contains(.normalized) { output += "n" }
            if comparison.options.contains(.localeSensitive) { output += "l" }
            output += "]"
        }
        output += " "
        write(comparison.rightExpression)
    }

    static func operatorText(_ op: NSComparisonPredicate.Operator) -> String {
        switch op {
        case .lessThan: return "<"
        case .lessThanOrEqualTo: return "<="
        case .greaterThan: return ">"
        case .greaterThanOrEqualTo: return ">="
        case .equalTo: return "=="
        case .notEqualTo: return "!="
        case .matches: return "MATCHES"
        case .like: return "LIKE"
        case .beginsWith: return "BEGINSWITH"
        case .endsWith: return "ENDSWITH"
        case .in: return "IN"
        case .customSelector: return "CUSTOMSELECTOR"
        case .contains: return "CONTAINS"
        case .between: return "BETWEEN"
        }
    }

    private mutating func write(_ compound: NSCompoundPredicate) {
        let subpredicates = compound.predicates
        switch compound.compoundPredicateType {
        case .not:
            output += "NOT "
            writeSubpredicate(subpredicates[0])
        case .and, .or:
            if subpredicates.isEmpty {
                output += compound.compoundPredicateType == .and ? "TRUEPREDICATE" : "FALSEPREDICATE"
                return
            }
            if subpredicates.count == 1 {
                write(subpredicates[0])
                return
            }
            let separator = compound.compoundPredicateType == .and ? " AND " : " OR "
            for (i, subpredicate) in subpredicates.enumerated() {
                if i > 0 { output += separator }
                writeSubpredicate(subpredicate)
            }
        }
    }

    /// A compound inside a compound is parenthesised, even with the same operator; comparisons never are.
    private mutating func writeSubpredicate(_ predicate: NSPredicate) {
        if predicate is NSCompoundPredicate {
            output += "("
            write(predicate)
            output += ")"
        } else {
            write(predicate)
        }
    }

    // MARK: Expressions

    mutating func write(_ expression: NSExpression) {
        switch expression.node {
        case .constant(let value):
            output += FormatPrinter.constantDescription(value)
        case .evaluatedObject:
            output += "SELF"
        case .variable(let name):
            output += "$" + FormatPrinter.escapedKey(name)
        case .keyPath(let path):
            output += FormatPrinter.keyPathDescription(path)
        case .keyPathOnValue(let operand, let path):
            writePostfixOperand(operand)
            output += "." + FormatPrinter.keyPathDescription(path)
        case .composition(let lhs, let rhs):
            writePostfixOperand(lhs)
            output += "."
            if case .function(BuiltinFunction.index.selector, _, nil) = rhs.node {
                write(rhs)
            } else {
                output += "("
                write(rhs)
                output += ")"
            }
        case .function(let name, let arguments, let target):
            if let target {
                output += "FUNCTION("
                write(target)
                output += ", " + FormatPrinter.quoted(name)
                for argument in arguments {
                    output += " , "
                    write(argument)
                }
                output += ")"
            } else {
                writeBuiltin(name, arguments)
            }
        case .symbolic(let symbol):
            output += symbol.rawValue
        case .set(let operation, let lhs, let rhs):
            // Set operators share one left-associative level: only a nested right operand needs parentheses.
            if case .assignment = lhs.node { writeOperand(lhs) } else { write(lhs) }
            output += " \(operation.rawValue) "
            writeOperand(rhs)
        case .subquery(let collection, let variable, let predicate):
            output += "SUBQUERY("
            write(collection)
            output += ", $\(FormatPrinter.escapedKey(variable)), "
            write(predicate)
            output += ")"
        case .aggregate(let elements):
            output += "{"
            for (i, element) in elements.enumerated() {
                if i > 0 { output += ", " }
                write(element)
            }
            output += "}"
        case .anyKey:
            output += "ANYKEY"
        case .block(_, let arguments):
            output += "BLOCK(<block>, {"
            for (i, argument) in (arguments ?? []).enumerated() {
                if i > 0 { output += ", " }
                write(argument)
            }
            output += "})"
        case .conditional(let predicate, let whenTrue, let whenFalse):
            output += "TERNARY("
            write(predicate)
            output += ", "
            write(whenTrue)
            output += ", "
            write(whenFalse)
            output += ")"
        case .assignment(let variable, let value):
            output += "$\(FormatPrinter.escapedKey(variable)) := "
            write(value)
        }
    }

    private mutating func writeBuiltin(_ name: String, _ arguments: [NSExpression]) {
        let function = BuiltinFunction.named(name)
        if let op = function?.infixOperator, arguments.count == 2 {
            writeOperand(arguments[0])
            output += " \(op) "
            writeOperand(arguments[1])
            return
        }
        if function == .index, arguments.count == 2 {
            // `a.d[0]` would parse back as `a.(d[0])`: a key path being indexed keeps its parentheses.
            switch arguments[0].node {
            case .keyPath(let path) where path.components.count > 1:
                output += "(" + FormatPrinter.keyPathDescription(path) + ")"
            case .keyPathOnValue:
                output += "("
                write(arguments[0])
                output += ")"
            default:
                writePostfixOperand(arguments[0])
            }
            output += "["
            write(arguments[1])
            output += "]"
            return
        }
        if function == .cast, arguments.count == 2 {
            output += "CAST("
            write(arguments[0])
            output += ", "
            write(arguments[1])
            output += ")"
            return
        }
        output += name + "("
        for (i, argument) in arguments.enumerated() {
            if i > 0 { output += ", " }
            write(argument)
        }
        output += ")"
    }

    /// An operand of an infix operator, an index or a key path: parenthesised when it is itself an infix
    /// operation, so that the printed text parses back to the same tree.
    private mutating func writeOperand(_ expression: NSExpression) {
        let needsParentheses: Bool
        switch expression.node {
        case .function(let name, let arguments, nil):
            needsParentheses = BuiltinFunction.named(name)?.infixOperator != nil && arguments.count == 2
        case .set, .assignment:
            needsParentheses = true
        default:
            needsParentheses = false
        }
        if needsParentheses { output += "(" }
        write(expression)
        if needsParentheses { output += ")" }
    }

    /// The operand of `.key` or `[index]`: also parenthesised when it is a negative number, which would
    /// otherwise read as `0 - (5.key)`.
    private mutating func writePostfixOperand(_ expression: NSExpression) {
        if case .constant(let value) = expression.node, let number = value.numeric, number.doubleValue < 0 || FormatPrinter.numberDescription(value).hasPrefix("-") {
            output += "(" + FormatPrinter.constantDescription(value) + ")"
        } else {
            writeOperand(expression)
        }
    }

    // MARK: Constants and keys

    /// A constant as Apple prints it: strings double-quoted (only `\` and `"` escaped), numbers via
    /// `NSNumber.description`, booleans as 1/0, `nil`, `<null>`, dates as `CAST(…, "NSDate")`, collections
    /// in braces.
    static func constantDescription(_ value: Value) -> String {
        switch value {
        case .nil: return "nil"
        case .null: return "<null>"
        case .bool, .int, .double, .decimal: return numberDescription(value)
        case .string(let s): return quoted(s)
        case .date(let d): return "CAST(\(String(format: "%f", d.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let d): return "{length = \(d.count), bytes = 0x\(d.prefix(24).map { String(format: "%02x", $0) }.joined())\(d.count > 24 ? "..." : "")}"
        case .array(let elements), .orderedSet(let elements):
            return "{" + elements.map(constantDescription).joined(separator: ", ") + "}"
        case .set(let elements):
            return "{" + elements.map(constantDescription).sorted().joined(separator: ", ") + "}"
        case .dictionary(let pairs):
            return "{" + pairs.map { "\(constantDescription($0.key))=\(constantDescription($0.value))" }.sorted().joined(separator: ", ") + "}"
        case .object(let opaque):
            let object = opaque.value
            if let expression = object as? NSExpression { return expression.description }
            if let uuid = object as? UUID { return uuid.uuidString }
            if let url = object as? URL { return url.absoluteString }
            return String(describing: object)
        }
    }

    /// `NSNumber.description`: integers as they are, doubles with `%0.16g` (`1000.0` → `1000`,
    /// `0.1` → `0.1`, `1e20` → `1e+20`), booleans as 1 and 0.
    static func numberDescription(_ value: Value) -> String {
        switch value {
        case .bool(let b): return b ? "1" : "0"
        case .int(let i): return String(i)
        case .double(let d):
            if d.isNaN { return "nan" }
            if d.isInfinite { return d < 0 ? "-inf" : "inf" }
            return String(format: "%0.16g", d)
        case .decimal(let d): return NSDecimalNumber(decimal: d).description
        default: return constantDescription(value)
        }
    }

    static func quoted(_ string: String) -> String {
        var result = "\""
        for character in string {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            default: result.append(character)
            }
        }
        return result + "\""
    }

    static func keyPathDescription(_ path: KeyPathComponents) -> String {
        path.components.map(escapedKey).joined(separator: ".")
    }

    /// A key that is a reserved word prints with `#` so it parses back as a key (`#size`, `g.@max.#self`).
    static func escapedKey(_ key: String) -> String {
        Keyword.named(key) != nil ? "#" + key : key
    }
}
