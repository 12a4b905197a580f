import Foundation

extension Evaluator {
    func callBuiltin(_ name: String, _ arguments: [NSExpression], object: Value) throws -> Value {
        guard let function = BuiltinFunction.named(name) else {
            throw PredicateEvaluationError(.unsupported, "Unable to parse function name '\(name)' into supported selector (\(name))")
        }
        // The index of `x[FIRST]` is a symbol, not a value: it is read before the arguments are evaluated.
        if function == .index {
            let collection = try value(of: arguments[0], object: object)
            if case .symbolic(let symbol) = arguments[1].node {
                return try Indexing.element(of: collection, symbol: symbol)
            }
            return try Indexing.element(of: collection, at: value(of: arguments[1], object: object))
        }
        let values = try arguments.map { try value(of: $0, object: object) }
        return try Functions.call(function, values)
    }

    func callMethod(_ selector: String, target: Value, arguments: [Value]) throws -> Value {
        try MethodRegistry.shared.call(selector, target: target, arguments: arguments)
    }
}

enum Indexing {
    static func element(of collection: Value, symbol: NSExpression.Symbol) throws -> Value {
        switch (collection, symbol) {
        case (.nil, _), (.null, _): return .nil
        case (.array(let e), .first), (.orderedSet(let e), .first): return e.first ?? .nil
        case (.array(let e), .last), (.orderedSet(let e), .last): return e.last ?? .nil
        case (.array(let e), .size), (.orderedSet(let e), .size): return .int(Int64(e.count))
        case (.set(let e), .size): return .int(Int64(e.count))
        case (.dictionary(let d), .size): return .int(Int64(d.count))
        default:
            throw PredicateEvaluationError(.invalidArgument, "Can't take [\(symbol.rawValue)] of \(Comparison.describe(collection)): it needs an array\(symbol == .size ? ", a set or a dictionary" : "").")
        }
    }

    static func element(of collection: Value, at index: Value) throws -> Value {
        switch collection {
        case .nil, .null:
            return .nil
        case .dictionary(let pairs):
            if index.isNilOrNull {
                throw PredicateEvaluationError(.invalidArgument, "Can't look up a nil key in a dictionary.")
            }
            return pairs[index] ?? .nil
        case .array(let elements), .orderedSet(let elements):
            guard let number = index.numeric, let i = Int64(exactly: number.doubleValue) else {
                throw PredicateEvaluationError(.invalidArgument, "An array index must be an integer, not \(Comparison.describe(index)).")
            }
            guard i >= 0, i < elements.count else {
                throw PredicateEvaluationError(.invalidArgument, "index \(i) beyond bounds [0 .. \(elements.count - 1)]")
            }
            return elements[Int(i)]
        default:
            throw PredicateEvaluationError(.invalidArgument, "Can't index \(Comparison.describe(collection)): only arrays and dictionaries take an index.")
        }
    }
}

enum Functions {
    static func call(_ function: BuiltinFunction, _ values: [Value]) throws -> Value {
        switch function {
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev:
            return try statistic(function, collection(values, function))
        case .add: return try Arithmetic.combine(values[0], values[1], .add)
        case .subtract: return try Arithmetic.combine(values[0], values[1], .subtract)
        case .multiply: return try Arithmetic.combine(values[0], values[1], .multiply)
        case .divide: return try Arithmetic.combine(values[0], values[1], .divide)
        case .modulus: return try Arithmetic.combine(values[0], values[1], .modulus)
        case .power: return .double(Foundation.pow(try double(values[0], function), try double(values[1], function)))
        case .sqrt: return .double(Foundation.sqrt(try double(values[0], function)))
        case .log: return .double(Foundation.log10(try double(values[0], function)))
        case .ln: return .double(Foundation.log(try double(values[0], function)))
        case .exp: return .double(Foundation.exp(try double(values[0], function)))
        case .floor, .ceiling, .trunc:
            switch try number(values[0], function) {
            case .int(let i): return .int(i)
            case let other:
                let d = other.doubleValue
                return .double(function == .floor ? d.rounded(.down) : function == .ceiling ? d.rounded(.up) : d.rounded(.towardZero))
            }
        case .abs:
            switch try number(values[0], function) {
            case .int(let i): return i == .min ? .double(-Double(i)) : .int(Swift.abs(i))
            case .double(let d): return .double(Swift.abs(d))
            case .decimal(let d): return .decimal(d < 0 ? -d : d)
            }
        case .random: return .double(Double.random(in: 0..<1))
        case .randomn:
            let n = try integer(values[0], function)
            guard n > 0 else { throw PredicateEvaluationError(.invalidArgument, "randomn: needs a positive bound, not \(n).") }
            return .int(Int64.random(in: 0..<n))
        case .now: return .date(Date())
        case .lowercase, .uppercase, .length, .canonical:
            guard case .string(let s) = values[0] else {
                if values[0].isNilOrNull { return .nil }
                throw PredicateEvaluationError(.typeMismatch, "\(function.selector) needs a string, not \(Comparison.describe(values[0])).")
            }
            switch function {
            case .lowercase: return .string(s.lowercased())
            case .uppercase: return .string(s.uppercased())
            case .canonical: return .string(TextFolding.canonical(s))
            default: return .int(Int64(s.utf16.count))
            }
        case .bitwiseAnd: return .int(try integer(values[0], function) & integer(values[1], function))
        case .bitwiseOr: return .int(try integer(values[0], function) | integer(values[1], function))
        case .bitwiseXor: return .int(try integer(values[0], function) ^ integer(values[1], function))
        case .leftShift: return .int(try integer(values[0], function) << integer(values[1], function))
        case .rightShift: return .int(try integer(values[0], function) >> integer(values[1], function))
        case .onesComplement: return .int(~(try integer(values[0], function)))
        case .noindex: return values[0]
        case .cast: return try cast(values[0], to: values[1])
        case .index: return try Indexing.element(of: values[0], at: values[1])
        }
    }

