import Foundation

/// JSON as written, keeping what `JSONSerialization` loses: whether a number had a point or an exponent
/// (a double) or not (an integer), and the order of object keys.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// Structural equality; object keys must also be in the same order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
        default: return false
        }
    }

    /// The value of `key` in an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }
}

/// A JSON text that does not parse, with where.
public struct JSONParseError: Error, CustomStringConvertible, Equatable {
    /// The byte offset of the problem in the text.
    public var offset: Int
    /// What was expected there.
    public var message: String
    /// `invalid JSON at offset N: message`.
    public var description: String { "invalid JSON at offset \(offset): \(message)" }
}

extension JSONValue {
    /// Parses one JSON value (RFC 8259); trailing text other than white space is an error.
    public static func parse(_ text: String) throws -> JSONValue {
        var reader = JSONReader(bytes: Array(text.utf8))
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.position == reader.bytes.count else { throw reader.error("unexpected text after the value") }
        return value
    }
}

private struct JSONReader {
    let bytes: [UInt8]
    var position = 0

    func error(_ message: String) -> JSONParseError { JSONParseError(offset: position, message: message) }

    mutating func skipWhitespace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard depth < 512 else { throw error("nested too deeply") }
        skipWhitespace()
        guard position < bytes.count else { throw error("expected a value, found the end") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var pairs: [(String, JSONValue)] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(pairs) }
            while true {
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a string key") }
                let key = try string()
                skipWhitespace()
                try expect(":")
                pairs.append((key, try value(depth: depth + 1)))
                skipWhitespace()
                if try separatorOrEnd("}") { return .object(pairs) }
            }
        case UInt8(ascii: "["):
            position += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(elements) }
            while true {
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                if try separatorOrEnd("]") { return .array(elements) }
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default:
            return try number()
        }
    }

    mutating func expect(_ character: Character) throws {
        guard position < bytes.count, bytes[position] == character.asciiValue else { throw error("expected '\(character)'") }
        position += 1
    }

    mutating func separatorOrEnd(_ end: Character) throws -> Bool {
        guard position < bytes.count else { throw error("expected ',' or '\(end)', found the end") }
        if bytes[position] == end.asciiValue { position += 1; return true }
        try expect(",")
        return false
    }

    mutating func literal(_ word: String) throws {
        let w = Array(word.utf8)
        guard position + w.count <= bytes.count, Array(bytes[position..<(position + w.count)]) == w else { throw error("expected \(word)") }
        position += w.count
    }

    /// RFC 8259's grammar, `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, with the offset of the
    /// first byte that breaks it: `01`, `.5`, `1.` and `+1` are errors, as in `JSONSerialization`. An
    /// integer too large for `Int64` is read as a double; one too large for a double is an error.
    mutating func number() throws -> JSONValue {
        let start = position
        func isDigit(_ offset: Int) -> Bool { offset < bytes.count && bytes[offset] >= 0x30 && bytes[offset] <= 0x39 }
        func digits() { while isDigit(position) { position += 1 } }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard isDigit(position) else { throw error(position == start ? "expected a value" : "expected a digit") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if isDigit(position) { throw error("a number cannot have a leading zero") }
        } else {
            digits()
        }
        var isDouble = false
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard isDigit(position) else { throw error("expected a digit after the decimal point") }
            digits()
            isDouble = true
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard isDigit(position) else { throw error("expected a digit in the exponent") }
            digits()
            isDouble = true
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if !isDouble, let int = Int64(text) { return .integer(int) }
        guard let double = Double(text), double.isFinite else {
            let end = position
            position = start
            defer { position = end }
            throw error("the number \(text) is out of range")
        }
        return .double(double)
    }

    mutating func string() throws -> String {
        position += 1
        var result: [UInt8] = []
        while true {
            guard position < bytes.count else { throw error("unterminated string") }
            let b = bytes[position]
            position += 1
            if b == UInt8(ascii: "\"") { return String(decoding: result, as: UTF8.self) }
            guard b >= 0x20 else {
                position -= 1
                throw error("a control character must be escaped in a string")
            }
            guard b == UInt8(ascii: "\\") else { result.append(b); continue }
            guard position < bytes.count else { throw error("unterminated escape") }
            let e = bytes[position]
            position += 1
            switch e {
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                    position += 2
                    let low = try hex4()
                    // A high surrogate must be followed by a low one.
                    guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate in a \\u escape") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = UnicodeScalar(code) else { throw error("invalid \\u escape") }
                result += Array(String(Character(scalar)).utf8)
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(e)
            default:
                position -= 1
                throw error("invalid escape '\\\(Character(UnicodeScalar(e)))' in a string")
            }
        }
    }

    mutating func hex4() throws -> UInt32 {
        // Exactly four hexadecimal digits: `UInt32(_:radix:)` alone would take a sign ("+041").
        guard position + 4 <= bytes.count, bytes[position..<(position + 4)].allSatisfy({ UInt8(ascii: "0")...UInt8(ascii: "9") ~= $0 || UInt8(ascii: "a")...UInt8(ascii: "f") ~= $0 || UInt8(ascii: "A")...UInt8(ascii: "F") ~= $0 }),
              let code = UInt32(String(decoding: bytes[position..<(position + 4)], as: UTF8.self), radix: 16) else {
            throw error("expected four hexadecimal digits")
        }
        position += 4
        return code
    }
}
