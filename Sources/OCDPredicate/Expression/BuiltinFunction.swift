import Foundation

/// The built-in functions of `NSExpression(forFunction:arguments:)`, by Apple's selector names.
enum BuiltinFunction: String, CaseIterable {
    case sum = "sum:", count = "count:", min = "min:", max = "max:", average = "average:", median = "median:"
    case mode = "mode:", stddev = "stddev:"
    case add = "add:to:", subtract = "from:subtract:", multiply = "multiply:by:", divide = "divide:by:"
    case modulus = "modulus:by:", power = "raise:toPower:"
    case sqrt = "sqrt:", log = "log:", ln = "ln:", exp = "exp:"
    case floor = "floor:", ceiling = "ceiling:", abs = "abs:", trunc = "trunc:"
    case random = "random", randomn = "randomn:", now = "now"
    case lowercase = "lowercase:", uppercase = "uppercase:", length = "length:"
    /// Not in NSExpression's table, but Core Data's derived attributes use it (`canonical:(name)`), and
    /// Xcode's model files hold it: the string folded for case, diacritics and width.
    case canonical = "canonical:"
    case bitwiseAnd = "bitwiseAnd:with:", bitwiseOr = "bitwiseOr:with:", bitwiseXor = "bitwiseXor:with:"
    case leftShift = "leftshift:by:", rightShift = "rightshift:by:", onesComplement = "onesComplement:"
    case noindex = "noindex:"
    case index = "objectFrom:withIndex:"
    case cast = "castObject:toType:"

    var selector: String { rawValue }

    /// The number of arguments; nil for the statistics functions, which take one collection or several values.
    var arity: Int? {
        switch self {
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev: return nil
        case .random, .now: return 0
        case .add, .subtract, .multiply, .divide, .modulus, .power, .bitwiseAnd, .bitwiseOr, .bitwiseXor,
             .leftShift, .rightShift, .index, .cast:
            return 2
        default: return 1
        }
    }

    /// The infix operator Apple prints for an arithmetic or bitwise function.
    var infixOperator: String? {
        switch self {
        case .add: return "+"
        case .subtract: return "-"
        case .multiply: return "*"
        case .divide: return "/"
        case .power: return "**"
        default: return nil
        }
    }

    private static let byName: [String: BuiltinFunction] = {
        var table: [String: BuiltinFunction] = [:]
        for function in allCases {
            table[function.rawValue.lowercased()] = function
            // `sum`, `sum:`, `add`, `add:to:`: the first part alone names the function too.
            let head = function.rawValue.split(separator: ":").first.map(String.init) ?? function.rawValue
            table[head.lowercased()] = table[head.lowercased()] ?? function
            table[head.lowercased() + ":"] = table[head.lowercased() + ":"] ?? function
        }
        return table
    }()

    static func named(_ name: String) -> BuiltinFunction? {
        byName[name.lowercased()]
    }

    /// Resolves a function name as written (`sum`, `sum:`, `add:to:`), or throws Apple's parse error.
    static func resolve(_ name: String, argumentCount: Int, format: String, offset: Int) throws -> BuiltinFunction {
        guard let function = named(name) else {
            let selector = name.hasSuffix(":") ? name : name + ":"
            throw PredicateParseError(
                format: format, offset: offset,
                expected: "a supported function name",
                found: "'\(name)' (Unable to parse function name '\(selector)' into supported selector (\(selector)))")
        }
        if let arity = function.arity, arity != argumentCount {
            throw PredicateParseError(
                format: format, offset: offset,
                expected: "\(arity) argument\(arity == 1 ? "" : "s") for \(function.selector)",
                found: "\(argumentCount)")
        }
        if function.arity == nil && argumentCount == 0 {
            throw PredicateParseError(format: format, offset: offset, expected: "an argument for \(function.selector)", found: "none")
        }
        return function
    }
}

/// Statistics over collections, shared by the functions and the `@sum`-style collection operators.
enum Aggregates {
    static func numbers(_ values: [Value], _ function: String) throws -> [Numeric] {
        try values.map { value in
            guard let number = value.numeric else {
                throw PredicateEvaluationError(.typeMismatch, "\(function) needs numbers, not \(KeyValueCoding.typeName(value)) \(FormatPrinter.constantDescription(value)).")
            }
            return number
        }
    }

    static func sum(_ values: [Value]) throws -> Value {
        var total: Value = .int(0)
        for number in try numbers(values, "sum:") {
            total = try Arithmetic.combine(total, Value(numeric: number), .add)
        }
        return total
    }

