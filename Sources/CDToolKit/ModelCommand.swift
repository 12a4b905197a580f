import ArgumentParser
import Foundation
import OCDModel
import OCDPredicate

/// The model a `cdtool model` command reads: a path, and optionally one version of an `.xcdatamodeld`.
struct ModelLocation: ParsableArguments {
    @Argument(help: "The model: an .xcdatamodeld folder (its current version), an .xcdatamodel folder, a contents file, or a .momd/.mom.")
    var path: String

    @Option(help: "For an .xcdatamodeld, the version to read instead of the current one.")
    var version: String?

    func load() throws -> NSManagedObjectModel {
        var url = URL(fileURLWithPath: path)
        if let version {
            url = url.appendingPathComponent(version.hasSuffix(".xcdatamodel") ? version : version + ".xcdatamodel")
        }
        do {
            return try NSManagedObjectModel(validatingContentsOf: url)
        } catch {
            throw fail(String(describing: error))
        }
    }
}

struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Inspect, hash, check and draw Core Data models (.xcdatamodeld, .xcdatamodel, contents).",
        subcommands: [Inspect.self, Hashes.self, Validate.self, Diagram.self]
    )


    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a model's entities, properties, relationships, fetch request templates and configurations.")

        @OptionGroup var location: ModelLocation

        @Flag(help: "Print JSON instead of text.")
        var json = false

        func run() throws {
            let model = try location.load()
            if json {
                Console.current.print(JSONOutput.render(ModelDescription.json(model)))
            } else {
                Console.current.print(ModelDescription.text(model))
            }
        }
    }

    struct Hashes: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each entity's version hash (base64), as a store's NSStoreModelVersionHashes holds it.")

        @OptionGroup var location: ModelLocation

        func run() throws {
            let model = try location.load()
            let hashes = model.entityVersionHashesByName.mapValues { JSONOutput.Value.string($0.base64EncodedString()) }
            Console.current.print(JSONOutput.render(.object(hashes.sorted { $0.key < $1.key })))
        }
    }

    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Report problems a model's author should fix; exit 1 if there are any.",
            discussion: "Checks: relationships without an inverse, inverses that do not point back, missing destinations, persisted attributes without a type, unknown names in uniqueness constraints and indexes.")

        @OptionGroup var location: ModelLocation

        func run() throws {
            let model = try location.load()
            let problems = model.consistencyProblems()
            for problem in problems { Console.current.print(problem) }
            if problems.isEmpty {
                Console.current.print("ok: \(model.entities.count) entities, no problems")
            } else {
                Console.current.printError("\(problems.count) problem\(problems.count == 1 ? "" : "s")")
                throw ExitCode(1)
            }
        }
    }

    struct Diagram: ParsableCommand {
        enum Format: String, ExpressibleByArgument, CaseIterable {
            case dot, mermaid
        }

        static let configuration = CommandConfiguration(
            abstract: "Draw a model: entities with their attributes, relationships with cardinality, inheritance.",
            discussion: "dot: render with Graphviz (`dot -Tpng`). mermaid: paste into any Mermaid viewer.")

        @OptionGroup var location: ModelLocation

        @Option(help: "dot or mermaid.")
        var format: Format = .mermaid

        func run() throws {
            let model = try location.load()
            Console.current.print(format == .dot ? ModelDiagram.dot(model) : ModelDiagram.mermaid(model))
        }
    }
}

/// `cdtool compile`: the `momc` equivalent.
struct CompileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compile",
        abstract: "Validate a model and write its compiled form (a .momd folder that loads faster than the XML).",
        discussion: "Every version of an .xcdatamodeld is compiled; VersionInfo.plist names the current one and holds each version's entity hashes, as momc's does. The format is described in Documentation/Model.md.")

    @Argument(help: "The model source: an .xcdatamodeld folder or an .xcdatamodel folder.")
    var source: String

    @Option(name: .shortAndLong, help: "The folder to write, named <name>.momd (an existing one is replaced only if it holds a compiled model).")
    var output: String

    func run() throws {
        do {
            let warnings = try CompiledModel.compile(URL(fileURLWithPath: source), to: URL(fileURLWithPath: output))
            for warning in warnings { Console.current.printError(warning) }
            Console.current.print("compiled \(source) -> \(output)")
        } catch {
            throw fail(String(describing: error))
        }
    }
}

