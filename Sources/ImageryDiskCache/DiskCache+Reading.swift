import Foundation
import Imagery

/// Reads: an entry's bytes (from a pending write, or from its file, checked against its checksum) or
/// its metadata alone, and a file to send as it is; a damaged file is dropped.
extension DiskCache {
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

    /// The entry for `key` with the `Checksum` of its bytes (verified on this read), for a
    /// caller that derives something from it (an ETag) and need not hash the bytes again.
    public func checkedEntry(for key: String) async -> (entry: CacheEntry, checksum: UInt64)? {
        let (pendingEntry, found, storage) = withLock { () -> (Pending?, IndexEntry?, Storage?) in
            (pending[key], index[key], self.storage)
        }
        if let pendingEntry {
            count { $0.hits += 1 }
            return (
                CacheEntry(data: pendingEntry.data, metadata: pendingEntry.metadata), Checksum.of(pendingEntry.data)
            )
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
        let data =
            entry.size <= configuration.inlineReadLimit
            ? storage.blobs.read(fileID: entry.fileID, name: entry.name, size: entry.size)
            : await readOnPool(entry, from: storage)
        guard let data, Checksum.of(data) == entry.checksum else {
            count {
                $0.misses += 1
                $0.corruptEntriesRemoved += 1
            }
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
        guard
            let file = storage.blobs.openChecked(
                fileID: entry.fileID, name: entry.name, size: entry.size, checksum: entry.checksum)
        else {
            count {
                $0.hits -= 1
                $0.bytesRead -= entry.size
                $0.misses += 1
                $0.corruptEntriesRemoved += 1
            }
            dropCorrupt(entry, from: storage)
            return nil
        }
        return Body(
            file: file, size: entry.size, checksum: entry.checksum, metadata: entry.metadata, fileID: entry.fileID,
            revision: entry.revision)
    }

    /// Reads a large entry on a reader thread; concurrent reads of one entry share one read.
    private func readOnPool(_ entry: IndexEntry, from storage: Storage) async -> Data? {
        let task: Task<Data?, Never> = withLock {
            if let inFlight = readsInFlight[entry.key], inFlight.fileID == entry.fileID { return inFlight.task }
            let task = Task {
                try? await readers.run { storage.blobs.read(fileID: entry.fileID, name: entry.name, size: entry.size) }
                    ?? nil
            }
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
}
