import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process for tests, started with `posix_spawn`.
///
/// Not Foundation's `Process`: on Linux its `run()` (swift-corelibs-foundation up to Swift 6.3) copies
/// a whole 256-byte `d_name` out of each `/proc/self/fd` entry it lists, reading past glibc's buffer
/// when an entry sits at its end, and now and then the test process crashes there (SIGSEGV in
/// `memmove` under `Process.run()`, seen in CI and here; swift-corelibs-foundation#5472). This one
/// lists nothing: the child closes every descriptor above the standard three itself
/// (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34), and its signals start at their defaults.
/// The ends of its pipes this process keeps are close-on-exec.
public final class ChildProcess: @unchecked Sendable {
    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe, whose other end this object holds (``standardInput``, ``standardOutput``, ``standardError``).
        case pipe
        /// The test process's own.
        case inherit
        /// Standard error only: where standard output goes.
        case output
    }

    /// How it ended.
    public enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)

        /// The exit status, or the signal's number (what Foundation's `terminationStatus` says).
        public var status: Int32 {
            switch self {
            case .exited(let code), .signalled(let code): code
            }
        }
    }

    public let identifier: pid_t
    /// The write end of its standard input, when that is a pipe.
    public let standardInput: FileHandle?
    /// The read end of its standard output, when that is a pipe.
    public let standardOutput: FileHandle?
    /// The read end of its standard error, when that is a pipe.
    public let standardError: FileHandle?
    private let lock = NSLock()
    private var ended: Termination?

    /// Starts `executable` (a path) with `arguments`, in `environment` (default: this process's).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        input: Stream = .null, output: Stream = .null, error: Stream = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        for (target, stream) in [input, output, error].enumerated() {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(
                    &actions, Int32(target), "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else {
                    for case let descriptor? in parentEnds { close(descriptor) }
                    throw ChildProcessError(message: "pipe2: errno \(errno)")
                }
                let (childEnd, parentEnd) = target == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                _ = fcntl(parentEnd, F_SETFD, FD_CLOEXEC)
                posix_spawn_file_actions_adddup2(&actions, childEnd, Int32(target))
                childEnds.append(childEnd)
                parentEnds[target] = parentEnd
            case .inherit:
                break
            case .output:
                posix_spawn_file_actions_adddup2(&actions, 1, Int32(target))
            }
        }
        if let closeFrom = Self.addCloseFrom {
            _ = closeFrom(&actions, 3)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var argv = ([executable] + arguments).map { strdup($0) }
        var envp = environment.map { strdup($0) }
        defer { for pointer in argv + envp { free(pointer) } }
        argv.append(nil)
        envp.append(nil)
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            for case let descriptor? in parentEnds { close(descriptor) }
            throw ChildProcessError(message: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        identifier = pid
        standardInput = parentEnds[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardOutput = parentEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardError = parentEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    /// Whether it has not ended (a child that ended is reaped here).
    public var isRunning: Bool {
        lock.withLock {
            guard ended == nil else { return false }
            var status: Int32 = 0
            guard waitpid(identifier, &status, WNOHANG) == identifier else { return true }
            ended = Self.termination(status)
            return false
        }
    }

    /// Sends it `signal` (unless it was reaped already).
    public func send(_ signal: Int32) {
        lock.withLock { if ended == nil { _ = kill(identifier, signal) } }
    }

    /// Waits for it to end.
    @discardableResult
    public func wait() -> Termination {
        while true {
            if let ended = lock.withLock({ ended }) { return ended }
            var status: Int32 = 0
            let result = waitpid(identifier, &status, 0)
            if result == identifier {
                let termination = Self.termination(status)
                lock.withLock { ended = termination }
                return termination
            }
            if result < 0, errno == EINTR { continue }
            // Reaped by `isRunning` on another thread meanwhile: its record is read above.
            if let ended = lock.withLock({ ended }) { return ended }
            return .exited(-1)
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not
    /// declare (`_GNU_SOURCE`); `nil` without it (the child then inherits what is not close-on-exec).
    private static let addCloseFrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else { return nil }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    private static func termination(_ status: Int32) -> Termination {
        status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }

    /// Runs `executable` to its end; its standard output (with its standard error when
    /// `mergingErrors`, else that goes to `/dev/null`).
    public static func run(_ executable: String, _ arguments: [String], mergingErrors: Bool = false) throws -> (
        status: Int32, output: Data
    ) {
        let child = try ChildProcess(executable, arguments, output: .pipe, error: mergingErrors ? .output : .null)
        let output = child.standardOutput!.readDataToEndOfFile()
        return (child.wait().status, output)
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
