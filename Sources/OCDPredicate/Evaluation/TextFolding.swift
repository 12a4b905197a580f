import Foundation

/// String transforms Core Data's derived attributes compute, shared by the evaluator and the SQLite
/// store's SQL functions so both give the same text.
package enum TextFolding {
    /// `canonical:`: folded for case, diacritics and width without a locale, then in Unicode
    /// normalization form KC, the transforms Apple's `NSCoreDataCanonical` applies (in that order).
    package static func canonical(_ string: String) -> String {
        string.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .precomposedStringWithCompatibilityMapping
    }
}
