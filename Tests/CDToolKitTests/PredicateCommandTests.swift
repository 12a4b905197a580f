import CDToolKit
import Testing

@Suite("cdtool predicate")
struct PredicateCommandTests {
    @Test func formatPrintsTheCanonicalForm() {
        let run = CDTool.run(["predicate", "format", "a = 1 and b like[cd] %@", "--arguments", #"["x*"]"#])
        #expect(run.status == 0)
        #expect(run.output == "a == 1 AND b LIKE[cd] \"x*\"\n")
        #expect(run.error.isEmpty)
    }

    @Test func formatSubstitutesVariables() {
        let run = CDTool.run(["predicate", "format", "age > $MIN AND d == $D", "--substitute", #"{"MIN": 18, "D": {"$date": 0}}"#])
        #expect(run.output == #"age > 18 AND d == CAST(0.000000, "NSDate")"# + "\n")
    }

    @Test func formatAcceptsExpressionArguments() {
        let run = CDTool.run(["predicate", "format", "x BETWEEN %@", "--arguments", #"[{"$expr": "{10, 100}"}]"#])
        #expect(run.output == "x BETWEEN {10, 100}\n")
    }

    @Test func parseErrorsExitOneWithTheMessageOnStderr() {
        let run = CDTool.run(["predicate", "format", "a == 1 b"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.error.contains("Unable to parse the format string \"a == 1 b\""))
        #expect(run.error.contains("offset 7"))
    }

    @Test func missingSubstitutionVariableIsAnError() {
        let run = CDTool.run(["predicate", "format", "a == $X", "--substitute", "{}"])
        #expect(run.status == 1)
        #expect(run.error.contains("Can't get value for 'X'"))
    }

    @Test func evaluatePrintsTrueOrFalse() {
        let yes = CDTool.run(["predicate", "evaluate", "ANY employees.salary > 1000", "--object", #"{"employees": [{"salary": 1200}]}"#])
        #expect(yes.status == 0 && yes.output == "true\n")
        let no = CDTool.run(["predicate", "evaluate", "name BEGINSWITH[c] %@", "--object", #"{"name": "Bob"}"#, "--arguments", #"["a"]"#])
        #expect(no.status == 0 && no.output == "false\n")
    }

    @Test func evaluateTakesBindingsFromTheEnvelopeOrTheOption() {
        let envelope = CDTool.run(["predicate", "evaluate", "$a == 1", "--object", #"{"$object": {"$nil": true}, "$bindings": {"a": 1}}"#])
        #expect(envelope.output == "true\n")
        let option = CDTool.run(["predicate", "evaluate", "age > $MIN", "--object", #"{"age": 3}"#, "--variables", #"{"MIN": 5}"#])
        #expect(option.output == "false\n")
        let substituted = CDTool.run(["predicate", "evaluate", "speed <= $S", "--object", #"{"$object": {"speed": -7}, "$substitute": {"S": -5}}"#])
        #expect(substituted.output == "true\n")
    }

    @Test func evaluationErrorsExitOne() {
        let unbound = CDTool.run(["predicate", "evaluate", "a == $X", "--object", "{}"])
        #expect(unbound.status == 1 && unbound.error.contains("Can't get value for 'X'"))
        let mismatch = CDTool.run(["predicate", "evaluate", "x < '42'", "--object", #"{"x": 41}"#])
        #expect(mismatch.status == 1 && mismatch.error.contains("Can't compare"))
    }

    @Test func badJSONIsAnError() {
        let run = CDTool.run(["predicate", "evaluate", "a == 1", "--object", "{a: 1}"])
        #expect(run.status == 1)
        #expect(run.error.contains("invalid JSON"))
    }

    @Test func usageErrorsAreReported() {
        let run = CDTool.run(["predicate", "evaluate", "a == 1"])
        #expect(run.status != 0)
        #expect(run.error.contains("--object"))
    }
}
