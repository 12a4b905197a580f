import Foundation
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSExpression
import class OCDPredicate.NSComparisonPredicate
import class OCDPredicate.NSCompoundPredicate
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSSortDescriptor

/// SQL text with its arguments. Every value of a predicate is bound as an argument: no predicate or key
/// text ever becomes SQL (identifiers come from the model's mapping, never from the predicate).
struct SQLQuery {
    var sql: String
    var arguments: [SQLValue]
}

/// Translates fetch plans (predicate, sorts, limit, offset) into SQL over Core Data's schema, as the
/// Core Data SQL store does (../shared/spec/predicates.md §11). Constructs SQL cannot run stop with
/// Apple's error ("unimplemented SQL generation for predicate", "to-many key not allowed here").
final class PredicateSQL {
    private let schema: StoreSchema
    private unowned let store: SQLiteStore
    var arguments: [SQLValue] = []
    private var aliasCounter = 0

    init(schema: StoreSchema, store: SQLiteStore) {
        self.schema = schema
        self.store = store
    }

    /// A table in a FROM clause with the to-one joins made from it (LEFT JOIN: a nil relationship must
    /// not drop the row).
    final class Scope {
        let alias: String
        let mapping: EntityMapping
        var joins: [String] = []
        var joinedAliases: [String: (String, EntityMapping)] = [:]
        let parent: Scope?
        /// SUBQUERY variables bound in this scope.
        var variables: [String: (alias: String, mapping: EntityMapping, scope: Scope)] = [:]

        init(alias: String, mapping: EntityMapping, parent: Scope?) {
            self.alias = alias
            self.mapping = mapping
            self.parent = parent
        }

        /// Result columns of a dictionary fetch, by name, for its having predicate (SQLite's HAVING
        /// accepts the SELECT list's aliases).
        var resultAliases: [String: (sql: String, attribute: NSAttributeDescription?)] = [:]

        func variable(_ name: String) -> (alias: String, mapping: EntityMapping, scope: Scope)? {
            variables[name] ?? parent?.variable(name)
        }
    }

    private func newAlias() -> String {
        aliasCounter += 1
        return "t\(aliasCounter)"
    }

    // MARK: Statements

    func select(_ columns: String, plan: StoreFetchPlan, mapping: EntityMapping) throws -> SQLQuery {
        try coreDataErrors { try makeSelect(columns, plan: plan, mapping: mapping) }
    }

    func count(plan: StoreFetchPlan, mapping: EntityMapping) throws -> SQLQuery {
        try coreDataErrors { try makeCount(plan: plan, mapping: mapping) }
    }

    /// Untranslatable predicates leave the store as Core Data errors (NSCoreDataError, 134060) whose
    /// description is Apple's exception reason; Apple raises NSInvalidArgumentException instead.
    private func coreDataErrors(_ body: () throws -> SQLQuery) throws -> SQLQuery {
        do {
            return try body()
        } catch let failure as SQLiteStoreError {
            throw SQLiteStore.error(NSCoreDataErrorCode, failure.description, underlying: failure,
                                    extra: ["NSExceptionName": "NSInvalidArgumentException"])
        }
    }

    private func makeSelect(_ columns: String, plan: StoreFetchPlan, mapping: EntityMapping) throws -> SQLQuery {
        let scope = Scope(alias: "t0", mapping: mapping, parent: nil)
        let condition = try whereClause(plan, scope)
        let order = try orderClause(plan.sortDescriptors, scope)
        var sql = "SELECT \(columns) FROM \(mapping.table.name) t0"
        for join in scope.joins { sql += " " + join }
        sql += " WHERE " + condition + " ORDER BY " + order
        if plan.fetchLimit > 0 || plan.fetchOffset > 0 {
            sql += " LIMIT \(plan.fetchLimit > 0 ? plan.fetchLimit : -1)"
            if plan.fetchOffset > 0 { sql += " OFFSET \(plan.fetchOffset)" }
        }
        return SQLQuery(sql: sql, arguments: arguments)
    }