    /// The statistics functions take one collection, or several values that form one.
    private static func collection(_ values: [Value], _ function: BuiltinFunction) throws -> [Value] {
        if values.count == 1 {
            if let elements = values[0].collectionElements { return elements }
            if values[0].isNilOrNull { return [] }
            throw PredicateEvaluationError(.notACollection, "\(function.selector) needs a collection, not \(Comparison.describe(values[0])).")
        }
        return values
    }

    private static func statistic(_ function: BuiltinFunction, _ elements: [Value]) throws -> Value {
        let present = elements.filter { !$0.isNilOrNull }
        switch function {
        case .count: return .int(Int64(elements.count))
        case .sum: return try Aggregates.sum(present)
        case .average: return try Aggregates.average(present)
        case .min: return try Aggregates.extreme(present, wantMax: false)
        case .max: return try Aggregates.extreme(present, wantMax: true)
        case .median:
            let sorted = try Aggregates.numbers(present, function.selector).sorted { Numeric.compare($0, $1) == .orderedAscending }
            if sorted.isEmpty { return .nil }
            if sorted.count % 2 == 1 { return Value(numeric: sorted[sorted.count / 2]) }
            return try Arithmetic.combine(
                Arithmetic.combine(Value(numeric: sorted[sorted.count / 2 - 1]), Value(numeric: sorted[sorted.count / 2]), .add),
                .double(2), .divide)
        case .mode:
            var counts: [Value: Int] = [:]
            var order: [Value] = []
            for value in present {
                if counts[value] == nil { order.append(value) }
                counts[value, default: 0] += 1
            }
            let highest = counts.values.max() ?? 0
            return .array(order.filter { counts[$0] == highest })
        case .stddev:
            let numbers = try Aggregates.numbers(present, function.selector).map(\.doubleValue)
            if numbers.isEmpty { return .nil }
            let mean = numbers.reduce(0, +) / Double(numbers.count)
            let variance = numbers.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(numbers.count)
            return .double(variance.squareRoot())
        default:
            fatalError("not a statistics function: \(function)")
        }
    }

    private static func number(_ value: Value, _ function: BuiltinFunction) throws -> Numeric {
        guard let number = value.numeric else {
            throw PredicateEvaluationError(.typeMismatch, "\(function.selector) needs a number, not \(Comparison.describe(value)).")
        }
        return number
    }

    private static func double(_ value: Value, _ function: BuiltinFunction) throws -> Double {
        try number(value, function).doubleValue
    }

    private static func integer(_ value: Value, _ function: BuiltinFunction) throws -> Int64 {
        switch try number(value, function) {
        case .int(let i): return i
        case let other:
            let d = other.doubleValue
            guard d.isFinite, Swift.abs(d) < 9.2e18 else {
                throw PredicateEvaluationError(.invalidArgument, "\(function.selector) needs an integer, not \(d).")
            }
            return Int64(d)
        }
    }

    /// `CAST(value, 'Type')`: `NSDate` from seconds since 2001 (the form dates print in), `NSNumber` from a
    /// string or number, `NSString` from anything, `NSDecimalNumber` from a number or string.
    static func cast(_ value: Value, to type: Value) throws -> Value {
        guard case .string(let typeName) = type else {
            throw PredicateEvaluationError(.invalidArgument, "CAST needs a class name string as its type, not \(Comparison.describe(type)).")
        }
        if value.isNilOrNull { return .nil }
        switch typeName {
        case "NSDate", "Date":
            switch value {
            case .date: return value
            // Seconds that are no number (NaN, an infinity) make no date: Linux Foundation stops
            // describing one. The cast fails below, as for any value it cannot convert.
            case .string(let s):
                guard let seconds = Double(s), seconds.isFinite else { break }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            default:
                if let number = value.numeric, number.doubleValue.isFinite {
                    return .date(Date(timeIntervalSinceReferenceDate: number.doubleValue))
                }
            }
        case "NSNumber":
            switch value {
            case .string(let s):
                let trimmed = s.trimmingCharacters(in: .whitespaces)
                if let i = Int64(trimmed) { return .int(i) }
                if let d = Double(trimmed) { return .double(d) }
                return .int(0)
            case .date(let d): return .double(d.timeIntervalSinceReferenceDate)
            default: if value.isNumber { return value }
            }
        case "NSDecimalNumber":
            switch value {
            case .string(let s): if let d = Decimal(string: s) { return .decimal(d) }
            default: if let number = value.numeric { return .decimal(number.decimalValue) }
            }
        case "NSString", "String":
            switch value {
            case .string: return value
            case .date(let d): return .string(d.description)
            default: return .string(value.isNumber ? FormatPrinter.numberDescription(value) : FormatPrinter.constantDescription(value))
            }
        default:
            throw PredicateEvaluationError(.invalidArgument, "Can't CAST to '\(typeName)': the supported types are NSDate, NSNumber, NSDecimalNumber and NSString.")
        }
        throw PredicateEvaluationError(.invalidArgument, "Can't CAST \(Comparison.describe(value)) to \(typeName).")
    }
}
