import Foundation
import OCDModel
import OCDStore

/// A many-to-many join table (`Z_<n><NAME>`): two primary-key columns, and two order columns when either
/// side is ordered.
final class JoinTable {
    let name: String
    /// The relationship the table is named after, and its inverse (nil for a to-many without inverse).
    let relationship: NSRelationshipDescription
    let inverse: NSRelationshipDescription?
    /// Holds the primary keys of `relationship`'s source objects.
    var sourceColumn: String
    /// Holds the primary keys of `relationship`'s destination objects.
    var destinationColumn: String
    /// Position of the destination within the source's (ordered) relationship: `Z_FOK_<destinationColumn>`,
    /// named after the column of the object whose position it is (in Apple's files, the values of
    /// `Z_FOK_<destinationColumn>` are distinct per source, those of the other column per destination).
    var sourceOrderColumn: String?
    /// Position of the source within the destination's (ordered) inverse: `Z_FOK_<sourceColumn>`.
    var destinationOrderColumn: String?

    init(name: String, relationship: NSRelationshipDescription, inverse: NSRelationshipDescription?,
         sourceColumn: String, destinationColumn: String, ordered: Bool, legacyOrderColumns: Bool = false) {
        self.name = name
        self.relationship = relationship
        self.inverse = inverse
        self.sourceColumn = sourceColumn
        self.destinationColumn = destinationColumn
        if ordered {
            sourceOrderColumn = "Z_FOK_" + destinationColumn.dropFirst(2)
            destinationOrderColumn = "Z_FOK_" + sourceColumn.dropFirst(2)
            // Files this project wrote before its store format 2 kept each side's order in the other
            // column (SQLiteStore.legacyLayout): they are read and written as they were made.
            if legacyOrderColumns { swap(&sourceOrderColumn, &destinationOrderColumn) }
        }
    }

    /// Names the key columns (and the order columns that follow from them) of a table the store creates.
    func name(source: String, destination: String) {
        sourceColumn = source
        destinationColumn = destination
        if sourceOrderColumn != nil {
            sourceOrderColumn = "Z_FOK_" + destination.dropFirst(2)
            destinationOrderColumn = "Z_FOK_" + source.dropFirst(2)
        }
    }
}

/// How one slot of an entity's layout is stored.
enum SlotStorage {
    /// An attribute's column in the root table.
    case attribute(column: String, attribute: NSAttributeDescription)
    /// A composite attribute: a column per stored element (nested composites flattened), as Core Data
    /// lays them out; no column for the composite itself.
    case composite(elements: [CompositeColumn])
    /// A to-one relationship: the destination's primary key in `column`, and its `Z_ENT` in
    /// `entityColumn` when the destination has subentities.
    case toOne(column: String, entityColumn: String?, relationship: NSRelationshipDescription)
    /// A to-many whose inverse is a to-one: the destinations' rows hold the foreign key (and the order
    /// key of an ordered relationship).
    case toManyByInverse(relationship: NSRelationshipDescription, inverseColumn: String, orderColumn: String?)
    /// A many-to-many (or a to-many without inverse): rows of a join table. `forward` is true when the
    /// slot's relationship is the one the table is named after.
    case toManyByJoin(relationship: NSRelationshipDescription, table: JoinTable, forward: Bool)
    /// Transient: not stored.
    case none
}

/// A stored element of a composite attribute: its path below the composite (`["lat"]`, or
/// `["where", "lat"]` through a nested composite) and its column (`ZLAT`: the element's name, as Core
/// Data names it, with a digit when another property of the table took the name first).
struct CompositeColumn {
    let path: [String]
    let column: String
    let attribute: NSAttributeDescription
}

/// The table of a root entity and everything in it.
final class RootTable {
    let entity: NSEntityDescription
    let name: String
    /// Declared columns after Z_PK, Z_ENT, Z_OPT, in creation order, with their SQL types.
    var columns: [(name: String, type: String)] = []
    /// Columns present in an existing store's table (upper-cased), from `PRAGMA table_info`.
    var existingColumns: Set<String> = []

    init(entity: NSEntityDescription) {
        self.entity = entity
        self.name = "Z" + (entity.name ?? "").uppercased()
    }
}