/// `cdtool model inspect` output.
enum ModelDescription {
    static func propertyJSON(_ property: NSPropertyDescription) -> JSONOutput.Value {
        var fields: [(String, JSONOutput.Value)] = [("name", .string(property.name)), ("optional", .bool(property.isOptional))]
        if property.isTransient { fields.append(("transient", .bool(true))) }
        switch property {
        case let relationship as NSRelationshipDescription:
            fields += [
                ("kind", .string("relationship")),
                ("destination", relationship.destinationEntity?.name.map(JSONOutput.Value.string) ?? .string(relationship.destinationEntityName ?? "")),
                ("inverse", relationship.inverseRelationship.map { .string($0.name) } ?? .null),
                ("toMany", .bool(relationship.isToMany)),
                ("ordered", .bool(relationship.isOrdered)),
                ("minCount", .number(Double(relationship.minCount))),
                ("maxCount", .number(Double(relationship.maxCount))),
                ("deleteRule", .string(relationship.deleteRule.modelFileName)),
            ]
        case let fetched as NSFetchedPropertyDescription:
            fields += [
                ("kind", .string("fetchedProperty")),
                ("entity", .string(fetched.fetchRequest?.entityName ?? "")),
                ("predicate", fetched.fetchRequest?.predicate.map { .string($0.predicateFormat) } ?? .null),
            ]
        case let attribute as NSAttributeDescription:
            fields += [("kind", .string(attribute is NSDerivedAttributeDescription ? "derivedAttribute" : "attribute")),
                       ("type", .string(attribute.attributeType.modelFileName))]
            if let defaultValue = attribute.defaultValue { fields.append(("default", .string("\(defaultValue)"))) }
            if let derived = attribute as? NSDerivedAttributeDescription, let expression = derived.derivationExpression {
                fields.append(("derivation", .string(expression.description)))
            }
            if let transformer = attribute.valueTransformerName { fields.append(("valueTransformer", .string(transformer))) }
            if !attribute.validationPredicates.isEmpty {
                fields.append(("validation", .array(attribute.validationPredicates.map { .string($0.predicateFormat) })))
            }
        default:
            break
        }
        return .object(fields)
    }

    static func json(_ model: NSManagedObjectModel) -> JSONOutput.Value {
        let entities: [JSONOutput.Value] = model.entities.map { entity in
            var fields: [(String, JSONOutput.Value)] = [
                ("name", .string(entity.name ?? "")),
                ("className", .string(entity.managedObjectClassName ?? "NSManagedObject")),
                ("parent", entity.superentity?.name.map(JSONOutput.Value.string) ?? .null),
                ("abstract", .bool(entity.isAbstract)),
                ("versionHash", .string(entity.versionHash.base64EncodedString())),
                ("properties", .array(entity.ownProperties.map(propertyJSON))),
            ]
            if !entity.uniquenessConstraints.isEmpty {
                fields.append(("uniquenessConstraints", .array(entity.uniquenessConstraints.map { .array($0.map { .string("\($0)") }) })))
            }
            if !entity.indexes.isEmpty {
                fields.append(("indexes", .array(entity.indexes.map { index in
                    .object([("name", .string(index.name)), ("properties", .array(index.elements.map { .string($0.propertyName ?? "") }))])
                })))
            }
            return .object(fields)
        }
        let templates: [(String, JSONOutput.Value)] = model.fetchRequestTemplatesByName.sorted { $0.key < $1.key }.map { name, request in
            (name, .object([("entity", .string(request.entityName ?? "")), ("predicate", request.predicate.map { .string($0.predicateFormat) } ?? .null)]))
        }
        let configurations: [(String, JSONOutput.Value)] = model.configurations.map { name in
            (name, .array((model.entities(forConfigurationName: name) ?? []).map { .string($0.name ?? "") }))
        }
        return .object([
            ("entities", .array(entities)),
            ("fetchRequestTemplates", .object(templates)),
            ("configurations", .object(configurations)),
        ])
    }

    static func text(_ model: NSManagedObjectModel) -> String {
        var lines: [String] = []
        for entity in model.entities {
            var header = "entity \(entity.name ?? "")"
            if let parent = entity.superentity?.name { header += " : \(parent)" }
            if entity.isAbstract { header += " (abstract)" }
            if let className = entity.managedObjectClassName, className != "NSManagedObject" { header += " class \(className)" }
            lines.append(header)
            for property in entity.ownProperties {
                var line = "  \(property.name)"
                switch property {
                case let relationship as NSRelationshipDescription:
                    let target = relationship.destinationEntity?.name ?? relationship.destinationEntityName ?? "?"
                    line += ": \(relationship.isToMany ? (relationship.isOrdered ? "ordered to-many" : "to-many") : "to-one") \(target)"
                    line += relationship.inverseRelationship.map { ", inverse \($0.name)" } ?? ", no inverse"
                    line += ", \(relationship.deleteRule.modelFileName.lowercased())"
                case let fetched as NSFetchedPropertyDescription:
                    line += ": fetched \(fetched.fetchRequest?.entityName ?? "?") where \(fetched.fetchRequest?.predicate?.predicateFormat ?? "TRUEPREDICATE")"
                case let attribute as NSAttributeDescription:
                    line += ": \(attribute.attributeType.modelFileName)"
                    if let derived = attribute as? NSDerivedAttributeDescription, let expression = derived.derivationExpression {
                        line += " = \(expression)"
                    }
                default:
                    break
                }
                if property.isOptional { line += " (optional)" }
                if property.isTransient { line += " (transient)" }
                lines.append(line)
            }
        }
        for (name, request) in model.fetchRequestTemplatesByName.sorted(by: { $0.key < $1.key }) {
            lines.append("fetch request \(name): \(request.entityName ?? "?") where \(request.predicate?.predicateFormat ?? "TRUEPREDICATE")")
        }
        for name in model.configurations {
            lines.append("configuration \(name): \((model.entities(forConfigurationName: name) ?? []).compactMap(\.name).joined(separator: ", "))")
        }
        return lines.joined(separator: "\n")
    }
}

