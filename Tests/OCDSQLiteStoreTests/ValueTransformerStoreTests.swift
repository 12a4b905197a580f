import Foundation
import OCDGraph
import OCDModel
import OCDSQLiteStore
import OCDStore
import OCDTestSupport
import Testing
import class OCDPredicate.NSPredicate
import class OCDPredicate.NSExpression

// Transformable attributes that name a custom transformer are stored through the ValueTransformer
// registered under that name, in Core Data's direction: `transformedValue` makes the stored data,
// `reverseTransformedValue` reads it back; a transformer that unarchives data works the other way round.

/// A colour as an app keeps it.
final class Colour: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let red: Int, green: Int, blue: Int
    init(_ red: Int, _ green: Int, _ blue: Int) {
        (self.red, self.green, self.blue) = (red, green, blue)
    }
    init?(coder: NSCoder) {
        (red, green, blue) = (coder.decodeInteger(forKey: "r"), coder.decodeInteger(forKey: "g"), coder.decodeInteger(forKey: "b"))
    }
    func encode(with coder: NSCoder) {
        coder.encode(red, forKey: "r")
        coder.encode(green, forKey: "g")
        coder.encode(blue, forKey: "b")
    }
    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? Colour else { return false }
        return (other.red, other.green, other.blue) == (red, green, blue)
    }
    override var hash: Int { red << 16 | green << 8 | blue }
}

/// A colour to and from the text "r,g,b" as data: the kind of custom transformer Core Data's documentation
/// describes (its forward transformation makes the data).
final class ColourTextTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSData.self }
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? {
        guard let colour = value as? Colour else { return nil }
        return Data("\(colour.red),\(colour.green),\(colour.blue)".utf8)
    }
    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(separator: ",").compactMap { Int($0) }
        return parts.count == 3 ? Colour(parts[0], parts[1], parts[2]) : nil
    }
}

/// The usual way to store a secure-coding class: a subclass of the secure unarchiving transformer.
final class ColourArchiveTransformer: NSSecureUnarchiveFromDataTransformer {
    override class var allowedTopLevelClasses: [AnyClass] { [Colour.self] }
}

/// Archives, and reports an error when it is decoded, as a class does whose archive it cannot read.
final class PartThatFailsToDecode: NSObject, NSCoding {
    override init() {}
    init?(coder: NSCoder) {
        coder.failWithError(NSError(domain: NSCocoaErrorDomain, code: NSCoderReadCorruptError))
        return nil
    }
    func encode(with coder: NSCoder) { coder.encode(1, forKey: "version") }
}

/// Makes data of nothing but strings, and says it cannot be reversed.
final class OneWayTransformer: ValueTransformer {
    override class func allowsReverseTransformation() -> Bool { false }
    override func transformedValue(_ value: Any?) -> Any? { (value as? String).map { Data($0.utf8) } }
}

@Suite struct ValueTransformerStoreTests {
    /// A Theme with `colour`, a transformable attribute naming `transformer`.
    private static func model(_ transformer: String) -> NSManagedObjectModel {
        let colour = TestModel.attribute("colour", .transformableAttributeType)
        colour.valueTransformerName = transformer
        let model = NSManagedObjectModel()
        model.entities = [TestModel.entity("Theme", [TestModel.attribute("name", .stringAttributeType), colour])]
        return model
    }

    /// Saves a Theme with `value`, and returns what the column holds.
    private static func save(_ value: Any, transformer: String, at url: URL) throws -> Data? {
        let stack = try SQLiteStack(model: model(transformer), url: url)
        try withExtendedLifetime(stack.context) {
            _ = stack.insert("Theme", ["name": "sea", "colour": value])
            try stack.context.save()
        }
        return try RawSQL.rows(url, "SELECT ZCOLOUR FROM ZTHEME").first?["ZCOLOUR"] as? Data
    }

    /// The colour of the saved Theme, read by a new coordinator.
    private static func reread(transformer: String, at url: URL) throws -> Any? {
        let stack = try SQLiteStack(model: model(transformer), url: url)
        return try withExtendedLifetime(stack.context) { try stack.fetch("Theme").first?.value(forKey: "colour") }
    }

    @Test func aCustomTransformersForwardTransformationMakesTheStoredData() throws {
        let name = "ValueTransformerStoreTests.text"
        ValueTransformer.setValueTransformer(ColourTextTransformer(), forName: NSValueTransformerName(name))
        let folder = TemporaryFolder()
        let url = folder.file()
        #expect(try Self.save(Colour(0, 128, 255), transformer: name, at: url) == Data("0,128,255".utf8))
        #expect(try Self.reread(transformer: name, at: url) as? Colour == Colour(0, 128, 255))
    }

