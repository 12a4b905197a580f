import ArgumentParser
import Foundation

/// Where a command writes: the process's stdout/stderr, or strings when a test runs the tool in-process.
public final class Console: @unchecked Sendable {
    private let capturing: Bool
    private let lock = NSLock()
    private var capturedOutput = ""
    private var capturedError = ""

    init(capturing: Bool) { self.capturing = capturing }

    static let standard = Console(capturing: false)

    func print(_ line: String) {
        if capturing { lock.withLock { capturedOutput += line + "\n" } } else { Swift.print(line) }
    }

    func printError(_ line: String) {
        if capturing {
            lock.withLock { capturedError += line + "\n" }
        } else {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    var output: String { lock.withLock { capturedOutput } }
    var error: String { lock.withLock { capturedError } }

    @TaskLocal static var current: Console = .standard
}

/// `cdtool`: the OpenCoreData command-line tool for predicates, models and stores.
public struct CDTool: ParsableCommand {
    /// The command tree: `cdtool predicate format|evaluate`, `cdtool model inspect|hashes|validate|diagram`,
    /// `cdtool compile`, `cdtool store inspect|dump`.
    public static let configuration = CommandConfiguration(
        commandName: "cdtool",
        abstract: "OpenCoreData's tool for predicates, models and stores.",
        subcommands: [PredicateCommand.self, ModelCommand.self, CompileCommand.self, StoreCommand.self]
    )

    /// ArgumentParser builds commands itself; this exists for its protocol.
    public init() {}

    /// Runs the tool with `arguments` (without the program name), capturing what it prints.
    /// Returns the exit status: 0 on success, 1 for bad input, ArgumentParser's codes for bad usage.
    public static func run(_ arguments: [String]) -> (status: Int32, output: String, error: String) {
        let console = Console(capturing: true)
        let status = Console.$current.withValue(console) { execute(arguments) }
        return (status, console.output, console.error)
    }

    /// The executable's entry point: runs with the process's arguments and exits with the status.
    public static func runAsMain() -> Never {
        Foundation.exit(execute(Array(CommandLine.arguments.dropFirst())))
    }

    private static func execute(_ arguments: [String]) -> Int32 {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            return 0
        } catch let exit as ExitCode {
            return exit.rawValue
        } catch {
            let message = fullMessage(for: error)
            if !message.isEmpty {
                let status = exitCode(for: error)
                if status == .success { Console.current.print(message) } else { Console.current.printError(message) }
            }
            return exitCode(for: error).rawValue
        }
    }
}

/// Reports a failure the way every command does: the message on stderr, exit status 1.
func fail(_ message: String) -> ExitCode {
    Console.current.printError("error: " + message)
    return ExitCode(1)
}
