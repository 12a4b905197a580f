import Foundation
import OCDModel
import OCDPredicate
import OCDStore

/// Attribute values to and from SQLite as Core Data encodes them (spec §3): dates as seconds since
/// 2001-01-01, booleans as 0/1, UUIDs as 16 bytes, decimals as their text (read back from any numeric
/// affinity), transformable values as the transformer's data.
enum ValueCoding {
    /// `marksExternalStorage`: false for a file of this project's first layout (`SQLiteStore.legacyLayout`),
    /// whose externally storable values have no marker.
    static func encode(_ value: Any?, _ attribute: NSAttributeDescription, marksExternalStorage: Bool = true) throws -> SQLValue {
        guard let value, !isNSNull(value) else { return .null }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
            if let integer = SlotValues.unboxedInteger(value) { return .integer(integer) }
            if let bool = SlotValues.unboxedBool(value) { return .integer(bool ? 1 : 0) }
            if let number = value as? NSNumber { return .integer(number.int64Value) }
            if let bool = value as? Bool { return .integer(bool ? 1 : 0) }
        case .doubleAttributeType, .floatAttributeType:
            if let double = SlotValues.unboxedDouble(value) { return .real(double) }
            if let number = value as? NSNumber { return .real(number.doubleValue) }
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return .text(decimal.description) }
            if let number = value as? NSDecimalNumber { return .text(number.stringValue) }
            if let number = value as? NSNumber {
                // An infinity or NaN has no decimal form Core Data's column could hold.
                guard number.doubleValue.isFinite || number is NSDecimalNumber else { break }
                return .text(number.finiteDecimalValue.description)
            }
        case .stringAttributeType:
            if let string = value as? String { return .text(string) }
        case .dateAttributeType:
            if let date = value as? Date { return .real(date.timeIntervalSinceReferenceDate) }
        case .binaryDataAttributeType:
            if let data = value as? Data { return .blob(attribute.allowsExternalBinaryDataStorage && marksExternalStorage ? ExternalStorage.inline(data) : data) }
        case .UUIDAttributeType:
            if let uuid = value as? UUID { return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) }) }
        case .URIAttributeType:
            if let url = value as? URL { return .text(url.absoluteString) }
        case .transformableAttributeType:
            let data = try transform(value, attribute)
            return .blob(attribute.allowsExternalBinaryDataStorage && marksExternalStorage ? ExternalStorage.inline(data) : data)
        default:
            break
        }
        throw SQLiteStoreError.unencodable("The value \(value) (\(type(of: value))) of the attribute \(attribute.entity?.name ?? "?").\(attribute.name) cannot be stored as \(attribute.attributeType).")
    }

    /// The value of `column` as a caller outside the store expects it (numbers as `NSNumber`s).
    static func decode(_ column: Statement.Column, _ attribute: NSAttributeDescription, store: SQLiteStore? = nil) -> Any? {
        SlotValues.boxed(decodeStored(column, attribute, store: store))
    }

    /// The value of `column` as a row holds it: an integer, double or boolean attribute's value unboxed
    /// (see `SlotValues`).
    /// `store`: the store whose file the statement reads, for values Core Data kept outside it.
    static func decodeStored(_ column: Statement.Column, _ attribute: NSAttributeDescription, store: SQLiteStore? = nil) -> Any? {
        if column.isNull { return nil }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            return numeric(column)
        case .booleanAttributeType:
            return numeric(column) != 0
        case .doubleAttributeType:
            return column.double
        case .floatAttributeType:
            return NSNumber(value: Float(column.double))
        case .decimalAttributeType:
            switch column.value {
            case .integer(let value): return Decimal(value)
            case .real(let value): return value.isFinite ? (Decimal(string: String(value)) ?? Decimal(value)) : Decimal.nan
            case .text(let text): return Decimal(string: text) ?? Decimal.nan
            default: return nil
            }
        case .stringAttributeType:
            switch column.value {
            case .text(let text): return text
            case .integer(let value): return String(value)
            case .real(let value): return String(value)
            case .blob(let data): return String(decoding: data, as: UTF8.self)
            case .null: return nil
            }
        case .dateAttributeType:
            switch column.value {
            // Not a number of seconds (NaN, an infinity: Linux Foundation stops describing such a date)
            // reads as nil.
            case .integer(let value): return Date(timeIntervalSinceReferenceDate: Double(value))
            case .real(let value): return value.isFinite ? Date(timeIntervalSinceReferenceDate: value) : nil
            case .text(let text): return Double(text).flatMap { $0.isFinite ? Date(timeIntervalSinceReferenceDate: $0) : nil }
            default: return nil
            }
        case .binaryDataAttributeType:
            let data = column.blob
            return attribute.allowsExternalBinaryDataStorage && store?.legacyLayout != true ? ExternalStorage.value(of: data, in: store?.externalDataFolder) : data
        case .UUIDAttributeType:
            let data = column.blob
            guard data.count == 16 else { return nil }
            return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        case .URIAttributeType:
            return URL(string: column.text)
        case .transformableAttributeType:
            let data = column.blob
            if attribute.allowsExternalBinaryDataStorage && store?.legacyLayout != true {
                return ExternalStorage.value(of: data, in: store?.externalDataFolder).flatMap { untransform($0, attribute) }
            }
            return untransform(data, attribute)
        default:
            return nil
        }
    }

    static func numeric(_ column: Statement.Column) -> Int64 {
        switch column.value {
        case .integer(let value): return value
        case .real(let value): return clamped(value)
        case .text(let text): return Int64(text) ?? clamped(Double(text) ?? 0)
        default: return 0
        }
    }

    /// A real read from an integer column, clamped: a damaged or foreign value must not trap.
    private static func clamped(_ value: Double) -> Int64 {
        if value.isNaN { return 0 }
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return Int64(value)
    }

    /// Whether `value` is of a kind the predicate layer never compares with `attribute`'s values as equal
    /// (spec §7.3: no conversion between strings, numbers and dates).
    static func isMismatched(_ value: Any?, _ attribute: NSAttributeDescription?) -> Bool {
        guard let attribute, let value, !isNSNull(value) else { return false }
        let isNumber = value is NSNumber || value is Decimal
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
             .floatAttributeType, .decimalAttributeType, .booleanAttributeType:
            return value is String || value is Date
        case .stringAttributeType:
            return isNumber || value is Date
        case .dateAttributeType:
            return isNumber || value is String
        case .URIAttributeType:
            // A URI is stored as its text, but in memory a URL equals no string.
            return !(value is URL || value is NSURL)
        default:
            return false
        }
    }

    /// A value as SQL compares it with the column of `attribute` (predicate arguments).
    static func comparable(_ value: Any?, _ attribute: NSAttributeDescription?) -> SQLValue? {
        guard let value, !isNSNull(value) else { return .null }
        if let attribute {
            switch attribute.attributeType {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
                // Compared by value: 2.5 must not become 2 (nor 1e20 a wrapped integer).
                if let decimal = value as? Decimal { return .real(NSDecimalNumber(decimal: decimal).doubleValue) }
                if let number = value as? NSNumber, !(value is Bool) {
                    let kind = String(cString: number.objCType)
                    if kind == "d" || kind == "f" || number is NSDecimalNumber {
                        let double = number.doubleValue
                        if double.rounded() == double, abs(double) < 9.2e18 { return .integer(Int64(double)) }
                        return .real(double)
                    }
                }
            default:
                break
            }
        }
        if let attribute, attribute.attributeType != .transformableAttributeType, let encoded = try? encode(value, attribute) {
            return encoded
        }
        // A transformable column holds the transformer's bytes: only data compares with them.
        if attribute?.attributeType == .transformableAttributeType { return (value as? Data).map { .blob($0) } }
        switch value {
        case let bool as Bool: return .integer(bool ? 1 : 0)
        case let number as NSNumber:
            let kind = String(cString: number.objCType)
            if kind == "d" || kind == "f" { return .real(number.doubleValue) }
            return .integer(number.int64Value)
        case let string as String: return .text(string)
        case let date as Date: return .real(date.timeIntervalSinceReferenceDate)
        case let data as Data: return .blob(data)
        case let uuid as UUID: return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case let url as URL: return .text(url.absoluteString)
        case let decimal as Decimal: return .real(NSDecimalNumber(decimal: decimal).doubleValue)
        default: return nil
        }
    }

    // MARK: Transformable values

    /// The names, and class names, of the archiving transformers, whose values are keyed archives written
    /// and read here rather than through the registry: registering another transformer under one of these
    /// names does not change how the store keeps values.
    private static let archiverNames: Set<String> = [
        "", "NSSecureUnarchiveFromData", "NSKeyedUnarchiveFromData", "NSSecureUnarchiveFromDataTransformerName",
        "NSSecureUnarchiveFromDataTransformer", "NSKeyedUnarchiveFromDataTransformer",
    ]

    // Values of attributes with the default (secure) archiving transformers are keyed archives, as on
    // Apple platforms, written and read leniently: archives of classes Linux Foundation cannot decode stay
    // data rather than failing the fetch. An attribute naming another transformer is stored through the
    // `ValueTransformer` registered under that name (Documentation/SQLiteStore.md); with none registered,
    // only data can be stored, as it is.
    private static func transform(_ value: Any, _ attribute: NSAttributeDescription) throws -> Data {
        let name = attribute.valueTransformerName ?? ""
        if !archiverNames.contains(name) {
            let described = "the transformable attribute \(attribute.entity?.name ?? "?").\(attribute.name)"
            guard let transformer = ValueTransformer.registeredTransformer(forName: NSValueTransformerName(name)) else {
                if let data = value as? Data { return data }
                throw SQLiteStoreError.unencodable("No value transformer is registered under the name \(name), which \(described) names (ValueTransformer.setValueTransformer(_:forName:)); without one, only Data is stored as it is.")
            }
            // Core Data stores what `transformedValue` makes and reads through `reverseTransformedValue`;
            // a transformer that unarchives data works the other way round.
            if !transformer.unarchivesData && !type(of: transformer).allowsReverseTransformation() {
                throw SQLiteStoreError.unencodable("The value transformer \(name) of \(described) does not allow reverse transformation, so what it stores could not be read back.")
            }
            if transformer.unarchivesData {
                guard let data = transformer.reverseTransformedValue(value) as? Data else {
                    throw SQLiteStoreError.unencodable("The value transformer \(name) of \(described) could not archive a value of type \(type(of: value)): it is not one of the transformer's allowedTopLevelClasses, or it (or something it holds) does not adopt NSCoding.")
                }
                return data
            }
            guard let data = transformer.transformedValue(value) as? Data else {
                throw SQLiteStoreError.unencodable("The value transformer \(name) of \(described) did not turn a value of type \(type(of: value)) into Data.")
            }
            return data
        }
        guard let data = KeyedArchives.archive(value) else {
            throw SQLiteStoreError.unencodable("A value of type \(type(of: value)) cannot be archived for the transformable attribute \(attribute.entity?.name ?? "?").\(attribute.name): it, or something it holds, does not adopt NSCoding (on Linux a decimal number cannot be archived either).")
        }
        return data
    }

    private static func untransform(_ data: Data, _ attribute: NSAttributeDescription) -> Any? {
        let name = attribute.valueTransformerName ?? ""
        guard archiverNames.contains(name) else {
            // Without its transformer (not registered, or not reversible) the value is the stored data.
            guard let transformer = ValueTransformer.registeredTransformer(forName: NSValueTransformerName(name)) else { return data }
            if transformer.unarchivesData { return transformer.transformedValue(data) }
            return type(of: transformer).allowsReverseTransformation() ? transformer.reverseTransformedValue(data) : data
        }
        if let object = KeyedArchives.rootObject(of: data) { return object }
        return data
    }
}

