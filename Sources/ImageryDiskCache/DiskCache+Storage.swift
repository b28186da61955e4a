import Foundation
import Imagery

extension DiskCache {
    /// An open cache directory: its lock, entry files and index. Replaced as a whole when the
    /// directory is opened again (after it was removed); a read in flight keeps the one it started
    /// with, and its folders and files stay open until the last such read ends.
    final class Storage: @unchecked Sendable {
        // @unchecked: `indexStore` is used on the cache's writer thread only (and at open).
        let directory: URL
        let blobs: BlobStore
        var indexStore: IndexStore?
        /// Why the index could not be opened, when it could not.
        private(set) var indexOpenError: (any Error)?
        private let lockDescriptor: Int32
        /// The directory's device and inode when opened: another (or none) means it was removed.
        private let identity: (device: UInt64, inode: UInt64)

        var indexPath: String { directory.appendingPathComponent("index.sqlite").path }

        /// Creates the directory if needed, takes its lock, opens its folders and index.
        /// - Throws: ``DiskCacheError``, with the fault when the filesystem refused (read-only,
        ///   full, ...), without one when another process holds the directory. An index SQLite
        ///   cannot read is not an error: ``indexStore`` is nil, for ``DiskCache/recover(_:)`` to
        ///   salvage and replace.
        init(directory: URL, openFileLimit: Int, lockWait: Duration) throws(DiskCacheError) {
            self.directory = directory
            if let error = Self.makeDirectory(directory.path) {
                throw DiskCacheError(
                    message: "cannot create the cache directory \(directory.path): \(Self.describe(error))",
                    errno: error)
            }
            let lock = open(directory.appendingPathComponent("lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
            guard lock >= 0 else {
                let error = errno
                throw DiskCacheError(
                    message: "cannot use the cache directory \(directory.path): \(Self.describe(error))", errno: error)
            }
            guard Self.lock(lock, waitingUpTo: lockWait) else {
                close(lock)
                throw DiskCacheError(
                    message: "the cache directory \(directory.path) is in use by another process", fault: nil)
            }
            var info = stat()
            guard stat(directory.path, &info) == 0 else {
                let error = errno
                close(lock)
                throw DiskCacheError(
                    message: "cannot use the cache directory \(directory.path): \(Self.describe(error))", errno: error)
            }
            do {
                blobs = try BlobStore(directory: directory, openFileLimit: openFileLimit)
            } catch {
                close(lock)
                throw error
            }
            (lockDescriptor, identity) = (lock, (UInt64(info.st_dev), UInt64(info.st_ino)))
            do {
                indexStore = try IndexStore(path: indexPath)
            } catch let error as SQLiteError where error.fault != nil {
                blobs.close()
                close(lock)
                throw DiskCacheError(
                    message: "cannot open the cache index \(indexPath): \(error.message)", fault: error.fault)
            } catch {
                (indexStore, indexOpenError) = (nil, error)  // unreadable: recovery sets it aside
            }
        }

        deinit {
            indexStore = nil  // the index is closed before the directory is let go
            blobs.close()
            close(lockDescriptor)
        }

        /// Whether the directory is still the one opened (not removed, nor replaced).
        var isIntact: Bool {
            var info = stat()
            return stat(directory.path, &info) == 0 && UInt64(info.st_dev) == identity.device
                && UInt64(info.st_ino) == identity.inode
        }

        /// Renames the index (and its log) to `index.sqlite.damaged`, replacing an earlier one, and
        /// opens a new empty index.
        /// - Returns: Where the old one went.
        func setIndexAside() throws(DiskCacheError) -> String {
            indexStore = nil
            let aside = indexPath + ".damaged"
            for suffix in ["", "-wal", "-shm", "-journal"] {
                unlink(aside + suffix)
                rename(indexPath + suffix, aside + suffix)
            }
            do {
                indexStore = try IndexStore(path: indexPath)
            } catch let error as SQLiteError {
                throw DiskCacheError(
                    message: "cannot create the cache index \(indexPath): \(error.message)",
                    fault: error.fault ?? .ioError)
            } catch {
                throw DiskCacheError(message: "cannot create the cache index \(indexPath): \(error)", fault: .ioError)
            }
            return aside
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

        /// `mkdir -p`: nil when `path` is a directory afterwards, else the `errno` that stopped it.
        static func makeDirectory(_ path: String) -> Int32? {
            var info = stat()
            if stat(path, &info) == 0 { return (info.st_mode & S_IFMT) == S_IFDIR ? nil : ENOTDIR }
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, parent != path, let error = makeDirectory(parent) { return error }
            if mkdir(path, 0o755) == 0 || errno == EEXIST { return nil }
            return errno
        }

        static func describe(_ error: Int32) -> String { String(cString: strerror(error)) }
    }
}

extension SQLiteError {
    /// The filesystem fault behind this failure, if it is one (not a damaged or foreign database).
    var fault: DiskCache.Fault? {
        switch code & 0xFF {
        case 13: .noSpace  // SQLITE_FULL
        case 8: .readOnly  // SQLITE_READONLY
        case 10, 14: systemErrno.map(DiskCache.Fault.init(errno:)) ?? .ioError  // SQLITE_IOERR, SQLITE_CANTOPEN
        default: nil
        }
    }
}
