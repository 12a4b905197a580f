import Foundation

/// The byte layout of an `.ocdmodel` file: "OCDM", a format-version byte, then the `CompiledModel.File`
/// record. Every record is its fields in declaration order: integers as LEB128 varints (signed ones
/// zig-zagged), booleans as one byte, strings as a byte count and UTF-8, optionals as a presence byte and
/// the value, arrays as a count and the elements, dictionaries as a count and key/value pairs in key order.
/// A reader walks it with no lookups, which is what makes a compiled model load faster than the XML.
struct BinaryWriter {
    private(set) var bytes: [UInt8] = Array("OCDM".utf8)

    init(formatVersion: UInt8) { bytes.append(formatVersion) }

    mutating func unsigned(_ value: UInt64) {
        var value = value
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value != 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value != 0
    }

    mutating func int(_ value: Int) { unsigned(UInt64(bitPattern: Int64(value << 1 ^ value >> 63))) }
    mutating func uint(_ value: UInt) { unsigned(UInt64(value)) }
    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        unsigned(UInt64(utf8.count))
        bytes += utf8
    }

    mutating func optional<T>(_ value: T?, _ write: (inout BinaryWriter, T) -> Void) {
        bool(value != nil)
        if let value { write(&self, value) }
    }

    mutating func array<T>(_ values: [T], _ write: (inout BinaryWriter, T) -> Void) {
        unsigned(UInt64(values.count))
        for value in values { write(&self, value) }
    }

    mutating func strings(_ values: [String]) { array(values) { $0.string($1) } }

    mutating func dictionary(_ values: [String: String]?) {
        optional(values) { writer, pairs in
            writer.unsigned(UInt64(pairs.count))
            for key in pairs.keys.sorted() {
                writer.string(key)
                writer.string(pairs[key]!)
            }
        }
    }
}

struct BinaryReader {
    struct Malformed: Error {
        let reason: String
    }

    private let bytes: [UInt8]
    private var position = 0
    let formatVersion: UInt8
    /// How deep composite elements are nested where the reader is: bounded, as the file is not trusted
    /// (each level is a call; a few thousand overflowed the stack).
    var nesting = 0
    static let deepestNesting = 64

    init(_ data: Data) throws {
        bytes = Array(data)
        guard bytes.count >= 5, Array(bytes[0..<4]) == Array("OCDM".utf8) else {
            throw Malformed(reason: "not an OpenCoreData compiled model (no OCDM header)")
        }
        formatVersion = bytes[4]
        position = 5
    }

    mutating func unsigned() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count else { throw Malformed(reason: "truncated at byte \(position)") }
            let byte = bytes[position]
            position += 1
            guard shift < 64 else { throw Malformed(reason: "an integer too long at byte \(position)") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func int() throws -> Int {
        let raw = try unsigned()
        return Int(Int64(bitPattern: raw >> 1 ^ (0 &- (raw & 1))))
    }

    mutating func uint() throws -> UInt { UInt(truncatingIfNeeded: try unsigned()) }

    mutating func bool() throws -> Bool {
        guard position < bytes.count else { throw Malformed(reason: "truncated at byte \(position)") }
        defer { position += 1 }
        switch bytes[position] {
        case 0: return false
        case 1: return true
        default: throw Malformed(reason: "a boolean that is neither 0 nor 1 at byte \(position)")
        }
    }

    mutating func count() throws -> Int {
        let count = try unsigned()
        // Every element takes at least one byte: a larger count can only come from a damaged file.
        guard count <= UInt64(bytes.count - position) else { throw Malformed(reason: "a count of \(count) past the end of the file") }
        return Int(count)
    }

    mutating func string() throws -> String {
        let length = try count()
        defer { position += length }
        return String(decoding: bytes[position..<(position + length)], as: UTF8.self)
    }

    mutating func optional<T>(_ read: (inout BinaryReader) throws -> T) throws -> T? {
        try bool() ? try read(&self) : nil
    }

    mutating func array<T>(_ read: (inout BinaryReader) throws -> T) throws -> [T] {
        let count = try count()
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try read(&self)) }
        return values
    }

    mutating func strings() throws -> [String] { try array { try $0.string() } }

    mutating func dictionary() throws -> [String: String]? {
        try optional { reader in
            var result: [String: String] = [:]
            for _ in 0..<(try reader.count()) {
                let key = try reader.string()
                result[key] = try reader.string()
            }
            return result
        }
    }

    var isAtEnd: Bool { position == bytes.count }
}

