import Foundation

/// A type whose properties predicates and sort descriptors can read by name.
///
/// Linux has no Objective-C key-value coding, so predicates read your objects through this protocol.
/// `NSManagedObject` adopts it; adopt it in your own types to evaluate predicates against them:
///
/// ```swift
/// struct Person: PredicateKeyValueCoding {
///     var name: String, age: Int
///     func predicateValue(forKey key: String) throws -> Any? {
///         switch key {
///         case "name": return name
///         case "age": return age
///         default: throw PredicateEvaluationError.unknownKey(key, in: self)
///         }
///     }
/// }
/// ```
///
/// Dictionaries, arrays, sets, strings, numbers and dates are readable without adopting anything.
public protocol PredicateKeyValueCoding {
    /// The value of the property named `key`, or nil. Throw `PredicateEvaluationError.unknownKey(_:in:)`
    /// for a key the type does not have (Apple raises `NSUnknownKeyException` there).
    func predicateValue(forKey key: String) throws -> Any?
}

/// An object that stands for an identity other than itself in comparisons: a managed object, its object
/// ID and a store's row for it all compare (and hash) equal through the same identity, so
/// `department == %@` matches whichever of the three the predicate and the data hold.
public protocol PredicateObjectIdentity {
    /// The identity compared and hashed in place of the object.
    var predicateIdentity: AnyHashable { get }
}

/// The operators that may start a key-path component: `@count`, `@sum.salary` …
enum CollectionOperator: String {
    case count = "@count"
    case sum = "@sum"
    case avg = "@avg"
    case min = "@min"
    case max = "@max"
    case unionOfObjects = "@unionOfObjects"
    case distinctUnionOfObjects = "@distinctUnionOfObjects"
    case unionOfArrays = "@unionOfArrays"
    case distinctUnionOfArrays = "@distinctUnionOfArrays"
    case distinctUnionOfSets = "@distinctUnionOfSets"
}

enum KeyValueCoding {
    /// `valueForKeyPath:` semantics: each component reads from the previous value; a component starting
    /// with `@` applies a collection operator to the value so far, with the rest of the path as its argument.
    static func value(forKeyPath components: ArraySlice<String>, of root: Value) throws -> Value {
        var current = root
        var index = components.startIndex
        while index < components.endIndex {
            let key = components[index]
            if key.hasPrefix("@") {
                return try apply(key, to: current, rest: components[(index + 1)...])
            }
            current = try value(forKey: key, of: current)
            index += 1
        }
        return current
    }

