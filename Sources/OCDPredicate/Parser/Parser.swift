import Foundation

/// A recursive-descent parser for the predicate format language (spec/predicates.md §3).
///
/// Precedence, loosest first: `OR`, `AND`, `NOT`, comparison, `:=`, `UNION`/`INTERSECT`/`MINUS`, `+ -`,
/// `* /`, `**`, unary `-`, `.`, `[index]`. A chain of one operator (`a AND b AND c`) makes one compound
/// predicate with all the operands, as Apple's parser does.
struct Parser {
    private let tokens: [Token]
    private let lexer: Lexer
    private var index = 0
    private var depth = 0
    /// Two limits keep the stack safe; no real predicate comes near either. The tree may be at most
    /// `maximumTreeDepth` levels deep in operators (`NOT`, `1 + 2 + 3`, `a[0][1]`), since printing,
    /// equality and evaluation recurse over it; the parser may recurse `maximumDepth` levels
    /// (parentheses, nested forms). The second is more than twice the first because the printed form
    /// parenthesises every nested operator (`NOT (NOT …)`, `((1 + 1) + 1)`) and must parse back.
    private static let maximumTreeDepth = 200
    private static let maximumDepth = 450
    private var treeDepth = 0
    /// Results of trying `( predicate )` at a token, so backtracking never repeats work.
    private var parenthesizedPredicates: [Int: (NSPredicate, Int)?] = [:]
    /// The error from the furthest point any alternative reached: the most useful one to report.
    private var furthestError: PredicateParseError?
    private var furthestErrorToken = -1

    private init(format: String, arguments: [Any?]) throws {
        self.lexer = Lexer(format: format, arguments: arguments)
        self.tokens = try Lexer.tokenize(format, arguments: arguments)
    }

    static func parsePredicate(_ format: String, arguments: [Any?]) throws -> NSPredicate {
        var parser = try Parser(format: format, arguments: arguments)
        return try parser.parseWhole { try $0.parsePredicate() }
    }

    static func parseExpression(_ format: String, arguments: [Any?]) throws -> NSExpression {
        var parser = try Parser(format: format, arguments: arguments)
        return try parser.parseWhole { parser in
            let expression = try parser.parseExpression()
            if parser.comparisonOperatorAhead() {
                throw parser.error(expected: "the end of the expression (a comparison makes a predicate, which NSExpression(format:) does not take)")
            }
            return expression
        }
    }

    private mutating func parseWhole<T>(_ body: (inout Parser) throws -> T) throws -> T {
        do {
            let result = try body(&self)
            guard case .end = current.kind else {
                throw error(expected: "the end of the format (or AND, OR, an operator)")
            }
            return result
        } catch let error as PredicateParseError {
            if let furthest = furthestError, furthest.offset > error.offset { throw furthest }
            throw error
        }
    }

    // MARK: Tokens

    private var current: Token { tokens[index] }

    private func peekToken(_ ahead: Int = 1) -> Token {
        tokens[min(index + ahead, tokens.count - 1)]
    }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private func isSymbol(_ symbol: String, _ token: Token? = nil) -> Bool {
        if case .symbol(let s) = (token ?? current).kind { return s == symbol }
        return false
    }

    private func isKeyword(_ keyword: Keyword, _ token: Token? = nil) -> Bool {
        if case .keyword(let k) = (token ?? current).kind { return k == keyword }
        return false
    }

    private mutating func expectSymbol(_ symbol: String, _ what: String? = nil) throws {
        guard isSymbol(symbol) else { throw error(expected: what ?? "'\(symbol)'") }
        advance()
    }

    private mutating func error(expected: String, at token: Token? = nil) -> PredicateParseError {
        let token = token ?? current
        let found: String
        if case .end = token.kind {
            found = "the end of the string"
        } else {
            let bytes = Array(lexer.format.utf8)[token.start..<token.end]
            found = "'\(String(decoding: bytes, as: UTF8.self))'"
        }
        let error = PredicateParseError(format: lexer.format, offset: lexer.characterOffset(token.start), expected: expected, found: found)
        if index > furthestErrorToken {
            furthestErrorToken = index
            furthestError = error
        }
        return error
    }