extension CompiledModel.File {
    func write(to w: inout BinaryWriter) {
        w.string(format); w.int(formatVersion); w.strings(versionIdentifiers)
        w.array(entities) { $1.write(to: &$0) }
        w.array(configurations) { $0.string($1.name); $0.strings($1.entities) }
        w.array(fetchRequests) { $1.write(to: &$0) }
        w.dictionary(localization)
    }

    init(from r: inout BinaryReader) throws {
        self.init(
            format: try r.string(), formatVersion: try r.int(), versionIdentifiers: try r.strings(),
            entities: try r.array { try CompiledModel.Entity(from: &$0) },
            configurations: try r.array { CompiledModel.Configuration(name: try $0.string(), entities: try $0.strings()) },
            fetchRequests: try r.array { try CompiledModel.FetchRequest(from: &$0) },
            localization: try r.dictionary())
    }
}

extension CompiledModel.Entity {
    func write(to w: inout BinaryWriter) {
        w.string(name); w.string(className); w.optional(parent) { $0.string($1) }; w.bool(abstract)
        w.dictionary(userInfo); w.optional(versionHashModifier) { $0.string($1) }; w.optional(renamingIdentifier) { $0.string($1) }
        w.array(properties) { $1.write(to: &$0) }
        w.array(uniquenessConstraints) { $0.strings($1) }
        w.array(compoundIndexes) { $0.strings($1) }
        w.array(indexes) { writer, index in
            writer.string(index.name)
            writer.array(index.elements) { $0.string($1.property); $0.bool($1.rTree); $0.bool($1.ascending) }
            writer.optional(index.partialIndexPredicate) { $0.string($1) }
        }
    }

    init(from r: inout BinaryReader) throws {
        self.init(
            name: try r.string(), className: try r.string(), parent: try r.optional { try $0.string() }, abstract: try r.bool(),
            userInfo: try r.dictionary(), versionHashModifier: try r.optional { try $0.string() }, renamingIdentifier: try r.optional { try $0.string() },
            properties: try r.array { try CompiledModel.Property(from: &$0) },
            uniquenessConstraints: try r.array { try $0.strings() },
            compoundIndexes: try r.array { try $0.strings() },
            indexes: try r.array { reader in
                CompiledModel.Index(
                    name: try reader.string(),
                    elements: try reader.array { CompiledModel.IndexElement(property: try $0.string(), rTree: try $0.bool(), ascending: try $0.bool()) },
                    partialIndexPredicate: try reader.optional { try $0.string() })
            })
    }
}

extension CompiledModel.Property {
    func write(to w: inout BinaryWriter) {
        w.string(kind); w.string(name); w.bool(optional); w.bool(transient); w.bool(indexed); w.bool(spotlight)
        w.dictionary(userInfo); w.optional(versionHashModifier) { $0.string($1) }; w.optional(renamingIdentifier) { $0.string($1) }
        w.array(validation) { writer, rule in
            writer.string(rule.predicate); writer.optional(rule.warningCode) { $0.int($1) }; writer.optional(rule.warning) { $0.string($1) }
        }
        w.optional(attributeType) { $0.uint($1) }
        w.optional(defaultValue) { $0.string($1.kind); $0.string($1.value) }
        w.optional(valueClassName) { $0.string($1) }; w.optional(valueTransformerName) { $0.string($1) }
        w.optional(externalStorage) { $0.bool($1) }; w.optional(preserveAfterDeletion) { $0.bool($1) }
        w.optional(cloudEncryption) { $0.bool($1) }; w.optional(scalar) { $0.bool($1) }
        w.optional(derivation) { $0.string($1) }
        w.optional(elements) { writer, elements in writer.array(elements) { $1.write(to: &$0) } }
        w.optional(destination) { $0.string($1) }; w.optional(inverse) { $0.string($1) }
        w.optional(minCount) { $0.int($1) }; w.optional(maxCount) { $0.int($1) }
        w.optional(deleteRule) { $0.uint($1) }; w.optional(ordered) { $0.bool($1) }
        w.optional(fetchRequest) { $1.write(to: &$0) }
    }

