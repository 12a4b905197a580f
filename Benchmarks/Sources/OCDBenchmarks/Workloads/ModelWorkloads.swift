import Foundation
import OpenCoreDataRuntime

// Loading a model: the compiled form `cdtool compile` writes against the Xcode XML it comes from.

enum ModelWorkloads {
    /// A model the size of a large app's: 60 entities of 15 attributes and 3 relationships each.
    static func sourceXML() -> String {
        var entities = ""
        for e in 0..<60 {
            entities += "<entity name=\"Entity\(e)\" representedClassName=\"Entity\(e)\" syncable=\"YES\">\n"
            for a in 0..<15 {
                let type = ["String", "Integer 64", "Double", "Date", "Boolean"][a % 5]
                entities += "  <attribute name=\"attribute\(a)\" optional=\"YES\" attributeType=\"\(type)\"\(a % 5 == 1 ? " minValueString=\"0\" defaultValueString=\"0\"" : "")/>\n"
            }
            for r in 0..<3 {
                let target = (e + r + 1) % 60
                entities += "  <relationship name=\"link\(r)\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"Entity\(target)\"/>\n"
            }
            entities += "</entity>\n"
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">\n\(entities)</model>\n"
    }

    static func make() -> [Workload] {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-bench-\(getpid())")
        let source = root.appendingPathComponent("Bench.xcdatamodel")
        let compiled = root.appendingPathComponent("Bench.momd")
        do {
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
            try Data(sourceXML().utf8).write(to: source.appendingPathComponent("contents"))
            try NSManagedObjectModel.compileModel(at: source, to: compiled)
        } catch {
            fatalError("model_load: cannot prepare the model: \(error)")
        }
        let expected = (try? NSManagedObjectModel(validatingContentsOf: source))?.entityVersionHashesByName ?? [:]
        return [Workload(
            key: "model_load",
            unit: "model",
            operationsPerCall: 1,
            subjectDescription: "NSManagedObjectModel(contentsOf:) of the compiled .momd (60 entities, 1,080 properties)",
            baselineDescription: "NSManagedObjectModel(contentsOf:) of the same model's .xcdatamodel XML: a ratio below 1 means the compiled form loads faster",
            resultsMustMatch: true,
            subject: { NSManagedObjectModel(contentsOf: compiled)?.entities.count ?? -1 },
            baseline: { NSManagedObjectModel(contentsOf: source)?.entities.count ?? -1 },
            checks: [
                Check(name: "the compiled model has the source's version hashes") {
                    let hashes = (try? NSManagedObjectModel(validatingContentsOf: compiled))?.entityVersionHashesByName
                    return hashes == expected && expected.count == 60 ? nil : "hashes differ (\(hashes?.count ?? 0) vs \(expected.count) entities)"
                },
            ])]
    }
}