    private func makeCount(plan: StoreFetchPlan, mapping: EntityMapping) throws -> SQLQuery {
        let scope = Scope(alias: "t0", mapping: mapping, parent: nil)
        let condition = try whereClause(plan, scope)
        var inner = "SELECT t0.Z_PK FROM \(mapping.table.name) t0"
        for join in scope.joins { inner += " " + join }
        inner += " WHERE " + condition
        if plan.fetchLimit > 0 || plan.fetchOffset > 0 {
            inner += " LIMIT \(plan.fetchLimit > 0 ? plan.fetchLimit : -1)"
            if plan.fetchOffset > 0 { inner += " OFFSET \(plan.fetchOffset)" }
            return SQLQuery(sql: "SELECT COUNT(*) FROM (\(inner))", arguments: arguments)
        }
        var sql = "SELECT COUNT(*) FROM \(mapping.table.name) t0"
        for join in scope.joins { sql += " " + join }
        // Without any WHERE (not even "WHERE 1") SQLite counts the b-tree's pages instead of stepping every row.
        if condition != "1" || !scope.joins.isEmpty { sql += " WHERE " + condition }
        return SQLQuery(sql: sql, arguments: arguments)
    }

    func whereClause(_ plan: StoreFetchPlan, _ scope: Scope) throws -> String {
        let numbers = scope.mapping.numbers(includingSubentities: plan.includesSubentities)
        var parts: [String] = []
        let entitiesInTable = schema.mappings.values.filter({ $0.table === scope.mapping.table }).count
        if numbers.count == 1 && entitiesInTable == 1 {
            // The table holds this entity alone: no Z_ENT test, so SQLite can count a b-tree without reading rows.
        } else if numbers.count == 1 {
            parts.append("t0.Z_ENT = \(numbers[0])")
        } else if !(scope.mapping.entity.superentity == nil && numbers.count == schema.mappings.values.filter({ $0.table === scope.mapping.table }).count) {
            parts.append("t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))")
        }
        if let predicate = plan.predicate { parts.append("(" + (try translate(predicate, scope)) + ")") }
        return parts.isEmpty ? "1" : parts.joined(separator: " AND ")
    }

    private func orderClause(_ sorts: [NSSortDescriptor], _ scope: Scope) throws -> String {
        var terms: [String] = []
        for sort in sorts {
            guard let key = sort.key else { throw unsupported("a sort descriptor without a key") }
            let operand = try keyPath(key, from: scope)
            let sql: String
            switch operand {
            case .value(let expression, _), .object(let expression, _): sql = expression
            case .toMany: throw SQLiteStoreError.unsupportedPredicate("to-many key not allowed here (sort key \(key))")
            case .constant, .list: throw unsupported("the sort key \(key)")
            }
            terms.append(sql + (try Self.collation(of: sort, key: key)) + (sort.ascending ? " ASC" : " DESC"))
        }
        terms.append("t0.Z_PK")
        return terms.joined(separator: ", ")
    }

    /// The `COLLATE` clause that orders as `sort`'s selector does in memory (empty for `compare:`). A
    /// descriptor with a comparator cannot be run by SQL, as in Apple's SQLite store: an error.
    static func collation(of sort: NSSortDescriptor, key: String) throws -> String {
        guard let selector = sort.selector else {
            throw SQLiteStoreError.unsupportedPredicate("the sort descriptor for \(key) has a comparator, which the SQLite store cannot run: sort the results in memory")
        }
        switch "\(selector)" {
        case "compare:": return ""
        case "caseInsensitiveCompare:": return " COLLATE \(SQLFunctions.caseInsensitive)"
        case "localizedCaseInsensitiveCompare:": return " COLLATE \(SQLFunctions.localizedCaseInsensitive)"
        case "localizedStandardCompare:": return " COLLATE \(SQLFunctions.localizedStandard)"
        case "localizedCompare:": return " COLLATE \(SQLFunctions.localized)"
        case let other: throw SQLiteStoreError.unsupportedPredicate("unsupported sort selector \(other) in sort descriptor \(key): the SQLite store sorts with compare:, caseInsensitiveCompare:, localizedCompare:, localizedCaseInsensitiveCompare: and localizedStandardCompare: only")
        }
    }

    // MARK: Predicates

    private func unsupported(_ what: Any) -> SQLiteStoreError {
        .unsupportedPredicate("unimplemented SQL generation for predicate : (\(what))")
    }

    func bind(_ value: SQLValue) -> String {
        arguments.append(value)
        return "?"
    }

