import Foundation

/// Finds and reads a model's `<Model>Model.strings` file: the localized names of entities and properties
/// and the texts of validation errors (`"Entity/Run" = "Lauf";`).
enum ModelLocalization {
    /// The strings file for the model at `modelURL`, looked for beside the model and in the `.lproj`
    /// folders there, preferred languages first, then `Base` and `en`. Nil when there is none.
    static func stringsFile(for modelURL: URL) -> URL? {
        var names: [String] = []
        var url = modelURL.standardizedFileURL
        if url.lastPathComponent == "contents" { url.deleteLastPathComponent() }
        var directory = url.deletingLastPathComponent()
        names.append(url.deletingPathExtension().lastPathComponent)
        if directory.pathExtension == "xcdatamodeld" {
            names.insert(directory.deletingPathExtension().lastPathComponent, at: 0)
            directory.deleteLastPathComponent()
        }
        var languages: [String] = []
        for language in Locale.preferredLanguages + ["Base", "en"] {
            languages.append(language)
            if let code = language.split(separator: "-").first.map(String.init), code != language { languages.append(code) }
        }
        let folders = [directory] + languages.map { directory.appendingPathComponent("\($0).lproj") }
        for folder in folders {
            for name in names {
                let file = folder.appendingPathComponent("\(name)Model.strings")
                if FileManager.default.fileExists(atPath: file.path) { return file }
            }
        }
        return nil
    }

    /// The key/value pairs of a `.strings` file (UTF-8 or UTF-16, comments allowed).
    static func read(_ file: URL) throws -> [String: String] {
        let plist: Any
        do {
            plist = try PropertyLists.propertyList(from: Data(contentsOf: file))
        } catch {
            throw ModelLoadError(file: file, line: nil, problem: "not a .strings file: \(error.localizedDescription)")
        }
        guard let pairs = plist as? [String: String] else {
            throw ModelLoadError(file: file, line: nil, problem: "not a .strings file: expected \"key\" = \"value\"; pairs")
        }
        return pairs
    }
}
