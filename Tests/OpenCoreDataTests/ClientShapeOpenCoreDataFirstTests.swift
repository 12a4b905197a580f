// Decision D1: the same client code compiles with the imports in the other order.
import OpenCoreData
import Foundation
import Testing

@Suite("Client shape: import OpenCoreData, then Foundation")
struct ClientShapeOpenCoreDataFirstTests {
    @Test func applesNamesMeanOpenCoreDatasClasses() {
        let predicate: NSPredicate = NSPredicate(format: "age > 30")
        let sorted = [["age": 40], ["age": 35]].sorted(using: [NSSortDescriptor(key: "age", ascending: true)])
        #expect(predicate.evaluate(with: ["age": 31]))
        #expect(sorted.first?["age"] == 35)
        #expect(NSExpression(forKeyPath: "age").keyPath == "age")
    }
}