/// Where one entity's objects live: its entity number, its root table and each slot's storage.
final class EntityMapping {
    let entity: NSEntityDescription
    let layout: EntityLayout
    let number: Int
    let table: RootTable
    /// Written while the schema is built, read only afterwards: unchecked, as the runtime's access
    /// check was most of looking for join tables per deleted row.
    @exclusivity(unchecked) var storage: [SlotStorage] {
        didSet {
            joinTables = storage.compactMap { if case .toManyByJoin(_, let table, let forward) = $0 { (table, forward) } else { nil } }
        }
    }
    /// The join tables of ``storage``'s many-to-many relationships, with the side this entity is: a
    /// deleted row's join rows are found without a look through every slot.
    @exclusivity(unchecked) private(set) var joinTables: [(table: JoinTable, forward: Bool)] = []
    /// This entity's number and those of all its subentities (`Z_ENT IN (…)`).
    var numbersWithSubentities: [Int] = []
    /// The entity numbers a fetch of this entity's rows may meet: its own, with its subentities' or not.
    func numbers(includingSubentities: Bool) -> [Int] { includingSubentities ? numbersWithSubentities : [number] }
    /// Columns read for a row, in order after Z_PK, Z_ENT, Z_OPT: the slot each fills.
    var selectedSlots: [Int] = []

    init(entity: NSEntityDescription, number: Int, table: RootTable) {
        self.entity = entity
        self.layout = EntityLayout.of(entity)
        self.number = number
        self.table = table
        self.storage = Array(repeating: .none, count: layout.properties.count)
    }

    var hasSubentities: Bool { !entity.subentities.isEmpty }

    /// A column an insert or update writes: an attribute's, or a to-one's key (and entity) columns.
    struct WrittenColumn {
        let slot: Int
        let column: String
        let attribute: NSAttributeDescription?
        let entityColumn: String?
        /// For an element of a composite attribute, its path in the slot's dictionary.
        let elementPath: [String]?
        /// How a number held in its word is written without making a value (read per row and column).
        let numberColumn: NumberColumn

        enum NumberColumn { case none, integer, double }

        init(slot: Int, column: String, attribute: NSAttributeDescription?, entityColumn: String?, elementPath: [String]? = nil) {
            self.slot = slot
            self.column = column
            self.attribute = attribute
            self.entityColumn = entityColumn
            self.elementPath = elementPath
            switch elementPath == nil ? attribute?.attributeType : nil {
            case .integer64AttributeType?, .integer32AttributeType?, .integer16AttributeType?: numberColumn = .integer
            case .doubleAttributeType?: numberColumn = .double
            default: numberColumn = .none
            }
        }
    }

    /// The columns inserts and updates write, in `selectedSlots` order, worked out once (the schema is
    /// complete when the store first writes): a derived attribute's column is kept by the store's triggers
    /// (DerivationTriggers.swift), as in Apple's stores, and a column missing from an older file is not
    /// written.
    lazy var writtenColumns: [WrittenColumn] = selectedSlots.flatMap { slot -> [WrittenColumn] in
        switch storage[slot] {
        case .attribute(let column, let attribute):
            if attribute is NSDerivedAttributeDescription { return [] }
            guard table.existingColumns.isEmpty || table.existingColumns.contains(column) else { return [] }
            return [WrittenColumn(slot: slot, column: column, attribute: attribute, entityColumn: nil)]
        case .composite(let elements):
            return elements.filter { table.existingColumns.isEmpty || table.existingColumns.contains($0.column) }.map {
                WrittenColumn(slot: slot, column: $0.column, attribute: $0.attribute, entityColumn: nil, elementPath: $0.path)
            }
        case .toOne(let column, let entityColumn, _):
            return [WrittenColumn(slot: slot, column: column, attribute: nil, entityColumn: entityColumn)]
        default:
            return []
        }
    }

    /// The entity's derived attributes' columns (those the file has): a save reads them back for the rows
    /// it wrote, since their values are the triggers' (or, without one, what the column already held).
    lazy var derivedColumns: [(slot: Int, column: String, attribute: NSAttributeDescription)] = selectedSlots.compactMap { slot in
        guard case .attribute(let column, let attribute) = storage[slot], attribute is NSDerivedAttributeDescription,
              table.existingColumns.isEmpty || table.existingColumns.contains(column) else { return nil }
        return (slot, column, attribute)
    }

