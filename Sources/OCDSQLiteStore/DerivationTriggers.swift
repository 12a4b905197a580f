import Foundation
import OCDModel
import OCDStore

/// The triggers that keep derived attributes (`NSDerivedAttributeDescription`) in Core Data's SQLite
/// schema, in the form Apple's Core Data installs them (spec §3; the format strings of its
/// `NSSQLDerivedAttributeSQLGenerator`, and the fixture store SampleModel2's `pages.@count` triggers).
/// Each is named `Z_DA_<table it is on>_<Entity>_<attribute>_<role>`, computes the value in SQL with
/// Core Data's functions (`NSCoreDataCanonical`, `NSCoreDataNow` …) and reports it through
/// `NSCoreDataDATrigger(Insert)UpdatedAffectedObjectValue(table, Z_ENT, Z_PK, attribute, value)`, which
/// the store registers to learn the rows a save changed this way.
struct DerivationTriggers {
    /// `CREATE TRIGGER` statements, by trigger name.
    var triggers: [(name: String, sql: String)] = []
    /// Statements that set the columns of rows already stored (run when the triggers are added to a store).
    var backfill: [String] = []

    /// The triggers of `derived`, an attribute that `mapping`'s entity declares; none when the schema has
    /// no column for a part of it.
    init(_ derived: DerivationPlan.Derived, _ mapping: EntityMapping, _ schema: StoreSchema) {
        guard let slot = mapping.layout.slot(named: derived.name), case .attribute(let column, _) = mapping.storage[slot] else { return }
        let table = mapping.table.name
        let entity = derived.declaringEntity
        let attribute = derived.name
        let ownRows = "Z_ENT IN (\(mapping.numbersWithSubentities.map(String.init).joined(separator: ", ")))"
        // Triggers on the attribute's own table fire for every row of it: where other entities share the
        // table (single-table inheritance), they test the row's entity, else one entity's trigger would
        // write and report its value on another's rows. Apple's text where the table is the entity's alone.
        let sharesTable = schema.mappings.values.contains { $0.table === mapping.table && !mapping.numbersWithSubentities.contains($0.number) }
        func own(_ condition: String?) -> String? {
            guard sharesTable else { return condition }
            return condition.map { "\($0) AND NEW.\(ownRows)" } ?? "NEW.\(ownRows)"
        }
        // A file from before a column existed has no column to keep or read: no triggers.
        func exists(_ column: String, in table: RootTable) -> Bool { table.existingColumns.isEmpty || table.existingColumns.contains(column) }
        guard exists(column, in: mapping.table) else { return }
        func name(_ on: String, _ role: String) -> String { "Z_DA_\(on)_\(entity)_\(attribute)_\(role)" }
        func report(inserted: Bool, _ condition: String) -> String {
            "SELECT NSCoreDataDATrigger\(inserted ? "Insert" : "")UpdatedAffectedObjectValue('\(table)', Z_ENT, Z_PK, '\(attribute)', \(column)) FROM \(table) WHERE \(condition);"
        }
        func add(_ on: String, _ role: String, _ event: String, when: String?, _ body: String) {
            let trigger = name(on, role)
            let condition = when.map { " WHEN (\($0))" } ?? ""
            triggers.append((trigger, "CREATE TRIGGER IF NOT EXISTS \(trigger) \(event) ON \(on) FOR EACH ROW\(condition) BEGIN \(body) END"))
        }
        func storedColumn(of key: String, in mapping: EntityMapping) -> String? {
            mapping.layout.slot(named: key).flatMap { schema.column(of: mapping, slot: $0) }.flatMap { exists($0, in: mapping.table) ? $0 : nil }
        }
        func apply(_ function: Derivation.TextFunction?, _ value: String) -> String {
            switch function {
            case .canonical?: return "NSCoreDataCanonical(\(value))"
            case .lowercase?: return "NSCoreDataToLower(\(value))"
            case .uppercase?: return "NSCoreDataToUpper(\(value))"
            case nil: return value
            }
        }

        switch derived.derivation {
        case .attribute(let key, let function):
            guard let source = storedColumn(of: key, in: mapping) else { return }
            sameRow(source: source, value: { apply(function, $0 + source) })
        case .now:
            // No key to follow: any update of the row moves its version. Rows already stored keep theirs.
            sameRow(source: "Z_OPT", value: { _ in "NSCoreDataNow()" }, backfillOnly: "\(column) IS NULL")
        case .toOne(let relationship, let key, let function):
            guard let foreignKey = storedColumn(of: relationship, in: mapping),
                  let destination = mapping.entity.relationshipsByName[relationship]?.destinationEntity.flatMap(schema.mapping(for:)),
                  let source = storedColumn(of: key, in: destination) else { return }
            let other = destination.table.name
            let lookup = "(SELECT \(apply(function, source)) FROM \(other) WHERE Z_PK = NEW.\(foreignKey))"
            add(table, "SOURCE_INSERT", "AFTER INSERT", when: own("NEW.\(foreignKey) NOT NULL"),
                "UPDATE \(table) SET \(column) = \(lookup) WHERE Z_PK = NEW.Z_PK; \(report(inserted: true, "Z_PK = NEW.Z_PK"))")
            add(table, "SOURCE_UPDATE", "AFTER UPDATE OF \(foreignKey)", when: own(nil),
                "UPDATE \(table) SET \(column) = \(lookup) WHERE Z_PK = NEW.Z_PK; \(report(inserted: false, "Z_PK = NEW.Z_PK"))")
            // A destination inserted after the row that points at it, or whose value changes.
            let pushed = "UPDATE \(table) SET \(column) = \(apply(function, "NEW." + source)) WHERE \(foreignKey) = NEW.Z_PK; \(report(inserted: false, "\(foreignKey) = NEW.Z_PK"))"
            add(other, "PARAMETER_INSERT", "AFTER INSERT", when: nil, pushed)
            add(other, "PARAMETER_UPDATE", "AFTER UPDATE OF \(source)", when: nil, pushed)
            // Aliased: the destination may be the same table (a tree's `parent.name`).
            backfill.append("UPDATE \(table) SET \(column) = (SELECT \(apply(function, "d." + source)) FROM \(other) AS d WHERE d.Z_PK = \(table).\(foreignKey)) WHERE \(ownRows)")
        case .count(let relationship), .sum(let relationship, _):
            guard let slot = mapping.layout.slot(named: relationship) else { return }
            var summed: String?
            if case .sum(_, let key) = derived.derivation {
                guard let destination = mapping.entity.relationshipsByName[relationship]?.destinationEntity.flatMap(schema.mapping(for:)),
                      let source = storedColumn(of: key, in: destination) else { return }
                summed = source
            }
            switch mapping.storage[slot] {
            case .toManyByInverse(let description, let foreignKey, _):
                guard let child = description.destinationEntity.flatMap(schema.mapping(for:))?.table.name else { return }
                // What one member adds: 1, or its value. Apple's arithmetic, to the letter (the fixture
                // store SampleModel2_V1 has these four and SOURCE_INSERT for `pages.@count`).
                func amount(_ row: String) -> String { summed.map { "IFNULL(\(row).\($0), 0)" } ?? "1" }
                let watched = summed.map { "\(foreignKey), \($0)" } ?? foreignKey
                add(child, "PARAMETER_INSERT", "AFTER INSERT", when: "NEW.\(foreignKey) NOT NULL",
                    "UPDATE \(table) SET \(column) = IFNULL(\(column), 0) + \(amount("NEW")) WHERE Z_PK = NEW.\(foreignKey); \(report(inserted: false, "Z_PK = NEW.\(foreignKey)"))")
                add(child, "PARAMETER_UPDATE_INCREMENT", "AFTER UPDATE OF \(watched)", when: "NEW.\(foreignKey) NOT NULL",
                    "UPDATE \(table) SET \(column) = \(column) + \(amount("NEW")) WHERE Z_PK = NEW.\(foreignKey); \(report(inserted: false, "Z_PK = NEW.\(foreignKey)"))")
                add(child, "PARAMETER_UPDATE_DECREMENT", "AFTER UPDATE OF \(watched)", when: "OLD.\(foreignKey) NOT NULL",
                    "UPDATE \(table) SET \(column) = \(column) - \(amount("OLD")) WHERE Z_PK = OLD.\(foreignKey); \(report(inserted: false, "Z_PK = OLD.\(foreignKey)"))")
                add(child, "PARAMETER_DELETE", "AFTER DELETE", when: "OLD.\(foreignKey) NOT NULL",
                    "UPDATE \(table) SET \(column) = \(column) - \(amount("OLD")) WHERE Z_PK = OLD.\(foreignKey); \(report(inserted: false, "Z_PK = OLD.\(foreignKey)"))")
                let total = summed.map { "IFNULL(SUM(\($0)), 0)" } ?? "IFNULL(COUNT(\(foreignKey)), 0)"
                add(table, "SOURCE_INSERT", "AFTER INSERT", when: own(nil),
                    "UPDATE \(table) SET \(column) = (SELECT \(total) FROM \(child) WHERE \(foreignKey) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(report(inserted: true, "Z_PK = NEW.Z_PK"))")
                let aliasedTotal = summed.map { "IFNULL(SUM(c.\($0)), 0)" } ?? "IFNULL(COUNT(c.\(foreignKey)), 0)"
                backfill.append("UPDATE \(table) SET \(column) = (SELECT \(aliasedTotal) FROM \(child) AS c WHERE c.\(foreignKey) = \(table).Z_PK) WHERE \(ownRows)")
            case .toManyByJoin(_, let join, let forward) where summed == nil:
                // A many-to-many (count only, as Core Data allows): a join row more or less.
                let owner = forward ? join.sourceColumn : join.destinationColumn
                add(join.name, "PARAMETER_INSERT", "AFTER INSERT", when: "NEW.\(owner) NOT NULL",
                    "UPDATE \(table) SET \(column) = IFNULL(\(column), 0) + 1 WHERE Z_PK = NEW.\(owner); \(report(inserted: false, "Z_PK = NEW.\(owner)"))")
                add(join.name, "PARAMETER_DELETE", "AFTER DELETE", when: "OLD.\(owner) NOT NULL",
                    "UPDATE \(table) SET \(column) = IFNULL(\(column), 0) - 1 WHERE Z_PK = OLD.\(owner); \(report(inserted: false, "Z_PK = OLD.\(owner)"))")
                add(table, "SOURCE_INSERT", "AFTER INSERT", when: own(nil),
                    "UPDATE \(table) SET \(column) = (SELECT COUNT(*) FROM \(join.name) WHERE \(owner) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(report(inserted: true, "Z_PK = NEW.Z_PK"))")
                backfill.append("UPDATE \(table) SET \(column) = (SELECT COUNT(*) FROM \(join.name) AS j WHERE j.\(owner) = \(table).Z_PK) WHERE \(ownRows)")
            default:
                return
            }
        }

        /// A value of the row itself: computed when the row is inserted and when `source` changes.
        func sameRow(source: String, value: (String) -> String, backfillOnly: String? = nil) {
            add(table, "INSERT", "AFTER INSERT", when: own("NEW.\(source) NOT NULL"),
                "UPDATE \(table) SET \(column) = \(value("NEW.")) WHERE Z_PK = NEW.Z_PK; \(report(inserted: true, "Z_PK = NEW.Z_PK"))")
            add(table, "UPDATE", "AFTER UPDATE OF \(source)", when: own(nil),
                "UPDATE \(table) SET \(column) = \(value("NEW.")) WHERE Z_PK = NEW.Z_PK; \(report(inserted: false, "Z_PK = NEW.Z_PK"))")
            backfill.append("UPDATE \(table) SET \(column) = \(value("")) WHERE \(ownRows)" + (backfillOnly.map { " AND \($0)" } ?? ""))
        }
    }

