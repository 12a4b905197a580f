import Foundation

/// The methods `FUNCTION(target, 'selector', …)` and custom-selector comparisons may call.
///
/// Apple sends an Objective-C message there; Linux has no message sending, so the selectors are looked up
/// here. A few common NSString/NSDate/NSNumber methods are built in; register your own with
/// `NSExpression.registerMethod(_:_:)` and `NSPredicate.registerComparisonSelector(_:_:)`. An unknown
/// selector is an evaluation error, never a call into arbitrary code.
final class MethodRegistry: @unchecked Sendable {
    typealias Method = @Sendable (_ target: Any?, _ arguments: [Any?]) throws -> Any?
    typealias ComparisonMethod = @Sendable (_ lhs: Any?, _ rhs: Any?) throws -> Bool

    static let shared = MethodRegistry()

    private let lock = NSLock()
    private var methods: [String: Method] = [:]
    private var comparisons: [String: ComparisonMethod] = [:]

    private init() {
        // Key-value coding, which every object answers on Apple platforms (the `NSExpression(forFunction:
        // selectorName:arguments:)` factory makes key paths of these; a parsed FUNCTION(…) calls them).
        methods["valueForKey:"] = { target, arguments in
            guard let key = arguments.first as? String else { return nil }
            return try KeyValueCoding.value(forKey: key, of: Value(target)).anyValue
        }
        methods["valueForKeyPath:"] = { target, arguments in
            guard let path = arguments.first as? String else { return nil }
            return try KeyValueCoding.value(forKeyPath: path.split(separator: ".").map(String.init)[...], of: Value(target)).anyValue
        }
        methods["uppercaseString"] = { target, _ in (target as? String)?.uppercased() }
        methods["lowercaseString"] = { target, _ in (target as? String)?.lowercased() }
        methods["length"] = { target, _ in (target as? String)?.utf16.count }
        methods["stringByAppendingString:"] = { target, arguments in
            guard let s = target as? String, let t = arguments.first as? String else { return nil }
            return s + t
        }
        methods["characterStringAtIndex:"] = { target, arguments in
            guard let s = target as? String, let i = arguments.first as? Int, i >= 0, i < s.utf16.count else { return nil }
            return String(utf16CodeUnits: [Array(s.utf16)[i]], count: 1)
        }
        methods["dateByAddingTimeInterval:"] = { target, arguments in
            guard let date = target as? Date else { return nil }
            let interval = (arguments.first as? Double) ?? (arguments.first as? Int).map(Double.init) ?? 0
            return date.addingTimeInterval(interval)
        }
        methods["timeIntervalSinceDate:"] = { target, arguments in
            guard let date = target as? Date, let other = arguments.first as? Date else { return nil }
            return date.timeIntervalSince(other)
        }
        comparisons["isKindOfClass:"] = { lhs, rhs in
            // A class object, as Apple's `%@` of `[NSNumber class]` passes it; or a class's name.
            if let type = rhs as? Any.Type { return MethodRegistry.value(Value(lhs), isKindOf: String(describing: type)) }
            guard let name = rhs as? String else { return false }
            return MethodRegistry.value(Value(lhs), isKindOf: name)
        }
        comparisons["isEqual:"] = { lhs, rhs in Value(lhs) == Value(rhs) }
        comparisons["isEqualToString:"] = { lhs, rhs in
            guard let a = lhs as? String, let b = rhs as? String else { return false }
            return a == b
        }
    }

    func register(_ selector: String, _ method: @escaping Method) {
        lock.withLock { methods[selector] = method }
    }

    func registerComparison(_ selector: String, _ method: @escaping ComparisonMethod) {
        lock.withLock { comparisons[selector] = method }
    }

    func call(_ selector: String, target: Value, arguments: [Value]) throws -> Value {
        guard let method = lock.withLock({ methods[selector] }) else {
            throw PredicateEvaluationError(.unsupported, "FUNCTION: no method '\(selector)' is registered for \(KeyValueCoding.typeName(target)); register one with NSExpression.registerMethod(_:_:).")
        }
        return Value(try method(target.anyValue, arguments.map(\.anyValue)))
    }

    func compare(_ selector: String, _ lhs: Value, _ rhs: Value) throws -> Bool {
        guard let method = lock.withLock({ comparisons[selector] }) else {
            throw PredicateEvaluationError(.unsupported, "No comparison selector '\(selector)' is registered; register one with NSPredicate.registerComparisonSelector(_:_:).")
        }
        return try method(lhs.anyValue, rhs.anyValue)
    }

