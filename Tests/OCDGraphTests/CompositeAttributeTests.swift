import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDPredicate
import OCDStore
import OCDTestSupport
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// Composite attributes (`NSCompositeAttributeDescription`): a dictionary by element name in memory
/// (NSCompositeAttributeDescription reference), elements reachable by `composite.element` key paths in
/// predicates, sorts and `value(forKeyPath:)`.
@Suite struct CompositeAttributeTests {
    /// Place: name, location {latitude, longitude, label = "here", accuracy {meters}}.
    static func model(_ customize: (NSEntityDescription) -> Void = { _ in }) -> NSManagedObjectModel {
        func composite(_ name: String, _ elements: [NSAttributeDescription]) -> NSCompositeAttributeDescription {
            let composite = NSCompositeAttributeDescription()
            composite.name = name
            composite.elements = elements
            return composite
        }
        let accuracy = composite("accuracy", [TestModel.attribute("meters", .doubleAttributeType)])
        let location = composite("location", [
            TestModel.attribute("latitude", .doubleAttributeType), TestModel.attribute("longitude", .doubleAttributeType),
            TestModel.attribute("label", .stringAttributeType, defaultValue: "here"), TestModel.attribute("floor", .integer16AttributeType),
            accuracy,
        ])
        let place = TestModel.entity("Place", [TestModel.attribute("name", .stringAttributeType), location])
        // Visit: a to-one to a place, to reach its composite through a key path.
        let visitPlace = NSRelationshipDescription()
        visitPlace.name = "place"
        visitPlace.destinationEntity = place
        visitPlace.maxCount = 1
        let visit = TestModel.entity("Visit", [TestModel.attribute("note", .stringAttributeType), visitPlace])
        customize(place)
        let model = NSManagedObjectModel()
        model.entities = [place, visit]
        return model
    }

    @discardableResult
    private func place(_ stack: TestStack, _ name: String, _ location: [String: Any]?) -> NSManagedObject {
        let place = stack.insert("Place", ["name": name])
        place.setValue(location, forKey: "location")
        return place
    }

    @Test func aCompositeIsSavedAndReadBackAsADictionaryOfItsElements() throws {
        let stack = try TestStack(model: Self.model())
        let paris = place(stack, "Paris", ["latitude": 48.8566, "longitude": 2.3522, "floor": 3, "accuracy": ["meters": 5.0]])
        try stack.context.save()
        let other = stack.newContext()
        let stored = try #require(other.object(with: paris.objectID).value(forKey: "location") as? [String: Any])
        #expect(stored["latitude"] as? Double == 48.8566 && stored["longitude"] as? Double == 2.3522)
        #expect(stored["floor"] as? Int == 3 && stored["floor"] as? Int16 == 3)
        #expect((stored["accuracy"] as? [String: Any])?["meters"] as? Double == 5.0)
        #expect(stored["label"] == nil)
        #expect(other.object(with: paris.objectID).value(forKeyPath: "location.accuracy.meters") as? Double == 5.0)
        // Nothing changed by setting what the store holds: the dictionaries compare equal element by
        // element (Swift numbers set, NSNumbers read back).
        let reread = other.object(with: paris.objectID)
        reread.setValue(["latitude": 48.8566, "longitude": 2.3522, "floor": 3, "accuracy": ["meters": 5.0]], forKey: "location")
        #expect(reread.changedValues().isEmpty)
        reread.setValue(["latitude": 48.8566, "longitude": 2.3522, "floor": 4, "accuracy": ["meters": 5.0]], forKey: "location")
        #expect(Set(reread.changedValues().keys) == ["location"])
    }

    @Test func aNewObjectStartsWithItsElementsDefaults() throws {
        let stack = try TestStack(model: Self.model())
        let object = stack.insert("Place", ["name": "Nowhere"])
        let location = try #require(object.value(forKey: "location") as? [String: Any])
        #expect(location["label"] as? String == "here")
        #expect(location.count == 1)
    }

