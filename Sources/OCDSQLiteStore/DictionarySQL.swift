import Foundation
import OCDModel
import OCDPredicate
import OCDStore
import class OCDPredicate.NSExpression
import class OCDPredicate.NSSortDescriptor

/// Dictionary results in SQL: selected properties and expressions, aggregates (`sum:`, `count:`, `min:`,
/// `max:`, `average:`), GROUP BY, DISTINCT, sorts, limit and offset.
struct DictionarySQL {
    /// Result types no conversion of a column gives: an attribute's column is read as the attribute.
    static func readsAsStored(_ type: NSAttributeType) -> Bool {
        type == .undefinedAttributeType || type == .binaryDataAttributeType || type == .transformableAttributeType
            || type == .UUIDAttributeType || type == .URIAttributeType
    }

    /// How to read one result column.
    enum Reader {
        case attribute(NSAttributeDescription)
        case object(NSEntityDescription?, entityColumn: Int32?)
        case typed(NSAttributeType)
        /// A composite attribute: its elements' columns, selected after the result columns (at
        /// `position`), made into one dictionary (nil when all are NULL, as a fetched object's is).
        case composite([(path: [String], sql: String, position: Int32, attribute: NSAttributeDescription)])
    }

    struct Column {
        let name: String
        let sql: String
        let reader: Reader
        let isAggregate: Bool
    }

    static let aggregates = ["sum:": "SUM", "count:": "COUNT", "min:": "MIN", "max:": "MAX", "average:": "AVG"]

