import Foundation

extension NSManagedObjectModel {
    /// The name to show a user for an entity: `localizationDictionary["Entity/<name>"]`, else the name.
    /// Validation errors use it in their messages, as Core Data does.
    package func localizedName(ofEntity entity: String) -> String {
        localizationDictionary?["Entity/\(entity)"] ?? entity
    }

    /// The name to show for a property: `"Property/<name>/Entity/<entity>"`, then `"Property/<name>"`
    /// (Core Data's two key forms), else the name.
    package func localizedName(ofProperty property: String, inEntity entity: String) -> String {
        localizationDictionary?["Property/\(property)/Entity/\(entity)"] ?? localizationDictionary?["Property/\(property)"] ?? property
    }

    /// The text for a validation warning: `"ErrorString/<warning>"`, else the warning itself.
    package func localizedErrorString(_ warning: String) -> String {
        localizationDictionary?["ErrorString/\(warning)"] ?? warning
    }
}
