import OpenCoreDataRuntime

// Parsing and printing format strings: `NSPredicate(format:)` and `predicateFormat`.

enum FormatWorkloads {
    /// A representative set of format strings with their `%@` arguments: comparisons, compounds, string
    /// operators with options, key paths, aggregates, collection modifiers, SUBQUERY, functions, BETWEEN, IN.
    static func representativeFormats() -> [(format: String, arguments: [Any])] {
        [
            ("name == \"Jane\" AND age > 30", []),
            ("ANY employees.salary > %@", [50_000]),
            ("name LIKE[c] 'j*'", []),
            ("SUBQUERY(employees, $e, $e.age > 30).@count > 0", []),
            ("department.name BEGINSWITH[cd] %@", ["eng"]),
            ("age BETWEEN {18, 65}", []),
            ("tag IN %@", [["red", "green", "blue"]]),
            ("(name CONTAINS[c] \"an\" OR nickname ENDSWITH \"y\") AND NOT (manager == nil)", []),
            ("employees.@avg.salary >= 40000.5 AND %K < %@", ["startDate", Date(timeIntervalSinceReferenceDate: 700_000_000)]),
            ("name MATCHES '[A-Z][a-z]+' AND lowercase(department.name) != 'sales'", []),
        ]
    }

    static func make() -> [Workload] {
        let formats = representativeFormats()
        let predicates = formats.compactMap { try? NSPredicate(validatingFormat: $0.format, argumentArray: $0.arguments) }
        let parseChecks = formats.map { entry in
            Check(name: "parse and re-parse `\(entry.format)`") {
                let parsed: NSPredicate
                do {
                    parsed = try NSPredicate(validatingFormat: entry.format, argumentArray: entry.arguments)
                } catch {
                    return "does not parse: \(error)"
                }
                let printed = parsed.predicateFormat
                do {
                    let reparsed = try NSPredicate(validatingFormat: printed, argumentArray: nil)
                    return reparsed == parsed ? nil : "its predicateFormat `\(printed)` re-parses to a different predicate, `\(reparsed.predicateFormat)`"
                } catch {
                    return "its predicateFormat `\(printed)` does not parse: \(error)"
                }
            }
        }
        let parse = Workload(
            key: "parse",
            unit: "format",
            operationsPerCall: formats.count,
            subjectDescription: "NSPredicate(format:argumentArray:) of \(formats.count) formats (the variadic NSPredicate(format:_:) forwards to it)",
            baselineDescription: "split the same \(formats.count) strings on spaces and count the pieces (a lexer-free lower bound, not a parser)",
            resultsMustMatch: false,
            subject: {
                var nodes = 0
                for entry in formats {
                    let predicate = NSPredicate(format: entry.format, argumentArray: entry.arguments)
                    nodes += predicate is NSCompoundPredicate ? 2 : 1
                }
                return nodes
            },
            baseline: {
                var pieces = 0
                for entry in formats {
                    pieces += entry.format.split(separator: " ").count
                }
                return pieces
            },
            checks: parseChecks)

        // The printed forms split into the pieces the baseline concatenates back.
        let printedForms = predicates.map(\.predicateFormat)
        let pieces: [[String]] = printedForms.map { $0.split(separator: " ", omittingEmptySubsequences: false).map(String.init) }
        func concatenate(_ parts: [String]) -> String {
            var result = ""
            for (index, part) in parts.enumerated() {
                if index > 0 { result += " " }
                result += part
            }
            return result
        }
        let print = Workload(
            key: "print",
            unit: "predicate",
            operationsPerCall: predicates.count,
            subjectDescription: "predicateFormat of the \(predicates.count) parsed predicates",
            baselineDescription: "concatenate the space-separated pieces of the same printed strings back into strings",
            resultsMustMatch: true,
            subject: {
                var length = 0
                for predicate in predicates { length += predicate.predicateFormat.utf8.count }
                return length
            },
            baseline: {
                var length = 0
                for parts in pieces { length += concatenate(parts).utf8.count }
                return length
            },
            checks: [
                Check(name: "every format parsed") {
                    predicates.count == formats.count ? nil : "\(formats.count - predicates.count) formats did not parse"
                },
                Check(name: "baseline strings equal predicateFormat") {
                    let rebuilt = pieces.map(concatenate)
                    return rebuilt == predicates.map(\.predicateFormat) ? nil : "the concatenated pieces differ from predicateFormat"
                },
                Check(name: "predicateFormat is stable") {
                    predicates.map(\.predicateFormat) == printedForms ? nil : "printing twice gave different strings"
                },
            ])
        return [parse, print]
    }
}
