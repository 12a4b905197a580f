// Decision D1: a client importing Foundation and then OpenCoreData gets our classes under Apple's names.
import Foundation
import OpenCoreData
import Testing

@Suite("Client shape: import Foundation, then OpenCoreData")
struct ClientShapeFoundationFirstTests {
    @Test func applesNamesMeanOpenCoreDatasClasses() {
        let predicate: NSPredicate = NSPredicate(format: "name == %@", "Ada")
        let compound: NSCompoundPredicate = NSCompoundPredicate(andPredicateWithSubpredicates: [predicate])
        let comparison: NSComparisonPredicate? = predicate as? NSComparisonPredicate
        let expression: NSExpression = NSExpression(format: "age + 1")
        let sort: NSSortDescriptor = NSSortDescriptor(key: "name", ascending: true, selector: Selector("compare:"))
        #expect(predicate.evaluate(with: ["name": "Ada"]))
        #expect(compound.predicateFormat == #"name == "Ada""#)
        #expect(comparison?.predicateOperatorType == .equalTo)
        #expect(expression.expressionValue(with: ["age": 1], context: nil) as? Int == 2)
        #expect(sort.key == "name")
    }

    @Test func theModelLayerIsVisibleThroughTheUmbrella() {
        let model = NSManagedObjectModel()
        let entity = NSEntityDescription()
        entity.name = "Person"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        entity.properties = [name]
        model.entities = [entity]
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Person")
        request.predicate = NSPredicate(format: "name BEGINSWITH %@", "A")
        model.setFetchRequestTemplate(request, forName: "A")
        #expect(model.entityVersionHashesByName["Person"]?.count == 32)
        #expect(model.fetchRequestTemplate(forName: "A")?.predicate?.predicateFormat == #"name BEGINSWITH "A""#)
    }
}