    init(from r: inout BinaryReader) throws {
        self.init(
            kind: try r.string(), name: try r.string(), optional: try r.bool(), transient: try r.bool(), indexed: try r.bool(), spotlight: try r.bool(),
            userInfo: try r.dictionary(), versionHashModifier: try r.optional { try $0.string() }, renamingIdentifier: try r.optional { try $0.string() },
            validation: try r.array { CompiledModel.Validation(predicate: try $0.string(), warningCode: try $0.optional { try $0.int() }, warning: try $0.optional { try $0.string() }) },
            attributeType: try r.optional { try $0.uint() },
            defaultValue: try r.optional { CompiledModel.DefaultValue(kind: try $0.string(), value: try $0.string()) },
            valueClassName: try r.optional { try $0.string() }, valueTransformerName: try r.optional { try $0.string() },
            externalStorage: try r.optional { try $0.bool() }, preserveAfterDeletion: try r.optional { try $0.bool() },
            cloudEncryption: try r.optional { try $0.bool() }, scalar: try r.optional { try $0.bool() },
            derivation: try r.optional { try $0.string() },
            elements: try r.optional { reader in
                reader.nesting += 1
                defer { reader.nesting -= 1 }
                guard reader.nesting <= BinaryReader.deepestNesting else {
                    throw BinaryReader.Malformed(reason: "composite elements nested more than \(BinaryReader.deepestNesting) deep")
                }
                return try reader.array { try CompiledModel.Property(from: &$0) }
            },
            destination: try r.optional { try $0.string() }, inverse: try r.optional { try $0.string() },
            minCount: try r.optional { try $0.int() }, maxCount: try r.optional { try $0.int() },
            deleteRule: try r.optional { try $0.uint() }, ordered: try r.optional { try $0.bool() },
            fetchRequest: try r.optional { try CompiledModel.FetchRequest(from: &$0) })
    }
}

extension CompiledModel.FetchRequest {
    func write(to w: inout BinaryWriter) {
        w.optional(name) { $0.string($1) }; w.string(entity); w.optional(predicate) { $0.string($1) }
        w.array(sortDescriptors) { $0.optional($1.key) { $0.string($1) }; $0.bool($1.ascending); $0.string($1.selector) }
        w.int(fetchLimit); w.int(fetchOffset); w.int(fetchBatchSize)
        w.strings(relationshipKeyPathsForPrefetching); w.bool(shouldRefreshRefetchedObjects); w.uint(resultType)
        w.bool(includesSubentities); w.bool(includesPropertyValues); w.bool(includesPendingChanges)
        w.bool(returnsObjectsAsFaults); w.bool(returnsDistinctResults)
    }

    init(from r: inout BinaryReader) throws {
        self.init(
            name: try r.optional { try $0.string() }, entity: try r.string(), predicate: try r.optional { try $0.string() },
            sortDescriptors: try r.array { CompiledModel.SortDescriptor(key: try $0.optional { try $0.string() }, ascending: try $0.bool(), selector: try $0.string()) },
            fetchLimit: try r.int(), fetchOffset: try r.int(), fetchBatchSize: try r.int(),
            relationshipKeyPathsForPrefetching: try r.strings(), shouldRefreshRefetchedObjects: try r.bool(), resultType: try r.uint(),
            includesSubentities: try r.bool(), includesPropertyValues: try r.bool(), includesPendingChanges: try r.bool(),
            returnsObjectsAsFaults: try r.bool(), returnsDistinctResults: try r.bool())
    }
}
