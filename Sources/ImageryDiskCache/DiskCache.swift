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
    private let readers = WorkerPool(threadCount: 2, name: "imagery.disk.read")
    /// Writer thread only: the next file's id; whether the index on disk missed changes (a write
    /// to it failed) and must be rewritten from memory; when to try a degraded directory again.
    var nextFileID: UInt64 = 1
    var indexOutOfSync = false
    var nextProbe: ContinuousClock.Instant

    private let lock = NSLock()
    var pending = PendingWrites()
    private var lastTouchFlush: ContinuousClock.Instant
    private var generation: UInt64 = 0
    private var readsInFlight: [String: (fileID: UInt64, task: Task<Data?, Never>)] = [:]
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
        index = EntryIndex(policy: configuration.eviction, costLimit: configuration.sizeLimit, countLimit: configuration.countLimit)
        do {
            let storage = try Storage(directory: configuration.directory, openFileLimit: configuration.openFileLimit, lockWait: configuration.lockWait)
            try recover(storage)
            self.storage = storage
        } catch {
            guard configuration.retriesUnusableDirectory, let fault = error.fault else { throw error }
            (mode, degradedBy, reportedFaults) = (.unavailable, fault, [fault])
            report(.fault(fault), "\(error.message): caching in memory only; trying again every \(configuration.probeInterval)")
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

    // MARK: - DataCaching

    public func entry(for key: String) async -> CacheEntry? {
        await checkedEntry(for: key)?.entry
    }

    /// The metadata of the entry for `key`, from the index: its bytes are not read (nor checked).
    public func metadata(for key: String) async -> CacheMetadata? {
        let found = withLock { pending[key]?.metadata ?? index[key]?.metadata }
        guard let found else { return nil }
        if isExpired(found) { return nil }
        return found
    }

    /// The entry for `key` with the ``Checksum`` of its bytes (verified on this read), for a
    /// caller that derives something from it (an ETag) and need not hash the bytes again.
    public func checkedEntry(for key: String) async -> (entry: CacheEntry, checksum: UInt64)? {
        let (pendingEntry, found, storage) = withLock { () -> (Pending?, IndexEntry?, Storage?) in (pending[key], index[key], self.storage) }
        if let pendingEntry {
            count { $0.hits += 1 }
            return (CacheEntry(data: pendingEntry.data, metadata: pendingEntry.metadata), Checksum.of(pendingEntry.data))
        }
        guard let entry = found, let storage else {
            count { $0.misses += 1 }
            return nil
        }
        if isExpired(entry.metadata) {
            count { $0.misses += 1 }
            await remove(for: key)
            return nil
        }
        let data = entry.size <= configuration.inlineReadLimit
            ? storage.blobs.read(fileID: entry.fileID, name: entry.name, size: entry.size)
            : await readOnPool(entry, from: storage)
        guard let data, Checksum.of(data) == entry.checksum else {
            count { $0.misses += 1; $0.corruptEntriesRemoved += 1 }
            dropCorrupt(entry, from: storage)
            return nil
        }
        recordRead(of: entry)
        return (CacheEntry(data: data, metadata: entry.metadata), entry.checksum)
    }

    /// Whether an entry stored with `metadata` is older than ``Configuration/ttl`` (by ``Configuration/time``).
    private func isExpired(_ metadata: CacheMetadata) -> Bool {
        guard let ttl = configuration.ttl else { return false }
        return configuration.time.date().timeIntervalSince(metadata.storedAt) > ttl
    }

    /// A read of `entry`: counted, its recency recorded (reaching SQLite in batches).
    private func recordRead(of entry: IndexEntry) {
        let key = entry.key
        let now = configuration.time.instant()
        let flushNeeded = withLock { () -> Bool in
            _ = index.use(key) { $0.fileID == entry.fileID }
            statistics.hits += 1
            statistics.bytesRead += entry.size
            return touchFlushIsDue(now: now)
        }
        if flushNeeded { writer.execute { [self] in writeTouches() } }
    }

    /// Whether the recency of the entries read since the last batch is to be written now (under the
    /// lock). It reaches SQLite in batches: a key read many times is written once per batch. Only the
    /// eviction order after a restart depends on it, so a batch may wait a while.
    private func touchFlushIsDue(now: ContinuousClock.Instant) -> Bool {
        let touched = index.touchedCount
        guard touched >= 65_536 || (touched >= 512 && now - lastTouchFlush >= .seconds(2)) else { return false }
        lastTouchFlush = now
        return true
    }

    /// An entry's file, to be sent as it is (`sendfile`) rather than read: what ``openBody(for:)`` gives.
    package struct Body: Sendable {
        /// The open file; it stays readable while held, even if the entry goes meanwhile.
        package let file: BlobStore.OpenFile
        package let size: Int
        package let checksum: UInt64
        package let metadata: CacheMetadata
        /// The entry file's id: another id for a key is another version of its bytes.
        package let fileID: UInt64
        /// Changes when the entry's metadata does (``updateMetadata(_:for:)``: its freshness revalidated).
        package let revision: UInt64
    }

    /// The file of the entry for `key`, open and checked (``BlobStore/openChecked(fileID:name:size:checksum:)``),
    /// without reading it when a read kept it open; counted and its recency recorded as a read.
    /// Synchronous (for an event loop): `nil` when the entry is not on disk yet (a write pending),
    /// expired, missing or damaged (dropped, as a read drops it).
    /// - Complexity: One lookup of `key` under the lock (two while writes are pending), one of the
    ///   open file by its id.
    package func openBody(for key: String) -> Body? {
        let now = configuration.time.instant()
        let expiredBefore = configuration.ttl.map { configuration.time.date().addingTimeInterval(-$0) }
        let (found, flushNeeded) = withLock { () -> ((IndexEntry, Storage)?, Bool) in
            guard let storage, pending.isEmpty || pending[key] == nil,
                  let entry = index.use(key, if: { entry in expiredBefore.map { entry.metadata.storedAt >= $0 } ?? true })
            else { return (nil, false) }
            statistics.hits += 1
            statistics.bytesRead += entry.size
            return ((entry, storage), touchFlushIsDue(now: now))
        }
        if flushNeeded { writer.execute { [self] in writeTouches() } }
        guard let (entry, storage) = found else { return nil }
        guard let file = storage.blobs.openChecked(fileID: entry.fileID, name: entry.name, size: entry.size, checksum: entry.checksum) else {
            count { $0.hits -= 1; $0.bytesRead -= entry.size; $0.misses += 1; $0.corruptEntriesRemoved += 1 }
            dropCorrupt(entry, from: storage)
            return nil
        }
        return Body(file: file, size: entry.size, checksum: entry.checksum, metadata: entry.metadata, fileID: entry.fileID, revision: entry.revision)
    }

    /// Stores `data` for `key`. Returns at once: the bytes are written on the cache's
    /// writer thread, and readable from memory until then. Entries larger than the
    /// size limit are not stored, nor are writes while more than
    /// ``Configuration/maximumPendingBytes`` wait to be written (``Stats/writesDropped``), nor
    /// while the directory is read-only or unusable (``Stats/failedWrites``).
    public func store(_ data: Data, for key: String, metadata: CacheMetadata) async {
        guard data.count <= configuration.sizeLimit else {
            await remove(for: key)
            return
        }
        let generation = withLock { () -> UInt64? in
            guard mode == .readWrite else {
                statistics.failedWrites[degradedBy ?? .ioError, default: 0] += 1
                return nil
            }
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
            probeIfDue()
            return
        }
        writer.execute { [self] in write(data, for: key, metadata: metadata, generation: generation) }
    }

    public func updateMetadata(_ metadata: CacheMetadata, for key: String) async {
        withLock { pending[key]?.metadata = metadata }
        writer.execute { [self] in
            let updated = withLock { () -> (IndexEntry, Storage)? in
                guard mode == .readWrite, let storage, let entry = index.update(metadata, for: key) else { return nil }
                return (entry, storage)
            }
            guard let (entry, storage) = updated else { return }
            updateIndex(storage) { try $0.apply(metadataUpdates: [(key, entry.fileID, metadata)]) }
        }
    }

    /// Removes the entry for `key`; it is gone for readers at once.
    public func remove(for key: String) async {
        let removed: (IndexEntry, Storage)? = withLock {
            pending[key] = nil
            guard let entry = index.removeValue(for: key), let storage else { return nil }
            return (entry, storage)
        }
        guard let (removed, storage) = removed else { return }
        writer.execute { [self] in deleteEvicted([removed], from: storage, counted: false) }
    }

    /// Removes every entry; the cache is empty for readers at once.
    public func removeAll() async {
        let storage = withLock { () -> Storage? in
            pending.removeAll()
            index.removeAll()
            return self.storage
        }
        guard let storage else { return }
        try? await writer.run { [self] in
            updateIndex(storage) { try $0.deleteAll() }
            storage.blobs.deleteAll()
        }
    }

    // MARK: - Maintenance

    /// Evicts entries (in eviction order) until the total size is at most `size` bytes.
    public func trim(toSize size: Int) async {
        try? await writer.run { [self] in
            let (evicted, storage) = withLock { () -> ([IndexEntry], Storage?) in (index.trim(toCost: size), self.storage) }
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

    // MARK: - Writer thread

    private func write(_ data: Data, for key: String, metadata: CacheMetadata, generation: UInt64) {
        // Superseded by a later store, or removed meanwhile: nothing to write.
        let storage = withLock { () -> Storage? in
            guard pending[key]?.generation == generation else { return nil }
            guard mode == .readWrite, let storage = self.storage else {
                pending[key] = nil
                return nil
            }
            return storage
        }
        guard let storage else { return }
        let fileID = nextFileID
        nextFileID += 1
        var failure: DiskCacheError?
        for attempt in 0..<2 {
            guard makeRoom(for: data.count, key: key, in: storage) else {
                // Not stored: larger than the limit, or worth less than what it would push out. The
                // entry it was to replace goes (it is older than what the caller has).
                let replaced = withLock { () -> IndexEntry? in
                    guard pending[key]?.generation == generation else { return nil }
                    pending[key] = nil
                    return index.removeValue(for: key)
                }
                if let replaced { deleteEvicted([replaced], from: storage, counted: false) }
                return
            }
            do {
                try storage.blobs.write(data, fileID: fileID)
                failure = nil
                break
            } catch {
                failure = error as? DiskCacheError ?? DiskCacheError(message: "\(error)")
                // A full filesystem: the next pass lowers the limit to what it now holds, then tries again.
                guard attempt == 0, failure?.fault == .noSpace else { break }
            }
        }
        if let failure {
            withLock { if pending[key]?.generation == generation { pending[key] = nil } }
            handle(failure.fault ?? .ioError, failure.message)
            return
        }
        let entry = IndexEntry(
            key: key, fileID: fileID, size: data.count, checksum: Checksum.of(data), metadata: metadata,
            name: BlobStore.name(of: fileID)
        )
        // Publish atomically with clearing the pending copy, unless superseded during the write.
        let outcome: (removed: [IndexEntry], place: EntryIndex.Place)? = withLock {
            guard pending[key]?.generation == generation, self.storage === storage else { return nil }
            pending[key] = nil
            statistics.bytesWritten += data.count
            return index.insert(entry)
        }
        guard let outcome else {
            storage.blobs.delete(fileID: fileID)
            return
        }
        let evicted = outcome.removed.filter { $0.key != key }
        withLock { statistics.evictions += evicted.count }
        let row = IndexStore.Row(
            key: key, fileID: fileID, size: entry.size, checksum: entry.checksum,
            accessOrder: outcome.place.sequence, priority: outcome.place.priority, metadata: metadata
        )
        let touches = takeTouched()
        updateIndex(storage) { try $0.apply(upserts: [row], deletes: outcome.removed.map { ($0.key, $0.fileID) }, touches: touches) }
        for removed in outcome.removed { storage.blobs.delete(fileID: removed.fileID) }
    }

    /// Forgets evicted (or removed) entries on disk: their rows, then their files.
    func deleteEvicted(_ evicted: [IndexEntry], from storage: Storage, counted: Bool = true) {
        guard !evicted.isEmpty else { return }
        if counted { withLock { statistics.evictions += evicted.count } }
        updateIndex(storage) { try $0.apply(deletes: evicted.map { ($0.key, $0.fileID) }) }
        for entry in evicted { storage.blobs.delete(fileID: entry.fileID) }
    }

    private func writeTouches() {
        guard let storage = withLock({ mode == .readWrite ? storage : nil }) else { return }
        let touches = takeTouched()
        updateIndex(storage) { try $0.apply(touches: touches) }
    }

    /// Tries a read-only or unusable directory again, if it is time (on the writer thread).
    private func probeIfDue() {
        guard withLock({ mode != .readWrite }) else { return }
        writer.execute { [self] in
            if configuration.time.instant() >= nextProbe { probe() }
        }
    }

    // MARK: - Reading

    /// Reads a large entry on a reader thread; concurrent reads of one entry share one read.
    private func readOnPool(_ entry: IndexEntry, from storage: Storage) async -> Data? {
        let task: Task<Data?, Never> = withLock {
            if let inFlight = readsInFlight[entry.key], inFlight.fileID == entry.fileID { return inFlight.task }
            let task = Task { try? await readers.run { storage.blobs.read(fileID: entry.fileID, name: entry.name, size: entry.size) } ?? nil }
            readsInFlight[entry.key] = (entry.fileID, task)
            return task
        }
        let data = await task.value
        withLock { if readsInFlight[entry.key]?.fileID == entry.fileID { readsInFlight[entry.key] = nil } }
        return data
    }

    /// Forgets an entry whose file is bad, unless it was replaced meanwhile. A file missing because
    /// the whole directory was removed is that fault, handled as such.
    private func dropCorrupt(_ entry: IndexEntry, from storage: Storage) {
        let removed: Bool = withLock {
            guard index[entry.key]?.fileID == entry.fileID else { return false }
            index.removeValue(for: entry.key)
            return true
        }
        guard removed else { return }
        writer.execute { [self] in
            guard storage.isIntact else {
                if withLock({ self.storage === storage }) {
                    handle(.directoryMissing, "cannot read \(storage.blobs.path(for: entry.fileID))", counted: false)
                }
                return
            }
            deleteEvicted([entry], from: storage, counted: false)
        }
    }

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
