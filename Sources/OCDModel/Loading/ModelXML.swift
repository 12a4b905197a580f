import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of a model file, with its attributes, children and line: the parsed file is small (one
/// model), and building descriptions needs random access (entities name their parents before they are read).
final class ModelXMLElement {
    let name: String
    let attributes: [String: String]
    let line: Int
    var children: [ModelXMLElement] = []

    init(name: String, attributes: [String: String], line: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
    }

    subscript(attribute: String) -> String? { attributes[attribute] }

    /// An attribute written only when YES, as Xcode writes booleans.
    func flag(_ attribute: String) -> Bool { attributes[attribute] == "YES" }

    func children(named name: String) -> [ModelXMLElement] { children.filter { $0.name == name } }

    func child(named name: String) -> ModelXMLElement? { children.first { $0.name == name } }

    /// Parses `data` (the `contents` of an `.xcdatamodel`), reporting malformed XML with its line.
    static func parse(_ data: Data, file: URL) throws -> ModelXMLElement {
        // Linux Foundation's XMLParser stops the process on a byte that is not UTF-8 in an element's or
        // attribute's name; such a file is malformed anyway.
        if let line = invalidUTF8Line(data) {
            throw ModelLoadError(file: file, line: line, problem: "malformed XML (a byte sequence that is not UTF-8)")
        }
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        builder.parser = parser
        let parsed = parser.parse()
        // On Linux parse() can return true after reporting errors, so the first reported error decides.
        guard parsed, builder.firstError == nil, let root = builder.root else {
            let code = (builder.firstError ?? parser.parserError).map { ($0 as NSError).code }
            let reason = code.map { "XMLParser error \($0)" } ?? "no root element"
            throw ModelLoadError(file: file, line: builder.errorLine ?? parser.lineNumber, problem: "malformed XML (\(reason))")
        }
        return root
    }

    /// The line of the first byte that is not UTF-8 in a document libxml2 reads as UTF-8: one that declares
    /// UTF-8, declares nothing, or declares an encoding it cannot start in without a byte order mark
    /// (UTF-16). Nil when there is no such byte, or the document has a UTF-16 byte order mark or starts
    /// as UTF-16 does, or declares a single-byte encoding (ISO-8859-1, windows-1252, ASCII), whose bytes
    /// are all characters.
    private static func invalidUTF8Line(_ data: Data) -> Int? {
        if data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE])
            || data.starts(with: [0x3C, 0x00]) || data.starts(with: [0x00, 0x3C]) { return nil }
        if let declared = declaredEncoding(data),
           declared.hasPrefix("iso-8859") || declared.hasPrefix("windows-") || declared.hasPrefix("cp125")
            || declared == "ascii" || declared == "us-ascii" || declared.hasPrefix("latin") { return nil }
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = data.makeIterator()
        var line = 1
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar): if scalar.count == 1, scalar.first == 0x0A { line += 1 }
            case .error: return line
            case .emptyInput: return nil
            }
        }
    }

    /// The encoding an XML declaration names (`encoding = 'ISO-8859-1'`, spaces and either quote),
    /// lowercased; nil without one.
    private static func declaredEncoding(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(256), as: UTF8.self).lowercased()
        guard head.hasPrefix("<?xml") || head.hasPrefix("\u{FEFF}<?xml"), let end = head.range(of: "?>"),
              let key = head.range(of: "encoding", range: head.startIndex..<end.lowerBound) else { return nil }
        var rest = head[key.upperBound..<end.lowerBound].drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    private final class Builder: NSObject, XMLParserDelegate {
        weak var parser: XMLParser?
        var stack: [ModelXMLElement] = []
        var root: ModelXMLElement?
        var errorLine: Int?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            let element = ModelXMLElement(name: elementName, attributes: attributes, line: parser.lineNumber)
            if let parent = stack.last { parent.children.append(element) } else if root == nil { root = element }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            if !stack.isEmpty { stack.removeLast() }
        }

        var firstError: Error?

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            if firstError == nil {
                firstError = parseError
                errorLine = parser.lineNumber
            }
        }
    }
}
