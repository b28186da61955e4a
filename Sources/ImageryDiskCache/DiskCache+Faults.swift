import Foundation

extension DiskCache {
    /// Why the filesystem refused a write.
    public enum Fault: String, Sendable, Hashable, Codable, CaseIterable {
        /// The filesystem is full (or the user's quota is): the cache lowers its limit to what fits.
        case noSpace = "no_space"
        /// The directory is read-only or not writable by this process: entries held are still
        /// read; nothing is written until the directory is writable again.
        case readOnly = "read_only"
        /// The directory (or one of its folders) was removed: it is created again.
        case directoryMissing = "directory_missing"
        /// Any other failure (`EIO`, ...): the write is dropped.
        case ioError = "io_error"

        init(errno error: Int32) {
            switch error {
            case ENOSPC, EDQUOT: self = .noSpace
            case EROFS, EACCES, EPERM: self = .readOnly
            case ENOENT, ENOTDIR, ESTALE: self = .directoryMissing
            default: self = .ioError
            }
        }
    }

    /// What the cache can do with its directory now.
    public enum Mode: String, Sendable, Hashable {
        /// Reads and writes.
        case readWrite
        /// Holds nothing: the directory is read-only, removed or otherwise unusable. Writes are
        /// skipped (counted in ``Stats/failedWrites``); it is opened again (with what it kept)
        /// once it can be.
        case unavailable
    }

    /// Something an operator should know, reported once when it begins and once when it ends
    /// (``Configuration/onEvent``), never once per request.
    public struct Event: Sendable, CustomStringConvertible {
        public enum Kind: Sendable, Hashable {
            /// A write failed for this reason (the first time since the cache last recovered from it).
            case fault(Fault)
            /// Writes work again after this fault.
            case recovered(Fault)
            /// The index could not be read at open: what could be read of it was kept, it was set aside.
            case indexDamaged
        }

        public let kind: Kind
        /// What happened, to whom, and what the cache does about it: with the directory.
        public let message: String
        public var description: String { message }
    }

    // MARK: - Writer thread

    /// Counts a failure and reports its kind once. A read-only or removed directory is let go
    /// (its descriptors closed, so it can be unmounted and repaired): the cache holds nothing
    /// and is memory-only until the directory opens again, at once when it was removed (it is
    /// created again), else at the next ``Configuration/probeInterval``.
    func handle(_ fault: Fault, _ message: String, counted: Bool = true) {
        let firstOfKind = withLock { () -> Bool in
            if counted { statistics.failedWrites[fault, default: 0] += 1 }
            return reportedFaults.insert(fault).inserted
        }
        switch fault {
        case .readOnly, .directoryMissing:
            let lost = withLock { () -> Int? in
                guard mode == .readWrite else { return nil }
                defer {
                    index.removeAll()
                    pending.removeAll()
                    (mode, degradedBy, storage) = (.unavailable, fault, nil)
                }
                return index.count
            }
            if firstOfKind, let lost {
                let what =
                    fault == .readOnly
                    ? "the cache directory \(configuration.directory.path) is not writable; its \(lost) entries stay on disk for when it is"
                    : "the cache directory \(configuration.directory.path) was removed; its \(lost) entries are gone"
                report(
                    .fault(fault),
                    "\(message): \(what). Caching in memory only until it can be used again (tried every \(configuration.probeInterval))"
                )
            }
            indexOutOfSync = false
            nextProbe = configuration.time.instant() + configuration.probeInterval
            if fault == .directoryMissing { probe() }
        case .noSpace, .ioError:
            if firstOfKind { report(.fault(fault), "\(message): the entry was not stored") }
        }
    }

    /// Tries to open an unusable directory again (on the writer thread).
    func probe() {
        nextProbe = configuration.time.instant() + configuration.probeInterval
        guard withLock({ mode == .unavailable }) else { return }
        let storage: Storage
        do {
            storage = try Storage(
                directory: configuration.directory, openFileLimit: configuration.openFileLimit,
                lockWait: configuration.lockWait)
            try recover(storage)
        } catch {
            return
        }
        let (entries, fault) = withLock { () -> (Int, Fault?) in
            let fault = degradedBy
            (self.storage, mode, degradedBy) = (storage, .readWrite, nil)
            if let fault { reportedFaults.remove(fault) }
            return (index.count, fault)
        }
        report(
            .recovered(fault ?? .directoryMissing),
            "the cache directory \(configuration.directory.path) is in use again, with \(entries) entries")
    }

    /// After writes to the index failed, makes it what memory holds (one transaction).
    func resyncIndexIfNeeded(_ storage: Storage) throws {
        guard indexOutOfSync, let indexStore = storage.indexStore else { return }
        let rows = withLock { index.all }.map { entry, place in
            IndexStore.Row(
                key: entry.key, fileID: entry.fileID, size: entry.size, checksum: entry.checksum,
                accessOrder: place.sequence, priority: place.priority, metadata: entry.metadata
            )
        }
        try indexStore.replaceAll(with: rows)
        indexOutOfSync = false
    }

    /// Applies a change to the index; a failure leaves it to be rewritten from memory later, and
    /// is handled as the fault it is.
    func updateIndex(_ storage: Storage, _ change: (IndexStore) throws -> Void) {
        guard let indexStore = storage.indexStore else { return }
        do {
            try resyncIndexIfNeeded(storage)
            try change(indexStore)
        } catch {
            indexOutOfSync = true
            let fault = (error as? SQLiteError)?.fault ?? .ioError
            handle(fault, "cannot write the cache index \(storage.indexPath): \(error)", counted: false)
        }
    }

    func report(_ kind: Event.Kind, _ message: String) {
        configuration.onEvent?(Event(kind: kind, message: message))
    }
}

/// Why a disk cache could not open, or could not write.
public struct DiskCacheError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, with the path.
    public let message: String
    /// The filesystem's refusal behind it; nil when the directory is in use by another process.
    public let fault: DiskCache.Fault?
    public var description: String { message }

    public init(message: String, fault: DiskCache.Fault? = .ioError) {
        (self.message, self.fault) = (message, fault)
    }

    init(message: String, errno error: Int32) {
        self.init(message: message, fault: DiskCache.Fault(errno: error))
    }
}
