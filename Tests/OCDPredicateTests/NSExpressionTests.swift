import Foundation
import Testing
@testable import OCDPredicate
import class OCDPredicate.NSExpression
import class OCDPredicate.NSPredicate

@Suite("NSExpression: factories, inspection, evaluation, functions")
struct NSExpressionTests {
    func value(_ format: String, _ object: Any? = nil, _ arguments: Any?...) throws -> Any? {
        try NSExpression(validatingFormat: format, argumentArray: arguments.map { $0 as Any }).expressionValueThrowing(with: object)
    }

    @Test func factoriesHaveApplesExpressionTypes() throws {
        #expect(NSExpression(forConstantValue: 1).expressionType == .constantValue)
        #expect(NSExpression.expressionForEvaluatedObject().expressionType == .evaluatedObject)
        #expect(NSExpression(forVariable: "x").expressionType == .variable)
        #expect(NSExpression(forKeyPath: "a.b").expressionType == .keyPath)
        #expect(NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "x")]).expressionType == .function)
        #expect(NSExpression(forAggregate: [1, 2]).expressionType == .aggregate)
        #expect(NSExpression(forUnionSet: NSExpression(forKeyPath: "a"), with: NSExpression(forKeyPath: "b")).expressionType == .unionSet)
        #expect(NSExpression(forIntersectSet: NSExpression(forKeyPath: "a"), with: NSExpression(forKeyPath: "b")).expressionType == .intersectSet)
        #expect(NSExpression(forMinusSet: NSExpression(forKeyPath: "a"), with: NSExpression(forKeyPath: "b")).expressionType == .minusSet)
        #expect(NSExpression.expressionForAnyKey().expressionType == .anyKey)
        #expect(NSExpression(format: "SUBQUERY(x, $y, $y > 1)").expressionType == .subquery)
        #expect(NSExpression(format: "TERNARY(a > 1, 1, 2)").expressionType == .conditional)
        #expect(NSExpression(block: { _, _, _ in 1 }, arguments: nil).expressionType == .block)
        #expect(NSExpression.ExpressionType.subquery.rawValue == 13 && NSExpression.ExpressionType.conditional.rawValue == 20)
    }

    @Test func accessorsReturnTheParts() throws {
        let function = NSExpression(format: "add:to:(a, 2)")
        #expect(function.function == "add:to:")
        #expect(function.arguments?.count == 2)
        let arithmetic = NSExpression(format: "a + 2")
        #expect(arithmetic.function == "add:to:")
        #expect(arithmetic.description == "a + 2")
        let subquery = NSExpression(format: "SUBQUERY(items, $i, $i.price > 3)")
        #expect(subquery.variable == "i")
        #expect((subquery.collection as? NSExpression)?.keyPath == "items")
        #expect(subquery.predicate.predicateFormat == "$i.price > 3")
        let conditional = NSExpression(format: "TERNARY(a > 1, 'big', 'small')")
        #expect(conditional.trueExpression.constantValue as? String == "big")
        #expect(conditional.falseExpression.constantValue as? String == "small")
        let union = NSExpression(format: "a UNION b")
        #expect(union.left.keyPath == "a" && union.right.keyPath == "b")
        let method = NSExpression(format: "FUNCTION(name, 'uppercaseString')")
        #expect(method.operand.keyPath == "name")
        #expect(method.function == "uppercaseString")
    }

    @Test func functionNamesResolveWithOrWithoutColons() throws {
        #expect(NSExpression(format: "sum({1, 2})") == NSExpression(format: "sum:({1, 2})"))
        #expect(NSExpression(forFunction: "average", arguments: [[1, 2]]).function == "average:")
        #expect(throws: PredicateParseError.self) { try NSExpression(validatingFunction: "factorial:", arguments: [3]) }
    }

    @Test func statisticsFunctions() throws {
        #expect(try value("sum:({1, 2, 3})") as? Int == 6)
        #expect(try value("count:({1, 2, 3})") as? Int == 3)
        #expect(try value("min:({4, 2, 3})") as? Int == 2)
        #expect(try value("max:({4, 2, 3})") as? Int == 4)
        #expect(try value("average:({1, 2, 3, 4})") as? Double == 2.5)
        #expect(try value("median:({5, 1, 3})") as? Int == 3)
        #expect(try value("median:({4, 1, 3, 2})") as? Double == 2.5)
        #expect(try value("mode:({1, 2, 3, 3, 2})") as? [Int] == [2, 3])
        #expect(try value("stddev:({2, 4, 4, 4, 5, 5, 7, 9})") as? Double == 2)
    }

    @Test func arithmeticKeepsIntegersIntegral() throws {
        #expect(try value("7 / 2") as? Int == 3)
        #expect(try value("7.0 / 2") as? Double == 3.5)
        #expect(try value("4 + 5 - 2 ** 3") as? Double == 1)
        #expect(try value("modulus:by:(7, 2)") as? Int == 1)
        #expect(try value("%d * %f", nil, 3, 3.5) as? Double == 10.5)
        #expect(try value("%@ + %@", nil, Decimal(string: "0.1")!, Decimal(string: "0.2")!) as? Decimal == Decimal(string: "0.3"))
    }

