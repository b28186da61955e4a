import Foundation

/// The processors this process may actually run on: what pools of threads (decodes, encodes) are
/// sized by.
///
/// On Linux, the least of:
/// - the CPUs in the process's affinity mask (`sched_getaffinity`: `taskset`, `numactl`, a
///   container's `--cpuset-cpus`, which the kernel applies to the mask);
/// - the CPU quota of the process's own cgroup and of each cgroup above it (cgroup v2 `cpu.max`;
///   cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), rounded up: a container run with
///   `--cpus 2` on a 64-core host may use 2;
/// - `ProcessInfo.activeProcessorCount`;
///
/// and at least 1. Elsewhere (Apple platforms), `activeProcessorCount`.
///
/// Why: `activeProcessorCount` counts the CPUs online, not those the process may use. Measured on
/// a 2-core machine: under `taskset -c 0` it still says 2, and it ignores cgroup quotas; SwiftNIO's
/// `System.coreCount` reads the cgroup's quota and cpuset but not the affinity mask. A pool of 16
/// decode threads on the one core `taskset` left only switches between them.
///
/// The files are read from `/proc/self/cgroup` (the cgroup's path) and `/sys/fs/cgroup`; a file that
/// is missing or unreadable sets no limit. The parsing is in pure functions of the files' text
/// (``cgroupV2Quota(cpuMax:)``, ``cgroupV1Quota(quota:period:)``, ``cgroupPaths(_:)``).
public struct UsableProcessors: Sendable, Hashable, CustomStringConvertible {
    /// The processors the process may use: the least of the limits below and ``active``, at least 1.
    public var count: Int {
        max(1, [affinity, quota.map { Int($0.rounded(.up)) }, active].compactMap { $0 }.min() ?? 1)
    }
    /// CPUs in the process's affinity mask; `nil` where it cannot be read.
    public var affinity: Int?
    /// The cgroup CPU quota, in processors (1.5: 150 ms of CPU time every 100 ms); `nil`: no quota.
    public var quota: Double?
    /// `ProcessInfo.activeProcessorCount`.
    public var active: Int

    /// The limits given.
    public init(affinity: Int?, quota: Double?, active: Int) {
        self.affinity = affinity
        self.quota = quota
        self.active = active
    }

    /// The processors of this process, read once (at first use): pools are sized once, at start.
    public static let current = UsableProcessors.read()

    /// Reads the limits now.
    public static func read() -> UsableProcessors {
        let active = ProcessInfo.processInfo.activeProcessorCount
        #if os(Linux)
            return UsableProcessors(
                affinity: affinityCount(), quota: cgroupQuota(readingFile: Self.contents), active: active)
        #else
            return UsableProcessors(affinity: nil, quota: nil, active: active)
        #endif
    }

    /// "2 (affinity 2, cgroup quota 1.5, 4 active)": the count and what limits it.
    public var description: String {
        let quotaText = quota.map { "cgroup quota \(Self.format($0))" } ?? "no cgroup quota"
        return "\(count) (affinity \(affinity.map(String.init) ?? "unknown"), \(quotaText), \(active) active)"
    }

    private static func format(_ processors: Double) -> String {
        processors == processors.rounded() ? String(Int(processors)) : String((processors * 100).rounded() / 100)
    }
}

// MARK: - cgroups

extension UsableProcessors {
    /// Where the process's cgroups are, from `/proc/self/cgroup`'s text: the cgroup v2 path (the
    /// `0::PATH` line), and the cgroup v1 `cpu` controller's path with its hierarchy's controllers
    /// (`4:cpu,cpuacct:PATH`: mounted at `/sys/fs/cgroup/cpu,cpuacct`, often linked as `cpu`).
    public static func cgroupPaths(_ text: String) -> (v2: String?, v1: (controllers: String, path: String)?) {
        var v2: String?
        var v1: (String, String)?
        for line in text.split(separator: "\n") {
            // hierarchy-ID:controller-list:path (the path may itself hold colons).
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(fields[2]).trimmingCharacters(in: .whitespaces)
            if fields[0] == "0" && fields[1].isEmpty {
                v2 = path
            } else if fields[1].split(separator: ",").contains("cpu") {
                v1 = (String(fields[1]), path)
            }
        }
        return (v2, v1)
    }