    private mutating func nest() throws {
        depth += 1
        if depth > Parser.maximumDepth {
            throw error(expected: "at most \(Parser.maximumDepth) levels of nesting")
        }
    }

    /// One more operator level in the tree (a `NOT`, a link of `a + b + c`).
    private mutating func link() throws {
        treeDepth += 1
        if treeDepth > Parser.maximumTreeDepth {
            throw error(expected: "at most \(Parser.maximumTreeDepth) nested operators")
        }
    }

    // MARK: Predicates

    private mutating func parsePredicate() throws -> NSPredicate {
        try parseCompound(.or, keyword: .or, symbol: "||") { try $0.parseCompound(.and, keyword: .and, symbol: "&&") { try $0.parseNot() } }
    }

    private mutating func parseCompound(
        _ type: NSCompoundPredicate.LogicalType, keyword: Keyword, symbol: String,
        operand: (inout Parser) throws -> NSPredicate
    ) throws -> NSPredicate {
        var operands = [try operand(&self)]
        while isKeyword(keyword) || isSymbol(symbol) {
            advance()
            operands.append(try operand(&self))
        }
        return operands.count == 1 ? operands[0] : NSCompoundPredicate(type: type, subpredicates: operands)
    }

    private mutating func parseNot() throws -> NSPredicate {
        if isKeyword(.not) || isSymbol("!") {
            try nest()
            try link()
            defer {
                depth -= 1
                treeDepth -= 1
            }
            advance()
            return NSCompoundPredicate(type: .not, subpredicates: [try parseNot()])
        }
        return try parsePrimaryPredicate()
    }

    private mutating func parsePrimaryPredicate() throws -> NSPredicate {
        if isKeyword(.truePredicate) {
            advance()
            return NSPredicate(value: true)
        }
        if isKeyword(.falsePredicate) {
            advance()
            return NSPredicate(value: false)
        }
        if isSymbol("(") {
            // `(` opens a predicate or an expression (`(a + b) * 2 > 3`); try the predicate first.
            if let (predicate, end) = try parenthesizedPredicate(at: index) {
                index = end
                return predicate
            }
        }
        return try parseComparison()
    }

    /// `( predicate )` at `start` when that parses and is not followed by something that makes it an
    /// expression instead; nil otherwise.
    private mutating func parenthesizedPredicate(at start: Int) throws -> (NSPredicate, Int)? {
        if let memo = parenthesizedPredicates[start] { return memo }
        try nest()
        defer { depth -= 1 }
        var attempt = self
        attempt.advance()
        var result: (NSPredicate, Int)?
        if let predicate = try? attempt.parsePredicate(), attempt.isSymbol(")") {
            attempt.advance()
            if !attempt.expressionContinues() && !attempt.comparisonOperatorAhead() {
                result = (predicate, attempt.index)
            }
        }
        if attempt.furthestErrorToken > furthestErrorToken {
            furthestErrorToken = attempt.furthestErrorToken
            furthestError = attempt.furthestError
        }
        parenthesizedPredicates.merge(attempt.parenthesizedPredicates) { old, _ in old }
        parenthesizedPredicates[start] = result
        return result
    }

    /// Whether the current token continues an expression (so a parenthesised group before it was one).
    private func expressionContinues() -> Bool {
        if case .symbol(let s) = current.kind {
            return ["+", "-", "*", "/", "**", ".", "[", ":="].contains(s)
        }
        return isKeyword(.union) || isKeyword(.intersect) || isKeyword(.minus)
    }

    private func comparisonOperatorAhead() -> Bool {
        switch current.kind {
        case .symbol(let s): return ["==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>"].contains(s)
        case .keyword(let k):
            return [.like, .matches, .beginsWith, .endsWith, .contains, .in, .between, .utiConformsTo, .utiEquals].contains(k)
        case .identifier: return isSymbol(":", peekToken())
        default: return false
        }
    }

