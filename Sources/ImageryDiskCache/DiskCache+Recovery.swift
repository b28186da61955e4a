import Foundation
import Imagery

extension DiskCache {
    /// Reconciles the index with the files after any stop, clean or not:
    /// half-written files are deleted, rows whose file is missing or of the wrong
    /// size are forgotten, files no row names are deleted, and the limits are enforced.
    func recover() throws {
        var repaired = blobs.clearTemporary()
        let files = blobs.allFiles()
        let rows = try indexStore.loadAll()
        var forgotten: [(key: String, fileID: UInt64)] = []
        var kept = Set<UInt64>()
        var evicted: [IndexEntry] = []
        // A file named by two rows belongs to neither for sure (ids are never reused): both go.
        var rowsPerFile: [UInt64: Int] = [:]
        for row in rows { rowsPerFile[row.fileID, default: 0] += 1 }
        for row in rows {  // least recently used first, so the last inserted is the most recent
            guard row.fileID <= BlobStore.largestFileID, rowsPerFile[row.fileID] == 1, files[row.fileID] == row.size else {
                forgotten.append((row.key, row.fileID))
                continue
            }
            kept.insert(row.fileID)
            let entry = IndexEntry(
                key: row.key, fileID: row.fileID, size: row.size, checksum: row.checksum, metadata: row.metadata,
                name: BlobStore.name(of: row.fileID)
            )
            evicted += index.insert(entry, for: row.key, cost: row.size)
            setAccessCounter(row.accessOrder)
        }
        for fileID in files.keys where !kept.contains(fileID) {
            blobs.delete(fileID: fileID)
            repaired += 1
        }
        try indexStore.apply(deletes: forgotten)
        deleteEvicted(evicted)
        repaired += forgotten.count
        nextFileID = max(files.keys.max() ?? 0, rows.map(\.fileID).filter { $0 <= BlobStore.largestFileID }.max() ?? 0) + 1
        addRecovered(repaired)
    }
}
