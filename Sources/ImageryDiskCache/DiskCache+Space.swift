import Foundation

extension DiskCache {
    /// Free space every write leaves on the filesystem: 1/64 of its size, at least 512 KiB and at
    /// most 256 MiB. Room for the index's log and for whatever else writes there (logs, other
    /// caches), so the cache is not the one that fills the disk.
    static func reserve(filesystemSize: Int) -> Int {
        min(max(filesystemSize / 64, 512 << 10), 256 << 20)
    }

    /// Before a write of `size` bytes (writer thread): the limit in effect becomes what the
    /// filesystem can hold (the entries held plus its free space, less the reserve), never more
    /// than the configured one, and entries are evicted down to it less `size`. A full
    /// filesystem lowers it, space freed raises it back; each is reported once.
    /// Room is made only by evicting entries that rank below the new one (``EntryIndex/makeRoom(for:replacing:within:)``).
    /// - Returns: Whether the entry is to be stored.
    func makeRoom(for size: Int, key: String, in storage: Storage) -> Bool {
        let space = storage.blobs.space()
        let (evicted, change, limit) = withLock { () -> ([IndexEntry]?, Bool?, Int) in
            var limit = configuration.sizeLimit
            if let space {
                limit = min(
                    limit, max(0, index.totalCost + space.available - Self.reserve(filesystemSize: space.total)))
            }
            index.costLimit = limit
            let evicted = index.makeRoom(for: size, replacing: key, within: limit)
            if limit < configuration.sizeLimit {
                return (evicted, reportedFaults.insert(.noSpace).inserted ? false : nil, limit)
            }
            return (evicted, reportedFaults.remove(.noSpace) != nil ? true : nil, limit)
        }
        if let evicted { deleteEvicted(evicted, from: storage) }
        let directory = configuration.directory.path
        switch change {
        case false?:
            report(
                .fault(.noSpace),
                "the filesystem of the cache directory \(directory) has \(Self.megabytes(space?.available ?? 0)) free: the cache now keeps at most \(Self.megabytes(limit)) (its limit is \(Self.megabytes(configuration.sizeLimit))), evicting to stay under it"
            )
        case true?:
            report(
                .recovered(.noSpace),
                "the filesystem of the cache directory \(directory) has room again: the cache keeps up to its limit of \(Self.megabytes(configuration.sizeLimit))"
            )
        case nil:
            break
        }
        return evicted != nil
    }

    static func megabytes(_ bytes: Int) -> String {
        bytes >= 10 << 20 ? "\(bytes >> 20) MB" : String(format: "%.1f MB", Double(bytes) / Double(1 << 20))
    }
}