    private mutating func parseComparison() throws -> NSPredicate {
        var modifier: NSComparisonPredicate.Modifier = .direct
        var negate = false
        if case .keyword(let k) = current.kind {
            switch k {
            case .any, .some: modifier = .any
            case .all: modifier = .all
            case .none:
                modifier = .any
                negate = true
            default: break
            }
            if modifier != .direct { advance() }
        }
        let lhs = try parseExpression()
        let operatorToken = current
        let op: NSComparisonPredicate.Op
        switch current.kind {
        case .symbol(let s):
            switch s {
            case "==", "=": op = .standard(.equalTo)
            case "!=", "<>": op = .standard(.notEqualTo)
            case "<": op = .standard(.lessThan)
            case "<=", "=<": op = .standard(.lessThanOrEqualTo)
            case ">": op = .standard(.greaterThan)
            case ">=", "=>": op = .standard(.greaterThanOrEqualTo)
            default: throw error(expected: "a comparison operator such as ==, <, LIKE, CONTAINS or IN")
            }
        case .keyword(let k):
            switch k {
            case .like: op = .standard(.like)
            case .matches: op = .standard(.matches)
            case .beginsWith: op = .standard(.beginsWith)
            case .endsWith: op = .standard(.endsWith)
            case .contains: op = .standard(.contains)
            case .in: op = .standard(.in)
            case .between: op = .standard(.between)
            case .utiConformsTo: op = .utiConformsTo
            case .utiEquals: op = .utiEquals
            case .not where isKeyword(.in, peekToken()):
                throw error(expected: "a comparison operator (NOT IN is not part of the language: write NOT (x IN y))")
            default: throw error(expected: "a comparison operator such as ==, <, LIKE, CONTAINS or IN")
            }
        case .identifier(let name) where isSymbol(":", peekToken()):
            // A custom selector: `SELF isKindOfClass: %@`.
            advance()
            advance()
            let rhs = try parseExpression()
            return NSComparisonPredicate(lhs, .selector(name + ":"), rhs, modifier: modifier, options: [])
        default:
            throw error(expected: "a comparison operator such as ==, <, LIKE, CONTAINS or IN")
        }
        advance()
        var options: NSComparisonPredicate.Options = []
        if op != .standard(.between), isSymbol("["), current.start == operatorToken.end {
            options = try parseOptions()
        }
        let rhs = try parseExpression()
        let comparison = NSComparisonPredicate(lhs, op, rhs, modifier: modifier, options: options)
        return negate ? NSCompoundPredicate(type: .not, subpredicates: [comparison]) : comparison
    }