    func translate(_ predicate: NSPredicate, _ scope: Scope) throws -> String {
        if let compound = predicate as? NSCompoundPredicate {
            let parts = try compound.subpredicates.map { try translate($0 as! NSPredicate, scope) }
            switch compound.compoundPredicateType {
            // SQL's NULL is "unknown" and NOT NULL stays unknown; a predicate is false or true, so `NOT (age IN {30})`
            // matches a nil age, as in memory.
            case .not: return "NOT COALESCE((" + (parts.first ?? "0") + "), 0)"
            case .and: return parts.isEmpty ? "1" : parts.map { "(\($0))" }.joined(separator: " AND ")
            case .or: return parts.isEmpty ? "0" : parts.map { "(\($0))" }.joined(separator: " OR ")
            }
        }
        if let comparison = predicate as? NSComparisonPredicate {
            return try translate(comparison, scope)
        }
        switch predicate.predicateFormat {
        case "TRUEPREDICATE": return "1"
        case "FALSEPREDICATE": return "0"
        default: throw unsupported(predicate.predicateFormat)
        }
    }

    /// What an expression stands for in SQL.
    enum Operand {
        /// A scalar SQL expression, with the attribute it reads (for encoding constants compared to it).
        case value(String, NSAttributeDescription?)
        /// A primary-key expression standing for an object of `entity`.
        case object(String, NSEntityDescription?)
        /// A to-many relationship reached from `scope`, followed by `rest` key-path components.
        case toMany(ToManyPath)
        /// A constant, not yet bound (its encoding depends on what it is compared with).
        case constant(Any?)
        /// A constant collection.
        case list([Any?])
    }

    struct ToManyPath {
        let relationship: NSRelationshipDescription
        let storage: SlotStorage
        let owner: String
        let scope: Scope
        let rest: [String]
    }

    private func translate(_ comparison: NSComparisonPredicate, _ scope: Scope) throws -> String {
        if comparison.predicateOperatorType == .customSelector {
            throw unsupported(comparison.predicateFormat)
        }
        let left = try operand(comparison.leftExpression, scope)
        let right = try operand(comparison.rightExpression, scope)
        let op = comparison.predicateOperatorType
        switch comparison.comparisonPredicateModifier {
        case .any, .all:
            guard case .toMany(let path) = left else {
                if case .list(let elements) = left {
                    // ANY over a constant collection: any element compares true.
                    let parts = try elements.map { try compare(.constant($0), op, right, comparison.options, comparison) }
                    let joined = parts.map { "(\($0))" }.joined(separator: comparison.comparisonPredicateModifier == .any ? " OR " : " AND ")
                    return parts.isEmpty ? (comparison.comparisonPredicateModifier == .any ? "0" : "1") : joined
                }
                throw unsupported(comparison.predicateFormat)
            }
            let (from, link, inner) = try subquery(path)
            let element = try elementOperand(path, inner)
            let test = try compare(element, op, right, comparison.options, comparison)
            var sql = "SELECT 1 FROM \(from)"
            for join in inner.joins { sql += " " + join }
            if comparison.comparisonPredicateModifier == .any {
                return "EXISTS (\(sql) WHERE \(link) AND (\(test)))"
            }
            return "NOT EXISTS (\(sql) WHERE \(link) AND NOT COALESCE((\(test)), 0))"
        case .direct:
            // `x IN toMany` and `toMany CONTAINS x` test membership.
            if op == .in, case .toMany(let path) = right {
                return try anyElement(path, equalTo: left, comparison)
            }
            if op == .contains, case .toMany(let path) = left {
                return try anyElement(path, equalTo: right, comparison)
            }
            if case .toMany = left { throw SQLiteStoreError.unsupportedPredicate("to-many key not allowed here: \(comparison.predicateFormat)") }
            if case .toMany = right { throw SQLiteStoreError.unsupportedPredicate("to-many key not allowed here: \(comparison.predicateFormat)") }
            return try compare(left, op, right, comparison.options, comparison)
        }
    }

    private func anyElement(_ path: ToManyPath, equalTo value: Operand, _ comparison: NSComparisonPredicate) throws -> String {
        let (from, link, inner) = try subquery(path)
        let element = try elementOperand(path, inner)
        let test = try compare(element, .equalTo, value, comparison.options, comparison)
        var sql = "SELECT 1 FROM \(from)"
        for join in inner.joins { sql += " " + join }
        return "EXISTS (\(sql) WHERE \(link) AND (\(test)))"
    }

    /// The element of a to-many path inside its subquery: the destination object, or the key path after it.
    private func elementOperand(_ path: ToManyPath, _ inner: Scope) throws -> Operand {
        if path.rest.isEmpty { return .object("\(inner.alias).Z_PK", inner.mapping.entity) }
        let operand = try keyPath(components: path.rest, from: inner)
        if case .toMany = operand {
            throw SQLiteStoreError.unsupportedPredicate("multiple to-many keys not allowed here (\(path.relationship.name).\(path.rest.joined(separator: ".")))")
        }
        return operand
    }

