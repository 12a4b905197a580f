import Foundation
import Testing
@testable import OCDModel

// Foundation's ValueTransformer, which Linux Foundation lacks: the registry, the built-in transformers and
// NSSecureUnarchiveFromDataTransformer. Each test registers under names of its own: the registry is shared.

/// Turns a string into its reversed characters; its own reverse, as Foundation's default reverse is.
private final class ReversingTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSString.self }
    override func transformedValue(_ value: Any?) -> Any? { (value as? String).map { String($0.reversed()) } }
}

/// A secure-coding class, allowed by a subclass of the secure unarchiving transformer.
final class Swatch: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let name: String
    let red: Int
    init(name: String, red: Int) {
        self.name = name
        self.red = red
    }
    init?(coder: NSCoder) {
        guard let name = coder.decodeObject(of: NSString.self, forKey: "name") as String? else { return nil }
        self.name = name
        red = coder.decodeInteger(forKey: "red")
    }
    func encode(with coder: NSCoder) {
        coder.encode(name as NSString, forKey: "name")
        coder.encode(red, forKey: "red")
    }
    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? Swatch else { return false }
        return other.name == name && other.red == red
    }
    override var hash: Int { name.hashValue ^ red }
}

/// Archives, and reports an error when it is decoded, as a class does whose archive it cannot read.
final class FailsToDecode: NSObject, NSCoding {
    override init() {}
    init?(coder: NSCoder) {
        coder.failWithError(NSError(domain: NSCocoaErrorDomain, code: NSCoderReadCorruptError))
        return nil
    }
    func encode(with coder: NSCoder) { coder.encode(1, forKey: "version") }
}

/// Archived as "NSDecimalNumber" by the keyed-archive tests, with the fields of one (2.5), and hashable.
final class DecimalStandIn: NSObject, NSCoding {
    override init() {}
    init?(coder: NSCoder) {}
    func encode(with coder: NSCoder) {
        coder.encode(Int32(-1), forKey: "NS.exponent")
        coder.encode(Int32(1), forKey: "NS.length")
        coder.encode(false, forKey: "NS.negative")
        coder.encode(true, forKey: "NS.compact")
        coder.encode(Int32(1), forKey: "NS.mantissa.bo")
        coder.encode(Data([25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), forKey: "NS.mantissa")
    }
    override var hash: Int { 25 }
    override func isEqual(_ object: Any?) -> Bool { object is DecimalStandIn }
}

final class SwatchTransformer: NSSecureUnarchiveFromDataTransformer {
    override class var allowedTopLevelClasses: [AnyClass] { [Swatch.self] }
}

@Suite struct ValueTransformerTests {
    @Test func aRegisteredTransformerIsFoundByNameAndForwardedTo() throws {
        let name = NSValueTransformerName("ValueTransformerTests.reversing")
        #expect(ValueTransformer(forName: name) == nil)
        ValueTransformer.setValueTransformer(ReversingTransformer(), forName: name)
        let found = try #require(ValueTransformer(forName: name))
        #expect(found.transformedValue("abc") as? String == "cba")
        #expect(found.reverseTransformedValue("cba") as? String == "abc")
        #expect(ValueTransformer.valueTransformerNames().contains(name))

        ValueTransformer.setValueTransformer(nil, forName: name)
        #expect(ValueTransformer(forName: name) == nil)
        #expect(!ValueTransformer.valueTransformerNames().contains(name))
    }

    @Test func theBuiltInTransformersAreRegisteredUnderApplesNames() throws {
        let names = ValueTransformer.valueTransformerNames()
        for name in [NSValueTransformerName.negateBooleanTransformerName, .isNilTransformerName, .isNotNilTransformerName,
                     .keyedUnarchiveFromDataTransformerName, .secureUnarchiveFromDataTransformerName] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue == "NSSecureUnarchiveFromData")
        #expect(NSValueTransformerName.keyedUnarchiveFromDataTransformerName.rawValue == "NSKeyedUnarchiveFromData")
        // Linux Foundation has no NSUnarchiver for the old unkeyed archives.
        #expect(ValueTransformer(forName: .unarchiveFromDataTransformerName) == nil)