    /// `valueForKey:`: dictionaries look the key up (missing is nil); arrays and sets map it over their
    /// elements; strings, numbers and dates answer the few keys NSString, NSNumber and NSDate do.
    static func value(forKey key: String, of value: Value) throws -> Value {
        switch value {
        case .nil, .null:
            return .nil
        case .dictionary(let pairs):
            return pairs[.string(key)] ?? .nil
        case .array(let elements):
            return .array(try elements.map { element in
                let result = try self.value(forKey: key, of: element)
                return result == .nil ? .null : result
            })
        case .orderedSet(let elements):
            return .orderedSet(try elements.map { element in
                let result = try self.value(forKey: key, of: element)
                return result == .nil ? .null : result
            })
        case .set(let elements):
            var results = Set<Value>()
            for element in elements {
                let result = try self.value(forKey: key, of: element)
                if !result.isNilOrNull { results.insert(result) }
            }
            return .set(results)
        case .object(let object):
            if let readable = object.readable {
                return Value(try readable.predicateValue(forKey: key))
            }
            throw PredicateEvaluationError.unknownKey(key, in: object.value)
        case .string(let string):
            switch key {
            case "length": return .int(Int64(string.utf16.count))
            case "description", "self": return value
            case "uppercaseString": return .string(string.uppercased())
            case "lowercaseString": return .string(string.lowercased())
            case "capitalizedString": return .string(string.capitalized)
            case "intValue", "integerValue", "longLongValue":
                return .int(Int64(string.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber || $0 == "-" || $0 == "+" }) ?? 0)
            case "doubleValue", "floatValue": return .double(Double(string.trimmingCharacters(in: .whitespaces)) ?? 0)
            case "boolValue":
                let first = string.trimmingCharacters(in: .whitespaces).first
                return .bool(first.map { "YyTt123456789".contains($0) } ?? false)
            default: throw PredicateEvaluationError.unknownKey(key, in: string)
            }
        case .bool, .int, .double, .decimal:
            let number = value.numeric!
            switch key {
            case "description", "stringValue": return .string(FormatPrinter.numberDescription(value))
            case "self": return value
            case "intValue", "integerValue", "longLongValue":
                switch number {
                case .int(let i): return .int(i)
                default:
                    let d = number.doubleValue
                    return .int(d.isFinite && abs(d) < 9.2e18 ? Int64(d) : 0)
                }
            case "doubleValue", "floatValue": return .double(number.doubleValue)
            case "boolValue": return .bool(number.doubleValue != 0)
            case "decimalValue": return .decimal(number.decimalValue)
            default: throw PredicateEvaluationError.unknownKey(key, in: value.anyValue as Any)
            }
        case .date(let date):
            switch key {
            case "timeIntervalSinceReferenceDate": return .double(date.timeIntervalSinceReferenceDate)
            case "timeIntervalSince1970": return .double(date.timeIntervalSince1970)
            case "description": return .string(date.description)
            case "self": return value
            default: throw PredicateEvaluationError.unknownKey(key, in: date)
            }
        case .data(let data):
            switch key {
            case "length": return .int(Int64(data.count))
            case "self": return value
            default: throw PredicateEvaluationError.unknownKey(key, in: data)
            }
        }
    }

    private static func apply(_ name: String, to target: Value, rest: ArraySlice<String>) throws -> Value {
        guard let op = CollectionOperator(rawValue: name) else {
            if case .dictionary = target, name.count > 1 {
                // NSDictionary answers an @-key with its own property: only @count exists among those we model.
                throw PredicateEvaluationError.unknownKey(name, in: target.anyValue as Any)
            }
            throw PredicateEvaluationError(.unknownKey, "[\(typeName(target)) valueForUndefinedKey:]: this class is not key value coding-compliant for the key \(name).")
        }
        if case .dictionary(let pairs) = target, op == .count {
            return .int(Int64(pairs.count))
        }
        guard let elements = target.collectionElements else {
            if target.isNilOrNull { return .nil }
            throw PredicateEvaluationError(.notACollection, "The collection operator \(name) needs an array or a set, not \(typeName(target)).")
        }
        // The operand of every operator but @count: the rest of the path read from each element.
        func operands() throws -> [Value] {
            if rest.isEmpty { return elements }
            return try elements.map { try value(forKeyPath: rest, of: $0) }
        }
        switch op {
        case .count:
            if rest.isEmpty { return .int(Int64(elements.count)) }
            return try value(forKeyPath: rest, of: .int(Int64(elements.count)))
        case .sum:
            return try Aggregates.sum(operands().filter { !$0.isNilOrNull })
        case .avg:
            let values = try operands().filter { !$0.isNilOrNull }
            if values.isEmpty { return .int(0) }
            return try Aggregates.average(values)
        case .min:
            return try Aggregates.extreme(operands().filter { !$0.isNilOrNull }, wantMax: false)
        case .max:
            return try Aggregates.extreme(operands().filter { !$0.isNilOrNull }, wantMax: true)
        case .unionOfObjects:
            return .array(try operands().filter { !$0.isNilOrNull })
        case .distinctUnionOfObjects:
            return .array(Aggregates.distinct(try operands().filter { !$0.isNilOrNull }))
        case .unionOfArrays, .distinctUnionOfArrays, .distinctUnionOfSets:
            var flattened: [Value] = []
            for inner in try operands() {
                guard let innerElements = inner.collectionElements else {
                    throw PredicateEvaluationError(.notACollection, "The collection operator \(name) needs a collection of collections.")
                }
                flattened += innerElements.filter { !$0.isNilOrNull }
            }
            switch op {
            case .unionOfArrays: return .array(flattened)
            case .distinctUnionOfSets: return .set(Set(flattened))
            default: return .array(Aggregates.distinct(flattened))
            }
        }
    }

    static func typeName(_ value: Value) -> String {
        switch value {
        case .nil: return "nil"
        case .null: return "NSNull"
        case .bool, .int, .double, .decimal: return "NSNumber"
        case .string: return "NSString"
        case .date: return "NSDate"
        case .data: return "NSData"
        case .array: return "NSArray"
        case .orderedSet: return "NSOrderedSet"
        case .set: return "NSSet"
        case .dictionary: return "NSDictionary"
        case .object(let object): return String(describing: type(of: object.value))
        }
    }
}