    /// The FROM clause, the condition linking it to the owner row, and the scope of a to-many's destinations.
    private func subquery(_ path: ToManyPath) throws -> (from: String, link: String, scope: Scope) {
        guard let destination = path.relationship.destinationEntity.flatMap(schema.mapping(for:)) else {
            throw unsupported(path.relationship.name)
        }
        let alias = newAlias()
        let inner = Scope(alias: alias, mapping: destination, parent: path.scope)
        let entities = destination.numbersWithSubentities
        let entityTest = entities.count == schema.mappings.values.filter({ $0.table === destination.table }).count ? "" : " AND \(alias).Z_ENT IN (\(entities.map(String.init).joined(separator: ", ")))"
        switch path.storage {
        case .toManyByInverse(_, let inverseColumn, _):
            return ("\(destination.table.name) \(alias)", "\(alias).\(inverseColumn) = \(path.owner)" + entityTest, inner)
        case .toManyByJoin(_, let table, let forward):
            let join = newAlias()
            let mine = forward ? table.sourceColumn : table.destinationColumn
            let theirs = forward ? table.destinationColumn : table.sourceColumn
            return ("\(table.name) \(join) JOIN \(destination.table.name) \(alias) ON \(alias).Z_PK = \(join).\(theirs)",
                    "\(join).\(mine) = \(path.owner)" + entityTest, inner)
        default:
            throw unsupported(path.relationship.name)
        }
    }