    /// A dictionary fetch of the attribute through an expression typed as the attribute's kind reads it
    /// as the attribute: through its transformer (and past its external-storage marker), not as the bytes.
    @Test func anExpressionTypedAsTheAttributeReadsItsValue() throws {
        let name = "ValueTransformerStoreTests.expression"
        ValueTransformer.setValueTransformer(ColourTextTransformer(), forName: NSValueTransformerName(name))
        let colour = TestModel.attribute("colour", .transformableAttributeType)
        colour.valueTransformerName = name
        let photo = TestModel.attribute("photo", .binaryDataAttributeType)
        photo.allowsExternalBinaryDataStorage = true
        let model = NSManagedObjectModel()
        model.entities = [TestModel.entity("Theme", [colour, photo])]
        let folder = TemporaryFolder()
        let stack = try SQLiteStack(model: model, url: folder.file())
        try withExtendedLifetime(stack.context) {
            _ = stack.insert("Theme", ["colour": Colour(1, 2, 3), "photo": Data([0xAA, 0xBB])])
            try stack.context.save()
            func described(_ key: String, _ type: NSAttributeType) -> NSExpressionDescription {
                let description = NSExpressionDescription()
                description.name = key + "Value"
                description.expression = NSExpression(forKeyPath: key)
                description.expressionResultType = type
                return description
            }
            let request = NSFetchRequest<NSDictionary>(entityName: "Theme")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = [described("colour", .transformableAttributeType), described("photo", .binaryDataAttributeType)]
            let row = try #require(try stack.context.fetch(request).first)
            #expect(row["colourValue"] as? Colour == Colour(1, 2, 3))
            #expect(row["photoValue"] as? Data == Data([0xAA, 0xBB]))
        }
    }

    @Test func anUnarchivingTransformerArchivesTheValueItStores() throws {
        let name = "ValueTransformerStoreTests.archive"
        ValueTransformer.setValueTransformer(ColourArchiveTransformer(), forName: NSValueTransformerName(name))
        let folder = TemporaryFolder()
        let url = folder.file()
        let stored = try #require(try Self.save(Colour(10, 20, 30), transformer: name, at: url))
        // A secure keyed archive of the colour, as Core Data writes for such a transformer.
        #expect(try NSKeyedUnarchiver.unarchivedObject(ofClasses: [Colour.self], from: stored) as? Colour == Colour(10, 20, 30))
        #expect(try Self.reread(transformer: name, at: url) as? Colour == Colour(10, 20, 30))
    }

    /// Without a transformer registered under the name, data is stored as it is and read back as data;
    /// any other value fails the save with a validation error that says which name to register.
    @Test func anUnregisteredNameStoresDataOnly() throws {
        let name = "ValueTransformerStoreTests.unregistered"
        let folder = TemporaryFolder()
        let url = folder.file()
        #expect(try Self.save(Data([1, 2, 3]), transformer: name, at: url) == Data([1, 2, 3]))
        #expect(try Self.reread(transformer: name, at: url) as? Data == Data([1, 2, 3]))

        let error = #expect(throws: NSError.self) { try Self.save(Colour(1, 2, 3), transformer: name, at: folder.file()) }
        #expect(error?.code == NSManagedObjectValidationError)
        #expect(error?.localizedDescription.contains("No value transformer is registered under the name \(name)") == true, "\(String(describing: error))")
    }

    @Test func aTransformerThatCannotBeReversedOrMakesNoDataFailsTheSave() throws {
        let name = "ValueTransformerStoreTests.oneWay"
        ValueTransformer.setValueTransformer(OneWayTransformer(), forName: NSValueTransformerName(name))
        let folder = TemporaryFolder()
        let irreversible = #expect(throws: NSError.self) { try Self.save("text", transformer: name, at: folder.file()) }
        #expect(irreversible?.localizedDescription.contains("does not allow reverse transformation") == true, "\(String(describing: irreversible))")

        let text = "ValueTransformerStoreTests.textOnly"
        ValueTransformer.setValueTransformer(ColourTextTransformer(), forName: NSValueTransformerName(text))
        let noData = #expect(throws: NSError.self) { try Self.save("not a colour", transformer: text, at: folder.file()) }
        #expect(noData?.code == NSManagedObjectValidationError)
        #expect(noData?.localizedDescription.contains("did not turn a value of type String into Data") == true, "\(String(describing: noData))")
        // Neither save wrote a row.
        #expect(try RawSQL.rows(folder.file(), "SELECT COUNT(*) AS N FROM ZTHEME").first?["N"] as? Int64 == 0)
    }