    /// `[c]`, `[d]`, `[cd]`, `[n]`, `[l]` written right after an operator.
    private mutating func parseOptions() throws -> NSComparisonPredicate.Options {
        advance()
        guard case .identifier(let letters) = current.kind else {
            throw error(expected: "comparison options: letters among c, d, n, l")
        }
        var options: NSComparisonPredicate.Options = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            case "l": options.insert(.localeSensitive)
            default: throw error(expected: "comparison options: letters among c, d, n, l")
            }
        }
        advance()
        try expectSymbol("]", "']' to close the comparison options")
        return options
    }

    // MARK: Expressions

    mutating func parseExpression() throws -> NSExpression {
        try nest()
        defer { depth -= 1 }
        if case .variable(let name) = current.kind, isSymbol(":=", peekToken()) {
            advance()
            advance()
            return NSExpression(node: .assignment(variable: name, try parseExpression()))
        }
        var lhs = try parseAdditive()
        var links = 0
        defer { treeDepth -= links }
        while case .keyword(let k) = current.kind, let operation = setOperation(k) {
            try link()
            links += 1
            advance()
            lhs = NSExpression(node: .set(operation, lhs, try parseAdditive()))
        }
        return lhs
    }

    private func setOperation(_ keyword: Keyword) -> NSExpression.SetOperation? {
        switch keyword {
        case .union: return .union
        case .intersect: return .intersect
        case .minus: return .minus
        default: return nil
        }
    }

    private mutating func parseAdditive() throws -> NSExpression {
        try parseLeftAssociative(["+": .add, "-": .subtract]) { try $0.parseMultiplicative() }
    }

    private mutating func parseMultiplicative() throws -> NSExpression {
        try parseLeftAssociative(["*": .multiply, "/": .divide]) { try $0.parsePower() }
    }

    private mutating func parsePower() throws -> NSExpression {
        try parseLeftAssociative(["**": .power]) { try $0.parseUnary() }
    }

    /// `operand (op operand)*` for one precedence level of arithmetic, built left-nested as Apple's
    /// functions (`add:to:` …).
    private mutating func parseLeftAssociative(
        _ operators: [String: BuiltinFunction], operand: (inout Parser) throws -> NSExpression
    ) throws -> NSExpression {
        var lhs = try operand(&self)
        var links = 0
        defer { treeDepth -= links }
        while case .symbol(let symbol) = current.kind, let function = operators[symbol] {
            try link()
            links += 1
            advance()
            lhs = .binary(function, lhs, try operand(&self))
        }
        return lhs
    }

    private mutating func parseUnary() throws -> NSExpression {
        guard isSymbol("-") else { return try parsePath() }
        try nest()
        defer { depth -= 1 }
        advance()
        let operand = try parseUnary()
        // A negative literal is a constant (`x > -5` prints `-5`); anything else is `0 - operand`.
        if case .constant(let value) = operand.node, let negated = Parser.negate(value) {
            return NSExpression(node: .constant(negated))
        }
        return .binary(.subtract, NSExpression(node: .constant(.int(0))), operand)
    }

    private static func negate(_ value: Value) -> Value? {
        switch value {
        case .int(let i) where i != .min: return .int(-i)
        case .double(let d): return .double(-d)
        case .decimal(let d): return .decimal(-d)
        default: return nil
        }
    }

    /// `term . term . …`: keys merge into one key path; a key path after any other expression reads from
    /// that expression's value.
    private mutating func parsePath() throws -> NSExpression {
        var lhs = try parseTerm()
        var links = 0
        defer { treeDepth -= links }
        while isSymbol(".") {
            try link()
            links += 1
            advance()
            let componentToken = current
            if case .number = current.kind {
                throw error(expected: "a key after '.' (a key-path component cannot be a number)")
            }
            let rhs = try parseTerm()
            guard case .keyPath(let path) = rhs.node else {
                if case .constant = rhs.node {
                    throw error(expected: "a key after '.'", at: componentToken)
                }
                lhs = NSExpression(node: .composition(lhs, rhs))
                continue
            }
            switch lhs.node {
            case .keyPath(let left):
                lhs = NSExpression(node: .keyPath(KeyPathComponents(components: left.components + path.components)))
            case .evaluatedObject:
                lhs = rhs
            case .keyPathOnValue(let operand, let left):
                lhs = NSExpression(node: .keyPathOnValue(operand, KeyPathComponents(components: left.components + path.components)))
            default:
                lhs = NSExpression(node: .keyPathOnValue(lhs, path))
            }
        }
        return lhs
    }

    /// `primary [index] [index] …`.
    private mutating func parseTerm() throws -> NSExpression {
        var term = try parsePrimary()
        var links = 0
        defer { treeDepth -= links }
        while isSymbol("[") {
            try link()
            links += 1
            advance()
            let index: NSExpression
            switch current.kind {
            case .keyword(.first): index = NSExpression(node: .symbolic(.first)); advance()
            case .keyword(.last): index = NSExpression(node: .symbolic(.last)); advance()
            case .keyword(.size): index = NSExpression(node: .symbolic(.size)); advance()
            default: index = try parseExpression()
            }
            try expectSymbol("]", "']' to close the index")
            term = .binary(.index, term, index)
        }
        return term
    }

    private mutating func parsePrimary() throws -> NSExpression {
        let token = current
        switch token.kind {
        case .string(let s):
            advance()
            return NSExpression(node: .constant(.string(s)))
        case .number(let n):
            advance()
            return NSExpression(node: .constant(n))
        case .variable(let name):
            advance()
            return NSExpression(node: .variable(name))
        case .argument(let argument):
            advance()
            switch argument {
            case .constant(let value): return NSExpression(node: .constant(value))
            case .expression(let expression): return expression
            case .keyPath(let path): return NSExpression(node: .keyPath(path))
            }
        case .atIdentifier(let name):
            advance()
            return NSExpression(node: .keyPath(KeyPathComponents(components: [name])))
        case .escapedIdentifier(let name):
            advance()
            return NSExpression(node: .keyPath(KeyPathComponents(components: [name])))
        case .identifier(let name):
            if isSymbol("(", peekToken()) || isSymbol(":", peekToken()) {
                return try parseFunctionCall()
            }
            advance()
            return NSExpression(node: .keyPath(KeyPathComponents(components: [name])))
        case .symbol("("):
            // parseExpression counts this level.
            advance()
            let inner = try parseExpression()
            try expectSymbol(")", "')' to close the parenthesis")
            return inner
        case .symbol("{"):
            // Each element's parseExpression counts this level.
            advance()
            var elements: [NSExpression] = []
            if !isSymbol("}") {
                elements.append(try parseExpression())
                while isSymbol(",") {
                    advance()
                    elements.append(try parseExpression())
                }
            }
            try expectSymbol("}", "',' or '}' in the aggregate")
            return NSExpression(node: .aggregate(elements))
        case .keyword(let keyword):
            return try parseKeywordPrimary(keyword)
        default:
            throw error(expected: "an expression (a key, a constant, a $variable, SELF, a function …)")
        }
    }

    private mutating func parseKeywordPrimary(_ keyword: Keyword) throws -> NSExpression {
        switch keyword {
        case .true, .yes:
            advance()
            return NSExpression(node: .constant(.bool(true)))
        case .false, .no:
            advance()
            return NSExpression(node: .constant(.bool(false)))
        case .null, .nil:
            advance()
            return NSExpression(node: .constant(.nil))
        case .self:
            advance()
            return NSExpression(node: .evaluatedObject)
        case .anyKey:
            advance()
            return NSExpression(node: .anyKey)
        case .subquery:
            advance()
            try expectSymbol("(", "'(' after SUBQUERY")
            let collection = try parseExpression()
            try expectSymbol(",", "',' after the SUBQUERY collection")
            guard case .variable(let variable) = current.kind else {
                throw error(expected: "a $variable as the second argument of SUBQUERY")
            }
            advance()
            try expectSymbol(",", "',' after the SUBQUERY variable")
            let predicate = try nested { try $0.parsePredicate() }
            try expectSymbol(")", "')' to close SUBQUERY")
            return NSExpression(node: .subquery(collection: collection, variable: variable, predicate: predicate))
        case .ternary:
            advance()
            try expectSymbol("(", "'(' after TERNARY")
            let predicate = try nested { try $0.parsePredicate() }
            try expectSymbol(",", "',' after the TERNARY condition")
            let whenTrue = try parseExpression()
            try expectSymbol(",", "',' after the TERNARY true value")
            let whenFalse = try parseExpression()
            try expectSymbol(")", "')' to close TERNARY")
            return NSExpression(node: .conditional(predicate, whenTrue, whenFalse))
        case .cast:
            advance()
            try expectSymbol("(", "'(' after CAST")
            let value = try parseExpression()
            try expectSymbol(",", "',' after the CAST value")
            let type = try parseExpression()
            try expectSymbol(")", "')' to close CAST")
            // CAST(<number>, "NSDate") is how dates print: fold it back into the date, so printing round-trips.
            // Not for seconds that are no number (NaN, an infinity): evaluating the cast refuses them.
            if case .constant(let seconds) = value.node, let number = seconds.numeric, number.doubleValue.isFinite,
               case .constant(.string("NSDate")) = type.node {
                return NSExpression(node: .constant(.date(Date(timeIntervalSinceReferenceDate: number.doubleValue))))
            }
            return .binary(.cast, value, type)
        case .function:
            advance()
            try expectSymbol("(", "'(' after FUNCTION")
            let target = try parseExpression()
            try expectSymbol(",", "',' after the FUNCTION target")
            guard case .constant(.string(let selector)) = (try? peekPrimaryConstant()) ?? .constant(.nil) else {
                throw error(expected: "the selector of FUNCTION as a quoted string")
            }
            advance()
            var arguments: [NSExpression] = []
            while isSymbol(",") {
                advance()
                arguments.append(try parseExpression())
            }
            try expectSymbol(")", "')' to close FUNCTION")
            return NSExpression(node: .function(name: selector, arguments: arguments, target: target))
        case .fetch:
            throw error(expected: "an expression (FETCH is a Core Data store-side form that cannot run here)")
        case .first, .last, .size:
            throw error(expected: "an expression (\(keyword.rawValue) is only allowed as an index: x[\(keyword.rawValue)]; write #\(keyword.rawValue.lowercased()) for a key)")
        default:
            throw error(expected: "an expression (\(keyword.rawValue) is a reserved word; write #\(keyword.rawValue.lowercased()) for a key)")
        }
    }

    /// The constant a string token or `%@` argument token stands for, without consuming it.
    private func peekPrimaryConstant() throws -> NSExpression.Node {
        switch current.kind {
        case .string(let s): return .constant(.string(s))
        case .argument(.constant(let value)): return .constant(value)
        default: return .constant(.nil)
        }
    }

    private mutating func nested<T>(_ body: (inout Parser) throws -> T) throws -> T {
        try nest()
        defer { depth -= 1 }
        return try body(&self)
    }

    /// `name(…)`, `name:(…)`, `add:to:(…)`: a built-in function by any of its spellings.
    private mutating func parseFunctionCall() throws -> NSExpression {
        let nameToken = current
        var name = ""
        while case .identifier(let part) = current.kind {
            if isSymbol(":", peekToken()) {
                name += part + ":"
                advance()
                advance()
            } else if name.isEmpty {
                name = part
                advance()
                break
            } else {
                throw error(expected: "'(' after the function name \(name)")
            }
        }
        try expectSymbol("(", "'(' after the function name \(name)")
        var arguments: [NSExpression] = []
        if !isSymbol(")") {
            arguments.append(try parseExpression())
            while isSymbol(",") {
                advance()
                arguments.append(try parseExpression())
            }
        }
        try expectSymbol(")", "')' to close the arguments of \(name)")
        let function = try BuiltinFunction.resolve(
            name, argumentCount: arguments.count, format: lexer.format, offset: lexer.characterOffset(nameToken.start))
        return NSExpression(node: .function(name: function.selector, arguments: arguments, target: nil))
    }
}