    /// SQL for `left op right`.
    private func compare(_ left: Operand, _ op: NSComparisonPredicate.Operator, _ right: Operand,
                         _ options: NSComparisonPredicate.Options, _ comparison: NSComparisonPredicate) throws -> String {
        // Objects: compare primary keys.
        if case .object(let key, let entity) = left { return try compareObject(key, entity, op, right, comparison) }
        if case .object(let key, let entity) = right, op == .equalTo || op == .notEqualTo { return try compareObject(key, entity, op, left, comparison) }
        let attribute: NSAttributeDescription? = {
            if case .value(_, let a) = left { return a }
            if case .value(_, let a) = right { return a }
            return nil
        }()
        // A constant of another kind than the attribute (a string for a number, a number for a string or
        // a date) is never equal to its value, as in memory: SQLite's column affinity would convert it.
        let mismatched = { (value: Any?) in ValueCoding.isMismatched(value, attribute) }
        var right = right, left = left
        // A dictionary as the collection of IN or CONTAINS: its values are the members, as in memory.
        if op == .in, case .constant(let value) = right, let values = Self.dictionaryValues(value) { right = .list(values) }
        if op == .contains, case .constant(let value) = left, let values = Self.dictionaryValues(value) { left = .list(values) }
        if case .list(let elements) = right, op == .in { right = .list(elements.filter { !mismatched($0) }) }
        if case .list(let elements) = left, op == .contains { left = .list(elements.filter { !mismatched($0) }) }
        // BETWEEN orders by its bounds: one of another kind fails, as an ordering comparison does below.
        if op == .between, case .list(let bounds) = right, let bound = bounds.first(where: mismatched) {
            throw unsupported("\(comparison.predicateFormat): \(bound.map { "\(type(of: $0))" } ?? "nil") and \(attribute?.attributeType.rawValue ?? 0) do not compare")
        }
        for case .constant(let value) in [left, right] where mismatched(value) {
            switch op {
            case .equalTo: return "0"
            case .notEqualTo: return "1"
            default: throw unsupported("\(comparison.predicateFormat): \(value.map { "\(type(of: $0))" } ?? "nil") and \(attribute?.attributeType.rawValue ?? 0) do not compare")
            }
        }
        func sql(_ operand: Operand) throws -> String {
            switch operand {
            case .value(let expression, _): return expression
            case .constant(let value):
                guard let encoded = ValueCoding.comparable(value, attribute) else {
                    throw unsupported("\(comparison.predicateFormat): the constant \(value.map { "\($0)" } ?? "nil") has no SQL form")
                }
                return bind(encoded)
            case .object(let key, _): return key
            case .list, .toMany: throw unsupported(comparison.predicateFormat)
            }
        }
        func generic(_ type: NSComparisonPredicate.Operator, _ l: String, _ r: String) -> String {
            "\(SQLFunctions.compare)(\(type.rawValue), \(options.rawValue), \(l), \(r))"
        }
        // With [c], [d] or [l], strings compare as the predicate layer compares them (ocd_compare):
        // SQLite's operators only compare bytes.
        let folded = !options.intersection([.caseInsensitive, .diacriticInsensitive, .localeSensitive]).isEmpty
        switch op {
        case .equalTo, .notEqualTo:
            if case .constant(let value) = right, value == nil || value is NSNull {
                return try sql(left) + (op == .equalTo ? " IS NULL" : " IS NOT NULL")
            }
            if case .constant(let value) = left, value == nil || value is NSNull {
                return try sql(right) + (op == .equalTo ? " IS NULL" : " IS NOT NULL")
            }
            if folded {
                let test = generic(.equalTo, try sql(left), try sql(right))
                return op == .equalTo ? test + " = 1" : "NOT COALESCE(\(test), 0)"
            }
            return try sql(left) + (op == .equalTo ? " IS " : " IS NOT ") + (try sql(right))
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            // With [c] or [d], strings order after folding: SQLite's operators only compare bytes.
            if folded { return generic(op, try sql(left), try sql(right)) + " = 1" }
            let symbols: [NSComparisonPredicate.Operator: String] = [.lessThan: " < ", .lessThanOrEqualTo: " <= ", .greaterThan: " > ", .greaterThanOrEqualTo: " >= "]
            return try sql(left) + symbols[op]! + (try sql(right))
        case .between:
            guard case .list(let bounds) = right, bounds.count == 2 else { throw unsupported(comparison.predicateFormat) }
            // A side used twice is translated twice: a bound constant needs one argument per placeholder.
            if folded {
                let low = generic(.greaterThanOrEqualTo, try sql(left), try sql(.constant(bounds[0])))
                let high = generic(.lessThanOrEqualTo, try sql(left), try sql(.constant(bounds[1])))
                return "(\(low) = 1 AND \(high) = 1)"
            }
            let value = try sql(left)
            return "\(value) BETWEEN \(try sql(.constant(bounds[0]))) AND \(try sql(.constant(bounds[1])))"
        case .in:
            if case .list(let elements) = right {
                if elements.isEmpty { return "0" }
                if folded {
                    // A nil element matches nothing (ocd_compare would call two NULLs equal).
                    let present = elements.filter { $0 != nil && !isNSNull($0!) }
                    if present.isEmpty { return "0" }
                    return "(" + (try present.map { generic(.equalTo, try sql(left), try sql(.constant($0))) + " = 1" }).joined(separator: " OR ") + ")"
                }
                return try sql(left) + " IN (" + (try elements.map { try sql(.constant($0)) }).joined(separator: ", ") + ")"
            }
            // `x IN 'string'`: substring test, as NSPredicate evaluates it.
            return generic(.contains, try sql(right), try sql(left)) + " = 1"
        case .contains:
            if case .list(let elements) = left {
                if elements.isEmpty { return "0" }
                if folded {
                    let present = elements.filter { $0 != nil && !isNSNull($0!) }
                    if present.isEmpty { return "0" }
                    return "(" + (try present.map { generic(.equalTo, try sql(.constant($0)), try sql(right)) + " = 1" }).joined(separator: " OR ") + ")"
                }
                return try sql(right) + " IN (" + (try elements.map { try sql(.constant($0)) }).joined(separator: ", ") + ")"
            }
            return generic(.contains, try sql(left), try sql(right)) + " = 1"
        case .beginsWith, .endsWith, .like, .matches:
            return generic(op, try sql(left), try sql(right)) + " = 1"
        case .customSelector:
            throw unsupported(comparison.predicateFormat)
        }
    }

    private func compareObject(_ key: String, _ entity: NSEntityDescription?, _ op: NSComparisonPredicate.Operator, _ other: Operand,
                               _ comparison: NSComparisonPredicate) throws -> String {
        func primaryKey(_ value: Any?) -> SQLValue? {
            guard let value, !isNSNull(value) else { return .null }
            let id: NSManagedObjectID?
            if let objectID = value as? NSManagedObjectID { id = objectID }
            else if let reference = value as? StoreObjectReference { id = reference.referencedObjectID }
            else if let identity = value as? PredicateObjectIdentity { id = identity.predicateIdentity.base as? NSManagedObjectID }
            else { return nil }
            // An object of another store, not yet saved, or of an entity outside the column's (keys are
            // numbered per root entity, so its key may be another row's), matches no row here.
            guard let id, let pk = store.primaryKey(of: id) else { return .integer(-1) }
            if let entity, !id.entity.isKindOf(entity: entity) { return .integer(-1) }
            return .integer(pk)
        }
        switch (op, other) {
        case (.equalTo, .constant(let value)), (.notEqualTo, .constant(let value)):
            guard let pk = primaryKey(value) else { throw unsupported(comparison.predicateFormat) }
            if pk == .null { return key + (op == .equalTo ? " IS NULL" : " IS NOT NULL") }
            return key + (op == .equalTo ? " IS " : " IS NOT ") + bind(pk)
        case (.equalTo, .object(let otherKey, _)): return "\(key) IS \(otherKey)"
        case (.notEqualTo, .object(let otherKey, _)): return "\(key) IS NOT \(otherKey)"
        case (.in, .list(let elements)):
            let keys = try elements.map { element -> SQLValue in
                guard let pk = primaryKey(element) else { throw unsupported(comparison.predicateFormat) }
                return pk
            }.filter { $0 != .null }
            if keys.isEmpty { return "0" }
            return key + " IN (" + keys.map(bind).joined(separator: ", ") + ")"
        default:
            throw unsupported(comparison.predicateFormat)
        }
    }

