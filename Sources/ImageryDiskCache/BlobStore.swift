import Foundation

/// The disk cache's entry files: `blobs/XX/<16 hex digits>`, written to `tmp/`
/// first and renamed into place, so a file under `blobs/` is always complete.
/// A file id is never reused.
struct BlobStore: Sendable {
    let blobs: URL
    let temporary: URL

    init(directory: URL) {
        blobs = directory.appendingPathComponent("blobs")
        temporary = directory.appendingPathComponent("tmp")
    }

    func createDirectories() throws {
        for directory in [blobs, temporary] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
    }

    func path(for fileID: UInt64) -> String {
        blobs.path + "/" + String(format: "%02x", fileID & 0xFF) + "/" + String(format: "%016llx", fileID)
    }

    /// Writes `data` as file `fileID`: to `tmp/`, then renamed under `blobs/`.
    func write(_ data: Data, fileID: UInt64) throws {
        let temporaryPath = temporary.path + "/" + String(format: "%016llx", fileID)
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

    /// The bytes of file `fileID` if it holds exactly `size` bytes; otherwise `nil`.
    func read(fileID: UInt64, size: Int) -> Data? {
        let descriptor = open(path(for: fileID), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data = Data(count: size)
        let complete: Bool = data.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < size {
                let result = Foundation.read(descriptor, buffer.baseAddress! + offset, size - offset)
                if result < 0 { if errno == EINTR { continue }; return false }
                if result == 0 { return false }  // shorter than recorded: truncated
                offset += result
            }
            // Longer than recorded is wrong too.
            var extra: UInt8 = 0
            return Foundation.read(descriptor, &extra, 1) == 0
        }
        return complete ? data : nil
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