    /// The quota of a cgroup v2 `cpu.max` file's text (`"150000 100000"`: 1.5 processors); `nil` for
    /// `"max 100000"` (no quota) or text that is not a quota.
    public static func cgroupV2Quota(cpuMax: String) -> Double? {
        let fields = cpuMax.split(whereSeparator: \.isWhitespace)
        guard let first = fields.first, let quota = Double(first) else { return nil }
        let period = fields.count > 1 ? Double(fields[1]) : 100_000  // the kernel's default period
        return processors(quota: quota, period: period)
    }

    /// The quota of cgroup v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us` texts; `nil` for a quota
    /// of -1 (none) or text that is not a quota.
    public static func cgroupV1Quota(quota: String, period: String) -> Double? {
        processors(
            quota: Double(quota.trimmingCharacters(in: .whitespacesAndNewlines)),
            period: Double(period.trimmingCharacters(in: .whitespacesAndNewlines))
        )
    }

    private static func processors(quota: Double?, period: Double?) -> Double? {
        guard let quota, let period, quota > 0, period > 0 else { return nil }
        return quota / period
    }

    /// The least CPU quota of the process's cgroup and every cgroup above it (a container's limit may be
    /// set on a parent of the process's own cgroup), v2 and v1 both; `nil` when none sets one.
    /// - Parameter readingFile: The text of a file by absolute path; `nil` when it is missing.
    public static func cgroupQuota(readingFile: (String) -> String?) -> Double? {
        guard let text = readingFile("/proc/self/cgroup") else { return nil }
        let paths = cgroupPaths(text)
        var quotas: [Double] = []
        if let path = paths.v2 {
            for directory in selfAndAncestors("/sys/fs/cgroup", path) {
                if let quota = readingFile(directory + "/cpu.max").flatMap(cgroupV2Quota) { quotas.append(quota) }
            }
        }
        if let (controllers, path) = paths.v1 {
            // The hierarchy's mount: named for its controllers, or `cpu` (a link to it, or its only controller).
            for mount in Set(["/sys/fs/cgroup/" + controllers, "/sys/fs/cgroup/cpu"]).sorted() {
                for directory in selfAndAncestors(mount, path) {
                    guard let quota = readingFile(directory + "/cpu.cfs_quota_us"),
                        let period = readingFile(directory + "/cpu.cfs_period_us"),
                        let processors = cgroupV1Quota(quota: quota, period: period)
                    else { continue }
                    quotas.append(processors)
                }
            }
        }
        return quotas.min()
    }

    /// `root` joined with `path` and with each of its ancestors up to `root` itself. A container
    /// whose cgroup namespace is not its own sees the host's path (`/docker/ID`) but has its cgroup
    /// mounted at the root: the missing directories set no limit, the root's does.
    private static func selfAndAncestors(_ root: String, _ path: String) -> [String] {
        let components = path.split(separator: "/").filter { $0 != "." && $0 != ".." }
        return (0...components.count).reversed().map { depth in
            ([root] + components.prefix(depth).map(String.init)).joined(separator: "/")
        }
    }

    private static func contents(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }
}

// MARK: - Affinity

#if os(Linux)
    extension UsableProcessors {
        /// The CPUs in the calling thread's affinity mask (threads inherit it from the process's start:
        /// `taskset` sets it for the whole process); `nil` where `sched_getaffinity` is not available.
        static func affinityCount() -> Int? {
            guard let getAffinity = schedGetAffinity else { return nil }
            // A mask for up to 1 024 CPUs, larger while the kernel's own is larger (EINVAL).
            var bytes = 128
            while bytes <= 1 << 16 {
                var mask = [UInt8](repeating: 0, count: bytes)
                let written = mask.withUnsafeMutableBytes { getAffinity(0, bytes, $0.baseAddress) }
                if written >= 0 { return mask.reduce(0) { $0 + $1.nonzeroBitCount } }
                guard errno == EINVAL else { return nil }
                bytes *= 2
            }
            return nil
        }

        /// glibc's `sched_getaffinity` (declared only with `_GNU_SOURCE`, which Swift's Glibc module does
        /// not set), looked up once.
        private static let schedGetAffinity: (@convention(c) (Int32, Int, UnsafeMutableRawPointer?) -> Int32)? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_getaffinity") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int, UnsafeMutableRawPointer?) -> Int32).self)
        }()
    }
#endif
