import Foundation
import Hummingbird
import HummingbirdTesting
import ImageryDiskCache
import ImageryServer
import ImageryTestSupport
import Logging
import Testing

/// The disk faults an operator meets, through the server: every answer stays 200, the fault is
/// one log line naming the directory (with `disk_fault=KIND`) and a counter, and what fits is kept.
@Suite("Disk faults through the server")
struct DiskFaultServerTests {
    /// Sources of 240 KB (a fixture under 12 names) on an origin, and a 2 MB filesystem for the cache.
    static func withSourcesAndSmallDisk(
        _ body: @escaping @Sendable (TestOrigin, SmallFilesystem, [String]) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { sources in
            let names = (0..<12).map { "copy-\($0).png" }
            for name in names {
                try FileManager.default.copyItem(
                    at: Fixtures.directory.appendingPathComponent("chelsea.png"),
                    to: sources.appendingPathComponent(name))
            }
            let origin = try await TestOrigin.serving(directory: sources)
            do {
                try await SmallFilesystem.with(megabytes: 2) { filesystem in try await body(origin, filesystem, names) }
            } catch {
                try? await origin.shutdown()
                throw error
            }
            try await origin.shutdown()
        }
    }

    /// 2.9 MB of originals and 24 responses for a filesystem that holds 1.5 MB: every answer 200,
    /// the fault logged once, and after a restart every response is a disk hit (plain LRU kept
    /// none of them: ``DiskFaultTests``).
    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a tmpfs"))
    func aFullDiskKeepsTheResponsesAcrossARestart() async throws {
        try await Self.withSourcesAndSmallDisk { origin, filesystem, names in
            let directory = filesystem.mountPoint.appendingPathComponent("cache")
            let log = CapturedLog()
            try await serve(origin: origin, logger: log.logger, configure: { $0.caching.directory = directory }) {
                client in
                for name in names {
                    for width in [64, 96] {
                        #expect(try await get(client, imageURI(origin, name, "w=\(width)&format=jpeg")).status == .ok)
                    }
                }
                let figures = try await metrics(client)
                #expect((figures["imagery_disk_cache_limit_bytes"] ?? .infinity) < Double(2 << 20))
                #expect(figures["imagery_disk_cache_writable"] == 1)
            }
            let lines = log.lines(withMetadata: "disk_fault", "no_space")
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.contains(directory.path) == true)
            try await serve(origin: origin, configure: { $0.caching.directory = directory }) { client in
                for name in names {
                    for width in [64, 96] {
                        let status = try await get(client, imageURI(origin, name, "w=\(width)&format=jpeg")).status
                        #expect(status == .ok)
                    }
                }
                let figures = try await metrics(client)
                #expect(lookups(figures, "response_disk", "hit") == 24)
            }
        }
    }

    /// Something else fills the filesystem: the limit in effect drops (one line), answers stay 200;
    /// the space freed, the next write raises it back to `--disk-limit` (one line) and stores again.
    /// The disk's writes run behind the answers: each effect is waited for, never a fixed time.
    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a tmpfs"))
    func spaceFreedOnAFullDiskIsUsedAgain() async throws {
        try await Self.withSourcesAndSmallDisk { origin, filesystem, names in
            let directory = filesystem.mountPoint.appendingPathComponent("cache")
            let log = CapturedLog()
            try await serve(
                origin: origin, logger: log.logger,
                configure: { ($0.caching.directory, $0.caching.diskLimit) = (directory, 1 << 20) }
            ) { client in
                #expect(try await get(client, imageURI(origin, names[0], "w=64")).status == .ok)
                filesystem.fill()
                #expect(try await get(client, imageURI(origin, names[1], "w=64")).status == .ok)
                try await waitUntil("the limit in effect drops, said once") {
                    (try await metrics(client)["imagery_disk_cache_limit_bytes"] ?? .infinity) < Double(1 << 20)
                        && !log.lines(withMetadata: "disk_fault", "no_space").isEmpty
                }
                #expect(log.lines(withMetadata: "disk_fault", "no_space").count == 1)
                filesystem.unfill()
                #expect(try await get(client, imageURI(origin, names[2], "w=64")).status == .ok)
                try await waitUntil("the limit comes back, said once") {
                    try await metrics(client)["imagery_disk_cache_limit_bytes"] == Double(1 << 20)
                        && !log.lines(withMetadata: "disk_recovered", "no_space").isEmpty
                }
                #expect(log.lines(withMetadata: "disk_recovered", "no_space").count == 1)
                let before = try await metrics(client)["imagery_disk_cache_entries"] ?? 0
                #expect(try await get(client, imageURI(origin, names[3], "w=64")).status == .ok)
                try await waitUntil("it stores again") {
                    (try await metrics(client)["imagery_disk_cache_entries"] ?? 0) > before
                }
            }
        }
    }

    /// A read-only directory at start: the server starts, answers, logs it once, counts the
    /// writes it skips, and takes the directory when it is writable: at the first write after its
    /// probe interval (5 s, the server's), waited for as that event by writing until it happens.
    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a tmpfs"))
    func aReadOnlyDirectoryAtStartIsMemoryOnlyUntilWritable() async throws {
        try await Self.withSourcesAndSmallDisk { origin, filesystem, names in
            let directory = filesystem.mountPoint.appendingPathComponent("cache")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try filesystem.setReadOnly(true)
            let log = CapturedLog()
            try await serve(origin: origin, logger: log.logger, configure: { $0.caching.directory = directory }) {
                client in
                #expect(try await get(client, imageURI(origin, names[0], "w=64")).status == .ok)
                var figures = try await metrics(client)
                #expect(figures["imagery_disk_cache_writable"] == 0)
                #expect((figures[#"imagery_disk_cache_write_failures{kind="read_only"}"#] ?? 0) >= 1)
                let lines = log.lines(withMetadata: "disk_fault", "read_only")
                #expect(lines.count == 1 && lines.first?.contains(directory.path) == true, "\(lines)")
                try filesystem.setReadOnly(false)
                // Each new size is a write, which tries the directory again once the interval has passed.
                let width = Counter()
                try await waitUntil("the directory is taken again", every: .milliseconds(200)) {
                    width.increment()
                    #expect(try await get(client, imageURI(origin, names[0], "w=\(64 + width.value)")).status == .ok)
                    return try await metrics(client)["imagery_disk_cache_writable"] == 1
                }
                for name in names[1...2] {
                    #expect(try await get(client, imageURI(origin, name, "w=64")).status == .ok)
                }
                try await waitUntil("what it answers is stored again") {
                    (try await metrics(client)["imagery_disk_cache_entries"] ?? 0) >= 2
                }
                figures = try await metrics(client)
                #expect(figures["imagery_disk_cache_writable"] == 1)
                #expect(log.lines(withMetadata: "disk_recovered", "read_only").count == 1)
            }
        }
    }

    /// `rm -rf` of the cache directory while serving: answers stay 200, one line says so, the
    /// entries gauge drops to what is there, and the directory is created again and used.
    @Test func aRemovedDirectoryIsSaidAndCreatedAgain() async throws {
        try await Self.withFixturesAndDirectory { origin, directory in
            let log = CapturedLog()
            try await serve(origin: origin, logger: log.logger, configure: { $0.caching.directory = directory }) {
                client in
                for width in [40, 50, 60] {
                    #expect(try await get(client, imageURI(origin, "rocket.jpg", "w=\(width)")).status == .ok)
                }
                let remove = try Process.run(URL(fileURLWithPath: "/bin/rm"), arguments: ["-rf", directory.path])
                remove.waitUntilExit()
                #expect(!FileManager.default.fileExists(atPath: directory.path))
                for width in [70, 80] {
                    #expect(try await get(client, imageURI(origin, "rocket.jpg", "w=\(width)")).status == .ok)
                }
                // The next write finds the directory gone, and creates it again (on the disk's writer thread).
                let index = directory.appendingPathComponent("index.sqlite").path
                try await waitUntil("the directory is created again") {
                    guard FileManager.default.fileExists(atPath: index) else { return false }
                    return try await metrics(client)["imagery_disk_cache_writable"] == 1
                }
                let figures = try await metrics(client)
                #expect((figures["imagery_disk_cache_entries"] ?? 99) <= 2)
            }
            let lines = log.lines(withMetadata: "disk_fault", "directory_missing")
            #expect(lines.count == 1 && lines.first?.contains(directory.path) == true, "\(lines)")
        }
    }

    /// An index damaged while the server was stopped: it starts, says so (error level) naming the
    /// file set aside, and answers.
    @Test func aDamagedIndexIsSaidAtStart() async throws {
        try await Self.withFixturesAndDirectory { origin, directory in
            try await serve(origin: origin, configure: { $0.caching.directory = directory }) { client in
                let status = try await get(client, imageURI(origin, "rocket.jpg", "w=64")).status
                #expect(status == .ok)
            }
            let index = directory.appendingPathComponent("index.sqlite")
            try Data("not an index".utf8).write(to: index)
            let log = CapturedLog()
            try await serve(origin: origin, logger: log.logger, configure: { $0.caching.directory = directory }) {
                client in
                let status = try await get(client, imageURI(origin, "rocket.jpg", "w=64")).status
                #expect(status == .ok)
            }
            let lines = log.lines(withMetadata: "disk_fault", "index_damaged")
            #expect(lines.count == 1 && lines.first?.contains(index.path + ".damaged") == true, "\(lines)")
        }
    }

    static func withFixturesAndDirectory(_ body: @escaping @Sendable (TestOrigin, URL) async throws -> Void)
        async throws
    {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        do {
            try await withTemporaryDirectory { parent in try await body(origin, parent.appendingPathComponent("cache"))
            }
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }
}
