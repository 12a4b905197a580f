import Foundation

/// Executables of this package that tests run as processes.
public enum BuiltExecutables {
    /// The executable `name`, built beside the test bundle by `swift build --build-tests` / `swift test`;
    /// nil when it is not there.
    public static func url(named name: String) -> URL? {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }
}
