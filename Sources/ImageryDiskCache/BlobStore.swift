import Foundation
import Imagery

/// The disk cache's entry files: `blobs/XX/<16 hex digits>`, written to `tmp/`
/// first and renamed into place, so a file under `blobs/` is always complete.
/// A file id is never reused.
///
/// The 256 folders are created when the store opens and held open, and every file is
/// opened, renamed and deleted relative to its folder (`openat`, `renameat`, `unlinkat`):
/// a read resolves one name instead of walking the whole path.
///
/// Files recently read stay open (up to `openFileLimit`, least recently used closed first), so
/// a hit on a hot entry is one `pread`: `open` and `close` were 6% of the server's profile when
/// answering from disk. A descriptor is closed when its file is deleted, or evicted, and no read
/// still uses it (``OpenFile`` closes in `deinit`), so a read never meets a reused descriptor;
/// and since a file id is never reused, an open file always holds the bytes its id was written with.
package struct BlobStore: Sendable {
    let blobs: URL
    let temporary: URL
    /// Descriptors of `blobs/00` … `blobs/ff`, then of `tmp/` (index 256).
    private let folders: [Int32]
    private let openFiles: MemoryCache<UInt64, OpenFile>

    /// An entry file held open; closed when the last reference goes.
    package final class OpenFile: Sendable {
        package let descriptor: Int32
        init(_ descriptor: Int32) { self.descriptor = descriptor }
        deinit { Foundation.close(descriptor) }
    }

    /// Creates the folders if needed and opens them.
    /// - Parameter openFileLimit: How many entry files to keep open between reads (0: none).
    /// - Throws: ``DiskCacheError`` when a folder cannot be created or opened.
    init(directory: URL, openFileLimit: Int) throws(DiskCacheError) {
        openFiles = MemoryCache(countLimit: openFileLimit, cost: { _ in 1 })
        let blobs = directory.appendingPathComponent("blobs")
        let temporary = directory.appendingPathComponent("tmp")
        (self.blobs, self.temporary) = (blobs, temporary)
        var folders: [Int32] = []
        let paths = (0..<256).map { blobs.path + "/" + Self.hex(UInt64($0), digits: 2) } + [temporary.path]
        for path in paths {
            var descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            var error: Int32?
            if descriptor < 0 {
                error = DiskCache.Storage.makeDirectory(path)
                descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            }
            guard descriptor >= 0 else {
                let error = error ?? errno
                folders.forEach { _ = Foundation.close($0) }
                throw DiskCacheError(
                    message: "cannot open the cache folder \(path): \(String(cString: strerror(error)))", errno: error)
            }
            folders.append(descriptor)
        }
        self.folders = folders
    }

    /// Closes the folders; the store is not used afterwards.
    func close() {
        openFiles.removeAll()
        folders.forEach { _ = Foundation.close($0) }
    }

    /// The largest file id the cache ever gives (it counts up from 1); a larger name is not the cache's.
    package static let largestFileID: UInt64 = 1 << 62

    /// The file's name within its folder.
    static func name(of fileID: UInt64) -> String { hex(fileID, digits: 16) }

    private func folder(of fileID: UInt64) -> Int32 { folders[Int(fileID & 0xFF)] }
    private var temporaryFolder: Int32 { folders[256] }

    /// Where the file `fileID` lives: `blobs/`, its low byte in hex, its name.
    package static func relativePath(for fileID: UInt64) -> String {
        "blobs/" + hex(fileID & 0xFF, digits: 2) + "/" + name(of: fileID)
    }

    func path(for fileID: UInt64) -> String {
        blobs.path + "/" + Self.hex(fileID & 0xFF, digits: 2) + "/" + Self.name(of: fileID)
    }

    /// Zero-padded lower-case hex (`String(format:)` costs microseconds on Linux; this is on the read path).
    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return text.count >= digits ? text : String(repeating: "0", count: digits - text.count) + text
    }

    /// Writes `data` as file `fileID`: to `tmp/`, then renamed under `blobs/`.
    func write(_ data: Data, fileID: UInt64) throws {
        let name = Self.name(of: fileID)
        let descriptor = openat(temporaryFolder, name, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.failure("cannot create \(temporary.path)/\(name)", errno) }
        var written = 0
        let failure: Int32? = data.withUnsafeBytes { buffer in
            while written < buffer.count {
                let result = Foundation.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += result
            }
            return nil
        }
        Foundation.close(descriptor)
        if let failure {
            unlinkat(temporaryFolder, name, 0)
            throw Self.failure("cannot write \(temporary.path)/\(name)", failure)
        }
        guard renameat(temporaryFolder, name, folder(of: fileID), name) == 0 else {
            let error = errno
            unlinkat(temporaryFolder, name, 0)
            throw Self.failure("cannot move \(temporary.path)/\(name) into place", error)
        }
    }

    private static func failure(_ message: String, _ error: Int32) -> DiskCacheError {
        DiskCacheError(message: "\(message): \(String(cString: strerror(error)))", errno: error)
    }

    /// The filesystem's size and the bytes this process may still write to it (`fstatvfs`).
    func space() -> (total: Int, available: Int)? {
        var info = statvfs()
        guard fstatvfs(temporaryFolder, &info) == 0 else { return nil }
        let block = Int(info.f_frsize)
        return (Int(info.f_blocks) * block, Int(info.f_bavail) * block)
    }

    /// Linux's `O_NOATIME` (Glibc's module does not export it: it is `_GNU_SOURCE`'s); 0 elsewhere.
    #if os(Linux)
        private static let noAccessTime: Int32 = 0o1_000_000
    #else
        private static let noAccessTime: Int32 = 0
    #endif

    /// The bytes of entry file `fileID` (named `name`) if it holds exactly `size` bytes; otherwise `nil`.
    ///
    /// Asks for one byte more than expected: a regular file returns all it has up to the
    /// request, so getting exactly `size` bytes proves the length in the same system call.
    func read(fileID: UInt64, name: String, size: Int) -> Data? {
        let file: OpenFile
        if let open = openFiles[fileID] {
            file = open
        } else {
            // No access times: a read of a cached file is not news to the filesystem (nor a write to its
            // inode). O_NOATIME is the owner's to ask for: a file this process did not write opens without it.
            var descriptor = openat(folder(of: fileID), name, O_RDONLY | O_CLOEXEC | Self.noAccessTime)
            if descriptor < 0, errno == EPERM, Self.noAccessTime != 0 {
                descriptor = openat(folder(of: fileID), name, O_RDONLY | O_CLOEXEC)
            }
            guard descriptor >= 0 else { return nil }
            file = OpenFile(descriptor)
            openFiles[fileID] = file
        }
        let capacity = size + 1
        guard let buffer = malloc(capacity) else { return nil }
        var offset = 0
        while offset < capacity {
            let requested = capacity - offset
            let result = pread(file.descriptor, buffer + offset, requested, off_t(offset))
            if result < 0, errno == EINTR { continue }
            if result <= 0 { break }
            offset += result
            // Short: the file ends there (a regular file is read in full up to its end): no second call to see 0.
            if result < requested { break }
        }
        guard offset == size else {  // short: truncated; long: not what was written
            free(buffer)
            openFiles[fileID] = nil
            return nil
        }
        return Data(bytesNoCopy: buffer, count: size, deallocator: .free)
    }

    /// Entry file `fileID` held open, for sending as it is, once its bytes were read whole and
    /// matched `checksum`: at once when a read kept it open (every read checks the bytes), else
    /// opened, read and checked now. A file is written whole under a new id and never changed, so
    /// bytes checked once stay what its row vouches for (short of a hand on the disk: a changed
    /// length shows, a changed byte not until the file is next opened).
    /// - Returns: `nil` when it is missing, or not `size` bytes with that checksum.
    func openChecked(fileID: UInt64, name: String, size: Int, checksum: UInt64) -> OpenFile? {
        if let open = openFiles[fileID] { return open }
        guard let data = read(fileID: fileID, name: name, size: size), Checksum.of(data) == checksum else {
            openFiles[fileID] = nil
            return nil
        }
        return openFiles[fileID]
    }

    func delete(fileID: UInt64) {
        openFiles[fileID] = nil
        unlinkat(folder(of: fileID), Self.name(of: fileID), 0)
    }

    /// Every complete file under `blobs/`: id and size.
    func allFiles() -> [UInt64: Int] {
        var files: [UInt64: Int] = [:]
        let manager = FileManager.default
        for folder in (try? manager.contentsOfDirectory(atPath: blobs.path)) ?? [] {
            let folderPath = blobs.path + "/" + folder
            for name in (try? manager.contentsOfDirectory(atPath: folderPath)) ?? [] {
                let path = folderPath + "/" + name
                guard let fileID = UInt64(name, radix: 16), fileID <= Self.largestFileID, self.path(for: fileID) == path
                else {
                    unlink(path)  // not a name this cache writes
                    continue
                }
                var info = stat()
                if stat(path, &info) == 0 { files[fileID] = Int(info.st_size) }
            }
        }
        return files
    }

    /// Removes half-written files left by a crash.
    func clearTemporary() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names { unlinkat(temporaryFolder, name, 0) }
        return names.count
    }

    /// Deletes every entry file (the folders stay, as they are held open).
    /// - Returns: How many entry files there were.
    @discardableResult
    func deleteAll() -> Int {
        let files = allFiles()
        for fileID in files.keys { delete(fileID: fileID) }
        return files.count
    }
}
