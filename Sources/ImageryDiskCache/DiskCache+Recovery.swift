import Foundation
import Imagery

extension DiskCache {
    /// Reconciles the index with the files after any stop, clean or not:
    /// half-written files are deleted, rows whose file is missing or of the wrong
    /// size are forgotten, files no row names are deleted, and the limits are enforced.
    ///
    /// An index SQLite cannot read (not a database, a damaged page) is salvaged: the rows that
    /// still read are kept (their files are checked as any row's), the file is set aside as
    /// `index.sqlite.damaged` for a post-mortem, a new index gets the rows kept, and the event is
    /// reported with what was kept and lost.
    func recover(_ storage: Storage) throws(DiskCacheError) {
        var repaired = storage.blobs.clearTemporary()
        let files = storage.blobs.allFiles()
        var rows: [IndexStore.Row]
        var damage: (aside: String, reason: String)?
        do {
            guard let indexStore = storage.indexStore else {
                throw storage.indexOpenError ?? SQLiteError(message: "cannot open", code: 26)
            }
            rows = try indexStore.loadAll()
        } catch {
            let salvaged = storage.indexStore?.salvage() ?? (rows: [], damage: nil)
            rows = salvaged.rows
            damage = (try storage.setIndexAside(), salvaged.damage ?? "\(error)")
            indexOutOfSync = true  // the new index gets the rows kept
            repaired += 1
        }
        var forgotten: [(key: String, fileID: UInt64)] = []
        var kept = Set<UInt64>()
        var evicted: [IndexEntry] = []
        // A file named by two rows belongs to neither for sure (ids are never reused): both go.
        var rowsPerFile: [UInt64: Int] = [:]
        for row in rows { rowsPerFile[row.fileID, default: 0] += 1 }
        withLock {
            index.removeAll()
            for row in rows {  // first to be evicted first, so each insert goes on top
                guard row.fileID <= BlobStore.largestFileID, rowsPerFile[row.fileID] == 1, files[row.fileID] == row.size
                else {
                    forgotten.append((row.key, row.fileID))
                    continue
                }
                kept.insert(row.fileID)
                let entry = IndexEntry(
                    key: row.key, fileID: row.fileID, size: row.size, checksum: row.checksum, metadata: row.metadata,
                    name: BlobStore.name(of: row.fileID)
                )
                evicted +=
                    index.insert(entry, at: EntryIndex.Place(priority: row.priority, sequence: row.accessOrder)).removed
            }
            index.settleInflation()
        }
        var orphans = 0
        for fileID in files.keys where !kept.contains(fileID) {
            storage.blobs.delete(fileID: fileID)
            orphans += 1
        }
        updateIndex(storage) { try $0.apply(deletes: forgotten) }
        deleteEvicted(evicted, from: storage)
        repaired += orphans + forgotten.count
        nextFileID =
            max(files.keys.max() ?? 0, rows.map(\.fileID).filter { $0 <= BlobStore.largestFileID }.max() ?? 0) + 1
        addRecovered(repaired)
        if let damage {
            report(
                .indexDamaged,
                "the cache index \(storage.indexPath) could not be read (\(damage.reason)): set aside as \(damage.aside); kept the \(kept.count) entries whose rows could still be read and whose files are whole, removed \(orphans) files no readable row names"
            )
        }
    }
}
