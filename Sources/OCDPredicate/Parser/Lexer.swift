import Foundation

/// The words of the language that are not identifiers (case-insensitive); `#word` escapes one into a key.
enum Keyword: String, CaseIterable {
    case and = "AND", or = "OR", `in` = "IN", not = "NOT", all = "ALL", any = "ANY", some = "SOME", none = "NONE"
    case like = "LIKE", caseInsensitive = "CASEINSENSITIVE", ci = "CI", matches = "MATCHES", contains = "CONTAINS"
    case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", between = "BETWEEN"
    case null = "NULL", `nil` = "NIL", `self` = "SELF", `true` = "TRUE", yes = "YES", `false` = "FALSE", no = "NO"
    case first = "FIRST", last = "LAST", size = "SIZE", anyKey = "ANYKEY", subquery = "SUBQUERY", fetch = "FETCH"
    case cast = "CAST", truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case utiConformsTo = "UTI-CONFORMS-TO", utiEquals = "UTI-EQUALS"
    case union = "UNION", intersect = "INTERSECT", minus = "MINUS", ternary = "TERNARY", function = "FUNCTION"

    private static let byUppercasedName: [String: Keyword] = {
        var table: [String: Keyword] = [:]
        for keyword in allCases { table[keyword.rawValue] = keyword }
        return table
    }()

    /// Keywords are ASCII and match without regard to ASCII case only: `ſelf` is not `SELF`.
    static func named(_ word: String) -> Keyword? {
        guard word.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        return byUppercasedName[word.uppercased()]
    }
}

/// What `%@`, `%K`, `%d` … turned into: substitution happens while scanning, so arguments are never parsed.
enum FormatArgument {
    case constant(Value)
    case expression(NSExpression)
    case keyPath(KeyPathComponents)
}

struct Token {
    enum Kind {
        case end
        case identifier(String)
        /// `#word`: a key, even when the word is reserved.
        case escapedIdentifier(String)
        /// `@count`, `@sum` …: a key-path component naming a collection operator.
        case atIdentifier(String)
        case keyword(Keyword)
        case string(String)
        case number(Value)
        case variable(String)
        case argument(FormatArgument)
        /// Punctuation and operators: `==`, `<=`, `&&`, `(`, `:=` …
        case symbol(String)
    }

    let kind: Kind
    /// Byte offsets into the UTF-8 of the format.
    let start: Int
    let end: Int
}

/// Turns a format string into tokens. Works on UTF-8 bytes: every character that matters is ASCII, and
/// other bytes can only be part of identifiers or strings.
struct Lexer {
    let format: String
    private let bytes: [UInt8]
    private var position = 0
    private var arguments: [Any?]
    private var argumentIndex = 0

    init(format: String, arguments: [Any?]) {
        self.format = format
        self.bytes = Array(format.utf8)
        self.arguments = arguments
    }