    /// The query and how to read each row into a dictionary.
    static func query(_ request: StoreDictionaryRequest, mapping: EntityMapping, schema: StoreSchema,
                      store: SQLiteStore) throws -> (SQLQuery, [Column], entityColumns: [Int32: NSEntityDescription]) {
        let translator = PredicateSQL(schema: schema, store: store)
        let scope = PredicateSQL.Scope(alias: "t0", mapping: mapping, parent: nil)
        let properties = request.propertiesToFetch ?? mapping.layout.attributes.filter { !$0.attribute.isTransient }.map { $0.attribute as Any }
        var selected: [String] = []
        var columns: [Column] = []
        func add(_ property: Any) throws -> Column {
            let name: String
            let expression: NSExpression
            var resultType: NSAttributeType?
            switch property {
            case let text as String:
                name = text
                expression = NSExpression(forKeyPath: text)
            case let description as NSExpressionDescription:
                guard let value = description.expression else {
                    throw SQLiteStoreError.unsupportedPredicate("The expression description \(description.name) has no expression.")
                }
                name = description.name
                expression = value
                resultType = description.expressionResultType
            case let description as NSPropertyDescription:
                name = description.name
                expression = NSExpression(forKeyPath: description.name)
            default:
                throw SQLiteStoreError.unsupportedPredicate("propertiesToFetch holds \(property), which is not a property name or description.")
            }
            // A composite attribute of the entity: no column of its own, its elements' columns instead.
            if expression.expressionType == .keyPath, let slot = mapping.layout.slot(named: expression.keyPath),
               case .composite(let elements) = mapping.storage[slot] {
                return Column(name: name, sql: "NULL", reader: .composite(elements.map { ($0.path, "t0.\($0.column)", -1, $0.attribute) }), isAggregate: false)
            }
            if expression.expressionType == .function, let function = aggregates[expression.function],
               let argument = expression.arguments?.first {
                var inner = "*"
                var innerReader: Reader?
                if argument.expressionType != .evaluatedObject {
                    switch try translator.operand(argument, scope) {
                    case .value(let sql, let attribute):
                        inner = sql
                        innerReader = attribute.map(Reader.attribute)
                    case .object(let sql, _): inner = sql
                    default: throw SQLiteStoreError.unsupportedPredicate("unimplemented SQL generation for expression \(expression)")
                    }
                }
                let reader: Reader
                if let resultType, resultType != .undefinedAttributeType {
                    reader = .typed(resultType)
                } else if function == "COUNT" {
                    reader = .typed(.integer64AttributeType)
                } else if function == "AVG" {
                    reader = .typed(.doubleAttributeType)
                } else if function == "SUM", case .attribute(let attribute)? = innerReader, attribute.attributeType == .booleanAttributeType {
                    // A sum of booleans counts the true ones: a number, not a boolean.
                    reader = .typed(.integer64AttributeType)
                } else {
                    reader = innerReader ?? .typed(.undefinedAttributeType)
                }
                return Column(name: name, sql: "\(function)(\(inner))", reader: reader, isAggregate: true)
            }
            switch try translator.operand(expression, scope) {
            case .value(let sql, let attribute):
                // A result type that converts (a number to a double, say) reads by type. One of the
                // attribute's own kind reads as the attribute: its transformer, external storage and
                // other settings are how the column's bytes become its value.
                let keepsAttribute = attribute.map { attribute in resultType.map { $0 == attribute.attributeType || Self.readsAsStored($0) } ?? true } ?? false
                let reader: Reader = keepsAttribute ? .attribute(attribute!)
                    : resultType.flatMap { $0 == .undefinedAttributeType ? nil : Reader.typed($0) } ?? attribute.map(Reader.attribute) ?? .typed(.undefinedAttributeType)
                return Column(name: name, sql: sql, reader: reader, isAggregate: false)
            case .object(let sql, let entity):
                return Column(name: name, sql: sql, reader: .object(entity, entityColumn: nil), isAggregate: false)
            case .constant(let value):
                guard let encoded = ValueCoding.comparable(value, nil) else {
                    throw SQLiteStoreError.unsupportedPredicate("unimplemented SQL generation for expression \(expression)")
                }
                return Column(name: name, sql: translator.bind(encoded), reader: .typed(resultType ?? .undefinedAttributeType), isAggregate: false)
            default:
                throw SQLiteStoreError.unsupportedPredicate("to-many key not allowed here: \(name) in propertiesToFetch")
            }
        }
        for property in properties { columns.append(try add(property)) }
        var entityColumns: [Int32: NSEntityDescription] = [:]
        for (index, column) in columns.enumerated() {
            selected.append("\(column.sql) AS c\(index)")
        }
        // Composites' element columns after the result columns, their positions kept in their readers.
        for (index, column) in columns.enumerated() {
            guard case .composite(let elements) = column.reader else { continue }
            var placed = elements
            for element in placed.indices {
                placed[element].position = Int32(selected.count)
                selected.append("\(placed[element].sql) AS k\(index)_\(element)")
            }
            columns[index] = Column(name: column.name, sql: column.sql, reader: .composite(placed), isAggregate: false)
        }
        // The entity of an object column whose destination has subentities: its row's Z_ENT.
        for (index, column) in columns.enumerated() {
            if case .object(let entity, _) = column.reader, let entity, !entity.subentities.isEmpty, let destination = schema.mapping(for: entity) {
                entityColumns[Int32(selected.count)] = entity
                selected.append("(SELECT e.Z_ENT FROM \(destination.table.name) e WHERE e.Z_PK = \(column.sql)) AS e\(index)")
            }
        }
        // Translated in the order their placeholders appear: SELECT, WHERE, GROUP BY, ORDER BY.
        let condition = try translator.whereClause(request.plan, scope)
        let groups = try request.propertiesToGroupBy.map { property -> String in
            let column = try add(property)
            // A composite groups by all its elements.
            if case .composite(let elements) = column.reader { return elements.map(\.sql).joined(separator: ", ") }
            return column.sql
        }
        var having: String?
        if let predicate = request.havingPredicate {
            for (index, column) in columns.enumerated() {
                var attribute: NSAttributeDescription?
                if case .attribute(let described) = column.reader { attribute = described }
                scope.resultAliases[column.name] = ("c\(index)", attribute)
            }
            having = try translator.translate(predicate, scope)
            scope.resultAliases = [:]
        }
        var order: [String] = []
        for sort in request.plan.sortDescriptors {
            guard let key = sort.key else { continue }
            let term: String
            if let index = columns.firstIndex(where: { $0.name == key }) {
                // A composite's column is a placeholder (its elements are read apart): ordering by it
                // would order by nothing. Refused, as an object fetch and the in-memory store refuse it.
                if case .composite(let elements) = columns[index].reader {
                    throw SQLiteStoreError.unsupportedPredicate("a sort by \(key), a composite attribute: name one of its elements, \(elements.map { ([key] + $0.path).joined(separator: ".") }.joined(separator: ", "))")
                }
                term = "c\(index)"
            } else {
                guard case .value(let sqlTerm, _) = try translator.keyPath(key, from: scope) else {
                    throw SQLiteStoreError.unsupportedPredicate("unimplemented SQL generation for the sort key \(key)")
                }
                term = sqlTerm
            }
            order.append(term + (try PredicateSQL.collation(of: sort, key: key)) + (sort.ascending ? " ASC" : " DESC"))
        }
        var sql = "SELECT " + (request.returnsDistinctResults ? "DISTINCT " : "") + selected.joined(separator: ", ") + " FROM \(mapping.table.name) t0"
        for join in scope.joins { sql += " " + join }
        sql += " WHERE " + condition
        if !groups.isEmpty { sql += " GROUP BY " + groups.joined(separator: ", ") }
        if let having { sql += " HAVING " + having }
        let grouped = !groups.isEmpty || columns.contains(where: \.isAggregate)
        if !grouped && !request.returnsDistinctResults { order.append("t0.Z_PK") }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        let plan = request.plan
        if plan.fetchLimit > 0 || plan.fetchOffset > 0 {
            sql += " LIMIT \(plan.fetchLimit > 0 ? plan.fetchLimit : -1)"
            if plan.fetchOffset > 0 { sql += " OFFSET \(plan.fetchOffset)" }
        }
        return (SQLQuery(sql: sql, arguments: translator.arguments), columns, entityColumns)
    }