    // MARK: Expressions

    func operand(_ expression: NSExpression, _ scope: Scope) throws -> Operand {
        switch expression.expressionType {
        case .constantValue:
            let value = expression.constantValue
            if let collection = Self.elements(of: value) { return .list(collection) }
            return .constant(value)
        case .evaluatedObject:
            return .object("\(scope.alias).Z_PK", scope.mapping.entity)
        case .keyPath:
            return try keyPath(expression.keyPath, from: scope)
        case .variable:
            guard let bound = scope.variable(expression.variable) else {
                throw unsupported("the variable $\(expression.variable) is not bound (use withSubstitutionVariables)")
            }
            return .object("\(bound.alias).Z_PK", bound.mapping.entity)
        case .aggregate:
            let elements = (expression.collection as? [NSExpression]) ?? []
            return .list(try elements.map { element -> Any? in
                guard case .constant(let value) = try operand(element, scope) else { throw unsupported(expression) }
                return value
            })
        case .function:
            return try function(expression, scope)
        case .subquery:
            throw unsupported("\(expression) (a SUBQUERY is usable through @count)")
        default:
            throw unsupported(expression)
        }
    }

    /// Whether `expression` is built from constants only (no key paths, variables or subqueries).
    static func isConstant(_ expression: NSExpression) -> Bool {
        switch expression.expressionType {
        case .constantValue: return true
        case .aggregate: return ((expression.collection as? [NSExpression]) ?? []).allSatisfy(isConstant)
        case .function:
            // `$e.name` is valueForKeyPath: on a variable: not constant, though its argument is.
            return !["now", "random", "randomn:", "valueForKeyPath:"].contains(expression.function)
                && (expression.arguments ?? []).allSatisfy(isConstant)
        default: return false
        }
    }

    static func dictionaryValues(_ value: Any?) -> [Any?]? {
        switch value {
        case let dictionary as [AnyHashable: Any]: return dictionary.values.map { $0 }
        case let dictionary as NSDictionary: return dictionary.allValues.map { $0 }
        default: return nil
        }
    }

    static func elements(of value: Any?) -> [Any?]? {
        switch value {
        case let array as [Any]: return array
        case let set as Set<AnyHashable>: return Array(set)
        case let set as NSSet: return set.allObjects
        case let array as NSArray: return array.map { $0 }
        case let ordered as NSOrderedSet: return ordered.array
        default: return nil
        }
    }