    @Test func elementsAreFetchedAndSortedByTheirKeyPaths() throws {
        let stack = try TestStack(model: Self.model())
        place(stack, "Oslo", ["latitude": 59.91, "longitude": 10.75])
        place(stack, "Quito", ["latitude": -0.18, "longitude": -78.47])
        place(stack, "Rome", ["latitude": 41.9, "longitude": 12.5, "label": "centro"])
        place(stack, "Void", nil)
        try stack.context.save()
        let other = stack.newContext()
        let north = try stack.fetch("Place", "location.latitude > 40", sortedBy: "location.latitude", in: other)
        #expect(north.compactMap { $0.value(forKey: "name") as? String } == ["Rome", "Oslo"])
        #expect(try stack.fetch("Place", "location.label == %@", "centro", in: other).count == 1)
        #expect(try stack.fetch("Place", "location.latitude == nil", in: other).compactMap { $0.value(forKey: "name") as? String } == ["Void"])
        // Pending changes are judged in memory the same way.
        let quito = try #require(try stack.fetch("Place", "name == 'Quito'", in: other).first)
        quito.setValue(45.0, forKeyPath: "location.latitude")
        #expect(try stack.fetch("Place", "location.latitude > 40", sortedBy: "location.latitude", in: other).compactMap { $0.value(forKey: "name") as? String } == ["Rome", "Quito", "Oslo"])
    }

    /// `setValue(_:forKeyPath:)` through a composite changes the composite (Core Data's dictionaries
    /// cannot be changed in place): a change of the composite's key, saved like any.
    @Test func settingAnElementByKeyPathChangesTheComposite() throws {
        let stack = try TestStack(model: Self.model())
        let rome = place(stack, "Rome", ["latitude": 41.9, "longitude": 12.5])
        try stack.context.save()
        rome.setValue(41.89, forKeyPath: "location.latitude")
        rome.setValue(7.5, forKeyPath: "location.accuracy.meters")
        #expect(Set(rome.changedValues().keys) == ["location"])
        try stack.context.save()
        let other = stack.newContext()
        let location = try #require(other.object(with: rome.objectID).value(forKey: "location") as? [String: Any])
        #expect(location["latitude"] as? Double == 41.89 && location["longitude"] as? Double == 12.5)
        #expect((location["accuracy"] as? [String: Any])?["meters"] as? Double == 7.5)
        // NSNull clears an element.
        rome.setValue(NSNull(), forKeyPath: "location.longitude")
        try stack.context.save()
        let third = stack.newContext()
        #expect((third.object(with: rome.objectID).value(forKey: "location") as? [String: Any])?["longitude"] == nil)
    }

