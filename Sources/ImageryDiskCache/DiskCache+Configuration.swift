import Foundation
import Imagery

extension DiskCache {
    /// Where a disk cache lives and how much it keeps.
    public struct Configuration: Sendable {
        /// The cache's directory (created if missing). One cache per directory at a time.
        public var directory: URL
        /// The most bytes of entries kept; writes evict least recently used entries to stay
        /// under it. Default 1 GiB.
        public var sizeLimit: Int
        /// The most entries kept; default `Int.max`.
        public var countLimit: Int
        /// Entries older than this (seconds since stored) are misses, whatever HTTP says; default `nil`.
        public var ttl: TimeInterval?
        /// Entries up to this size are read on the calling thread (a page-cache read of a
        /// few dozen KB costs less than a thread hop); larger ones on the cache's I/O
        /// threads. Default 128 KiB.
        public var inlineReadLimit: Int
        /// The most bytes stored but not yet written; while more wait (the writer thread has fallen
        /// behind), new writes are dropped rather than held in memory. Default 64 MiB.
        public var maximumPendingBytes: Int
        /// How many recently read entry files stay open, so a hit on a hot entry costs one `pread`
        /// (no `open`, no `close`). Default: half the process's descriptor limit (`RLIMIT_NOFILE`,
        /// soft), at most 32 768; 0 opens every file for each read. When more entries than this are
        /// read in turn, the least recently read is closed.
        public var openFileLimit: Int
        /// Which entries go first when the cache is full; default ``Eviction/greedyDualSize``.
        public var eviction: Eviction
        /// Told of faults when they begin and end (a full, read-only or removed directory, a
        /// damaged index), once each; the server logs them. Default nil.
        public var onEvent: (@Sendable (Event) -> Void)?
        /// How often a read-only or unusable directory is tried again; default 5 s.
        public var probeInterval: Duration
        /// When the directory cannot be used at open (read-only, not permitted, full, its parent
        /// missing), open holding nothing (``Mode/unavailable``) and try again every
        /// ``probeInterval`` instead of throwing. A directory another process holds still throws.
        /// Default false.
        public var retriesUnusableDirectory: Bool
        /// How long opening waits for the directory's lock while another holder lets go of it (a process
        /// that is exiting, or an earlier cache on the directory in this process whose last reference is
        /// being released on another thread) before throwing. Default 2 s; a test that reopens a
        /// directory it has just closed waits as long as its hang guard, so that how fast the old cache
        /// is released never decides the outcome.
        public var lockWait: Duration
        /// The clocks the cache reads: the date for ``ttl`` (against `CacheMetadata.storedAt`), the
        /// monotonic instant for ``probeInterval`` and for batching recency writes. Default
        /// `TimeSource.system`; a test passes `ManualTime.source` and moves time by hand instead of
        /// sleeping.
        public var time: TimeSource

        /// A configuration for `directory` with default limits.
        public init(directory: URL, sizeLimit: Int = 1 << 30, countLimit: Int = .max, ttl: TimeInterval? = nil) {
            self.directory = directory
            self.sizeLimit = sizeLimit
            self.countLimit = countLimit
            self.ttl = ttl
            self.inlineReadLimit = 128 * 1024
            self.maximumPendingBytes = 64 << 20
            self.openFileLimit = Self.defaultOpenFileLimit
            self.eviction = .greedyDualSize
            self.onEvent = nil
            self.probeInterval = .seconds(5)
            self.retriesUnusableDirectory = false
            self.lockWait = .seconds(2)
            self.time = .system
        }

        /// Half the soft descriptor limit, at most 32 768 (as read when called).
        public static var defaultOpenFileLimit: Int {
            var limit = rlimit()
            #if os(Linux)
                let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
            #else
                let resource = RLIMIT_NOFILE
            #endif
            guard getrlimit(resource, &limit) == 0 else { return 64 }
            return Int(min(limit.rlim_cur / 2, 32_768))
        }

        /// `$XDG_CACHE_HOME/imagery`, else `~/.cache/imagery`.
        public static var defaultDirectory: URL {
            if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], !xdg.isEmpty {
                return URL(fileURLWithPath: xdg).appendingPathComponent("imagery")
            }
            return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/imagery")
        }
    }

    /// Which entries a full cache evicts first.
    public enum Eviction: Sendable {
        /// The least recently used.
        case leastRecentlyUsed
        /// GreedyDual-Size (Cao and Irani): the least recently used, the larger ones sooner, and
        /// a new entry pushes out only entries ranked below it; a lookup finds what it asks for
        /// more often when small entries (responses) and large ones (originals) compete for the space.
        case greedyDualSize
    }

    /// What a disk cache has done since it was opened.
    public struct Stats: Sendable, Hashable, Codable {
        /// Lookups answered from the cache.
        public var hits = 0
        /// Lookups that found nothing usable.
        public var misses = 0
        /// Entries removed to stay under the limits.
        public var evictions = 0
        /// Entries dropped because their file was missing, truncated or failed its checksum.
        public var corruptEntriesRemoved = 0
        /// Bytes of entries written.
        public var bytesWritten = 0
        /// Bytes of entries read from files.
        public var bytesRead = 0
        /// Entries and orphan files reconciled when the cache was opened.
        public var recoveredAtOpen = 0
        /// Writes dropped because more than ``Configuration/maximumPendingBytes`` waited to be written.
        public var writesDropped = 0
        /// Writes the filesystem refused, and writes skipped while the directory was read-only or
        /// unusable, by why.
        public var failedWrites: [Fault: Int] = [:]
    }
}