    /// The triggers of every derived attribute of `schema`'s entities, each with the statements that set
    /// the values of rows already stored.
    static func all(_ schema: StoreSchema, _ plan: DerivationPlan) -> [(attribute: String, triggers: DerivationTriggers)] {
        var result: [(String, DerivationTriggers)] = []
        for mapping in schema.mappings.values.sorted(by: { $0.number < $1.number }) {
            let name = mapping.entity.name ?? ""
            for derived in plan.byEntity[name] ?? [] where derived.declaringEntity == name {
                let triggers = DerivationTriggers(derived, mapping, schema)
                if !triggers.triggers.isEmpty { result.append(("\(name).\(derived.name)", triggers)) }
            }
        }
        return result
    }
}

/// The rows whose derived values triggers reported while a save writes (through
/// `NSCoreDataDATrigger(Insert)UpdatedAffectedObjectValue`): the save reads their values back. Collected
/// only during a save: other writes (adding triggers, migrations) report to no one.
final class DerivedValueReports: @unchecked Sendable {
    struct Row: Hashable {
        let entity: Int64
        let primaryKey: Int64
    }

    private let lock = NSLock()
    private var collecting = false
    private var rows = Set<Row>()

    func start() {
        lock.withLock {
            collecting = true
            rows = []
        }
    }

    func add(entity: Int64, primaryKey: Int64) {
        lock.withLock {
            if collecting { rows.insert(Row(entity: entity, primaryKey: primaryKey)) }
        }
    }

    /// The rows reported since ``start()``, each once; collecting stops.
    func finish() -> Set<Row> {
        lock.withLock {
            collecting = false
            defer { rows = [] }
            return rows
        }
    }
}
