import Foundation
import Imagery
import ImageryDiskCache

/// The server's persistent tiers, asked in order: its own disk, then the store shared by every
/// instance (``SharedStore``). A hit in the shared store is copied to the disk, so the next one is
/// local; writes and metadata updates go to both (the shared write in the background). Originals
/// (the pipeline's disk cache) and stored responses (``ResponseStore``) both go through it.
final class PersistentTiers: DataCaching {
    let local: DiskCache?
    let shared: SharedStore?
    private let observer: ServerMetrics?

    init(local: DiskCache?, shared: SharedStore?, observer: ServerMetrics?) {
        (self.local, self.shared, self.observer) = (local, shared, observer)
    }

    /// The entry for `key` with the checksum of its bytes, checked on this read.
    func checkedEntry(for key: String) async -> (entry: CacheEntry, checksum: UInt64)? {
        if let local, let hit = await local.checkedEntry(for: key) { return hit }
        guard let shared else { return nil }
        let hit = await shared.checkedEntry(for: key)
        observer?.cacheLookup("shared", hit: hit != nil)
        if let hit { await local?.store(hit.entry.data, for: key, metadata: hit.entry.metadata) }
        return hit
    }

    func entry(for key: String) async -> CacheEntry? {
        await checkedEntry(for: key)?.entry
    }

    /// From the local index when it has the key (the bytes are not read); else the shared entry's.
    func metadata(for key: String) async -> CacheMetadata? {
        if let metadata = await local?.metadata(for: key) { return metadata }
        return await entry(for: key)?.metadata
    }

    func store(_ data: Data, for key: String, metadata: CacheMetadata) async {
        await local?.store(data, for: key, metadata: metadata)
        shared?.store(data, for: key, metadata: metadata)
    }

    func updateMetadata(_ metadata: CacheMetadata, for key: String) async {
        await local?.updateMetadata(metadata, for: key)
        shared?.updateMetadata(metadata, for: key)
    }

    func remove(for key: String) async {
        await local?.remove(for: key)
        shared?.remove(for: key)
    }

    /// Empties the local disk only: one instance never empties the store the others share.
    func removeAll() async {
        await local?.removeAll()
    }
}