    private var writtenColumnNames: [String] { writtenColumns.flatMap { [$0.column] + ($0.entityColumn.map { [$0] } ?? []) } }

    /// `INSERT` of a row: Z_PK, Z_ENT, then the written columns.
    lazy var insertSQL: String = {
        let names = writtenColumnNames
        return "INSERT INTO \(table.name) (Z_PK, Z_ENT, Z_OPT\(names.map { ", " + $0 }.joined())) VALUES (?, ?, 1\(String(repeating: ", ?", count: names.count)))"
    }()

    /// `DELETE` of a row with the version it must have: made once, not per deleted row.
    lazy var deleteSQL: String = "DELETE FROM \(table.name) WHERE Z_PK = ? AND Z_OPT = ?"

    /// The positions in ``writtenColumns`` of attributes that allow external storage: their columns may
    /// name a file in `_EXTERNAL_DATA`, which a delete or a new value leaves unreferenced.
    lazy var externalStorageColumns: [Int] = writtenColumns.indices.filter {
        writtenColumns[$0].elementPath == nil && writtenColumns[$0].attribute?.allowsExternalBinaryDataStorage == true
    }

    /// Some of ``writtenColumns``, by index: a bit per column (entities with more than 64 written
    /// columns always write all of them).
    struct ColumnSet: Hashable {
        let bits: UInt64
        static let all = ColumnSet(bits: .max)
        func contains(_ index: Int) -> Bool { index >= 64 || bits & (1 << UInt64(index)) != 0 }
    }

    /// The written columns of the properties at `slots`, or nil when the entity has too many columns to
    /// tell them apart (write all).
    func writtenColumnSet(forSlots slots: [Int]) -> ColumnSet? {
        guard writtenColumns.count < 64 else { return nil }
        if columnBitsBySlot.isEmpty {
            columnBitsBySlot = Array(repeating: 0, count: layout.properties.count)
            // A composite's slot has a column per element.
            for (index, written) in writtenColumns.enumerated() { columnBitsBySlot[written.slot] |= 1 << UInt64(index) }
        }
        var bits: UInt64 = 0
        for slot in slots where slot < columnBitsBySlot.count { bits |= columnBitsBySlot[slot] }
        return ColumnSet(bits: bits)
    }
    private var columnBitsBySlot: [UInt64] = []

    /// `UPDATE` of a row with the version it must have: the written columns in `set`, then Z_PK and Z_OPT.
    /// Made once per set of columns, as Core Data's are.
    func updateSQL(_ set: ColumnSet) -> String {
        if let sql = updateSQLByColumns[set] { return sql }
        var assignments = ""
        for (index, written) in writtenColumns.enumerated() where set.contains(index) {
            assignments += ", \(written.column) = ?"
            if let entityColumn = written.entityColumn { assignments += ", \(entityColumn) = ?" }
        }
        let sql = "UPDATE \(table.name) SET Z_OPT = Z_OPT + 1\(assignments) WHERE Z_PK = ? AND Z_OPT = ?"
        updateSQLByColumns[set] = sql
        return sql
    }
    private var updateSQLByColumns: [ColumnSet: String] = [:]
}

/// The mapping between a model and Core Data's SQLite schema (../shared/spec/sqlite-store-format.md):
/// one table per root entity with single-table inheritance, foreign keys for to-ones, join tables for
/// many-to-many, `Z_FOK_` order keys, entity numbers as in `Z_PRIMARYKEY`.
final class StoreSchema {
    let entities: [NSEntityDescription]
    private(set) var mappings: [String: EntityMapping] = [:]
    private(set) var byNumber: [Int: EntityMapping] = [:]
    private(set) var roots: [RootTable] = []
    private(set) var joinTables: [JoinTable] = []

    func mapping(for entity: NSEntityDescription) -> EntityMapping? { mappings[entity.name ?? ""] }

    /// Whether no entity has a derived attribute's column (then a save reads none back).
    lazy var derivedAttributesAreAbsent: Bool = mappings.values.allSatisfy { $0.derivedColumns.isEmpty }