    /// A column of a transformable attribute with the default transformer that holds bytes which are not a
    /// keyed archive (written by other code) reads as those bytes. Linux Foundation's
    /// `unarchiveTopLevelObjectWithData` stopped the process on them.
    @Test func bytesThatAreNoArchiveReadAsData() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        _ = try Self.save(["a", "b"], transformer: "NSSecureUnarchiveFromData", at: url)
        #expect(try Self.reread(transformer: "NSSecureUnarchiveFromData", at: url) as? [String] == ["a", "b"])
        for bytes in [Data("not an archive".utf8), Data([0x62, 0x70, 0x6C, 0x69, 0x73, 0x74])] {
            try RawSQL.execute(url, "UPDATE ZTHEME SET ZCOLOUR = X'\(bytes.map { String(format: "%02X", $0) }.joined())'")
            #expect(try Self.reread(transformer: "NSSecureUnarchiveFromData", at: url) as? Data == bytes)
        }
    }

    /// A value that does not adopt NSCoding (a Swift struct, also inside an array) fails the save with a
    /// validation error; Linux Foundation's archiver stopped the process on it.
    @Test func aValueThatCannotBeArchivedFailsTheSave() throws {
        struct Point { var x = 1 }
        let folder = TemporaryFolder()
        for value in [Point() as Any, [Point()] as Any, ["key": Point()] as Any] {
            let error = #expect(throws: NSError.self) { try Self.save(value, transformer: "", at: folder.file()) }
            #expect(error?.code == NSManagedObjectValidationError)
            #expect(error?.localizedDescription.contains("does not adopt NSCoding") == true, "\(String(describing: error))")
        }
        #expect(try Self.save(["a": [1, 2]], transformer: "", at: folder.file()) != nil)
    }

    /// Models name the secure transformer by its class name too (Xcode writes
    /// `NSSecureUnarchiveFromDataTransformer`): such values are keyed archives.
    @Test func theSecureTransformersClassNameArchivesValues() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let stored = try #require(try Self.save(["red", "blue"], transformer: "NSSecureUnarchiveFromDataTransformer", at: url))
        #expect(KeyedArchives.rootObject(of: stored) as? [String] == ["red", "blue"])
        #expect(try Self.reread(transformer: "NSSecureUnarchiveFromDataTransformer", at: url) as? [String] == ["red", "blue"])
    }

    /// A decimal number cannot be archived on Linux (Foundation's NSDecimalNumber never finishes hashing):
    /// a validation error, not a stopped process.
    @Test func aDecimalFailsTheSaveInsteadOfStopping() throws {
        let folder = TemporaryFolder()
        let error = #expect(throws: NSError.self) { try Self.save(Decimal(string: "2.50")!, transformer: "", at: folder.file()) }
        #expect(error?.code == NSManagedObjectValidationError)
        #expect(error?.localizedDescription.contains("cannot be archived") == true, "\(String(describing: error))")
    }

    /// A stored archive one of whose parts cannot be decoded reads as its bytes.
    @Test func anArchiveWithAPartThatCannotBeDecodedReadsAsData() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        _ = try Self.save(["a"], transformer: "", at: url)
        let bytes = try #require(KeyedArchives.archive(["a", PartThatFailsToDecode()]))
        try RawSQL.execute(url, "UPDATE ZTHEME SET ZCOLOUR = X'\(bytes.map { String(format: "%02X", $0) }.joined())'")
        #expect(try Self.reread(transformer: "", at: url) as? Data == bytes)
    }

    /// A transformable column holds the transformer's bytes: a predicate compares it with data only, and
    /// refuses another constant (134060) rather than never matching.
    @Test func aPredicateComparesATransformableWithDataOnly() throws {
        let name = "ValueTransformerStoreTests.predicate"
        ValueTransformer.setValueTransformer(ColourTextTransformer(), forName: NSValueTransformerName(name))
        let folder = TemporaryFolder()
        let url = folder.file()
        _ = try Self.save(Colour(5, 6, 7), transformer: name, at: url)
        let stack = try SQLiteStack(model: Self.model(name), url: url)
        let (matches, refusal) = try withExtendedLifetime(stack.context) {
            let matches = try stack.fetch("Theme", "colour == %@", Data("5,6,7".utf8)).count
            var refusal: NSError?
            do { _ = try stack.fetch("Theme", "colour == %@", "5,6,7") } catch { refusal = error as NSError }
            return (matches, refusal)
        }
        #expect(matches == 1)
        #expect(refusal?.code == 134060, "\(String(describing: refusal))")
    }
}
