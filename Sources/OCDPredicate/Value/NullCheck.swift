import Foundation

/// Whether `value` is an `NSNull`, as `value is NSNull` answers, without its cost on the common values.
///
/// `value is NSNull` is a dynamic cast, and a failing one from a value that bridges (an `NSNumber`, a
/// `String`) looks for bridging conformances first: about 70 ns on Linux, paid for every value a save
/// writes. An object is answered by its metatype and the usual attribute values by theirs, in a few
/// nanoseconds; anything else (an `Optional` holding an `NSNull`, which the cast sees through) takes
/// the cast.
@inlinable
package func isNSNull(_ value: Any) -> Bool {
    let type = Swift.type(of: value)
    if type is AnyClass { return type is NSNull.Type }
    if type == String.self || type == Int64.self || type == Int.self || type == Double.self || type == Date.self
        || type == Data.self || type == Bool.self || type == Int32.self || type == Int16.self || type == Float.self
        || type == Decimal.self || type == UUID.self || type == URL.self {
        return false
    }
    return value is NSNull
}
