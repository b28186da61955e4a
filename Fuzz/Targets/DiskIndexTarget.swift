import Foundation
import Imagery
import ImageryDiskCache

/// Opening a disk cache whose directory holds anything a crash, a full disk or a hand could leave:
/// an index that is not a database, rows naming missing, short, shared or absurd files, rows whose
/// checksum or metadata is wrong, files no row names, half-written files. Opening must not fail
/// or crash; what it then serves must be exactly what a row vouches for; and a second opening
/// must find nothing left to repair.
///
/// Input: a mode byte. Mode 0: the rest is the index file (after SQLite's magic when the next byte
/// is odd). Otherwise: a size limit, then files (id, length, bytes), then rows (key, file id, size,
/// checksum kind, access order, metadata kind).
enum DiskIndexTarget {
    static let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "imagery-fuzz-disk-\(getpid())")
    static let keys = (0..<6).map { "key-\($0)" }

    struct Row {
        let key: String
        let fileID: UInt64
        let size: Int
        let checksum: UInt64
    }

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        var reader = FuzzReader(bytes)
        var written: [String] = []
        defer { clear(written) }
        clear([])
        var sizeLimit = 1 << 20
        var contents: [UInt64: [UInt8]] = [:]
        var rows: [String: Row] = [:]
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        if reader.byte() % 4 == 0 {
            var index = reader.byte() % 2 == 1 ? Array("SQLite format 3\0".utf8) : []
            index += reader.rest()
            _ = FileManager.default.createFile(
                atPath: directory.appendingPathComponent("index.sqlite").path, contents: Data(index))
        } else {
            sizeLimit = 16 + reader.integer(below: 400)
            for _ in 0..<Int(reader.byte() % 10) {
                let kind = reader.byte()
                let fileID = fileID(reader.byte())
                let content = reader.bytes(Int(reader.byte() % 64))
                let path: String
                switch kind % 8 {
                case 0: path = "tmp/" + BlobStore.relativePath(for: fileID).split(separator: "/").last!  // half-written
                case 1: path = "blobs/00/junk-\(fileID)"  // not a name the cache writes
                default:
                    path = BlobStore.relativePath(for: fileID)
                    contents[fileID] = content
                }
                let url = directory.appendingPathComponent(path)
                try? FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                _ = FileManager.default.createFile(atPath: url.path, contents: Data(content))
                written.append(path)
            }
            guard let store = try? IndexStore(path: directory.appendingPathComponent("index.sqlite").path),
                let insert = try? store.database.prepare(
                    "INSERT OR REPLACE INTO entries (key, file_id, size, checksum, stored_at, access_order, metadata) VALUES (?, ?, ?, ?, 0, ?, ?)"
                )
            else { throw FuzzFailure("cannot make an index") }
            for _ in 0..<Int(reader.byte() % 8) {
                let key = keys[Int(reader.byte()) % keys.count]
                let fileID = fileID(reader.byte())
                let size = Int(reader.byte() % 70) - 2
                let checksum: UInt64 =
                    switch reader.byte() % 3 {
                    case 0: Checksum.of(Data(contents[fileID] ?? []))
                    case 1: UInt64(reader.byte())
                    default: Checksum.of(Data((contents[fileID] ?? []).dropLast()))
                    }
                let order = Int64(reader.byte())
                let metadata =
                    switch reader.byte() % 3 {
                    case 0: #"{"storedAt":0}"#
                    case 1: #"{"storedAt":"yesterday"}"#
                    default: reader.text()
                    }
                do {
                    try insert.run([
                        .text(key), .integer(Int64(bitPattern: fileID)), .integer(Int64(size)),
                        .integer(Int64(bitPattern: checksum)), .integer(order), .text(metadata),
                    ])
                    rows[key] = Row(key: key, fileID: fileID, size: size, checksum: checksum)
                } catch {
                    throw FuzzFailure("cannot insert a row: \(error)")
                }
            }
        }

        // First opening: repairs whatever it must; serves only what a row vouches for.
        let configuration = DiskCache.Configuration(directory: directory, sizeLimit: sizeLimit)
        let served = try opened(configuration) { cache throws(FuzzFailure) in
            try require(cache.totalSize <= sizeLimit, "size \(cache.totalSize) over the limit \(sizeLimit)")
            var entries: [String: [UInt8]] = [:]
            for key in keys {
                guard let data = blocking({ await cache.entry(for: key)?.data }) else { continue }
                let row = rows[key]
                try require(row != nil, "\(key) served without a row")
                try require(
                    Checksum.of(data) == row!.checksum && data.count == row!.size,
                    "\(key) served bytes its row does not vouch for")
                try require(Array(data) == contents[row!.fileID], "\(key) served bytes that are not its file's")
                entries[key] = Array(data)
            }
            blocking { await cache.flush() }
            return entries
        }
        // Second opening: nothing left to repair, and the same entries.
        try opened(configuration) { cache throws(FuzzFailure) in
            try require(
                cache.stats.recoveredAtOpen == 0, "a second opening repaired \(cache.stats.recoveredAtOpen) more")
            for key in keys {
                let data = blocking({ await cache.entry(for: key)?.data }).map(Array.init)
                try require(data == served[key], "\(key) changed between openings")
            }
        }
    }

    private final class Reference: @unchecked Sendable {
        weak var cache: DiskCache?
    }

    /// `body`'s result on the cache opened with `configuration`, once the cache has closed again
    /// (the tasks that read it may hold it a moment after they answered; a second up to).
    static func opened<T>(_ configuration: DiskCache.Configuration, _ body: (DiskCache) throws(FuzzFailure) -> T)
        throws(FuzzFailure) -> T
    {
        let reference = Reference()
        let result = try use(configuration, reference, body)
        let deadline = ContinuousClock.now + .seconds(1)
        while reference.cache != nil, ContinuousClock.now < deadline { usleep(100) }
        try require(reference.cache == nil, "the cache is still referenced a second after its last use")
        // Its deinit may still run on the thread that let go last: wait for the directory's lock.
        let lock = open(configuration.directory.appendingPathComponent("lock").path, O_RDWR | O_CLOEXEC)
        defer { close(lock) }
        var locked = flock(lock, LOCK_EX | LOCK_NB) == 0
        while !locked, ContinuousClock.now < deadline {
            usleep(100)
            locked = flock(lock, LOCK_EX | LOCK_NB) == 0
        }
        try require(locked, "the cache's directory is still locked a second after its last use")
        flock(lock, LOCK_UN)
        return result
    }

    @inline(never)
    private static func use<T>(
        _ configuration: DiskCache.Configuration, _ reference: Reference, _ body: (DiskCache) throws(FuzzFailure) -> T
    ) throws(FuzzFailure) -> T {
        let cache: DiskCache
        do {
            cache = try DiskCache(configuration: configuration)
        } catch {
            throw FuzzFailure("the cache did not open: \(error)")
        }
        reference.cache = cache
        return try body(cache)
    }

    /// Mostly small ids (so files and rows meet), sometimes absurd ones.
    static func fileID(_ byte: UInt8) -> UInt64 {
        switch byte {
        case 255: .max
        case 254: BlobStore.largestFileID + 1
        default: UInt64(byte % 12)
        }
    }

    /// Removes the index and the files a run made (the folders stay: making 257 per run is slow).
    static func clear(_ paths: [String]) {
        for name in ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "index.sqlite-journal"] {
            unlink(directory.appendingPathComponent(name).path)
        }
        for path in paths { unlink(directory.appendingPathComponent(path).path) }
    }
}

/// The result of `body`, waited for on this thread (the fuzz callback is synchronous).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let semaphore = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: T?
    Task {
        result = await body()
        semaphore.signal()
    }
    semaphore.wait()
    return result!
}
