import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files the tests write (models, compiled models, stores), all inside one folder per test process that
/// is removed when the process exits: a test run used to leave some 750 folders in the temporary
/// directory, because most tests hand a path to code under test and have no teardown to remove it.
public enum ScratchFiles {
    /// The test run's scratch folder, made on first use and removed when the process that made it exits.
    /// Processes it starts (Swift Testing's exit tests, which may end by a crash and run no exit handler)
    /// find it in the environment and use it too. An exit test that starts before its parent has made the
    /// folder makes one of its own, which the parent removes as it exits, or the next run does.
    public static let folder: URL = {
        let variable = "OCD_TEST_SCRATCH_FOLDER"
        if let inherited = ProcessInfo.processInfo.environment[variable], !inherited.isEmpty {
            return URL(fileURLWithPath: inherited, isDirectory: true)
        }
        removeFoldersOfEndedProcesses()
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)\(getpid())-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Once per process. glibc's first `setenv` leaves the array other threads may be reading in place.
        setenv(variable, folder.path, 1)
        atexit {
            try? FileManager.default.removeItem(at: ScratchFiles.folder)
            ScratchFiles.removeFoldersOfEndedProcesses()
        }
        return folder
    }()

    private static let prefix = "ocd-tests-"

    /// Removes the scratch folders of processes that have ended without removing theirs.
    static func removeFoldersOfEndedProcesses() {
        let temporary = FileManager.default.temporaryDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix(while: \.isNumber)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
            }
        }
    }

    /// A path named `name` (`"Model.xcdatamodel"`, `"Out.momd"`, `"Store.sqlite"`) in a new folder of its
    /// own inside ``folder``: the folder exists, the path does not.
    public static func path(_ name: String) -> URL {
        newFolder().appendingPathComponent(name)
    }

    /// A new, empty folder inside ``folder``.
    public static func newFolder() -> URL {
        let url = folder.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