    /// `isKindOfClass:` by the Foundation class name a value would have on Apple platforms.
    static func value(_ value: Value, isKindOf name: String) -> Bool {
        switch name {
        case "NSObject": if case .nil = value { return false } else { return true }
        case "NSNumber": return value.isNumber
        case "NSDecimalNumber": if case .decimal = value { return true } else { return false }
        case "NSString", "NSMutableString": if case .string = value { return true } else { return false }
        case "NSDate": if case .date = value { return true } else { return false }
        case "NSData": if case .data = value { return true } else { return false }
        case "NSArray": if case .array = value { return true } else { return false }
        case "NSSet": if case .set = value { return true } else { return false }
        case "NSOrderedSet": if case .orderedSet = value { return true } else { return false }
        case "NSDictionary": if case .dictionary = value { return true } else { return false }
        case "NSNull": if case .null = value { return true } else { return false }
        default:
            guard case .object(let opaque) = value else { return false }
            let object = opaque.value
            var mirror: Mirror? = Mirror(reflecting: object)
            while let current = mirror {
                if String(reflecting: current.subjectType) == name || String(describing: current.subjectType) == name { return true }
                mirror = current.superclassMirror
            }
            return false
        }
    }
}

extension NSExpression {
    /// Registers a method that `FUNCTION(target, 'selector', arguments…)` can call: the closure receives
    /// the target's value and the arguments' values (`Int`, `Double`, `String`, `Date`, arrays … or your
    /// objects) and returns the result.
    ///
    /// Apple sends the Objective-C message `selector` to the target; Linux has no message sending, so only
    /// registered selectors run. Built in: `uppercaseString`, `lowercaseString`, `length`,
    /// `stringByAppendingString:`, `characterStringAtIndex:`, `dateByAddingTimeInterval:`,
    /// `timeIntervalSinceDate:`.
    public static func registerMethod(_ selector: String, _ method: @escaping @Sendable (_ target: Any?, _ arguments: [Any?]) throws -> Any?) {
        MethodRegistry.shared.register(selector, method)
    }
}

extension NSPredicate {
    /// Registers the method behind a custom-selector comparison (`lhs selector: rhs`): the closure receives
    /// both values and answers whether the comparison holds. Built in: `isKindOfClass:` (by Foundation class
    /// name, e.g. `"NSNumber"`, or by Swift type name), `isEqual:`, `isEqualToString:`.
    public static func registerComparisonSelector(_ selector: String, _ method: @escaping @Sendable (_ lhs: Any?, _ rhs: Any?) throws -> Bool) {
        MethodRegistry.shared.registerComparison(selector, method)
    }

    /// Declares that the uniform type `type` conforms to each of `parents`, for `UTI-CONFORMS-TO`.
    /// (Linux has no type database; the common public types are built in.)
    public static func registerUniformType(_ type: String, conformsTo parents: [String]) {
        UniformTypes.register(type, conformsTo: parents)
    }
}

/// The uniform type tree `UTI-CONFORMS-TO` walks: the common public types, plus registered ones.
enum UniformTypes {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var parents: [String: [String]] = [
        "public.content": ["public.item"],
        "public.data": ["public.item"],
        "public.composite-content": ["public.content"],
        "public.text": ["public.data", "public.content"],
        "public.plain-text": ["public.text"],
        "public.utf8-plain-text": ["public.plain-text"],
        "public.html": ["public.text"],
        "public.xml": ["public.text"],
        "public.json": ["public.text"],
        "public.source-code": ["public.plain-text"],
        "public.url": ["public.data"],
        "public.file-url": ["public.url"],
        "public.image": ["public.data", "public.content"],
        "public.jpeg": ["public.image"],
        "public.png": ["public.image"],
        "public.tiff": ["public.image"],
        "com.compuserve.gif": ["public.image"],
        "public.heic": ["public.image"],
        "public.audiovisual-content": ["public.data", "public.content"],
        "public.movie": ["public.audiovisual-content"],
        "public.video": ["public.movie"],
        "public.mpeg-4": ["public.movie"],
        "com.apple.quicktime-movie": ["public.movie"],
        "public.audio": ["public.audiovisual-content"],
        "public.mp3": ["public.audio"],
        "com.adobe.pdf": ["public.data", "public.composite-content"],
        "public.archive": ["public.data"],
        "public.zip-archive": ["public.archive"],
        "public.vcard": ["public.text"],
        "public.folder": ["public.directory"],
        "public.directory": ["public.item"],
    ]

    static func register(_ type: String, conformsTo newParents: [String]) {
        lock.withLock { parents[type, default: []].append(contentsOf: newParents) }
    }

    static func conforms(_ type: String, to target: String) -> Bool {
        lock.withLock {
            var pending = [type], seen = Set<String>()
            while let current = pending.popLast() {
                if current == target { return true }
                if seen.insert(current).inserted { pending += parents[current] ?? [] }
            }
            return false
        }
    }
}
