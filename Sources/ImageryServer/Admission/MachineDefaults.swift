import Foundation
import Imagery

/// The defaults of ``ServerConfiguration`` that follow the machine: what one server may hold and
/// do at once grows with the processors it may use (`UsableProcessors`), within the memory it may
/// use (its cgroup's limit, else the machine's).
///
/// - Memory limit: 128 MiB a processor, at least 512 MiB (the default these rules leave a 2-core
///   machine, measured under bursts in issue 9), and at most half the memory the process may use (a
///   container given 512 MiB gets 256 MiB, not an out-of-memory kill). Half of it is the in-flight
///   budget: on 16 processors, 1 GiB, so that 16 decodes of 20-megapixel sources fit at once.
/// - Requests waiting for memory or a decode: 32 a processor, at least 64. With 64 on 16 cores, a
///   load of 8 connections a core (96 requests for 12 decode slots) found the line full and 28 to
///   160 new sizes in 10 s were answered 503 (measured; none with 256).
/// - Origin fetches at once: 8 a processor, at least 16 (each new source a core decodes in ~25 ms
///   waits ~100–300 ms for a distant origin).
///
/// Every one of them is overridable as before (`--memory-limit`, `--admission-queue`,
/// `--max-fetches`, the configuration file); `imagery serve` prints what it runs with at start.
public struct MachineDefaults: Sendable, Hashable {
    /// The processors the rules were given.
    public var processors: Int
    /// The bytes of memory the process may use; `nil` when unknown.
    public var memory: Int?

    public init(processors: Int, memory: Int?) {
        self.processors = max(1, processors)
        self.memory = memory
    }

    /// This process's: `UsableProcessors.current` and ``usableMemory(readingFile:)``, read once.
    public static let current = MachineDefaults(
        processors: UsableProcessors.current.count, memory: usableMemory(readingFile: contents))

    public var memoryLimit: Int {
        let wanted = max(512 << 20, processors * (128 << 20))
        guard let memory else { return wanted }
        return max(64 << 20, min(wanted, memory / 2))
    }

    public var admissionQueueLength: Int { max(64, 32 * processors) }

    public var maximumConcurrentFetches: Int { max(16, 8 * processors) }

    // MARK: - Memory

    /// The least of the machine's memory (`MemTotal` of `/proc/meminfo`) and the memory limits of the
    /// process's cgroup and every cgroup above it (v2 `memory.max`, v1 `memory.limit_in_bytes`);
    /// `nil` where none can be read.
    /// - Parameter readingFile: The text of a file by absolute path; `nil` when it is missing.
    public static func usableMemory(readingFile: (String) -> String?) -> Int? {
        var limits: [Int] = []
        if let meminfo = readingFile("/proc/meminfo"), let total = memTotal(meminfo) { limits.append(total) }
        if let text = readingFile("/proc/self/cgroup") {
            for (file, path) in memoryCgroups(text) {
                for directory in selfAndAncestors(path) {
                    if let limit = readingFile(directory + "/" + file).flatMap(cgroupLimit) { limits.append(limit) }
                }
            }
        }
        return limits.min()
    }

    /// `MemTotal` of `/proc/meminfo`'s text, in bytes.
    public static func memTotal(_ meminfo: String) -> Int? {
        for line in meminfo.split(separator: "\n") where line.hasPrefix("MemTotal:") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 2, let kibibytes = Int(fields[1]) else { return nil }
            return kibibytes * 1024
        }
        return nil
    }

    /// A cgroup memory limit file's text in bytes; `nil` for `max` (v2) or a v1 "no limit" (a number
    /// near the largest 64-bit value), or text that is not a number.
    public static func cgroupLimit(_ text: String) -> Int? {
        guard let bytes = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes > 0, bytes < 1 << 60 else {
            return nil
        }
        return bytes
    }

    /// The memory limit files to read, as (file name, directory under `/sys/fs/cgroup`), from
    /// `/proc/self/cgroup`'s text: v2's `0::PATH`, v1's `N:memory:PATH`.
    public static func memoryCgroups(_ text: String) -> [(file: String, path: String)] {
        var found: [(String, String)] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(fields[2]).trimmingCharacters(in: .whitespaces)
            if fields[0] == "0" && fields[1].isEmpty {
                found.append(("memory.max", "/sys/fs/cgroup" + (path == "/" ? "" : path)))
            } else if fields[1].split(separator: ",").contains("memory") {
                found.append(("memory.limit_in_bytes", "/sys/fs/cgroup/memory" + (path == "/" ? "" : path)))
            }
        }
        return found
    }

    /// `directory` and each directory above it, up to the cgroup mount (a container that sees its
    /// host's cgroup path has its own cgroup mounted at the root: the missing directories set no limit).
    private static func selfAndAncestors(_ directory: String) -> [String] {
        var paths = [directory]
        var current = directory
        while let slash = current.lastIndex(of: "/"), current.count > "/sys/fs/cgroup".count {
            current = String(current[..<slash])
            if current.count >= "/sys/fs/cgroup".count { paths.append(current) }
        }
        return paths
    }

    private static func contents(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }
}