    private func function(_ expression: NSExpression, _ scope: Scope) throws -> Operand {
        let name = expression.function
        let arguments = expression.arguments ?? []
        // A function of constants (`2 ** 5`, `-3`) is a constant: evaluate it here, bind the result.
        if !arguments.isEmpty, Self.isConstant(expression) {
            guard let value = try? expression.expressionValueThrowing(with: nil, context: nil) else { throw unsupported(expression) }
            return .constant(value)
        }
        if name == "valueForKeyPath:" {
            guard let path = arguments.first?.constantValue as? String else { throw unsupported(expression) }
            let operand = expression.operand
            if operand.expressionType == .variable, let bound = scope.variable(operand.variable) {
                return try keyPath(components: path.split(separator: ".").map(String.init), from: bound.scope, variableAlias: bound)
            }
            if operand.expressionType == .subquery, path == "@count" {
                return .value(try subqueryCount(operand, scope), nil)
            }
            if operand.expressionType == .evaluatedObject { return try keyPath(path, from: scope) }
            throw unsupported(expression)
        }
        let aggregates = ["count:": "COUNT", "sum:": "SUM", "average:": "AVG", "min:": "MIN", "max:": "MAX"]
        if let sql = aggregates[name], arguments.count == 1 {
            let argument = try operand(arguments[0], scope)
            if case .toMany(let path) = argument { return .value(try aggregate(sql, path), nil) }
            if name == "count:", arguments[0].expressionType == .subquery { return .value(try subqueryCount(arguments[0], scope), nil) }
            throw unsupported(expression)
        }
        let arithmetic = ["add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/", "modulus:by:": "%"]
        if let op = arithmetic[name], arguments.count == 2 {
            let lhs = try scalar(operand(arguments[0], scope), expression)
            let rhs = try scalar(operand(arguments[1], scope), expression)
            return .value("(\(lhs) \(op) \(rhs))", nil)
        }
        if name == "noindex:", arguments.count == 1 {
            // SQLite skips an index for a term prefixed with unary +.
            let inner = try operand(arguments[0], scope)
            if case .value(let sql, let attribute) = inner { return .value("+" + sql, attribute) }
            return inner
        }
        if name == "castObject:toType:", arguments.count == 2, (arguments[1].constantValue as? String) == "NSDate" {
            // Dates are stored as seconds since the reference date: a number cast to a date is that number.
            return try operand(arguments[0], scope)
        }
        if name == "now" { return .constant(Date()) }
        throw unsupported(expression)
    }

    private func scalar(_ operand: Operand, _ expression: NSExpression) throws -> String {
        switch operand {
        case .value(let sql, _): return sql
        case .constant(let value):
            guard let encoded = ValueCoding.comparable(value, nil) else { throw unsupported(expression) }
            return bind(encoded)
        default: throw unsupported(expression)
        }
    }

    private func aggregate(_ function: String, _ path: ToManyPath) throws -> String {
        let (from, link, inner) = try subquery(path)
        var target = "*"
        if function != "COUNT" || !path.rest.isEmpty {
            guard case .value(let column, _) = try elementOperand(path, inner) else {
                throw unsupported("@\(function.lowercased()) over \(path.relationship.name)")
            }
            target = column
        }
        var sql = "SELECT \(function)(\(target)) FROM \(from)"
        for join in inner.joins { sql += " " + join }
        let value = "(\(sql) WHERE \(link))"
        // An empty relationship's sum, count and average are 0, as in memory.
        return function == "SUM" || function == "COUNT" || function == "AVG" ? "COALESCE(\(value), 0)" : value
    }

    private func subqueryCount(_ expression: NSExpression, _ scope: Scope) throws -> String {
        guard let collection = expression.collection as? NSExpression else { throw unsupported(expression) }
        guard case .toMany(let path) = try operand(collection, scope), path.rest.isEmpty else {
            throw unsupported("\(expression): a SUBQUERY's collection must be a to-many relationship")
        }
        let (from, link, inner) = try subquery(path)
        // Inside a SUBQUERY only the variable means the element; bare keys and SELF still mean the outer
        // object, so the condition is translated in the outer scope with the variable bound there.
        let previous = scope.variables[expression.variable]
        scope.variables[expression.variable] = (inner.alias, inner.mapping, inner)
        defer { scope.variables[expression.variable] = previous }
        let condition = try translate(expression.predicate, scope)
        var sql = "SELECT COUNT(*) FROM \(from)"
        for join in inner.joins { sql += " " + join }
        return "(\(sql) WHERE \(link) AND (\(condition)))"
    }

    // MARK: Key paths

    private func notFound(_ components: [String], _ mapping: EntityMapping) -> SQLiteStoreError {
        .unsupportedPredicate("keypath \(components.joined(separator: ".")) not found in entity \(mapping.entity.name ?? "?")")
    }

    /// Whether `components` pass through a to-many relationship of `entity` (a second to-many step).
    static func reachesToMany(_ components: [String], from entity: NSEntityDescription) -> Bool {
        var entity = entity
        for key in components where !key.hasPrefix("@") {
            guard let relationship = entity.relationshipsByName[key] else { return false }
            if relationship.isToMany { return true }
            guard let next = relationship.destinationEntity else { return false }
            entity = next
        }
        return false
    }

    func keyPath(_ path: String, from scope: Scope) throws -> Operand {
        try keyPath(components: path.split(separator: ".", omittingEmptySubsequences: false).map(String.init), from: scope)
    }

