import Foundation
import Testing
import OCDGraph
import OCDModel
import OCDStore
import OCDTestSupport
import Synchronization

// `EntityLayout.slot(named:)` looks a key up by its String's raw bits first (the layout's name index)
// and falls back to `slotByName`: whatever the key's representation (small or heap string, another
// instance with equal contents, a non-normalized spelling), it must answer what `slotByName` answers.

/// A model whose property names cover every representation the name index meets.
enum NameIndexModel {
    /// Names by UTF-8 length: small strings (up to 15 bytes), heap strings (16 and more), non-ASCII.
    static let names = [
        "a",
        "id",
        "name",
        "abcdefghijklmn", // 14 bytes
        "abcdefghijklmno", // 15 bytes: the longest small string
        "abcdefghijklmnop", // 16 bytes: the shortest heap string
        "abcdefghijklmnopq",
        "aVeryLongAttributeNameThatIsStoredOnTheHeap",
        "größe", // 7 bytes, not ASCII
        "名前", // 6 bytes
        "größeDerAbteilungInQuadratmetern", // heap, not ASCII
        "名前と説明と備考", // 24 bytes
        "emoji🙂", // 9 bytes, a 4-byte scalar
    ]

    /// `count` attributes, half short and half long names, to fill (and collide in) a larger table.
    static func wideNames(_ count: Int) -> [String] {
        (0..<count).map { $0.isMultiple(of: 2) ? "f\($0)" : "attributeWithALongerName\($0)" }
    }

    static func attribute(_ name: String, _ type: NSAttributeType = .stringAttributeType) -> NSAttributeDescription {
        ModelDescriptions.attribute(name, type)
    }

    /// Entities: Gadget (``names`` plus a to-one `owner` to Wide), Wide (`wideCount` attributes and the
    /// inverse `gadgets`), Empty (no properties).
    static func make(wideCount: Int = 40) -> NSManagedObjectModel {
        let gadget = NSEntityDescription(), wide = NSEntityDescription(), empty = NSEntityDescription()
        gadget.name = "Gadget"
        wide.name = "Wide"
        empty.name = "Empty"
        for entity in [gadget, wide, empty] { entity.managedObjectClassName = "NSManagedObject" }
        let owner = NSRelationshipDescription(), gadgets = NSRelationshipDescription()
        owner.name = "owner"
        owner.destinationEntity = wide
        owner.maxCount = 1
        owner.isOptional = true
        gadgets.name = "gadgetsOfThisWideEntity"
        gadgets.destinationEntity = gadget
        gadgets.maxCount = 0
        gadgets.isOptional = true
        owner.inverseRelationship = gadgets
        gadgets.inverseRelationship = owner
        gadget.properties = names.map { attribute($0) } + [owner]
        wide.properties = wideNames(wideCount).map { attribute($0, .integer64AttributeType) } + [gadgets]
        let model = NSManagedObjectModel()
        model.entities = [gadget, wide, empty]
        return model
    }
}

/// Equal strings built in ways that give them other representations or other storage than the model's.
func otherSpellings(of name: String) -> [(how: String, key: String)] {
    var reserved = ""
    reserved.reserveCapacity(64)
    reserved += name
    var appended = String(repeating: "", count: 1)
    for character in name { appended.append(character) }
    var grownAndShrunk = name
    grownAndShrunk.append("#")
    grownAndShrunk.removeLast()
    let middle = name.index(name.startIndex, offsetBy: name.count / 2)
    let joined = [String(name[..<middle]), String(name[middle...])].joined()
    let substring = String(("<" + name + ">").dropFirst().dropLast())
    let bridged = NSString(string: name).substring(from: 0)
    let mutableBridged = NSMutableString(string: name).appending("")
    return [
        ("literal copy", name),
        ("reserved capacity", reserved),
        ("appended characters", appended),
        ("grown and shrunk", grownAndShrunk),
        ("joined halves", joined),
        ("substring", substring),
        ("from UTF-8 bytes", String(decoding: Array(name.utf8), as: UTF8.self)),
        ("from Data", String(data: Data(name.utf8), encoding: .utf8) ?? "<not decoded>"),
        ("from C string", name.withCString { String(cString: $0) }),
        ("from unicode scalars", String(String.UnicodeScalarView(name.unicodeScalars))),
        ("from characters", String(Array(name))),
        ("interpolated", "\(name)"),
        ("NSString", bridged),
        ("NSMutableString", mutableBridged),
    ]
}

/// The raw bits of a string, to check that a spelling really is another instance.
func stringBits(_ string: String) -> [UInt8] {
    withUnsafeBytes(of: string) { Array($0) }
}