    static func tokenize(_ format: String, arguments: [Any?]) throws -> [Token] {
        var lexer = Lexer(format: format, arguments: arguments)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if case .end = token.kind { return tokens }
        }
    }

    func error(at offset: Int, expected: String, found: String? = nil) -> PredicateParseError {
        PredicateParseError(
            format: format, offset: characterOffset(offset), expected: expected,
            found: found ?? describeInput(at: offset))
    }

    func characterOffset(_ byteOffset: Int) -> Int {
        String(decoding: bytes[0..<min(byteOffset, bytes.count)], as: UTF8.self).count
    }

    private func describeInput(at offset: Int) -> String {
        guard offset < bytes.count else { return "the end of the string" }
        let rest = String(decoding: bytes[offset...], as: UTF8.self)
        return "'\(rest.first.map(String.init) ?? "")'"
    }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    private static func isIdentifierStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b >= 0x80
    }

    private static func isIdentifierPart(_ b: UInt8) -> Bool {
        isIdentifierStart(b) || (b >= 0x30 && b <= 0x39)
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    mutating func next() throws -> Token {
        while let b = peek(), b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0B || b == 0x0C {
            position += 1
        }
        let start = position
        guard let b = peek() else { return Token(kind: .end, start: start, end: start) }
        func token(_ kind: Token.Kind) -> Token { Token(kind: kind, start: start, end: position) }

        if Lexer.isIdentifierStart(b) {
            let word = readWord()
            if word.uppercased() == "UTI", let compound = readUTISuffix() {
                return token(.keyword(compound))
            }
            if let keyword = Keyword.named(word) { return token(.keyword(keyword)) }
            return token(.identifier(word))
        }
        if Lexer.isDigit(b) { return token(.number(try readNumber())) }

        switch b {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return token(.string(try readString(quote: b)))
        case UInt8(ascii: "$"):
            position += 1
            if peek() == UInt8(ascii: "#") { position += 1 }
            guard let c = peek(), Lexer.isIdentifierStart(c) else {
                throw error(at: position, expected: "a variable name after '$'")
            }
            return token(.variable(readWord()))
        case UInt8(ascii: "#"):
            position += 1
            guard let c = peek(), Lexer.isIdentifierStart(c) else {
                throw error(at: position, expected: "a word after '#'")
            }
            return token(.escapedIdentifier(readWord()))
        case UInt8(ascii: "@"):
            position += 1
            guard let c = peek(), Lexer.isIdentifierStart(c) else {
                throw error(at: position, expected: "a collection operator name after '@' (@count, @sum …)")
            }
            return token(.atIdentifier("@" + readWord()))
        case UInt8(ascii: "%"):
            return token(.argument(try readDirective()))
        default:
            break
        }

        // Operators, longest match first.
        for candidate in Lexer.twoCharacterOperators where matches(candidate) {
            position += 2
            return token(.symbol(candidate))
        }
        if Lexer.singleCharacterOperators.contains(b) {
            position += 1
            return token(.symbol(String(UnicodeScalar(b))))
        }
        let reason: String
        switch b {
        case UInt8(ascii: "\\"): reason = "a backslash is only allowed inside a quoted string"
        case UInt8(ascii: "?"): reason = "'?' is not part of the language (use %@ for arguments)"
        case UInt8(ascii: "&"), UInt8(ascii: "|"): reason = "'\(UnicodeScalar(b))' alone is not an operator (&& and || are)"
        default: reason = "a character of the predicate language"
        }
        throw error(at: start, expected: reason)
    }

    private static let twoCharacterOperators = ["**", "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", ":="]
    private static let singleCharacterOperators = Set("=<>!+-*/()[]{},.:".utf8)

    private func matches(_ text: String) -> Bool {
        var i = 0
        for byte in text.utf8 {
            guard peek(i) == byte else { return false }
            i += 1
        }
        return true
    }

    private mutating func readWord() -> String {
        let start = position
        while let b = peek(), Lexer.isIdentifierPart(b) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// `UTI-CONFORMS-TO` and `UTI-EQUALS` are one keyword each, hyphens included.
    private mutating func readUTISuffix() -> Keyword? {
        for (suffix, keyword) in [("-CONFORMS-TO", Keyword.utiConformsTo), ("-EQUALS", Keyword.utiEquals)] {
            let length = suffix.utf8.count
            guard position + length <= bytes.count else { continue }
            let text = String(decoding: bytes[position..<(position + length)], as: UTF8.self)
            let after = position + length < bytes.count ? bytes[position + length] : nil
            if text.uppercased() == suffix, after.map({ !Lexer.isIdentifierPart($0) }) ?? true {
                position += length
                return keyword
            }
        }
        return nil
    }

    /// Decimal integers and reals with an optional exponent, and `0x`, `0o`, `0b` integers. A literal with a
    /// point or an exponent is floating point; the others are integers (so `7 / 2` is 3, as on Apple platforms).
    private mutating func readNumber() throws -> Value {
        let start = position
        if peek() == UInt8(ascii: "0"), let prefix = peek(1) {
            let radix: Int?
            switch prefix {
            case UInt8(ascii: "x"), UInt8(ascii: "X"): radix = 16
            case UInt8(ascii: "o"), UInt8(ascii: "O"): radix = 8
            case UInt8(ascii: "b"), UInt8(ascii: "B"): radix = 2
            default: radix = nil
            }
            if let radix {
                position += 2
                let digitsStart = position
                while let b = peek(), Lexer.isIdentifierPart(b) { position += 1 }
                let digits = String(decoding: bytes[digitsStart..<position], as: UTF8.self)
                guard let value = UInt64(digits, radix: radix) else {
                    throw error(at: start, expected: "a base-\(radix) number", found: "'\(String(decoding: bytes[start..<position], as: UTF8.self))'")
                }
                return value <= UInt64(Int64.max) ? .int(Int64(value)) : .decimal(Decimal(value))
            }
        }
        var isReal = false
        while let b = peek(), Lexer.isDigit(b) { position += 1 }
        if peek() == UInt8(ascii: "."), let d = peek(1), Lexer.isDigit(d) {
            isReal = true
            position += 1
            while let b = peek(), Lexer.isDigit(b) { position += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            var lookahead = 1
            if let sign = peek(1), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { lookahead = 2 }
            if let d = peek(lookahead), Lexer.isDigit(d) {
                isReal = true
                position += lookahead
                while let b = peek(), Lexer.isDigit(b) { position += 1 }
            }
        }
        if let b = peek(), Lexer.isIdentifierStart(b) {
            throw error(at: position, expected: "an operator or the end of a number")
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if !isReal, let int = Int64(text) { return .int(int) }
        if !isReal, let decimal = Decimal(string: text) { return .decimal(decimal) }
        guard let double = Double(text) else { throw error(at: start, expected: "a number") }
        return .double(double)
    }

    /// A quoted string. Format directives, `$` and `%K` inside are literal text.
    private mutating func readString(quote: UInt8) throws -> String {
        let start = position
        position += 1
        var result: [UInt8] = []
        while true {
            guard let b = peek() else {
                throw error(at: start, expected: "a closing \(quote == UInt8(ascii: "\"") ? "\"" : "'") for the string that starts here", found: "the end of the string")
            }
            position += 1
            if b == quote { break }
            guard b == UInt8(ascii: "\\") else {
                result.append(b)
                continue
            }
            guard let escaped = peek() else {
                throw error(at: position - 1, expected: "a character after the backslash")
            }
            position += 1
            switch escaped {
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "a"): result.append(0x07)
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "v"): result.append(0x0B)
            case UInt8(ascii: "x"):
                result += try readCodePoint(digits: 2, radix: 16)
            case UInt8(ascii: "u"):
                result += try readUTF16Escape()
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                position -= 1
                result += try readCodePoint(digits: 3, radix: 8)
            default:
                result.append(escaped)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private mutating func readCodePoint(digits: Int, radix: Int) throws -> [UInt8] {
        let start = position
        guard let code = readDigits(digits, radix: radix), let scalar = UnicodeScalar(code) else {
            throw error(at: start, expected: "\(digits) \(radix == 16 ? "hexadecimal" : "octal") digits in the escape")
        }
        return Array(String(Character(scalar)).utf8)
    }

    /// `\uXXXX` is a UTF-16 unit, as in the strings Foundation parses: a character beyond the Basic
    /// Multilingual Plane is written as a surrogate pair, `\uD83D\uDE00`.
    private mutating func readUTF16Escape() throws -> [UInt8] {
        let start = position
        guard let unit = readDigits(4, radix: 16) else {
            throw error(at: start, expected: "4 hexadecimal digits in the escape")
        }
        if let scalar = UnicodeScalar(unit) { return Array(String(Character(scalar)).utf8) }
        let low: UInt32?
        if unit < 0xDC00, position + 2 <= bytes.count,
           bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
            position += 2
            low = readDigits(4, radix: 16)
        } else {
            low = nil
        }
        guard let low, (0xDC00...0xDFFF).contains(low),
              let scalar = UnicodeScalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        else {
            throw error(at: start, expected: "a surrogate pair (\\uD800–\\uDBFF followed by \\uDC00–\\uDFFF) in the escape")
        }
        return Array(String(Character(scalar)).utf8)
    }

    /// Exactly `count` digits of `radix` (no sign), consumed only when all are there.
    private mutating func readDigits(_ count: Int, radix: Int) -> UInt32? {
        guard position + count <= bytes.count else { return nil }
        var code: UInt32 = 0
        for b in bytes[position..<(position + count)] {
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A")) + 10
            default: return nil
            }
            guard digit < UInt32(radix) else { return nil }
            code = code * UInt32(radix) + digit
        }
        position += count
        return code
    }

    /// `%@`, `%K`, and the printf conversions, consuming the next argument.
    private mutating func readDirective() throws -> FormatArgument {
        let start = position
        position += 1
        var lengthModifier = ""
        while let b = peek(), "hlqLzjt".utf8.contains(b) {
            lengthModifier.append(Character(UnicodeScalar(b)))
            position += 1
        }
        guard let conversion = peek() else {
            throw error(at: start, expected: "a format directive such as %@, %K, %d or %f", found: "'%' at the end of the string")
        }
        position += 1
        let directive = "%" + lengthModifier + String(UnicodeScalar(conversion))
        func nextArgument() throws -> Any? {
            guard argumentIndex < arguments.count else {
                throw error(at: start, expected: "an argument for \(directive) (only \(arguments.count) given)", found: "no argument")
            }
            defer { argumentIndex += 1 }
            return arguments[argumentIndex]
        }
        switch conversion {
        case UInt8(ascii: "@") where lengthModifier.isEmpty:
            let argument = try nextArgument()
            if let expression = argument as? NSExpression { return .expression(expression) }
            if argument is NSPredicate {
                throw error(at: start, expected: "an expression for %@ (use %@ only to represent an expression, not an entire predicate)", found: "a predicate")
            }
            return .constant(Value(argument))
        case UInt8(ascii: "K") where lengthModifier.isEmpty:
            let argument = try nextArgument()
            if let expression = argument as? NSExpression, case .keyPath(let path) = expression.node { return .keyPath(path) }
            guard let key = argument as? String ?? (argument as? Substring).map(String.init) else {
                throw error(at: start, expected: "a key path string for %K", found: "\(argument.map { "\($0)" } ?? "nil")")
            }
            return .keyPath(KeyPathComponents(key))
        case UInt8(ascii: "d"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "X"),
             UInt8(ascii: "o"), UInt8(ascii: "D"), UInt8(ascii: "U"), UInt8(ascii: "O"):
            let argument = try nextArgument()
            let value = Value(argument)
            guard let number = value.numeric else {
                throw error(at: start, expected: "a number for \(directive)", found: describeArgument(argument))
            }
            switch number {
            case .int(let i): return .constant(.int(i))
            case .double(let d) where d.isFinite && abs(d) < 9.2e18: return .constant(.int(Int64(d)))
            // Whole decimals within Int64 only: NSDecimalNumber's int64Value wraps beyond it.
            case .decimal(let d) where d.isFinite && abs(NSDecimalNumber(decimal: d).doubleValue) < 9.2e18:
                return .constant(Value(NSDecimalNumber(decimal: d).int64Value))
            default: throw error(at: start, expected: "an integer for \(directive)", found: describeArgument(argument))
            }
        case UInt8(ascii: "f"), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "g"), UInt8(ascii: "G"),
             UInt8(ascii: "a"), UInt8(ascii: "A"), UInt8(ascii: "F"):
            let argument = try nextArgument()
            guard let number = Value(argument).numeric else {
                throw error(at: start, expected: "a number for \(directive)", found: describeArgument(argument))
            }
            return .constant(.double(number.doubleValue))
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            let argument = try nextArgument()
            guard case .string(let string) = Value(argument) else {
                throw error(at: start, expected: "a string for \(directive)", found: describeArgument(argument))
            }
            return .constant(.string(string))
        case UInt8(ascii: "c"), UInt8(ascii: "C"):
            let argument = try nextArgument()
            switch Value(argument) {
            case .string(let s) where s.unicodeScalars.count == 1:
                return .constant(.int(Int64(s.unicodeScalars.first!.value)))
            case .int(let i): return .constant(.int(i))
            default:
                if let character = argument as? Character, let scalar = character.unicodeScalars.first {
                    return .constant(.int(Int64(scalar.value)))
                }
                throw error(at: start, expected: "a character for \(directive)", found: describeArgument(argument))
            }
        case UInt8(ascii: "k"):
            throw error(at: start, expected: "%K (upper case) for a key path", found: "'%k'")
        default:
            throw error(at: start, expected: "a format directive such as %@, %K, %d or %f", found: "'\(directive)'")
        }
    }

    private func describeArgument(_ argument: Any?) -> String {
        guard let argument else { return "nil" }
        return "\(type(of: argument)) \(argument)"
    }
}
