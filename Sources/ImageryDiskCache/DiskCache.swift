import Foundation
import Imagery

/// A persistent, size-bounded cache of encoded bytes with their metadata.
///
/// - **Layout**: each entry's bytes in a file of its own (`blobs/`), the index in
///   SQLite (`index.sqlite`, WAL). The index is also kept in memory, in eviction order, so a
///   lookup never touches SQLite.
/// - **Hard limits**: every write evicts entries until the total size (and count) is under the
///   limit: by default GreedyDual-Size (``Eviction/greedyDualSize``: the least recently used,
///   large ones sooner), or LRU. Nothing waits for a sweep.
/// - **Faults**: the limit in effect follows the filesystem's free space (a full disk lowers it
///   and evicts, freed space raises it back); a read-only or removed directory makes the cache
///   memory-only until the directory can be used again; an index SQLite cannot read is salvaged
///   and set aside. Each is counted (``Stats/failedWrites``) and reported once when it begins and
///   once when it ends (``Configuration/onEvent``).
/// - **Crash safety**: bytes are written to `tmp/` and renamed into place, then the
///   row is committed; every entry carries a checksum verified on read. A file
///   that is missing, short, long or fails its checksum is a miss and is removed.
///   Opening reconciles the index with the files (orphans deleted, rows without
///   files forgotten), so sizes add up exactly after a `kill -9`.
/// - **Concurrency**: writes are queued to one writer thread and return at once;
///   an entry is readable the moment ``store(_:for:metadata:)`` returns. Small
///   entries are read on the caller's thread; large ones on the cache's reader
///   threads, with concurrent reads of one key coalesced.
/// - One process opens a directory at a time (an advisory lock refuses a second).
public final class DiskCache: DataCaching, @unchecked Sendable {
    // @unchecked: the mutable state below is guarded by `lock`; `index` and the pools are thread-safe;
    // `indexStore` and `nextFileID` are used on the writer thread only.

    /// The configuration the cache was opened with.
    public let configuration: Configuration

    struct IndexEntry: Sendable {
        let key: String
        let fileID: UInt64
        let size: Int
        let checksum: UInt64
        var metadata: CacheMetadata
        /// The entry file's name in its folder, kept so a read builds no strings.
        let name: String
        /// Raised by each update of its metadata.
        var revision: UInt64 = 0
    }

    struct Pending {
        var data: Data
        var metadata: CacheMetadata
        let generation: UInt64
    }

    /// Entries stored but not yet written, and how many bytes they hold.
    struct PendingWrites {
        private var entries: [String: Pending] = [:]
        private(set) var bytes = 0

        var isEmpty: Bool { entries.isEmpty }

        subscript(key: String) -> Pending? {
            get { entries[key] }
            set {
                bytes += (newValue?.data.count ?? 0) - (entries[key]?.data.count ?? 0)
                entries[key] = newValue
            }
        }

        mutating func removeAll() {
            entries.removeAll()
            bytes = 0
        }
    }

    /// The entries, in eviction order. Guarded by `lock`.
    var index: EntryIndex
    /// The open directory; nil while it cannot be used. Guarded by `lock`.
    var storage: Storage?
    /// What the directory allows now, and the fault that made it less. Guarded by `lock`.
    var mode = Mode.readWrite
    var degradedBy: Fault?
    /// Faults reported and not yet recovered from: each is reported once. Guarded by `lock`.
    var reportedFaults = Set<Fault>()
    let writer = WorkerPool(threadCount: 1, name: "imagery.disk.write")
    let readers = WorkerPool(threadCount: 2, name: "imagery.disk.read")
    /// Writer thread only: the next file's id; whether the index on disk missed changes (a write
    /// to it failed) and must be rewritten from memory; when to try a degraded directory again.
    var nextFileID: UInt64 = 1
    var indexOutOfSync = false
    var nextProbe: ContinuousClock.Instant

    private let lock = NSLock()
    var pending = PendingWrites()
    var lastTouchFlush: ContinuousClock.Instant
    var generation: UInt64 = 0
    var readsInFlight: [String: (fileID: UInt64, task: Task<Data?, Never>)] = [:]
    var statistics = Stats()

    /// Opens (or creates) the cache in `configuration.directory` and reconciles it with its files.
    /// An index SQLite cannot read is salvaged: what can be read of it is kept, it is set aside as
    /// `index.sqlite.damaged`, and the event is reported.
    /// - Throws: ``DiskCacheError`` if another process (or cache in this process) has the
    ///   directory open for longer than ``Configuration/lockWait``, or if the directory cannot be used (unless
    ///   ``Configuration/retriesUnusableDirectory``: then the cache opens ``Mode/unavailable``).
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        (nextProbe, lastTouchFlush) = (configuration.time.instant(), configuration.time.instant())
        index = EntryIndex(
            policy: configuration.eviction, costLimit: configuration.sizeLimit, countLimit: configuration.countLimit)
        do {
            let storage = try Storage(
                directory: configuration.directory, openFileLimit: configuration.openFileLimit,
                lockWait: configuration.lockWait)
            try recover(storage)
            self.storage = storage
        } catch {
            guard configuration.retriesUnusableDirectory, let fault = error.fault else { throw error }
            (mode, degradedBy, reportedFaults) = (.unavailable, fault, [fault])
            report(
                .fault(fault),
                "\(error.message): caching in memory only; trying again every \(configuration.probeInterval)")
            nextProbe = configuration.time.instant() + configuration.probeInterval
        }
    }

    /// A cache in `directory` limited to `sizeLimit` bytes.
    public convenience init(directory: URL, sizeLimit: Int = 1 << 30) throws {
        try self.init(configuration: Configuration(directory: directory, sizeLimit: sizeLimit))
    }

    deinit {
        // Persist recency, then release the directory (when the last read in flight lets go of it).
        if let storage, mode == .readWrite { try? storage.indexStore?.apply(touches: takeTouched()) }
    }

    // MARK: - Maintenance

    /// Evicts entries (in eviction order) until the total size is at most `size` bytes.
    public func trim(toSize size: Int) async {
        try? await writer.run { [self] in
            let (evicted, storage) = withLock { () -> ([IndexEntry], Storage?) in
                (index.trim(toCost: size), self.storage)
            }
            if let storage { deleteEvicted(evicted, from: storage) }
        }
    }

    /// Waits until every queued write is on disk and recency is recorded.
    public func flush() async {
        try? await writer.run { [self] in writeTouches() }
    }

    /// Bytes of entries held (written and pending writes not included until written).
    public var totalSize: Int { withLock { index.totalCost } }

    /// Entries held.
    public var count: Int { withLock { index.count } }

    /// The most bytes kept now: the configured limit, or less while the filesystem cannot hold it.
    public var sizeLimitInEffect: Int { withLock { index.costLimit } }

    /// What the directory allows now.
    public var currentMode: Mode { withLock { mode } }

    /// What the cache has done since it was opened.
    public var stats: Stats { withLock { statistics } }

    // MARK: - State

    func takeTouched() -> [(key: String, order: Int64, priority: Int64)] {
        withLock { index.takeTouched() }
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func count(_ update: (inout Stats) -> Void) {
        withLock { update(&statistics) }
    }

    func addRecovered(_ value: Int) { count { $0.recoveredAtOpen += value } }
}
