import Foundation
import Imagery

/// Writes: stores, metadata updates and removals, visible at once and done on the writer thread.
extension DiskCache {
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
        updateIndex(storage) {
            try $0.apply(upserts: [row], deletes: outcome.removed.map { ($0.key, $0.fileID) }, touches: touches)
        }
        for removed in outcome.removed { storage.blobs.delete(fileID: removed.fileID) }
    }

    /// Forgets evicted (or removed) entries on disk: their rows, then their files.
    func deleteEvicted(_ evicted: [IndexEntry], from storage: Storage, counted: Bool = true) {
        guard !evicted.isEmpty else { return }
        if counted { withLock { statistics.evictions += evicted.count } }
        updateIndex(storage) { try $0.apply(deletes: evicted.map { ($0.key, $0.fileID) }) }
        for entry in evicted { storage.blobs.delete(fileID: entry.fileID) }
    }

    func writeTouches() {
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
}
