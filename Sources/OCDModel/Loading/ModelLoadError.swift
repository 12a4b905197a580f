import Foundation

/// A model file that cannot be loaded: which file, where in it, and what is wrong.
public struct ModelLoadError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file (a `contents` XML file, a `.xccurrentversion` plist, or the model folder).
    public var file: URL
    /// The line of the problem in the file, when known.
    public var line: Int?
    /// What is wrong, e.g. `"the attribute 'age' has the unknown type 'Integer 128'"`.
    public var problem: String

    /// An error in `file` at `line`.
    public init(file: URL, line: Int?, problem: String) {
        self.file = file
        self.line = line
        self.problem = problem
    }

    /// `path:line: problem`, as compilers write it.
    public var description: String {
        "\(file.path)\(line.map { ":\($0)" } ?? ""): \(problem)"
    }
}
