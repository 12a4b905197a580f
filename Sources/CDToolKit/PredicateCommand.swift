import ArgumentParser
import Foundation
import OCDPredicate

struct PredicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "predicate",
        abstract: "Parse, print and evaluate NSPredicate format strings.",
        subcommands: [Format.self, Evaluate.self]
    )

    struct Format: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a predicate's canonical predicateFormat, as Apple's Foundation prints it.",
            discussion: """
            Arguments and variables are JSON, with the conventions of spec/predicates.md §13: \
            {"$date": seconds-since-2001}, {"$set": [...]}, {"$nil": true}, {"$decimal": "1.5"}, {"$expr": "format"}.
            Example: cdtool predicate format 'name like[c] %@ AND age > $MIN' --arguments '["a*"]' --substitute '{"MIN": 18}'
            """
        )

        @Argument(help: "The predicate format string.")
        var format: String

        @Option(help: "The format arguments, as a JSON array.")
        var arguments: String?

        @Option(help: "Substitution variables, as a JSON object; every $VARIABLE must have a value.")
        var substitute: String?

        func run() throws {
            do {
                var predicate = try NSPredicate(validatingFormat: format, argumentArray: PredicateJSON.arguments(arguments))
                if let variables = try PredicateJSON.variables(substitute) {
                    predicate = try predicate.withSubstitutionVariablesThrowing(variables)
                }
                Console.current.print(predicate.predicateFormat)
            } catch {
                throw fail(String(describing: error))
            }
        }
    }

    struct Evaluate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Evaluate a predicate against a JSON object; print true or false.",
            discussion: """
            --object takes any JSON value; {"$object": X, "$bindings": {...}} evaluates X with the bindings, \
            {"$object": X, "$substitute": {...}} substitutes the variables first.
            Example: cdtool predicate evaluate 'ANY employees.salary > 1000' --object '{"employees": [{"salary": 1200}]}'
            """
        )

        @Argument(help: "The predicate format string.")
        var format: String

        @Option(help: "The evaluated object, as JSON.")
        var object: String

        @Option(help: "The format arguments, as a JSON array.")
        var arguments: String?

        @Option(help: "Variable bindings for evaluation, as a JSON object.")
        var variables: String?

        func run() throws {
            do {
                var predicate = try NSPredicate(validatingFormat: format, argumentArray: PredicateJSON.arguments(arguments))
                let input = try PredicateJSON.evaluationInput(JSONValue.parse(object))
                if let substitute = input.substitute {
                    predicate = try predicate.withSubstitutionVariablesThrowing(substitute)
                }
                var bindings = input.bindings ?? [:]
                for (name, value) in try PredicateJSON.variables(variables) ?? [:] { bindings[name] = value }
                let result = try predicate.evaluateThrowing(with: input.object, substitutionVariables: bindings)
                Console.current.print(result ? "true" : "false")
            } catch {
                throw fail(String(describing: error))
            }
        }
    }
}