        let negate = try #require(ValueTransformer(forName: .negateBooleanTransformerName))
        #expect((negate.transformedValue(true) as? NSNumber)?.boolValue == false)
        #expect((negate.reverseTransformedValue(NSNumber(value: false)) as? NSNumber)?.boolValue == true)
        let isNil = try #require(ValueTransformer(forName: .isNilTransformerName))
        let isNotNil = try #require(ValueTransformer(forName: .isNotNilTransformerName))
        #expect((isNil.transformedValue(nil) as? NSNumber)?.boolValue == true)
        #expect((isNil.transformedValue("x") as? NSNumber)?.boolValue == false)
        #expect((isNotNil.transformedValue("x") as? NSNumber)?.boolValue == true)

        let keyed = try #require(ValueTransformer(forName: .keyedUnarchiveFromDataTransformerName))
        let archive = try #require(keyed.reverseTransformedValue(["a", "b"]) as? Data)
        #expect(keyed.transformedValue(archive) as? [String] == ["a", "b"])
        // What cannot be archived or unarchived gives nil (Linux Foundation would stop the process).
        struct Point { var x = 1 }
        #expect(keyed.reverseTransformedValue(Point()) == nil)
        #expect(keyed.reverseTransformedValue([Point()]) == nil)
        #expect(keyed.transformedValue(Data("not an archive".utf8)) == nil)
    }

    @Test func theSecureUnarchiverAcceptsOnlyItsAllowedClasses() throws {
        let secure = NSSecureUnarchiveFromDataTransformer()
        let strings = try #require(secure.reverseTransformedValue(["red", "green"]) as? Data)
        #expect(secure.transformedValue(strings) as? [String] == ["red", "green"])
        #expect(secure.transformedValue("not data") == nil)
        #expect(secure.transformedValue(Data("not an archive".utf8)) == nil)

        let swatch = Swatch(name: "teal", red: 0)
        let archived = try #require(SwatchTransformer().reverseTransformedValue(swatch) as? Data)
        #expect(SwatchTransformer().transformedValue(archived) as? Swatch == swatch)
        // The base class's list does not allow a Swatch; the subclass's does not allow an array.
        #expect(secure.transformedValue(archived) == nil)
        #expect(SwatchTransformer().transformedValue(strings) == nil)
    }