    static func read(_ statement: Statement, _ columns: [Column], _ entityColumns: [Int32: NSEntityDescription],
                     schema: StoreSchema, store: SQLiteStore) -> [Any?] {
        var result = [Any?](repeating: nil, count: columns.count)
        var entityByColumn: [Int: NSEntityDescription] = [:]
        for (position, _) in entityColumns {
            let number = statement.column(position)
            if !number.isNull, let exact = schema.byNumber[Int(number.int64)]?.entity {
                // e<index>: the index of the object column it belongs to.
                let name = String(cString: sqlite3_column_name_shim(statement, position))
                if let index = Int(name.dropFirst()) { entityByColumn[index] = exact }
            }
        }
        for (index, column) in columns.enumerated() {
            if case .composite(let elements) = column.reader {
                var dictionary: [String: Any]?
                for element in elements {
                    let value = statement.column(element.position)
                    if value.isNull { continue }
                    dictionary = CompositeValue.setting(ValueCoding.decode(value, element.attribute, store: store), at: element.path[...], in: dictionary ?? [:])
                }
                result[index] = dictionary
                continue
            }
            let position = Int32(index)
            // One read of the column for its null test and its value (each `sqlite3_column_*` call
            // enters SQLite's API guard).
            let value = statement.column(position)
            if value.isNull { continue }
            switch column.reader {
            case .composite:
                break
            case .attribute(let attribute):
                result[index] = ValueCoding.decode(value, attribute, store: store)
            case .object(let entity, _):
                if let entity = entityByColumn[index] ?? entity {
                    result[index] = store.objectID(for: entity, primaryKey: value.int64)
                }
            case .typed(let type):
                switch type {
                case .undefinedAttributeType:
                    switch value.value {
                    case .integer(let v): result[index] = NSNumber(value: v)
                    case .real(let v): result[index] = NSNumber(value: v)
                    case .text(let v): result[index] = v
                    case .blob(let v): result[index] = v
                    case .null: break
                    }
                case .objectIDAttributeType:
                    break
                default:
                    let attribute = NSAttributeDescription()
                    attribute.attributeType = type
                    result[index] = ValueCoding.decode(value, attribute)
                }
            }
        }
        return result
    }
}
