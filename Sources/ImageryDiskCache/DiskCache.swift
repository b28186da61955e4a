import Foundation
import Imagery

/// A persistent, size-bounded cache of encoded bytes with their metadata.
///
/// - **Layout**: each entry's bytes in a file of its own (`blobs/`), the index in
///   SQLite (`index.sqlite`, WAL). The index is also kept in memory (a
///   `MemoryCache` ordered by use), so a lookup never touches SQLite.
/// - **Hard limits**: every write evicts least recently used entries until the
///   total size (and count) is under the limit. Nothing waits for a sweep.
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
    }

    private struct Pending {
        var data: Data
        var metadata: CacheMetadata
        let generation: UInt64
    }

    /// Entries stored but not yet written, and how many bytes they hold.
    private struct PendingWrites {
        private var entries: [String: Pending] = [:]
        private(set) var bytes = 0

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

    let index: MemoryCache<String, IndexEntry>
    let blobs: BlobStore
    /// Set once at open (twice when an unreadable index is replaced by an empty one).
    var indexStore: IndexStore
    let writer = WorkerPool(threadCount: 1, name: "imagery.disk.write")
    private let readers = WorkerPool(threadCount: 2, name: "imagery.disk.read")
    private let directoryLock: Int32
    var nextFileID: UInt64 = 1

    private let lock = NSLock()
    private var pending = PendingWrites()
    private var touched: [String: Int64] = [:]
    private var accessCounter: Int64 = 0
    private var lastTouchFlush = ContinuousClock.now
    private var generation: UInt64 = 0
    private var readsInFlight: [String: (fileID: UInt64, task: Task<Data?, Never>)] = [:]
    private var statistics = Stats()

    /// Opens (or creates) the cache in `configuration.directory` and reconciles it with its files.
    /// - Throws: ``DiskCacheError`` if the directory cannot be used or another process (or cache
    ///   in this process) has it open for more than 2 s.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        let directory = configuration.directory
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DiskCacheError(message: "cannot create the cache directory \(directory.path): \(error.localizedDescription)")
        }
        directoryLock = open(directory.appendingPathComponent("lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard directoryLock >= 0, Self.lock(directoryLock, waitingUpTo: .seconds(2)) else {
            if directoryLock >= 0 { close(directoryLock) }
            throw DiskCacheError(message: "the cache directory \(directory.path) is in use by another process")
        }
        do {
            blobs = try BlobStore(directory: directory, openFileLimit: configuration.openFileLimit)
        } catch {
            close(directoryLock)
            throw error
        }
        index = MemoryCache(costLimit: configuration.sizeLimit, countLimit: configuration.countLimit)
        let indexPath = directory.appendingPathComponent("index.sqlite").path
        do {
            indexStore = try IndexStore(path: indexPath)
            try recover()
        } catch {
            // An index SQLite cannot read (corrupt, not a database, another schema) costs the cache's
            // contents, not the server's start: without it no file can be trusted, so start empty.
            do {
                for suffix in ["", "-wal", "-shm", "-journal"] { unlink(indexPath + suffix) }
                let deleted = blobs.deleteAll() + blobs.clearTemporary()
                index.removeAll()
                indexStore = try IndexStore(path: indexPath)
                try recover()
                addRecovered(deleted + 1)
            } catch {
                blobs.close()
                close(directoryLock)
                throw error as? DiskCacheError ?? DiskCacheError(message: "cannot open the cache in \(directory.path): \(error)")
            }
        }
    }

    /// Takes the directory's lock, waiting a little for a holder that is letting go: a process that
    /// is exiting, or an earlier cache on the directory in this process whose last reference (a
    /// write or a read just finished on another thread) is being released. Measured in CI: a
    /// test that reopened a cache right after `flush()` found it still held.
    private static func lock(_ descriptor: Int32, waitingUpTo limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// A cache in `directory` limited to `sizeLimit` bytes.
    public convenience init(directory: URL, sizeLimit: Int = 1 << 30) throws {
        try self.init(configuration: Configuration(directory: directory, sizeLimit: sizeLimit))
    }

    deinit {
        // Persist recency, then release the directory.
        let touches = takeTouched()
        try? indexStore.apply(touches: touches)
        blobs.close()
        close(directoryLock)
    }

    // MARK: - DataCaching

    public func entry(for key: String) async -> CacheEntry? {
        await checkedEntry(for: key)?.entry
    }

    /// The metadata of the entry for `key`, from the index: its bytes are not read (nor checked).
    public func metadata(for key: String) async -> CacheMetadata? {
        if let pending = withLock({ pending[key] }) { return pending.metadata }
        guard let entry = index.value(for: key) else { return nil }
        if let ttl = configuration.ttl, Date().timeIntervalSince(entry.metadata.storedAt) > ttl { return nil }
        return entry.metadata
    }

    /// The entry for `key` with the ``Checksum`` of its bytes (verified on this read), for a
    /// caller that derives something from it (an ETag) and need not hash the bytes again.
    public func checkedEntry(for key: String) async -> (entry: CacheEntry, checksum: UInt64)? {
        if let pending = withLock({ pending[key] }) {
            count { $0.hits += 1 }
            return (CacheEntry(data: pending.data, metadata: pending.metadata), Checksum.of(pending.data))
        }
        guard let entry = index.value(for: key) else {
            count { $0.misses += 1 }
            return nil
        }
        if let ttl = configuration.ttl, Date().timeIntervalSince(entry.metadata.storedAt) > ttl {
            count { $0.misses += 1 }
            await remove(for: key)
            return nil
        }
        let data = entry.size <= configuration.inlineReadLimit
            ? blobs.read(fileID: entry.fileID, name: entry.name, size: entry.size)
            : await readOnPool(entry)
        guard let data, Checksum.of(data) == entry.checksum else {
            count { $0.misses += 1; $0.corruptEntriesRemoved += 1 }
            dropCorrupt(entry)
            return nil
        }
        let now = ContinuousClock.now
        let flushNeeded = withLock { () -> Bool in
            accessCounter += 1
            touched[key] = accessCounter
            statistics.hits += 1
            statistics.bytesRead += entry.size
            // Recency reaches SQLite in batches: a key read many times is written once per batch.
            // Only the LRU order after a restart depends on it, so a batch may wait a while.
            guard touched.count >= 65_536 || (touched.count >= 512 && now - lastTouchFlush >= .seconds(2)) else { return false }
            lastTouchFlush = now
            return true
        }
        if flushNeeded { writer.execute { [self] in try? indexStore.apply(touches: takeTouched()) } }
        return (CacheEntry(data: data, metadata: entry.metadata), entry.checksum)
    }

    /// Stores `data` for `key`. Returns at once: the bytes are written on the cache's
    /// writer thread, and readable from memory until then. Entries larger than the
    /// size limit are not stored, nor are writes while more than
    /// ``Configuration/maximumPendingBytes`` wait to be written (``Stats/writesDropped``).
    public func store(_ data: Data, for key: String, metadata: CacheMetadata) async {
        guard data.count <= configuration.sizeLimit else {
            await remove(for: key)
            return
        }
        let generation = withLock { () -> UInt64? in
            // The writer is behind by more than the bound: drop this write rather than hold its
            // bytes (the cache is a cache), and the older entry with it, which it was to replace.
            let replaced = pending[key]?.data.count ?? 0
            guard pending.bytes - replaced + data.count <= configuration.maximumPendingBytes else {
                statistics.writesDropped += 1
                return nil
            }
            self.generation += 1
            pending[key] = Pending(data: data, metadata: metadata, generation: self.generation)
            return self.generation
        }
        guard let generation else {
            await remove(for: key)
            return
        }
        writer.execute { [self] in write(data, for: key, metadata: metadata, generation: generation) }
    }

    public func updateMetadata(_ metadata: CacheMetadata, for key: String) async {
        withLock { pending[key]?.metadata = metadata }
        writer.execute { [self] in
            guard var entry = index.value(for: key) else { return }
            entry.metadata = metadata
            index.insert(entry, for: key, cost: entry.size)
            try? indexStore.apply(metadataUpdates: [(key, entry.fileID, metadata)])
        }
    }

    /// Removes the entry for `key`; it is gone for readers at once.
    public func remove(for key: String) async {
        let removed: IndexEntry? = withLock {
            pending[key] = nil
            return index.removeValue(for: key)
        }
        guard let removed else { return }
        writer.execute { [self] in
            try? indexStore.apply(deletes: [(removed.key, removed.fileID)])
            blobs.delete(fileID: removed.fileID)
        }
    }

    /// Removes every entry; the cache is empty for readers at once.
    public func removeAll() async {
        withLock {
            pending.removeAll()
            touched.removeAll()
            index.removeAll()
        }
        try? await writer.run { [self] in
            try? indexStore.deleteAll()
            blobs.deleteAll()
        }
    }

    // MARK: - Maintenance

    /// Evicts least recently used entries until the total size is at most `size` bytes.
    public func trim(toSize size: Int) async {
        try? await writer.run { [self] in
            let evicted = index.trim(toCost: size)
            deleteEvicted(evicted)
        }
    }

    /// Waits until every queued write is on disk and recency is recorded.
    public func flush() async {
        try? await writer.run { [self] in try? indexStore.apply(touches: takeTouched()) }
    }

    /// Bytes of entries held (written and pending writes not included until written).
    public var totalSize: Int { index.totalCost }

    /// Entries held.
    public var count: Int { index.count }

    /// What the cache has done since it was opened.
    public var stats: Stats { withLock { statistics } }

    // MARK: - Writer thread

    private func write(_ data: Data, for key: String, metadata: CacheMetadata, generation: UInt64) {
        // Superseded by a later store, or removed meanwhile: nothing to write.
        guard withLock({ pending[key]?.generation == generation }) else { return }
        let fileID = nextFileID
        nextFileID += 1
        do {
            try blobs.write(data, fileID: fileID)
        } catch {
            withLock { if pending[key]?.generation == generation { pending[key] = nil } }
            return
        }
        let entry = IndexEntry(
            key: key, fileID: fileID, size: data.count, checksum: Checksum.of(data), metadata: metadata,
            name: BlobStore.name(of: fileID)
        )
        // Publish atomically with clearing the pending copy, unless superseded during the write.
        let outcome: (removed: [IndexEntry], order: Int64)? = withLock {
            guard pending[key]?.generation == generation else { return nil }
            pending[key] = nil
            accessCounter += 1
            statistics.bytesWritten += data.count
            return (index.insert(entry, for: key, cost: entry.size), accessCounter)
        }
        guard let outcome else {
            blobs.delete(fileID: fileID)
            return
        }
        let evicted = outcome.removed.filter { $0.key != key }
        withLock { statistics.evictions += evicted.count }
        let row = IndexStore.Row(
            key: key, fileID: fileID, size: entry.size, checksum: entry.checksum,
            accessOrder: outcome.order, metadata: metadata
        )
        try? indexStore.apply(
            upserts: [row], deletes: outcome.removed.map { ($0.key, $0.fileID) }, touches: takeTouched()
        )
        for removed in outcome.removed { blobs.delete(fileID: removed.fileID) }
    }

    func deleteEvicted(_ evicted: [IndexEntry]) {
        guard !evicted.isEmpty else { return }
        withLock { statistics.evictions += evicted.count }
        try? indexStore.apply(deletes: evicted.map { ($0.key, $0.fileID) })
        for entry in evicted { blobs.delete(fileID: entry.fileID) }
    }

    // MARK: - Reading

    /// Reads a large entry on a reader thread; concurrent reads of one entry share one read.
    private func readOnPool(_ entry: IndexEntry) async -> Data? {
        let task: Task<Data?, Never> = withLock {
            if let inFlight = readsInFlight[entry.key], inFlight.fileID == entry.fileID { return inFlight.task }
            let blobs = self.blobs
            let task = Task { try? await readers.run { blobs.read(fileID: entry.fileID, name: entry.name, size: entry.size) } ?? nil }
            readsInFlight[entry.key] = (entry.fileID, task)
            return task
        }
        let data = await task.value
        withLock { if readsInFlight[entry.key]?.fileID == entry.fileID { readsInFlight[entry.key] = nil } }
        return data
    }

    /// Forgets an entry whose file is bad, unless it was replaced meanwhile.
    private func dropCorrupt(_ entry: IndexEntry) {
        let removed: Bool = withLock {
            guard index.value(for: entry.key)?.fileID == entry.fileID else { return false }
            index.removeValue(for: entry.key)
            return true
        }
        guard removed else { return }
        writer.execute { [self] in
            try? indexStore.apply(deletes: [(entry.key, entry.fileID)])
            blobs.delete(fileID: entry.fileID)
        }
    }

    // MARK: - State

    func takeTouched() -> [(key: String, order: Int64)] {
        withLock {
            defer { touched.removeAll(keepingCapacity: true) }
            return touched.map { ($0.key, $0.value) }
        }
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func count(_ update: (inout Stats) -> Void) {
        withLock { update(&statistics) }
    }

    func setAccessCounter(_ value: Int64) { withLock { accessCounter = max(accessCounter, value) } }
    func addRecovered(_ value: Int) { count { $0.recoveredAtOpen += value } }
}