/// `cdtool model diagram` output.
enum ModelDiagram {
    static func dot(_ model: NSManagedObjectModel) -> String {
        var lines = ["digraph Model {", "  node [shape=record, fontname=\"Helvetica\"];", "  edge [fontname=\"Helvetica\", fontsize=10];"]
        for entity in model.entities {
            let name = entity.name ?? ""
            let attributes = entity.ownProperties.compactMap { $0 as? NSAttributeDescription }
                .map { "\(escape($0.name)): \(escape($0.attributeType.modelFileName))\($0.isOptional ? "?" : "")\\l" }.joined()
            let title = entity.isAbstract ? "«abstract»\\n\(escape(name))" : escape(name)
            lines.append("  \(quote(name)) [label=\"{\(title)|\(attributes)}\"];")
        }
        for entity in model.entities {
            if let parent = entity.superentity?.name {
                lines.append("  \(quote(entity.name ?? "")) -> \(quote(parent)) [arrowhead=empty, style=dashed];")
            }
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                guard let destination = relationship.destinationEntity?.name ?? relationship.destinationEntityName else { continue }
                let head = relationship.isToMany ? "crow" : "tee"
                lines.append("  \(quote(entity.name ?? "")) -> \(quote(destination)) [label=\"\(escape(relationship.name)) \(cardinality(relationship))\", arrowhead=\(head)];")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    static func mermaid(_ model: NSManagedObjectModel) -> String {
        var lines = ["classDiagram"]
        for entity in model.entities {
            let name = identifier(entity.name ?? "")
            lines.append("  class \(name) {")
            if entity.isAbstract { lines.append("    <<abstract>>") }
            for case let attribute as NSAttributeDescription in entity.ownProperties {
                lines.append("    +\(attribute.attributeType.modelFileName.replacingOccurrences(of: " ", with: "")) \(attribute.name)\(attribute.isOptional ? "?" : "")")
            }
            lines.append("  }")
        }
        for entity in model.entities {
            if let parent = entity.superentity?.name {
                lines.append("  \(identifier(parent)) <|-- \(identifier(entity.name ?? ""))")
            }
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                guard let destination = relationship.destinationEntity?.name ?? relationship.destinationEntityName else { continue }
                lines.append("  \(identifier(entity.name ?? "")) --> \"\(cardinality(relationship))\" \(identifier(destination)) : \(relationship.name)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `0..1`, `1`, `0..*`, `2..5` from a relationship's counts and optionality.
    static func cardinality(_ relationship: NSRelationshipDescription) -> String {
        let low = relationship.isOptional ? 0 : max(relationship.minCount, relationship.isToMany ? relationship.minCount : 1)
        if !relationship.isToMany { return low == 0 ? "0..1" : "1" }
        let high = relationship.maxCount == 0 ? "*" : String(relationship.maxCount)
        return "\(low)..\(high)"
    }

    private static func quote(_ name: String) -> String { "\"\(name.replacingOccurrences(of: "\"", with: "\\\""))\"" }

    private static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            if "{}|<>\"\\".contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }

    private static func identifier(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }
}

/// A small JSON writer with stable key order, for machine-readable output.
enum JSONOutput {
    indirect enum Value {
        case null
        case bool(Bool)
        case number(Double)
        /// An integer printed exactly (a `Double` loses digits beyond 2^53).
        case integer(Int64)
        case string(String)
        case array([Value])
        case object([(String, Value)])
    }

    static func render(_ value: Value, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n.rounded() == n && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .integer(let n): return String(n)
        case .string(let s): return quote(s)
        case .array(let elements):
            if elements.isEmpty { return "[]" }
            return "[\n" + elements.map { inner + render($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let pairs):
            if pairs.isEmpty { return "{}" }
            return "{\n" + pairs.map { "\(inner)\(quote($0.0)): \(render($0.1, indent: inner))" }.joined(separator: ",\n") + "\n\(indent)}"
        }
    }

    /// `value` on one line (JSON lines output).
    static func compact(_ value: Value) -> String {
        switch value {
        case .array(let elements): return "[" + elements.map(compact).joined(separator: ",") + "]"
        case .object(let pairs): return "{" + pairs.map { quote($0.0) + ":" + compact($0.1) }.joined(separator: ",") + "}"
        default: return render(value)
        }
    }

    static func quote(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
