/// The name of a method, as Objective-C's `SEL`: the comparison method of a sort descriptor
/// (`Selector("localizedStandardCompare:")`) or a custom-selector predicate.
///
/// Linux has no Objective-C runtime, so `#selector(…)` does not exist there; write the name as a string, or
/// use the constants (`.compare`, `.caseInsensitiveCompare`, `.localizedStandardCompare` …).
public struct Selector: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The selector's name, colons included: `"compare:"`.
    public let name: String

    /// The selector named `name`, e.g. `Selector("compare:")`.
    public init(_ name: String) { self.name = name }
    /// A selector written as a string literal.
    public init(stringLiteral name: String) { self.name = name }

    /// The name.
    public var description: String { name }

    /// `compare:`: the natural order of numbers, strings (by code unit), dates.
    public static let compare = Selector("compare:")
    /// `caseInsensitiveCompare:`.
    public static let caseInsensitiveCompare = Selector("caseInsensitiveCompare:")
    /// `localizedCompare:`: the current locale's order.
    public static let localizedCompare = Selector("localizedCompare:")
    /// `localizedCaseInsensitiveCompare:`.
    public static let localizedCaseInsensitiveCompare = Selector("localizedCaseInsensitiveCompare:")
    /// `localizedStandardCompare:`: the Finder's order (case-insensitive, numbers by value: "File 2" < "File 10").
    public static let localizedStandardCompare = Selector("localizedStandardCompare:")
}