    @Test func arithmeticOnNonNumbersIsAnError() throws {
        #expect(throws: PredicateEvaluationError.self) { try value("12.845 * x[0] + x[1]", ["x": ["1", 2]]) }
        #expect(try value("12.845 * x[0] + x[1]", ["x": [1, 2]]) as? Double == 14.845)
    }

    @Test func numericFunctions() throws {
        #expect(try value("sqrt:(16)") as? Double == 4)
        #expect(try value("log:(1000)") as? Double == 3)
        #expect(try value("ln:(1)") as? Double == 0)
        #expect(try value("exp:(0)") as? Double == 1)
        #expect(try value("ceiling:(3.3)") as? Double == 4)
        #expect(try value("floor:(3.7)") as? Double == 3)
        #expect(try value("trunc:(-3.7)") as? Double == -3)
        #expect(try value("abs:(-4)") as? Int == 4)
        #expect(try value("bitwiseOr:with:(5, 2)") as? Int == 7)
        #expect(try value("bitwiseXor:with:(5, 1)") as? Int == 4)
        #expect(try value("leftshift:by:(1, 3)") as? Int == 8)
        #expect(try value("rightshift:by:(8, 3)") as? Int == 1)
        #expect(try value("onesComplement:(0)") as? Int == -1)
        let random = try #require(try value("random()") as? Double)
        #expect(random >= 0 && random < 1)
        let bounded = try #require(try value("randomn:(3)") as? Int)
        #expect((0..<3).contains(bounded))
        let now = try #require(try value("now()") as? Date)
        #expect(abs(now.timeIntervalSinceNow) < 60)
    }

    @Test func stringFunctions() throws {
        #expect(try value("uppercase:(name)", ["name": "Ann"]) as? String == "ANN")
        #expect(try value("lowercase:('ÀB')") as? String == "àb")
        #expect(try value("length:('héllo')") as? Int == 5)
    }

    /// `canonical:`, which Core Data's derived attributes use: folded for case, diacritics and width,
    /// then in normalization form KC (as Apple's NSCoreDataCanonical); printed as written.
    @Test func canonicalFoldsCaseDiacriticsAndWidth() throws {
        #expect(try value("canonical:(name)", ["name": "Les Misérables ＡＢ"]) as? String == "les miserables ab")
        #expect(try value("canonical:('ﬁn Straße')") as? String == "fin strasse")
        #expect(try value("canonical:(name)", [:]) == nil)
        #expect(NSExpression(format: "canonical:(name)").description == "canonical:(name)")
        #expect(NSExpression(format: "canonical:(name)").function == "canonical:")
    }

    @Test func castConvertsBetweenDatesNumbersAndStrings() throws {
        #expect(try value("CAST(0, 'NSDate')") as? Date == Date(timeIntervalSinceReferenceDate: 0))
        #expect(try value("CAST('42', 'NSNumber')") as? Int == 42)
        #expect(try value("CAST('4.5', 'NSNumber')") as? Double == 4.5)
        #expect(try value("CAST(42, 'NSString')") as? String == "42")
        #expect(throws: PredicateEvaluationError.self) { try value("CAST(1, 'NSWindow')") }
        // Seconds that are no number (text from a user: "nan", "inf") make no date, which Linux
        // Foundation would stop describing: the cast fails, typed.
        for text in ["nan", "inf", "-infinity"] {
            #expect(throws: PredicateEvaluationError.self, "\(text)") { try value("CAST(%@, 'NSDate')", nil, text) }
        }
        #expect(throws: PredicateEvaluationError.self) { try value("CAST(%@, 'NSDate')", nil, Double.nan) }
    }

    @Test func dateConstantsPrintAsCastAndParseBack() throws {
        let date = Date(timeIntervalSinceReferenceDate: 592299475.57712)
        let expression = NSExpression(forConstantValue: date)
        #expect(expression.description == "CAST(592299475.577120, \"NSDate\")")
        #expect(NSExpression(format: expression.description) == expression)
    }

    @Test func indexSymbolsAndDictionaryKeys() throws {
        #expect(try value("a[FIRST]", ["a": [1, 2, 3]]) as? Int == 1)
        #expect(try value("a[LAST]", ["a": [1, 2, 3]]) as? Int == 3)
        #expect(try value("a[SIZE]", ["a": [1, 2, 3]]) as? Int == 3)
        #expect(try value("a[1]", ["a": [1, 2, 3]]) as? Int == 2)
        #expect(try value("(SELF.h)['A']", ["h": ["A": 7]]) as? Int == 7)
        #expect(throws: PredicateEvaluationError.self) { try value("a[5]", ["a": [1, 2, 3]]) }
    }

