import OCDModel

/// Inverse relationship pairs for models that tests build in code.
public enum RelationshipPairs {
    /// A to-many `name` (ordered when `ordered` says) from `source` to `destination`, and its to-one
    /// inverse `inverse` back: (to-many, to-one). Neither is added to an entity.
    public static func toMany(_ name: String, from source: NSEntityDescription, to destination: NSEntityDescription,
                              ordered: Bool = false, inverse: String) -> (NSRelationshipDescription, NSRelationshipDescription) {
        let many = NSRelationshipDescription(), one = NSRelationshipDescription()
        many.name = name
        many.destinationEntity = destination
        many.maxCount = 0
        many.isOrdered = ordered
        one.name = inverse
        one.destinationEntity = source
        one.maxCount = 1
        many.inverseRelationship = one
        one.inverseRelationship = many
        return (many, one)
    }
}