    /// Dictionary results hold a composite as its dictionary, by default and when named, and group by it.
    @Test func dictionaryResultsHoldTheCompositesDictionary() throws {
        let stack = try TestStack(model: Self.model())
        place(stack, "Rome", ["latitude": 41.9, "longitude": 12.5])
        place(stack, "Roma", ["latitude": 41.9, "longitude": 12.5])
        place(stack, "Oslo", ["latitude": 59.91, "longitude": 10.75])
        try stack.context.save()
        let all = NSFetchRequest<NSDictionary>(entityName: "Place")
        all.resultType = .dictionaryResultType
        all.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let rows = try stack.context.fetch(all)
        #expect(rows.count == 3)
        let oslo = try #require(rows.first { $0["name"] as? String == "Oslo" }?["location"] as? [String: Any])
        #expect(oslo["latitude"] as? Double == 59.91 && oslo["longitude"] as? Double == 10.75)

        let grouped = NSFetchRequest<NSDictionary>(entityName: "Place")
        grouped.resultType = .dictionaryResultType
        let count = NSExpressionDescription()
        count.name = "count"
        count.expression = NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "name")])
        count.expressionResultType = .integer64AttributeType
        grouped.propertiesToFetch = ["location", count]
        grouped.propertiesToGroupBy = ["location"]
        let groups = try stack.context.fetch(grouped)
        #expect(groups.count == 2)
        let rome = try #require(groups.first { (($0["location"] as? [String: Any])?["latitude"] as? Double) == 41.9 })
        #expect(rome["count"] as? Int == 2)
    }

    /// A composite has no order of its own: a dictionary fetch sorted by one fails, naming its elements,
    /// as an object fetch does (it returned the rows unsorted in SQLite).
    @Test func aDictionaryFetchSortedByACompositeFails() throws {
        let stack = try TestStack(model: Self.model())
        place(stack, "Rome", ["latitude": 41.9, "longitude": 12.5])
        place(stack, "Oslo", ["latitude": 59.91, "longitude": 10.75])
        try stack.context.save()
        let request = NSFetchRequest<NSDictionary>(entityName: "Place")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "location"]
        request.sortDescriptors = [NSSortDescriptor(key: "location", ascending: true)]
        #expect(throws: (any Error).self) { try stack.context.fetch(request) }
    }

    /// A uniqueness constraint on an element (`location.latitude`) or on a whole composite holds like any.
    @Test(arguments: [["location.latitude"], ["location"]])
    func aUniquenessConstraintOnACompositeHolds(_ constraint: [String]) throws {
        let stack = try TestStack(model: Self.model { $0.uniquenessConstraints = [constraint] })
        place(stack, "Rome", ["latitude": 41.9, "longitude": 12.5])
        try stack.context.save()
        place(stack, "Roma", ["latitude": 41.9, "longitude": 12.5])
        #expect { try stack.context.save() } throws: { ($0 as NSError).code == NSManagedObjectConstraintMergeError }
        stack.context.rollback()
        place(stack, "Oslo", ["latitude": 59.91, "longitude": 12.5])
        try stack.context.save()
    }

    /// `setValue(_:forKeyPath:)` reaches a composite through a to-one.
    @Test func anElementIsSetThroughAToOne() throws {
        let stack = try TestStack(model: Self.model())
        let rome = place(stack, "Rome", ["latitude": 41.9])
        let visit = stack.insert("Visit", ["note": "spring", "place": rome])
        visit.setValue(12.5, forKeyPath: "place.location.longitude")
        #expect((rome.value(forKey: "location") as? [String: Any])?["longitude"] as? Double == 12.5)
        #expect(visit.value(forKeyPath: "place.location.longitude") as? Double == 12.5)
    }

    /// Core Data validates a composite's own optionality only (1570 under the composite's key), not its
    /// elements'.
    @Test func onlyTheCompositesOwnOptionalityIsValidated() throws {
        let model = Self.model()
        let location = try #require(model.entitiesByName["Place"]?.attributesByName["location"] as? NSCompositeAttributeDescription)
        location.isOptional = false
        location.elements.first { $0.name == "latitude" }?.isOptional = false
        let stack = try TestStack(model: model)
        let nowhere = stack.insert("Place", ["name": "Nowhere"])
        nowhere.setValue(nil, forKey: "location")
        #expect { try stack.context.save() } throws: { error in
            let error = error as NSError
            return error.code == NSValidationMissingMandatoryPropertyError && error.userInfo[NSValidationKeyErrorKey] as? String == "location"
        }
        nowhere.setValue(["longitude": 1.0], forKey: "location")
        try stack.context.save()
    }

    /// A real model (fatbobman/CoreDataEvolution): CDEItem.location is a composite of x (default 0) and y.
    @Test func aFixtureModelsCompositeRoundTrips() throws {
        guard let models = Fixtures.models else { return }
        let folder = models.appendingPathComponent("fatbobman__CoreDataEvolution__CoreDataEvolutionIntegrationModel/CoreDataEvolutionIntegrationModel.xcdatamodel")
        let stack = try TestStack(model: try NSManagedObjectModel(validatingContentsOf: folder))
        let item = stack.insert("CDEItem", ["name": "pin", "priority": 1])
        #expect((item.value(forKey: "location") as? [String: Any])?["x"] as? Double == 0)
        item.setValue(2.5, forKeyPath: "location.y")
        try stack.context.save()
        let other = stack.newContext()
        let location = try #require(other.object(with: item.objectID).value(forKey: "location") as? [String: Any])
        #expect(location["x"] as? Double == 0 && location["y"] as? Double == 2.5)
        #expect(try stack.fetch("CDEItem", "location.y > 2", in: other).count == 1)
    }
}