    /// Resolves key-path components from `scope` (or from a SUBQUERY variable's row): attributes become
    /// columns, to-ones become joins, a to-many ends the walk (its rest is resolved inside a subquery).
    private func keyPath(components: [String], from scope: Scope,
                         variableAlias: (alias: String, mapping: EntityMapping, scope: Scope)? = nil) throws -> Operand {
        if variableAlias == nil, let result = scope.resultAliases[components.joined(separator: ".")] {
            return .value(result.sql, result.attribute)
        }
        var alias = variableAlias?.alias ?? scope.alias
        var mapping = variableAlias?.mapping ?? scope.mapping
        var index = 0
        while index < components.count {
            let key = components[index]
            let isLast = index == components.count - 1
            if key == "self" || key == "SELF" || key == "objectID" {
                if isLast { return .object("\(alias).Z_PK", mapping.entity) }
                index += 1
                continue
            }
            if key.hasPrefix("@") {
                throw unsupported("\(components.joined(separator: ".")): \(key) must follow a to-many relationship")
            }
            guard let slot = mapping.layout.slot(named: key) else { throw notFound(components, mapping) }
            let property = mapping.layout.properties[slot]
            if property.isTransient {
                // Apple's wording: a transient property has no column, so the SQL entity does not know it.
                throw SQLiteStoreError.unsupportedPredicate("keypath \(components.joined(separator: ".")) not found in entity \(mapping.entity.name ?? "?") (\(key) is transient: the SQLite store stores no value to fetch or sort by)")
            }
            switch mapping.storage[slot] {
            case .attribute(let column, let attribute):
                // Nothing can follow an attribute in SQL (no `name.length`): Apple finds no such key path.
                guard isLast else { throw notFound(components, mapping) }
                return .value("\(alias).\(column)", attribute)
            case .composite(let elements):
                // `location.latitude`: an element's column. The composite alone has no column to compare.
                let path = Array(components[(index + 1)...])
                guard let element = elements.first(where: { $0.path == path }) else {
                    throw SQLiteStoreError.unsupportedPredicate("keypath \(components.joined(separator: ".")) not found in entity \(mapping.entity.name ?? "?") (\(key) is a composite attribute: name one of its elements, \(elements.map { ([key] + $0.path).joined(separator: ".") }.joined(separator: ", ")))")
                }
                return .value("\(alias).\(element.column)", element.attribute)
            case .toOne(let column, _, let relationship):
                if isLast { return .object("\(alias).\(column)", relationship.destinationEntity) }
                guard let destination = relationship.destinationEntity.flatMap(schema.mapping(for:)) else { throw unsupported(key) }
                let next = components[index + 1]
                if next == "self" || next == "objectID" || next == "SELF" {
                    if index + 1 == components.count - 1 { return .object("\(alias).\(column)", relationship.destinationEntity) }
                }
                let joinKey = "\(alias).\(column)"
                let owner = variableAlias?.scope ?? scope
                if let joined = owner.joinedAliases[joinKey] {
                    alias = joined.0
                } else {
                    let joinedAlias = newAlias()
                    owner.joins.append("LEFT JOIN \(destination.table.name) \(joinedAlias) ON \(joinedAlias).Z_PK = \(alias).\(column)")
                    owner.joinedAliases[joinKey] = (joinedAlias, destination)
                    alias = joinedAlias
                }
                mapping = destination
            case .toManyByInverse(let relationship, _, _), .toManyByJoin(let relationship, _, _):
                let rest = Array(components[(index + 1)...])
                if let destination = relationship.destinationEntity, Self.reachesToMany(rest, from: destination) {
                    throw SQLiteStoreError.unsupportedPredicate("multiple to-many keys not allowed here (\(components.joined(separator: ".")))")
                }
                let path = ToManyPath(relationship: relationship, storage: mapping.storage[slot], owner: "\(alias).Z_PK",
                                      scope: variableAlias?.scope ?? scope, rest: rest)
                if let first = rest.first, first.hasPrefix("@") {
                    let functions = ["@count": "COUNT", "@sum": "SUM", "@avg": "AVG", "@min": "MIN", "@max": "MAX"]
                    guard let function = functions[first] else { throw unsupported(components.joined(separator: ".")) }
                    let tail = ToManyPath(relationship: relationship, storage: path.storage, owner: path.owner, scope: path.scope,
                                          rest: Array(rest.dropFirst()))
                    return .value(try aggregate(function, tail), nil)
                }
                return .toMany(path)
            case .none:
                throw unsupported(components.joined(separator: "."))
            }
            index += 1
        }
        return .object("\(alias).Z_PK", mapping.entity)
    }
}
