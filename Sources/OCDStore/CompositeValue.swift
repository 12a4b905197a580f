import Foundation

/// A composite attribute's dictionary, read and written by element path.
package enum CompositeValue {
    /// The value at `path` (nil when it or a dictionary on the way is missing).
    package static func value(at path: ArraySlice<String>, in dictionary: [String: Any]?) -> Any? {
        guard let key = path.first, let value = dictionary?[key] else { return nil }
        if path.count == 1 { return value is NSNull ? nil : value }
        return self.value(at: path.dropFirst(), in: value as? [String: Any])
    }

    /// `dictionary` with `value` at `path`, making the dictionaries of nested composites on the way.
    package static func setting(_ value: Any?, at path: ArraySlice<String>, in dictionary: [String: Any]) -> [String: Any] {
        guard let key = path.first else { return dictionary }
        var result = dictionary
        result[key] = path.count == 1 ? value : setting(value, at: path.dropFirst(), in: dictionary[key] as? [String: Any] ?? [:])
        return result
    }
}