    static func average(_ values: [Value]) throws -> Value {
        let all = try numbers(values, "average:")
        if all.isEmpty { return .nil }
        if all.contains(where: { if case .decimal = $0 { return true } else { return false } }) {
            let total = all.reduce(Decimal(0)) { $0 + $1.decimalValue }
            return .decimal(total / Decimal(all.count))
        }
        return .double(all.reduce(0.0) { $0 + $1.doubleValue } / Double(all.count))
    }

    static func extreme(_ values: [Value], wantMax: Bool) throws -> Value {
        var best: Value?
        for value in values {
            guard let current = best else {
                best = value
                continue
            }
            let order = try Comparison.order(value, current, options: [])
            if (wantMax && order == .orderedDescending) || (!wantMax && order == .orderedAscending) { best = value }
        }
        return best ?? .nil
    }

    static func distinct(_ values: [Value]) -> [Value] {
        var seen = Set<Value>()
        return values.filter { seen.insert($0).inserted }
    }
}

extension NSExpression {
    /// A two-argument built-in function: `add:to:`, `objectFrom:withIndex:` …
    static func binary(_ function: BuiltinFunction, _ lhs: NSExpression, _ rhs: NSExpression) -> NSExpression {
        NSExpression(node: .function(name: function.selector, arguments: [lhs, rhs], target: nil))
    }
}

extension Value {
    init(numeric: Numeric) {
        switch numeric {
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .decimal(let d): self = .decimal(d)
        }
    }
}

/// Arithmetic on numbers with Apple's rules: integer operands give integer results (division truncates),
/// a floating-point operand gives a double, decimals stay decimal.
enum Arithmetic {
    enum Operation { case add, subtract, multiply, divide, modulus }

    static func combine(_ lhs: Value, _ rhs: Value, _ operation: Operation) throws -> Value {
        guard let a = lhs.numeric, let b = rhs.numeric else {
            throw PredicateEvaluationError(
                .typeMismatch,
                "Can't do arithmetic with \(FormatPrinter.constantDescription(lhs)) and \(FormatPrinter.constantDescription(rhs)): both operands must be numbers.")
        }
        switch (a, b) {
        case (.int(let x), .int(let y)):
            switch operation {
            case .add:
                let (r, overflow) = x.addingReportingOverflow(y)
                return overflow ? .double(Double(x) + Double(y)) : .int(r)
            case .subtract:
                let (r, overflow) = x.subtractingReportingOverflow(y)
                return overflow ? .double(Double(x) - Double(y)) : .int(r)
            case .multiply:
                let (r, overflow) = x.multipliedReportingOverflow(by: y)
                return overflow ? .double(Double(x) * Double(y)) : .int(r)
            case .divide:
                if y == 0 { return .double(Double(x) / 0) }
                let (r, overflow) = x.dividedReportingOverflow(by: y)
                return overflow ? .double(Double(x) / Double(y)) : .int(r)
            case .modulus:
                if y == 0 { throw PredicateEvaluationError(.invalidArgument, "modulus:by: with a zero divisor.") }
                let (r, overflow) = x.remainderReportingOverflow(dividingBy: y)
                return overflow ? .int(0) : .int(r)
            }
        case (.double, _), (_, .double):
            let x = a.doubleValue, y = b.doubleValue
            switch operation {
            case .add: return .double(x + y)
            case .subtract: return .double(x - y)
            case .multiply: return .double(x * y)
            case .divide: return .double(x / y)
            case .modulus: return .double(x.truncatingRemainder(dividingBy: y))
            }
        default:
            let x = a.decimalValue, y = b.decimalValue
            switch operation {
            case .add: return .decimal(x + y)
            case .subtract: return .decimal(x - y)
            case .multiply: return .decimal(x * y)
            case .divide:
                if y == 0 { return .double(x.doubleValue / 0) }
                return .decimal(x / y)
            case .modulus:
                if y == 0 { throw PredicateEvaluationError(.invalidArgument, "modulus:by: with a zero divisor.") }
                var quotient = x / y
                var truncated = Decimal()
                NSDecimalRound(&truncated, &quotient, 0, quotient < 0 ? .up : .down)
                return .decimal(x - truncated * y)
            }
        }
    }
}

extension Decimal {
    var doubleValue: Double { NSDecimalNumber(decimal: self).doubleValue }
}