extension NSExpression {
    /// Parses an expression format string (`"salary * 1.1"`, `"sum:(employees.salary)"`) with its arguments.
    ///
    /// Stops with a message naming the offset and the expected token when the format is malformed (Apple
    /// raises `NSInvalidArgumentException`); ``init(validatingFormat:_:)`` throws instead.
    public convenience init(format: String, _ arguments: Any?...) {
        self.init(format: format, argumentArray: arguments.map { $0 as Any })
    }

    /// Parses an expression format string with its arguments in an array.
    public convenience init(format: String, argumentArray arguments: [Any]) {
        do {
            try self.init(validatingFormat: format, argumentArray: arguments)
        } catch {
            fatalError(String(describing: error))
        }
    }

    /// Parses an expression format string, throwing ``PredicateParseError`` when it is malformed.
    public convenience init(validatingFormat format: String, _ arguments: Any?...) throws {
        try self.init(validatingFormat: format, argumentArray: arguments.map { $0 as Any })
    }

    /// Parses an expression format string with its arguments in an array, throwing ``PredicateParseError``.
    public convenience init(validatingFormat format: String, argumentArray arguments: [Any]) throws {
        let expression = try Parser.parseExpression(format, arguments: arguments.map { $0 })
        self.init(node: expression.node)
    }
}
