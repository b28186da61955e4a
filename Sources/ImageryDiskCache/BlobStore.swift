import Foundation

/// The disk cache's entry files: `blobs/XX/<16 hex digits>`, written to `tmp/`
/// first and renamed into place, so a file under `blobs/` is always complete.
/// A file id is never reused.
struct BlobStore: Sendable {
    let blobs: URL
    let temporary: URL
    private let blobsPath: String

    init(directory: URL) {
        blobs = directory.appendingPathComponent("blobs")
        temporary = directory.appendingPathComponent("tmp")
        blobsPath = blobs.path
    }

    func createDirectories() throws {
        for directory in [blobs, temporary] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
    }

    func path(for fileID: UInt64) -> String {
        blobsPath + "/" + Self.hex(fileID & 0xFF, digits: 2) + "/" + Self.hex(fileID, digits: 16)
    }

    /// Zero-padded lower-case hex (`String(format:)` costs microseconds on Linux; this is on the read path).
    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return text.count >= digits ? text : String(repeating: "0", count: digits - text.count) + text
    }

    /// Writes `data` as file `fileID`: to `tmp/`, then renamed under `blobs/`.
    func write(_ data: Data, fileID: UInt64) throws {
        let temporaryPath = temporary.path + "/" + Self.hex(fileID, digits: 16)
        let descriptor = open(temporaryPath, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DiskCacheError(message: "cannot create \(temporaryPath): errno \(errno)") }
        var written = 0
        let failure: Int32? = data.withUnsafeBytes { buffer in
            while written < buffer.count {
                let result = Foundation.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if result < 0 { if errno == EINTR { continue }; return errno }
                written += result
            }
            return nil
        }
        close(descriptor)
        if let failure {
            unlink(temporaryPath)
            throw DiskCacheError(message: "cannot write \(temporaryPath): errno \(failure)")
        }
        let finalPath = path(for: fileID)
        if rename(temporaryPath, finalPath) != 0 {
            // The two-hex-digit folder may not exist yet.
            try FileManager.default.createDirectory(
                atPath: (finalPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true
            )
            guard rename(temporaryPath, finalPath) == 0 else {
                unlink(temporaryPath)
                throw DiskCacheError(message: "cannot move \(temporaryPath) into place: errno \(errno)")
            }
        }
    }

    /// The bytes of the entry file at `path` if it holds exactly `size` bytes; otherwise `nil`.
    ///
    /// Asks for one byte more than expected: a regular file returns all it has up to the
    /// request, so getting exactly `size` bytes proves the length in the same system call.
    func read(path: String, size: Int) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let capacity = size + 1
        guard let buffer = malloc(capacity) else { return nil }
        var offset = 0
        while offset < capacity {
            let result = Foundation.read(descriptor, buffer + offset, capacity - offset)
            if result < 0, errno == EINTR { continue }
            if result <= 0 { break }
            offset += result
        }
        guard offset == size else {  // short: truncated; long: not what was written
            free(buffer)
            return nil
        }
        return Data(bytesNoCopy: buffer, count: size, deallocator: .free)
    }

    func delete(fileID: UInt64) {
        unlink(path(for: fileID))
    }

    /// Every complete file under `blobs/`: id and size.
    func allFiles() -> [UInt64: Int] {
        var files: [UInt64: Int] = [:]
        let manager = FileManager.default
        for folder in (try? manager.contentsOfDirectory(atPath: blobs.path)) ?? [] {
            let folderPath = blobs.path + "/" + folder
            for name in (try? manager.contentsOfDirectory(atPath: folderPath)) ?? [] {
                let path = folderPath + "/" + name
                guard let fileID = UInt64(name, radix: 16), self.path(for: fileID) == path else {
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
        for name in names { unlink(temporary.path + "/" + name) }
        return names.count
    }

    func deleteAll() {
        try? FileManager.default.removeItem(at: blobs)
        try? FileManager.default.createDirectory(at: blobs, withIntermediateDirectories: true)
    }
}