    /// Foundation raises when a transformer that does not allow reverse transformation is asked for one.
    @Test func anIrreversibleTransformerStopsWhenReversed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let isNil = ValueTransformer(forName: .isNilTransformerName)
            _ = isNil?.reverseTransformedValue(NSNumber(value: true))
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("reverse transformation is not allowed"), "stopped with another message: \(output)")
    }

    /// Registering what `init(forName:)` returned registers the transformer it forwards to, so its class
    /// (and whether it can be reversed) is the original's.
    @Test func aForwardingInstanceRegistersWhatItForwardsTo() throws {
        let name = NSValueTransformerName("ValueTransformerTests.isNilAgain")
        ValueTransformer.setValueTransformer(try #require(ValueTransformer(forName: .isNilTransformerName)), forName: name)
        let registered = try #require(ValueTransformer.registeredTransformer(forName: name))
        #expect(type(of: registered) != ValueTransformer.self)
        #expect(!type(of: registered).allowsReverseTransformation())
        ValueTransformer.setValueTransformer(nil, forName: name)
    }

    /// Xcode writes the class name `NSSecureUnarchiveFromDataTransformer` as a model's transformer name;
    /// Foundation makes and registers an instance of a class it finds by that name.
    @Test func foundationsTransformerClassesAreFoundByClassName() throws {
        let name = NSValueTransformerName("NSSecureUnarchiveFromDataTransformer")
        let secure = try #require(ValueTransformer(forName: name))
        let archive = try #require(secure.reverseTransformedValue(["x"]) as? Data)
        #expect(secure.transformedValue(archive) as? [String] == ["x"])
        #expect(ValueTransformer.valueTransformerNames().contains(name))
        #expect(ValueTransformer(forName: NSValueTransformerName("ValueTransformerTests.NoSuchClass")) == nil)
    }

    @Test func aSubclassCannotHandOutARegisteredTransformer() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = NSSecureUnarchiveFromDataTransformer(forName: .secureUnarchiveFromDataTransformerName)
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("call ValueTransformer(forName:) instead"), "stopped with another message: \(output)")
    }

    /// What Linux Foundation's archiver and unarchiver would stop the process on gives nil instead.
    @Test func keyedArchivesRefuseWhatLinuxFoundationStopsOn() throws {
        #expect(KeyedArchives.archive([1, 2.5, "x", Date(timeIntervalSinceReferenceDate: 0)] as [Any]) != nil)
        #expect(KeyedArchives.archive(NSNumber(value: 3)) != nil)
        // Decimal numbers: NSDecimalNumber's hash never returns, and the archiver hashes what it archives.
        #expect(KeyedArchives.archive(Decimal(2)) == nil)
        #expect(KeyedArchives.archive(["price": Decimal(2)]) == nil)
        // Nesting deeper than a thousand levels.
        var deep: Any = "leaf"
        for _ in 0..<1_200 { deep = [deep] }
        #expect(KeyedArchives.archive(deep) == nil)

        // An archive one of whose parts fails to decode reads as nothing, not as the parts that did.
        let parts = try #require(KeyedArchives.archive(["a", FailsToDecode(), "b"]))
        #expect(KeyedArchives.rootObject(of: parts) == nil)
        #expect(KeyedArchives.rootObject(of: try #require(KeyedArchives.archive(["a", "b"]))) as? [String] == ["a", "b"])
        // A date of seconds that are no number (Linux Foundation stops describing it) reads as nothing,
        // alone or inside a collection.
        for seconds in [Double.nan, .infinity] {
            let date = NSDate(timeIntervalSinceReferenceDate: seconds)
            for value in [date as Any, [date] as Any, ["when": date] as Any] {
                let archive = try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: false)
                #expect(KeyedArchives.rootObject(of: archive) == nil)
            }
        }
        // A set of decimal numbers, or a dictionary keyed by them, as Core Data on Apple platforms writes a
        // transformable set of decimals: decoding it would hash an NSDecimalNumber, which never finishes
        // on Linux; it reads as nothing. (Made here with a stand-in class archived under that name: Linux
        // Foundation cannot even build such a set.) A decimal as an array's member or a value decodes.
        func archivedAsDecimals(_ root: Any) -> Data {
            let archiver = NSKeyedArchiver(requiringSecureCoding: false)
            archiver.outputFormat = .xml
            archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
            archiver.finishEncoding()
            let text = String(decoding: archiver.encodedData, as: UTF8.self)
            return Data(text.replacingOccurrences(of: String(reflecting: DecimalStandIn.self), with: "NSDecimalNumber").utf8)
        }
        #expect(KeyedArchives.rootObject(of: archivedAsDecimals(NSSet(array: [DecimalStandIn()]))) == nil)
        #expect(KeyedArchives.rootObject(of: archivedAsDecimals(NSDictionary(dictionary: [DecimalStandIn(): "x"]))) == nil)
        // Linux Foundation's own ordered and counted sets keep members under NS.object.0, NS.object0….
        #expect(KeyedArchives.rootObject(of: archivedAsDecimals(NSOrderedSet(array: [DecimalStandIn()]))) == nil)
        #expect(KeyedArchives.rootObject(of: archivedAsDecimals(NSCountedSet(array: [DecimalStandIn()]))) == nil)
        let listed = KeyedArchives.rootObject(of: archivedAsDecimals(NSArray(array: [DecimalStandIn()]))) as? [Any]
        #expect(listed?.count == 1 && listed?.first is Decimal, "\(String(describing: listed))")
        let fine = try NSKeyedArchiver.archivedData(withRootObject: [NSDate(timeIntervalSinceReferenceDate: 5)], requiringSecureCoding: false)
        #expect((KeyedArchives.rootObject(of: fine) as? [Date])?.first?.timeIntervalSinceReferenceDate == 5)
    }
}