@Suite("Entity layout: slot lookup by name")
struct EntityLayoutNameIndexTests {
    /// A model in use (a coordinator froze it), as layouts require.
    let model: NSManagedObjectModel
    let coordinator: NSPersistentStoreCoordinator

    init() {
        model = NameIndexModel.make()
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    }

    func layout(_ name: String) throws -> EntityLayout {
        EntityLayout.of(try #require(model.entitiesByName[name]))
    }

    @Test func everyPropertyIsFoundAtItsSlotUnderItsOwnName() throws {
        for entityName in ["Gadget", "Wide", "Empty"] {
            let layout = try layout(entityName)
            #expect(layout.slotByName.count == layout.properties.count)
            for (index, property) in layout.properties.enumerated() {
                #expect(layout.slotByName[property.name] == index, "\(entityName).\(property.name)")
                #expect(layout.slot(named: property.name) == index, "\(entityName).\(property.name)")
            }
        }
    }

    @Test(arguments: NameIndexModel.names + ["owner"])
    func everySpellingOfANameFindsTheSameSlot(name: String) throws {
        let layout = try layout("Gadget")
        let slot = try #require(layout.slotByName[name])
        #expect(layout.properties[slot].name == name)
        for (how, key) in otherSpellings(of: name) {
            #expect(key == name, "\(how)")
            #expect(layout.slot(named: key) == slot, "\(how) of \(name)")
        }
    }

    @Test func heapStringKeysAreOtherInstancesThanTheModelsNamesAndStillFound() throws {
        let layout = try layout("Gadget")
        for name in NameIndexModel.names where name.utf8.count > 15 {
            let slot = try #require(layout.slotByName[name])
            var reserved = ""
            reserved.reserveCapacity(128)
            reserved += name
            // Another allocation while the model's name is alive: other bits, equal contents.
            #expect(stringBits(reserved) != stringBits(layout.properties[slot].name))
            #expect(layout.slot(named: reserved) == slot, "\(name)")
            let viaSubstring = String(Substring(reserved))
            #expect(layout.slot(named: viaSubstring) == slot, "\(name)")
        }
    }

    @Test func smallNamesInHeapStorageAreFound() throws {
        // A short name held in a heap buffer (reserved capacity) has other bits than its small form.
        let layout = try layout("Gadget")
        for name in NameIndexModel.names where name.utf8.count <= 15 {
            var heap = ""
            heap.reserveCapacity(100)
            heap += name
            #expect(stringBits(heap) != stringBits(name), "\(name) should be in heap storage for this test")
            #expect(layout.slot(named: heap) == layout.slotByName[name], "\(name)")
            #expect(layout.slot(named: heap) != nil, "\(name)")
        }
    }

    @Test func nonASCIINamesAreFoundInEveryNormalizationSwiftCallsEqual() throws {
        let layout = try layout("Gadget")
        let composed = try #require(layout.slot(named: "größe"))
        #expect(layout.properties[composed].name == "größe")
        // Decomposed ö (o + U+0308): equal as Swift Strings, other bytes; the dictionary answers it.
        let decomposed = "gro\u{0308}ße"
        #expect(decomposed == "größe")
        #expect(Array(decomposed.utf8) != Array("größe".utf8))
        #expect(layout.slotByName[decomposed] == composed)
        #expect(layout.slot(named: decomposed) == composed)
        let longDecomposed = "gro\u{0308}ßeDerAbteilungInQuadratmetern"
        #expect(layout.slot(named: longDecomposed) == layout.slotByName["größeDerAbteilungInQuadratmetern"])
        #expect(layout.slot(named: longDecomposed) != nil)
        #expect(layout.slot(named: "名前") == layout.slotByName["名前"])
        #expect(layout.slot(named: "名前") != nil)
        #expect(layout.slot(named: "名前と説明と備考") != nil)
        #expect(layout.slot(named: "emoji🙂") != nil)
        #expect(Set(["größe", "名前", "名前と説明と備考", "emoji🙂"].compactMap { layout.slot(named: $0) }).count == 4)
    }

    @Test(arguments: [
        "", " ", "nam", "name ", "Name", "NAME", "ame", "ids", "größ", "grösse", "名", "名前と", "emoji",
        "abcdefghijklmnp", "abcdefghijklmnoo", "abcdefghijklmnopr", "abcdefghijklmnopqr",
        "aVeryLongAttributeNameThatIsStoredOnTheHea", "aVeryLongAttributeNameThatIsStoredOnTheHeapX",
        "f0", "attributeWithALongerName1", "gadgetsOfThisWideEntity",
    ])
    func unknownKeysAreNil(key: String) throws {
        let layout = try layout("Gadget")
        #expect(layout.slotByName[key] == nil)
        #expect(layout.slot(named: key) == nil)
        for (how, spelling) in otherSpellings(of: key) {
            #expect(layout.slot(named: spelling) == nil, "\(how) of \(key.debugDescription)")
        }
    }

    @Test func keysWithNULCharactersAreNotTheNamesBeforeTheNUL() throws {
        let layout = try layout("Gadget")
        for key in ["\u{0}", "a\u{0}", "id\u{0}", "name\u{0}x", "abcdefghijklmno\u{0}", "aVeryLongAttributeNameThatIsStoredOnTheHeap\u{0}"] {
            #expect(layout.slotByName[key] == nil, "\(key.debugDescription)")
            #expect(layout.slot(named: key) == nil, "\(key.debugDescription)")
            var heap = ""
            heap.reserveCapacity(100)
            heap += key
            #expect(layout.slot(named: heap) == nil, "\(key.debugDescription)")
        }
    }

    @Test func anEntityWithoutPropertiesFindsNothing() throws {
        let layout = try layout("Empty")
        #expect(layout.properties.isEmpty)
        for key in ["", "a", "name", "aVeryLongAttributeNameThatIsStoredOnTheHeap"] {
            #expect(layout.slot(named: key) == nil)
        }
    }

    @Test func manyPropertiesAreEachFoundAtTheirOwnSlot() throws {
        let layout = try layout("Wide")
        #expect(layout.properties.count == 41)
        var seen = Set<Int>()
        for name in NameIndexModel.wideNames(40) + ["gadgetsOfThisWideEntity"] {
            let slot = try #require(layout.slotByName[name])
            #expect(layout.properties[slot].name == name)
            seen.insert(slot)
            for (how, key) in otherSpellings(of: name) {
                #expect(layout.slot(named: key) == slot, "\(how) of \(name)")
            }
        }
        #expect(seen.count == 41)
        // Neighbours of the names: misses, however the table's probing runs.
        for index in 40..<80 {
            #expect(layout.slot(named: "f\(index)") == nil)
            #expect(layout.slot(named: "attributeWithALongerName\(index)") == nil)
        }
    }

    @Test(arguments: [1, 7, 8, 9, 16, 17, 63, 64, 65, 300])
    func tablesOfEverySizeFindEveryName(count: Int) throws {
        let model = NameIndexModel.make(wideCount: count)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try withExtendedLifetime(coordinator) {
            let layout = EntityLayout.of(try #require(model.entitiesByName["Wide"]))
            #expect(layout.properties.count == count + 1)
            for name in NameIndexModel.wideNames(count) {
                let slot = try #require(layout.slotByName[name])
                #expect(layout.slot(named: name) == slot, "\(name)")
                #expect(layout.slot(named: String(decoding: Array(name.utf8), as: UTF8.self)) == slot, "\(name)")
                var heap = ""
                heap.reserveCapacity(80)
                heap += name
                #expect(layout.slot(named: heap) == slot, "\(name)")
            }
            #expect(layout.slot(named: "f\(count + 1)") == nil)
            #expect(layout.slot(named: "") == nil)
        }
    }

    @Test func inheritedPropertiesAreFoundInTheSubentitysLayout() throws {
        let model = TestModel.make()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try withExtendedLifetime(coordinator) {
            for entity in model.entities {
                let layout = EntityLayout.of(entity)
                for (index, property) in layout.properties.enumerated() {
                    for (how, key) in otherSpellings(of: property.name) {
                        #expect(layout.slot(named: key) == index, "\(how) of \(entity.name ?? "?").\(property.name)")
                    }
                }
            }
            let manager = EntityLayout.of(try #require(model.entitiesByName["Manager"]))
            let employee = EntityLayout.of(try #require(model.entitiesByName["Employee"]))
            #expect(manager.slot(named: "reports") != nil)
            #expect(employee.slot(named: "reports") == nil)
            #expect(manager.slot(named: "name") == employee.slot(named: "name"))
        }
    }

    @Test func concurrentLookupsAgreeWithTheDictionary() throws {
        let layout = try layout("Gadget")
        let keys = (NameIndexModel.names + ["owner", "", "unknown", "aVeryLongUnknownAttributeNameXYZ"]).flatMap { name in
            otherSpellings(of: name).map { (key: $0.key, slot: layout.slotByName[name]) }
        }
        let mismatches = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var local = 0
            for _ in 0..<200 {
                for (key, slot) in keys where layout.slot(named: key) != slot { local += 1 }
            }
            mismatches.withLock { $0 += local }
        }
        #expect(mismatches.withLock { $0 } == 0)
    }

    @Test func storeRowsAnswerValuesByAnySpellingOfTheName() throws {
        let gadget = try #require(model.entitiesByName["Gadget"])
        let store = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let id = try #require(try store.newObjectIDs(for: gadget, count: 1).first)
        let layout = EntityLayout.of(gadget)
        let values: [Any?] = layout.properties.map { $0 is NSAttributeDescription ? "value of \($0.name)" : nil }
        let row = StoreRow(objectID: id, version: 1, values: values)
        for name in NameIndexModel.names {
            for (how, key) in otherSpellings(of: name) {
                #expect(row.value(named: key) as? String == "value of \(name)", "\(how) of \(name)")
            }
        }
        #expect(row.value(named: "unknown") == nil)
        #expect(row.value(named: "") == nil)
    }
}

@Suite("Entity layout: key-value coding with any spelling of a key")
struct NameIndexKeyValueCodingTests {
    /// In memory in the SQLite conformance run too: the SQLite store refuses property names that cannot
    /// be column names (`größe`), and these tests are about finding slots by name, not about stores.
    static func stack() throws -> TestStack {
        try TestStack(model: NameIndexModel.make(), storeType: NSInMemoryStoreType, url: nil, options: nil)
    }

    @Test func longAndNonASCIIKeysWriteAndReadTheSameAttribute() throws {
        let stack = try Self.stack()
        let object = stack.insert("Gadget")
        for name in NameIndexModel.names {
            // Written through one spelling, read through every other.
            var key = ""
            key.reserveCapacity(96)
            key += name
            object.setValue("set via \(name)", forKey: key)
        }
        for name in NameIndexModel.names {
            for (how, key) in otherSpellings(of: name) {
                #expect(object.value(forKey: key) as? String == "set via \(name)", "\(how) of \(name)")
                #expect(object.primitiveValue(forKey: key) as? String == "set via \(name)", "\(how) of \(name)")
            }
        }
        let changed = object.changedValues()
        #expect(Set(changed.keys) == Set(NameIndexModel.names))
        #expect(object.dictionaryWithValues(forKeys: otherSpellings(of: "aVeryLongAttributeNameThatIsStoredOnTheHeap").map(\.key)).count == 1)

        try stack.context.save()
        let id = object.objectID
        let reader = stack.newContext()
        let fetched = try reader.existingObject(with: id)
        for name in NameIndexModel.names {
            let substring = String(("[" + name + "]").dropFirst().dropLast())
            #expect(fetched.value(forKey: substring) as? String == "set via \(name)", "\(name)")
            #expect(fetched.value(forKeyPath: substring) as? String == "set via \(name)", "\(name)")
        }
        #expect(fetched.committedValues(forKeys: [NSString(string: "名前と説明と備考").substring(from: 0)]).first?.value as? String == "set via 名前と説明と備考")
    }

    @Test func aLongKeySetOnANewObjectIsTheModeledAttributeNotAnotherOne() throws {
        let stack = try Self.stack()
        let object = stack.insert("Gadget")
        let long = "abcdefghijklmnop" // 16 bytes: a heap string; its 15-byte prefix is another attribute
        var key = String(repeating: "a", count: 1)
        key += "bcdefghijklmnop"
        #expect(key == long)
        object.setValue("sixteen", forKey: key)
        #expect(object.value(forKey: "abcdefghijklmnop") as? String == "sixteen")
        #expect(object.value(forKey: "abcdefghijklmno") == nil)
        #expect(object.value(forKey: "abcdefghijklmnopq") == nil)
        object.setValue("fifteen", forKey: String(key.dropLast()))
        #expect(object.value(forKey: "abcdefghijklmno") as? String == "fifteen")
        #expect(object.value(forKey: key) as? String == "sixteen")
        #expect(object.changedValues().count == 2)
    }

    @Test func aRelationshipIsSetAndReadThroughAnotherSpellingOfItsName() throws {
        let stack = try Self.stack()
        let gadget = stack.insert("Gadget")
        let wide = stack.insert("Wide")
        var key = ""
        key.reserveCapacity(40)
        key += "owner"
        gadget.setValue(wide, forKey: key)
        #expect(gadget.value(forKey: "owner") as? NSManagedObject === wide)
        let inverse = String(Substring("gadgetsOfThisWideEntity"))
        #expect(wide.value(forKey: inverse) as? Set<NSManagedObject> == [gadget])
    }
}