    @Test func keyPathAfterAValueReadsFromIt() throws {
        #expect(try value("SUBQUERY(a, $x, $x > 1).@count", ["a": [1, 2, 3]]) as? Int == 2)
        #expect(try value("TERNARY(j != NULL, j, '').length", [String: Any]()) as? Int == 0)
        let context = NSMutableDictionary()
        context["x"] = ["name": "Ada"]
        #expect(try NSExpression(format: "$x.name").expressionValueThrowing(with: nil, context: context) as? String == "Ada")
    }

    @Test func collectionOperators() throws {
        let object: [String: Any] = ["items": [["price": 3, "tag": "a"], ["price": 5, "tag": "b"], ["price": 5, "tag": "a"]]]
        #expect(try value("items.@count", object) as? Int == 3)
        #expect(try value("items.@sum.price", object) as? Int == 13)
        #expect(try value("items.@min.price", object) as? Int == 3)
        #expect(try value("items.@max.price", object) as? Int == 5)
        #expect(try value("items.@avg.price", object) as? Double == 13.0 / 3)
        #expect(try value("items.@distinctUnionOfObjects.tag", object) as? [String] == ["a", "b"])
        #expect(try value("items.@unionOfObjects.tag", object) as? [String] == ["a", "b", "a"])
        #expect(try value("@count", [1, 2]) as? Int == 2)
        #expect(throws: PredicateEvaluationError.self) { try value("items.@average.price", object) }
    }

    @Test func setOperationsNeedCollections() throws {
        let result = try value("{1, 2, 3} MINUS {2}") as? Set<AnyHashable>
        #expect(result == [1, 3])
        #expect(try value("{1, 2} UNION {2, 3}") as? Set<AnyHashable> == [1, 2, 3])
        #expect(try value("{1, 2} INTERSECT {2, 3}") as? Set<AnyHashable> == [2])
        #expect(throws: PredicateEvaluationError.self) { try value("1 UNION {2}") }
    }

    @Test func assignmentStoresIntoTheContext() throws {
        let context = NSMutableDictionary()
        let result = try NSExpression(format: "$x := 2 + 3").expressionValueThrowing(with: nil, context: context)
        #expect(result as? Int == 5)
        #expect(context["x"] as? Int == 5)
    }

    @Test func registeredMethodsRunForFunction() throws {
        NSExpression.registerMethod("pow:") { target, arguments in
            guard let base = target as? Int, let exponent = arguments.first as? Int else { return nil }
            return Int(pow(Double(base), Double(exponent)))
        }
        #expect(try value("FUNCTION(2, 'pow:', 10)") as? Int == 1024)
        #expect(try value("FUNCTION(now(), 'dateByAddingTimeInterval:', -86400)") is Date)
        #expect(throws: PredicateEvaluationError.self) { try value("FUNCTION('a', 'launchMissiles')") }
    }

    @Test func blockExpressionsGetTheirArguments() throws {
        let block = NSExpression(block: { object, arguments, _ in
            (object as? Int ?? 0) + arguments.compactMap { $0 as? Int }.reduce(0, +)
        }, arguments: [NSExpression(forConstantValue: 2), NSExpression(forConstantValue: 3)])
        #expect(try block.expressionValueThrowing(with: 10) as? Int == 15)
    }

    @Test func anyKeyCannotBeEvaluated() throws {
        #expect(throws: PredicateEvaluationError.self) { try NSExpression.expressionForAnyKey().expressionValueThrowing(with: [:] as [String: Any]) }
    }

    @Test func constantsPrintAsApplePrintsThem() throws {
        #expect(NSExpression(forConstantValue: "say \"hi\" \\ o/").description == #""say \"hi\" \\ o/""#)
        #expect(NSExpression(forConstantValue: 1000.0).description == "1000")
        #expect(NSExpression(forConstantValue: 0.1).description == "0.1")
        #expect(NSExpression(forConstantValue: 1e20).description == "1e+20")
        #expect(NSExpression(forConstantValue: true).description == "1")
        #expect(NSExpression(forConstantValue: nil).description == "nil")
        #expect(NSExpression(forConstantValue: NSNull()).description == "<null>")
        #expect(NSExpression(forConstantValue: [1, "a"]).description == #"{1, "a"}"#)
        #expect(NSExpression(forKeyPath: "size").description == "#size")
        #expect(NSExpression(format: "(a + b) * c").description == "(a + b) * c")
        #expect(NSExpression(format: "a + b * c").description == "a + (b * c)")
    }

    @Test func constantValueRoundTripsSwiftTypes() throws {
        #expect(NSExpression(forConstantValue: 3).constantValue as? Int == 3)
        #expect(NSExpression(forConstantValue: Int64(3)).constantValue as? Int == 3)
        #expect(NSExpression(forConstantValue: "s").constantValue as? String == "s")
        #expect(NSExpression(forConstantValue: UInt64.max).constantValue as? Decimal == Decimal(UInt64.max))
        #expect(NSExpression(forConstantValue: NSNumber(value: true)).constantValue as? Bool == true)
        #expect(NSExpression(forConstantValue: nil).constantValue == nil)
    }
}
