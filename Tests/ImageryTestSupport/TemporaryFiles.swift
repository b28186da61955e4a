import Foundation

/// A fresh temporary directory, removed when the test is done.
public func withTemporaryDirectory(_ body: (URL) async throws -> Void) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imagery-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try await body(directory)
}

/// The sizes of a disk cache's entry files, whatever its index says.
public func blobFileSizes(in directory: URL) -> [Int] {
    blobFiles(in: directory).map { file in
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        return (attributes?[.size] as? NSNumber)?.intValue ?? -1
    }
}

/// The path of every entry file on disk.
public func blobFiles(in directory: URL) -> [URL] {
    let blobs = directory.appendingPathComponent("blobs")
    var files: [URL] = []
    for folder in (try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? [] {
        let folderURL = blobs.appendingPathComponent(folder)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folderURL.path)) ?? [] {
            files.append(folderURL.appendingPathComponent(name))
        }
    }
    return files
}

public func bytes(_ count: Int, seed: UInt8) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
}

/// Runs blocking work (a child process, a pipe read) on a thread of its own, so it
/// never occupies one of the cooperative pool's few threads.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