/// Attributes that allow external storage (`allowsExternalBinaryDataStorage`) keep a marker byte before
/// their bytes in Core Data's files: 1 when the bytes follow in the column, 2 when the column holds the
/// UUID of a file in the store's `.<name>_SUPPORT/_EXTERNAL_DATA` folder (Core Data's choice for large
/// values). This store reads both and always writes the bytes in the column, which Core Data reads too.
enum ExternalStorage {
    static let inlineMarker: UInt8 = 1
    static let fileMarker: UInt8 = 2

    /// The folder of externally stored values of the store file at `url`.
    static func folder(of url: URL) -> URL {
        url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT", isDirectory: true)
            .appendingPathComponent("_EXTERNAL_DATA", isDirectory: true)
    }

    /// The column's bytes for `data`, stored in the column.
    static func inline(_ data: Data) -> Data {
        var bytes = Data([inlineMarker])
        bytes.append(data)
        return bytes
    }

    /// The name of the file a column refers to (marker 2), if it does and the name is one Core Data
    /// writes, a UUID: the files named are removed, and a damaged column naming `.` would name the folder.
    static func fileName(of column: SQLValue) -> String? {
        guard case .blob(let data) = column, data.first == fileMarker else { return nil }
        let name = String(decoding: data.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
        return UUID(uuidString: name) == nil ? nil : name
    }

    /// The value a column holds: the bytes after the marker, or the file it names (nil when the file is
    /// missing). A column without a marker (written by other code) is taken as it is.
    static func value(of column: Data, in folder: @autoclosure () -> URL?) -> Data? {
        guard let marker = column.first else { return column }
        switch marker {
        case inlineMarker:
            return Data(column.dropFirst())
        case fileMarker:
            let name = String(decoding: column.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            guard let folder = folder(), !name.isEmpty, !name.contains("/") else { return nil }
            return try? Data(contentsOf: folder.appendingPathComponent(name), options: .mappedIfSafe)
        default:
            return column
        }
    }
}

/// Errors inside the SQLite store, turned into Core Data errors at its boundary.
enum SQLiteStoreError: Error, CustomStringConvertible {
    case unencodable(String)
    case unsupportedPredicate(String)

    var description: String {
        switch self {
        case .unencodable(let text), .unsupportedPredicate(let text): return text
        }
    }
}
