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
        if capturing { lock.withLock { capturedOutput += line + "\n" }; return }
        Swift.print(line)
        // A closed output (`cdtool store dump … | head`): SIGPIPE is ignored so that the temporary copies
        // are removed before the tool ends, rather than the signal ending it with them left behind. A
        // flush now and then finds out (each line's would cost a write).
        printed &+= 1
        if printed % 256 == 0, fflush(nil) == EOF, errno == EPIPE { CDTool.end(status: 141) }
    }

    private var printed = 0

    func printError(_ line: String) {
        if capturing {
            lock.withLock { capturedError += line + "\n" }
        } else {
            // Not `write(_:)`, which traps when the write fails: with SIGPIPE ignored, a closed stderr
            // is an error here, and ends the tool as a closed stdout does.
            do {
                try FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
            } catch {
                CDTool.end(status: 141)
            }
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
        handleSignals()
        Foundation.exit(execute(Array(CommandLine.arguments.dropFirst())))
    }

    /// Dispatch sources for the signals that end the tool, so that its temporary store copies are removed
    /// first (the handlers run on a queue, not in signal context).
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []

    private static func handleSignals() {
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGINT, SIGTERM, SIGHUP] {
            // A signal the tool was started with ignored (`nohup`, a background job of a script) stays
            // ignored: the source would install a handler of its own.
            var current = sigaction()
            if sigaction(number, nil, &current) == 0, unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { end(status: 128 + number) }
            source.resume()
            signalSources.append(source)
        }
    }

    /// Removes the temporary store copies and ends the process with `status`.
    static func end(status: Int32) -> Never {
        StoreCopy.removeAll()
        Foundation.exit(status)
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