    /// Core Data's entity numbering: depth-first pre-order over the inheritance forest, roots and
    /// children sorted by name, from 1.
    static func defaultEntityNumbers(_ entities: [NSEntityDescription]) -> [String: Int] {
        var numbers: [String: Int] = [:]
        var next = 1
        let names = Set(entities.compactMap(\.name))
        func visit(_ entity: NSEntityDescription) {
            numbers[entity.name ?? ""] = next
            next += 1
            for child in entity.subentities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) where names.contains(child.name ?? "") {
                visit(child)
            }
        }
        for root in entities.filter({ $0.superentity == nil || !names.contains($0.superentity?.name ?? "") })
            .sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            visit(root)
        }
        return numbers
    }

    /// Builds the mapping of `entities` with the given entity numbers. `introspection` (an existing
    /// store's tables and their columns, upper-cased) resolves names Core Data suffixed with digits;
    /// without it, names are chosen as Core Data chooses them for a new store.
    init(entities: [NSEntityDescription], numbers: [String: Int], introspection: [String: [String]]? = nil,
         legacyOrderColumns: Bool = false) throws {
        self.entities = entities
        let names = Set(entities.compactMap(\.name))
        func root(of entity: NSEntityDescription) -> NSEntityDescription {
            var current = entity
            while let parent = current.superentity, names.contains(parent.name ?? "") { current = parent }
            return current
        }
        // Table and column names are made from these names and cannot be bound: only plain identifiers
        // (what Xcode's model editor allows) may reach SQL text.
        for entity in entities {
            guard Self.isIdentifier(entity.name ?? "") else {
                throw StoreError.invalidStore("The entity name \"\(entity.name ?? "")\" cannot name an SQLite table: use letters, digits and underscores, starting with a letter.")
            }
            for property in entity.ownProperties where !property.isTransient && (property is NSAttributeDescription || property is NSRelationshipDescription) {
                guard Self.isIdentifier(property.name) else {
                    throw StoreError.invalidStore("The property name \"\(property.name)\" of \(entity.name ?? "") cannot name an SQLite column: use letters, digits and underscores, starting with a letter.")
                }
                // A composite's elements name columns too.
                var pending = (property as? NSCompositeAttributeDescription)?.elements ?? []
                while let element = pending.popLast() {
                    guard Self.isIdentifier(element.name) else {
                        throw StoreError.invalidStore("The composite element name \"\(element.name)\" of \(entity.name ?? "").\(property.name) cannot name an SQLite column: use letters, digits and underscores, starting with a letter.")
                    }
                    pending += (element as? NSCompositeAttributeDescription)?.elements ?? []
                }
            }
        }
        var tables: [String: RootTable] = [:]
        for entity in entities.sorted(by: { (numbers[$0.name ?? ""] ?? 0) < (numbers[$1.name ?? ""] ?? 0) }) {
            guard let number = numbers[entity.name ?? ""] else {
                throw StoreError.invalidStore("The store has no entity number for the entity \(entity.name ?? "?") (Z_PRIMARYKEY).")
            }
            let rootEntity = root(of: entity)
            let table: RootTable
            if let existing = tables[rootEntity.name ?? ""] {
                table = existing
            } else {
                table = RootTable(entity: rootEntity)
                if let columns = introspection?[table.name] { table.existingColumns = Set(columns) }
                tables[rootEntity.name ?? ""] = table
                roots.append(table)
            }
            let mapping = EntityMapping(entity: entity, number: number, table: table)
            mappings[entity.name ?? ""] = mapping
            byNumber[number] = mapping
        }
        for mapping in mappings.values {
            mapping.numbersWithSubentities = mappings.values.filter { $0.entity.isKindOf(entity: mapping.entity) }.map(\.number).sorted()
        }
        try assignColumns(numbers: numbers, introspection: introspection, legacyOrderColumns: legacyOrderColumns)
    }

    private func number(_ entity: NSEntityDescription?) -> Int { mappings[entity?.name ?? ""]?.number ?? 0 }

    private func assignColumns(numbers: [String: Int], introspection: [String: [String]]?, legacyOrderColumns: Bool) throws {
        // Owner of each column name per table: the first entity (by number) that declares a property of
        // that name; a later entity of the hierarchy with its own property of the same name gets a suffix.
        var taken: [String: [String: String]] = [:]   // table → column → "Entity.property"
        func column(_ base: String, in table: RootTable, owner: String) -> String {
            var used = taken[table.name, default: [:]]
            var candidate = base
            var suffix = 0
            // Same-named properties of one hierarchy: the first entity by number keeps the bare name (spec §2;
            // Apple's choice is not derivable from the model, so this is unverified where two exist).
            while let holder = used[candidate], holder != owner {
                suffix += 1
                candidate = base + String(suffix)
            }
            used[candidate] = owner
            taken[table.name] = used
            return candidate
        }
        let ordered = mappings.values.sorted { $0.number < $1.number }
        var columnTypes: [String: [String: String]] = [:]
        func declare(_ table: RootTable, _ name: String, _ type: String) {
            if columnTypes[table.name]?[name] == nil {
                columnTypes[table.name, default: [:]][name] = type
            }
        }
        // Pass 1: attributes and to-one columns, by declaring entity.
        for mapping in ordered {
            let table = mapping.table
            for (slot, property) in mapping.layout.properties.enumerated() {
                let declaring = declaringEntity(of: property, from: mapping.entity)
                let owner = "\(declaring.name ?? "").\(property.name)"
                if property.isTransient { continue }
                // Composites' elements are named after every other column (below).
                if property is NSCompositeAttributeDescription { continue }
                if let attribute = property as? NSAttributeDescription {
                    if attribute.attributeType == .undefinedAttributeType || attribute.attributeType == .objectIDAttributeType { continue }
                    let name = column("Z" + property.name.uppercased(), in: table, owner: owner)
                    mapping.storage[slot] = .attribute(column: name, attribute: attribute)
                    declare(table, name, Self.sqlType(of: attribute))
                } else if let relationship = property as? NSRelationshipDescription, !relationship.isToMany {
                    let name = column("Z" + property.name.uppercased(), in: table, owner: owner)
                    var entityColumn: String?
                    if let destination = relationship.destinationEntity, !destination.subentities.isEmpty {
                        entityColumn = column("Z\(number(destination))_" + property.name.uppercased(), in: table, owner: owner + "#entity")
                    }
                    mapping.storage[slot] = .toOne(column: name, entityColumn: entityColumn, relationship: relationship)
                    declare(table, name, "INTEGER")
                    if let entityColumn { declare(table, entityColumn, "INTEGER") }
                }
            }
        }
        // Pass 1b: composite attributes' elements, a column each named after the element. After the other
        // columns, so that an element whose name a property of the table also has takes the digit,
        // whatever order the properties are declared in (Core Data's order is not known: unverified).
        for mapping in ordered {
            for (slot, property) in mapping.layout.properties.enumerated() {
                guard let composite = property as? NSCompositeAttributeDescription, !composite.isTransient else { continue }
                let owner = "\(declaringEntity(of: property, from: mapping.entity).name ?? "").\(property.name)"
                let elements = composite.leafElements.map { path, element in
                    let name = column("Z" + element.name.uppercased(), in: mapping.table, owner: owner + "." + path.joined(separator: "."))
                    declare(mapping.table, name, Self.sqlType(of: element))
                    return CompositeColumn(path: path, column: name, attribute: element)
                }
                mapping.storage[slot] = .composite(elements: elements)
            }
        }
        // Pass 2: to-many relationships (inverse foreign keys, order keys, join tables).
        var joinByKey: [String: JoinTable] = [:]
        var joinColumnNames: Set<String> = []
        var unnamedJoinColumns: [JoinTable] = []
        for mapping in ordered {
            for (slot, property) in mapping.layout.properties.enumerated() {
                guard let relationship = property as? NSRelationshipDescription, relationship.isToMany, !relationship.isTransient else { continue }
                let inverse = relationship.inverseRelationship
                if let inverse, !inverse.isToMany, let destination = relationship.destinationEntity, let destinationMapping = mappings[destination.name ?? ""] {
                    // One-to-many: the destination's foreign key to us.
                    let destinationTable = destinationMapping.table
                    guard case .toOne(let fk, _, _)? = mappings[inverse.entity?.name ?? ""].flatMap({ m in
                        m.layout.slot(named: inverse.name).map { m.storage[$0] }
                    }) else {
                        mapping.storage[slot] = .none
                        continue
                    }
                    var orderColumn: String?
                    if relationship.isOrdered {
                        orderColumn = "Z_FOK_" + fk.dropFirst()
                        declare(destinationTable, orderColumn!, "INTEGER")
                    }
                    mapping.storage[slot] = .toManyByInverse(relationship: relationship, inverseColumn: fk, orderColumn: orderColumn)
                    continue
                }
                // Many-to-many (or to-many without inverse): one join table per pair.
                let declaring = declaringEntity(of: relationship, from: mapping.entity)
                let pairKey: String
                if let inverse {
                    let a = "\(declaring.name ?? "").\(relationship.name)"
                    let b = "\(inverse.entity?.name ?? "").\(inverse.name)"
                    pairKey = min(a, b) + "|" + max(a, b)
                } else {
                    pairKey = "\(declaring.name ?? "").\(relationship.name)|"
                }
                if let table = joinByKey[pairKey] {
                    mapping.storage[slot] = .toManyByJoin(relationship: relationship, table: table, forward: table.relationship.name == relationship.name && (table.relationship.entity?.name == declaring.name))
                    continue
                }
                // Named after the side with the lower entity number; a reflexive one after the later of
                // the two names (Core Data since framework 752; 641 took the earlier, which introspection
                // finds below).
                var named = relationship
                var other = inverse
                if let inverse {
                    let mine = number(declaring), theirs = number(inverse.entity)
                    if theirs < mine || (theirs == mine && inverse.name > relationship.name) {
                        named = inverse
                        other = relationship
                    }
                }
                let namedNumber = number(named.entity)
                let otherNumber = other.map { number($0.entity) } ?? number(named.destinationEntity)
                var tableName = "Z_\(namedNumber)" + named.name.uppercased()
                if let introspection, introspection[tableName] == nil, let otherSide = other {
                    let alternative = "Z_\(otherNumber)" + otherSide.name.uppercased()
                    if introspection[alternative] != nil {
                        tableName = alternative
                        other = named
                        named = otherSide
                    }
                }
                let sourceBase = "Z_\(number(named.entity))" + (other?.name ?? named.entity?.name ?? "").uppercased()
                let destinationBase = "Z_\(other.map { number($0.entity) } ?? number(named.destinationEntity))" + named.name.uppercased()
                let ordered = named.isOrdered || (other?.isOrdered ?? false)
                let sourceColumn: String
                let destinationColumn: String
                if let existing = introspection?[tableName] {
                    sourceColumn = Self.match(sourceBase, in: existing, excluding: nil) ?? sourceBase
                    destinationColumn = Self.match(destinationBase, in: existing, excluding: sourceColumn) ?? destinationBase
                } else {
                    // Named once every table is known (below).
                    sourceColumn = sourceBase
                    destinationColumn = destinationBase
                }
                let table = JoinTable(name: tableName, relationship: named, inverse: other, sourceColumn: sourceColumn,
                                      destinationColumn: destinationColumn, ordered: ordered, legacyOrderColumns: legacyOrderColumns)
                if introspection?[tableName] == nil { unnamedJoinColumns.append(table) }
                if let existing = introspection?[tableName] {
                    if let order = table.sourceOrderColumn, !existing.contains(order) { table.sourceOrderColumn = nil }
                    if let order = table.destinationOrderColumn, !existing.contains(order) { table.destinationOrderColumn = nil }
                }
                joinByKey[pairKey] = table
                joinTables.append(table)
                let forward = named === relationship
                mapping.storage[slot] = .toManyByJoin(relationship: relationship, table: table, forward: forward)
            }
        }
        // Key columns of new join tables are unique across tables (`Z_22USERS`, `Z_22USERS1`). Core Data
        // gives the plain name in the order of the naming relationship's entity name, then its name
        // (Reaction.users before SystemMessage.users in wire-ios-data-model's stores, whatever the
        // entity numbers).
        unnamedJoinColumns.sort { ($0.relationship.entity?.name ?? "", $0.relationship.name) < ($1.relationship.entity?.name ?? "", $1.relationship.name) }
        for table in unnamedJoinColumns {
            let source = Self.unique(table.sourceColumn, &joinColumnNames)
            table.name(source: source, destination: Self.unique(table.destinationColumn, &joinColumnNames))
        }
        // Declared column order: Core Data sorts by type (integers first, then numbers and dates, text, blobs).
        let rank = ["INTEGER": 0, "TIMESTAMP": 1, "DECIMAL": 1, "FLOAT": 1, "VARCHAR": 2, "BLOB": 3]
        for table in roots {
            let columns = columnTypes[table.name] ?? [:]
            table.columns = columns.map { (name: $0.key, type: $0.value) }
                .sorted { (rank[$0.type] ?? 4, $0.name) < (rank[$1.type] ?? 4, $1.name) }
        }
        // An existing store must have every column the model maps: a missing one would read as nil and
        // silently drop writes. (Hash-compatible models always have them; this catches damaged files.)
        if introspection != nil {
            for mapping in ordered {
                for storage in mapping.storage {
                    var needed: [String] = []
                    switch storage {
                    case .attribute(let column, _): needed = [column]
                    case .composite(let elements): needed = elements.map(\.column)
                    case .toOne(let column, let entityColumn, _): needed = [column] + (entityColumn.map { [$0] } ?? [])
                    default: break
                    }
                    for column in needed where !mapping.table.existingColumns.contains(column) {
                        throw StoreError.invalidStore("The table \(mapping.table.name) has no column \(column) for the entity \(mapping.entity.name ?? "?"): the file does not match the model.")
                    }
                }
            }
        }
        // What a row read selects.
        for mapping in ordered {
            mapping.selectedSlots = mapping.layout.properties.indices.filter { slot in
                switch mapping.storage[slot] {
                case .attribute, .composite, .toOne: return true
                default: return false
                }
            }
        }
    }

    /// The entity that declares `property` (a subentity's layout includes inherited properties).
    private func declaringEntity(of property: NSPropertyDescription, from entity: NSEntityDescription) -> NSEntityDescription {
        property.entity ?? entity
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    private static func unique(_ base: String, _ used: inout Set<String>) -> String {
        var candidate = base
        var suffix = 0
        while used.contains(candidate) {
            suffix += 1
            candidate = base + String(suffix)
        }
        used.insert(candidate)
        return candidate
    }

    /// The column of `columns` that is `base` with optional trailing digits.
    private static func match(_ base: String, in columns: [String], excluding: String?) -> String? {
        if columns.contains(base), base != excluding { return base }
        return columns.first { column in
            column != excluding && column.hasPrefix(base) && !column.dropFirst(base.count).isEmpty
                && column.dropFirst(base.count).allSatisfy(\.isNumber)
        }
    }

    static func sqlType(of attribute: NSAttributeDescription) -> String {
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType: return "INTEGER"
        case .doubleAttributeType, .floatAttributeType: return "FLOAT"
        case .decimalAttributeType: return "DECIMAL"
        case .dateAttributeType: return "TIMESTAMP"
        case .stringAttributeType, .URIAttributeType: return "VARCHAR"
        default: return "BLOB"
        }
    }

    // MARK: Creating a store

    /// The statements that create this schema in an empty database, as Core Data writes it.
    func createStatements() -> [String] {
        var sql: [String] = []
        for table in roots {
            let columns = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + table.columns.map { "\($0.name) \($0.type)" }
            sql.append("CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")) )")
        }
        for join in joinTables {
            var columns = ["\(join.sourceColumn) INTEGER", "\(join.destinationColumn) INTEGER"]
            // Apple's column order: Z_FOK_<sourceColumn>, then Z_FOK_<destinationColumn>.
            if let order = join.destinationOrderColumn { columns.append("\(order) INTEGER") }
            if let order = join.sourceOrderColumn { columns.append("\(order) INTEGER") }
            columns.append("PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn))")
            sql.append("CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")) )")
            sql.append("CREATE INDEX \(join.name)_\(join.destinationColumn)_INDEX ON \(join.name) (\(join.destinationColumn), \(join.sourceColumn))")
        }
        sql.append("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        sql.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        // No Z_MODELCACHE: its content is an NSKeyedArchiver archive of the model, which we do not write;
        // Core Data opens stores without the table (every store before framework ≈637 lacks it).
        // Indexes: foreign keys, Z_ENT of hierarchies, indexed attributes, uniqueness constraints, compound
        // indexes, fetch indexes.
        var indexNames: Set<String> = []
        func index(_ name: String, _ statement: String) {
            if indexNames.insert(name).inserted { sql.append(statement) }
        }
        for mapping in mappings.values.sorted(by: { $0.number < $1.number }) {
            let table = mapping.table.name
            let entityName = mapping.entity.name ?? ""
            if mapping.entity.superentity == nil, mapping.hasSubentities {
                index("\(table)_Z_ENT_INDEX", "CREATE INDEX \(table)_Z_ENT_INDEX ON \(table) (Z_ENT)")
            }
            for (slot, property) in mapping.layout.properties.enumerated() where property.entity === mapping.entity {
                switch mapping.storage[slot] {
                case .toOne(let column, _, _):
                    index("\(table)_\(column)_INDEX", "CREATE INDEX \(table)_\(column)_INDEX ON \(table) (\(column))")
                case .attribute(let column, _) where property.isIndexed:
                    index("Z_\(entityName)_\(property.name)", "CREATE INDEX Z_\(entityName)_\(property.name) ON \(table) (\(column) COLLATE BINARY ASC)")
                case .composite(let elements) where property.isIndexed:
                    let columns = elements.map { "\($0.column) COLLATE BINARY ASC" }.joined(separator: ", ")
                    index("Z_\(entityName)_\(property.name)", "CREATE INDEX Z_\(entityName)_\(property.name) ON \(table) (\(columns))")
                default: break
                }
            }
            // Uniqueness constraints, and compound indexes (deprecated in the model, still honoured), as
            // current Core Data names them: Z_<Entity>_[UNIQUE_]<property>_<property>…, in the listed order.
            let groups = mapping.entity.uniquenessConstraints.map { ($0, true) } + mapping.entity.compoundIndexes.map { ($0, false) }
            for (group, unique) in groups {
                let names = group.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
                let found = names.compactMap { self.columns(named: $0, in: mapping) }
                guard !found.isEmpty, found.count == names.count else { continue }
                // A composite element's dotted name with underscores (SQL takes no dot in a bare name; Core
                // Data's own name for such an index is not known).
                let name = "Z_\(entityName)_" + (unique ? "UNIQUE_" : "") + names.joined(separator: "_").replacingOccurrences(of: ".", with: "_")
                index(name, "CREATE \(unique ? "UNIQUE " : "")INDEX \(name) ON \(table) (\(found.joined().map { "\($0) COLLATE BINARY ASC" }.joined(separator: ", ")))")
            }
            for fetchIndex in mapping.entity.indexes {
                let parts = fetchIndex.elements.flatMap { element -> [String] in
                    guard let name = element.propertyName, let columns = self.columns(named: name, in: mapping) else { return [] }
                    return columns.map { "\($0) COLLATE BINARY \(element.isAscending ? "ASC" : "DESC")" }
                }
                guard !parts.isEmpty else { continue }
                let name = "Z_\(entityName)_\(fetchIndex.name)"
                // A fetch index's name is free text in the model: quoted unless a plain identifier.
                let sqlName = Self.isIdentifier(name) ? name : SQLiteStore.quoted(name)
                index(name, "CREATE INDEX \(sqlName) ON \(table) (\(parts.joined(separator: ", ")))")
            }
        }
        return sql
    }

    /// The columns of the property `name` for an index or constraint: an attribute's or to-one's column,
    /// a composite's element columns, or (a dotted name) one element's column; nil for anything else.
    func columns(named name: String, in mapping: EntityMapping) -> [String]? {
        if let slot = mapping.layout.slot(named: name) {
            if case .composite(let elements) = mapping.storage[slot] { return elements.map(\.column) }
            return column(of: mapping, slot: slot).map { [$0] }
        }
        return element(named: name, in: mapping).map { [$0.column] }
    }

    /// The element of a composite attribute that a dotted name (`location.latitude`) names.
    func element(named name: String, in mapping: EntityMapping) -> CompositeColumn? {
        let parts = name.split(separator: ".").map(String.init)
        guard parts.count > 1, let slot = mapping.layout.slot(named: parts[0]), case .composite(let elements) = mapping.storage[slot] else { return nil }
        return elements.first { $0.path == Array(parts.dropFirst()) }
    }

    /// The column of an attribute or to-one slot.
    func column(of mapping: EntityMapping, slot: Int) -> String? {
        switch mapping.storage[slot] {
        case .attribute(let column, _), .toOne(let column, _, _): return column
        default: return nil
        }
    }
}
