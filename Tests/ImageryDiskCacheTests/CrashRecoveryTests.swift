import Foundation
import Imagery
import ImageryDiskCache
import ImageryTestSupport
import Testing

/// A child process writing entries is killed with SIGKILL at a random moment,
/// again and again on one directory; after each kill the cache must open with
/// exact size accounting and never serve a wrong byte.
@Suite("Disk cache crash recovery")
struct CrashRecoveryTests {
    static var writer: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "ImageryCrashWriter")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: writer.path)))
    func killingAWriterMidWriteNeverLeavesACorruptEntry() async throws {
        let rounds = Int(ProcessInfo.processInfo.environment["IMAGERY_CRASH_ROUNDS"] ?? "") ?? 20
        let limit = 3_000_000
        try await withTemporaryDirectory { directory in
            var next = 0
            let directory = directory
            var killedMidWrite = 0
            for round in 0..<rounds {
                // The last round's cache is let go of: the child opens the directory at once.
                try await waitUntilNoCacheHolds(directory)
                // Let it write a while (it reports every 8 entries), then kill it without warning: at a
                // moment the test does not choose (the random pause is jitter, asserted on by nothing).
                let first = next
                let (reason, seen) = try await runBlocking { () throws -> (ChildProcess.Termination, String) in
                    let process = try ChildProcess(
                        Self.writer.path, [directory.path, String(first), String(limit)], output: .pipe, error: .inherit
                    )
                    let reader = process.standardOutput!
                    var seen = ""
                    let wanted = 1 + round % 4
                    while seen.components(separatedBy: "stored").count - 1 < wanted {
                        let chunk = reader.availableData
                        if chunk.isEmpty { break }
                        seen += String(decoding: chunk, as: UTF8.self)
                    }
                    usleep(UInt32.random(in: 0...15_000))
                    process.send(SIGKILL)
                    return (process.wait(), seen)
                }
                #expect(reason == .signalled(SIGKILL), "round \(round): \(seen)")
                if reason == .signalled(SIGKILL) { killedMidWrite += 1 }
                next += 1000

                let cache = try openCache(directory, sizeLimit: limit)
                let files = blobFileSizes(in: directory)
                #expect(files.reduce(0, +) == cache.totalSize, "round \(round)")
                #expect(files.count == cache.count, "round \(round)")
                #expect(cache.totalSize <= limit)
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path)
                        .isEmpty)
                // Every entry the index holds reads back exactly.
                for index in 0..<next {
                    let key = CrashPayload.key(for: index)
                    guard let entry = await cache.entry(for: key) else { continue }
                    #expect(entry.data == CrashPayload.bytes(for: index), "round \(round): \(key) served wrong bytes")
                }
                #expect(cache.stats.corruptEntriesRemoved == 0, "round \(round)")
            }
            #expect(killedMidWrite == rounds)
        }
    }
}
