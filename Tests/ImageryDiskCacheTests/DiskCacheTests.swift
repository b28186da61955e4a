import Foundation
import Imagery
import ImageryDiskCache
import ImageryTestSupport
import Testing

@Suite("DiskCache")
struct DiskCacheTests {
    @Test func aStoredEntryIsReadableAtOnceAndAfterItIsWritten() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try openCache(directory)
            let metadata = CacheMetadata(contentType: "image/jpeg", storedAt: Date(timeIntervalSince1970: 1_000))
            await cache.store(bytes(30_000, seed: 1), for: "a", metadata: metadata)
            // Before the writer thread has run:
            #expect(await cache.entry(for: "a")?.data == bytes(30_000, seed: 1))
            await cache.flush()
            let entry = await cache.entry(for: "a")
            #expect(entry?.data == bytes(30_000, seed: 1))
            #expect(entry?.metadata == metadata)
            #expect(cache.totalSize == 30_000)
            #expect(cache.count == 1)
            #expect(blobFileSizes(in: directory) == [30_000])
            #expect(await cache.entry(for: "missing") == nil)
            #expect(cache.stats.hits == 2 && cache.stats.misses == 1)
        }
    }

    @Test func writesBeyondThePendingBoundAreDroppedWithTheEntryTheyReplace() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = DiskCache.Configuration.patient(directory)
            configuration.maximumPendingBytes = 10_000
            let cache = try DiskCache(configuration: configuration)
            await cache.store(bytes(5_000, seed: 1), for: "a", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "a")?.data == bytes(5_000, seed: 1))
            // More than the bound waiting (this one alone): not held, and the old "a" goes with it.
            await cache.store(bytes(30_000, seed: 2), for: "a", metadata: CacheMetadata())
            #expect(await cache.entry(for: "a") == nil)
            #expect(cache.stats.writesDropped == 1)
            await cache.store(bytes(4_000, seed: 3), for: "b", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "b")?.data == bytes(4_000, seed: 3))
            #expect(cache.totalSize == 4_000)
        }
    }

    @Test func entriesSurviveARestart() async throws {
        try await withTemporaryDirectory { directory in
            let http = HTTPResponseInfo(
                statusCode: 200, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=60", "X-Other": "dropped"],
                requestTime: Date(timeIntervalSince1970: 10), responseTime: Date(timeIntervalSince1970: 11),
                requestHeaders: [:]
            )
            do {
                let cache = try openCache(directory)
                await cache.store(
                    bytes(1000, seed: 2), for: "url:http://x/a.jpg",
                    metadata: CacheMetadata(contentType: "image/png", http: http))
                await cache.store(bytes(2000, seed: 3), for: "b", metadata: CacheMetadata())
                await cache.flush()
            }
            let reopened = try openCache(directory)
            #expect(reopened.count == 2)
            #expect(reopened.totalSize == 3000)
            let entry = try #require(await reopened.entry(for: "url:http://x/a.jpg"))
            #expect(entry.data == bytes(1000, seed: 2))
            #expect(entry.metadata.http?.headers["etag"] == "\"v1\"")
            #expect(entry.metadata.http?.headers["x-other"] == nil)
            #expect(entry.metadata.contentType == "image/png")
        }
    }

    @Test func evictsTheLeastRecentlyUsedEntryToStayUnderTheSizeLimit() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try openCache(directory, sizeLimit: 3000)
            for key in ["a", "b", "c"] {
                await cache.store(bytes(1000, seed: 0), for: key, metadata: CacheMetadata())
                await cache.flush()
            }
            _ = await cache.entry(for: "a")  // a is now the most recent
            await cache.store(bytes(1000, seed: 0), for: "d", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "b") == nil)
            for key in ["a", "c", "d"] { #expect(await cache.entry(for: key) != nil, "\(key)") }
            #expect(cache.totalSize == 3000)
            #expect(cache.stats.evictions == 1)
            #expect(blobFileSizes(in: directory).reduce(0, +) == 3000)
        }
    }

    @Test func recencySurvivesARestart() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let cache = try openCache(directory, sizeLimit: 3000)
                for key in ["a", "b", "c"] {
                    await cache.store(bytes(1000, seed: 0), for: key, metadata: CacheMetadata())
                }
                await cache.flush()
                _ = await cache.entry(for: "a")
                await cache.flush()
            }
            let cache = try openCache(directory, sizeLimit: 3000)
            await cache.store(bytes(1000, seed: 0), for: "d", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "b") == nil)
            #expect(await cache.entry(for: "a") != nil)
        }
    }

    /// A body opened to be sent from its file (`openBody`: the server's disk hits) is a read like any
    /// other: counted, its recency kept across a restart; an update of the entry's metadata gives the
    /// body another revision (what the server's heads follow); a removed entry opens none.
    @Test func openedBodiesAreReadsWithRevisions() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let cache = try openCache(directory, sizeLimit: 3000)
                for key in ["a", "b", "c"] {
                    await cache.store(bytes(1000, seed: 0), for: key, metadata: CacheMetadata())
                }
                await cache.flush()
                let hits = cache.stats.hits
                let first = try #require(cache.openBody(for: "a"))
                #expect(cache.stats.hits == hits + 1 && first.size == 1000)
                await cache.updateMetadata(CacheMetadata(contentType: "image/png"), for: "a")
                await cache.flush()
                let second = try #require(cache.openBody(for: "a"))
                #expect(second.fileID == first.fileID && second.revision != first.revision)
                #expect(second.metadata.contentType == "image/png")
                await cache.remove(for: "c")
                #expect(cache.openBody(for: "c") == nil)
                await cache.flush()
            }
            let cache = try openCache(directory, sizeLimit: 3000)
            await cache.store(bytes(1000, seed: 1), for: "d", metadata: CacheMetadata())
            await cache.store(bytes(1000, seed: 2), for: "e", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "b") == nil)  // the least recently used: "a" was read since
            #expect(await cache.entry(for: "a") != nil)
        }
    }

    @Test func theSizeLimitHoldsAfterEveryWriteUnderConcurrentWritersAndReaders() async throws {
        try await withTemporaryDirectory { directory in
            let limit = 1_000_000
            let cache = try openCache(directory, sizeLimit: limit)
            let overLimit = Counter()
            let wrongBytes = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for step in 0..<150 {
                            let key = "k\((writer * 150 + step) % 300)"
                            await cache.store(
                                bytes(1000 + (step * 977) % 60_000, seed: UInt8(step % 200)), for: key,
                                metadata: CacheMetadata())
                            if cache.totalSize > limit { overLimit.increment() }
                        }
                    }
                }
                for _ in 0..<2 {
                    group.addTask {
                        for step in 0..<600 {
                            if let entry = await cache.entry(for: "k\(step % 300)") {
                                // Whatever version it is, its bytes follow the generator.
                                let expected = bytes(entry.data.count, seed: entry.data.first ?? 0)
                                if entry.data != expected { wrongBytes.increment() }
                            }
                            if cache.totalSize > limit { overLimit.increment() }
                        }
                    }
                }
                try await group.waitForAll()
            }
            await cache.flush()
            #expect(overLimit.value == 0)
            #expect(wrongBytes.value == 0)
            // No read met a file closed or replaced under it (files stay open between reads).
            #expect(cache.stats.corruptEntriesRemoved == 0)
            #expect(cache.totalSize <= limit)
            let onDisk = blobFileSizes(in: directory)
            #expect(onDisk.reduce(0, +) == cache.totalSize)
            #expect(onDisk.count == cache.count)
            #expect(cache.stats.evictions > 0)
        }
    }

    #if os(Linux)
        @Test func readFilesStayOpenWithinTheLimitAndCloseWhenTheirEntryGoes() async throws {
            try await withTemporaryDirectory { directory in
                var configuration = DiskCache.Configuration.patient(directory)
                configuration.openFileLimit = 3
                let cache = try DiskCache(configuration: configuration)
                for i in 0..<5 {
                    await cache.store(bytes(1_000 + i, seed: UInt8(i)), for: "k\(i)", metadata: CacheMetadata())
                }
                await cache.flush()
                #expect(openEntryFiles(in: directory).isEmpty)  // writing holds nothing open
                for _ in 0..<2 {
                    for i in 0..<5 {
                        #expect(await cache.entry(for: "k\(i)")?.data == bytes(1_000 + i, seed: UInt8(i)))
                    }
                    #expect(openEntryFiles(in: directory).count == 3)  // the three read last
                }
                await cache.remove(for: "k4")
                await cache.store(bytes(10, seed: 7), for: "k3", metadata: CacheMetadata())  // replaces k3's file
                await cache.flush()
                #expect(
                    openEntryFiles(in: directory).count == 1,
                    "a deleted file is not held open: \(openEntryFiles(in: directory))")
                #expect(await cache.entry(for: "k3")?.data == bytes(10, seed: 7))
                await cache.removeAll()
                #expect(openEntryFiles(in: directory).isEmpty)
            }
        }

        /// The entry files under `directory` this process has open (deleted ones too).
        private func openEntryFiles(in directory: URL) -> [String] {
            let prefix = directory.appendingPathComponent("blobs").path + "/"
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return descriptors.compactMap {
                try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
            }
            .filter { $0.hasPrefix(prefix) && $0.dropFirst(prefix.count).count > 2 }  // files, not the folders
        }
    #endif

    @Test(arguments: ["flip", "truncate", "extend", "delete"])
    func aDamagedFileIsAMissAndIsRemoved(damage: String) async throws {
        try await withTemporaryDirectory { directory in
            let cache = try openCache(directory)
            await cache.store(bytes(40_000, seed: 9), for: "a", metadata: CacheMetadata())
            // read on the reader threads
            await cache.store(bytes(500_000, seed: 8), for: "big", metadata: CacheMetadata())
            await cache.flush()
            for file in blobFiles(in: directory) {
                var data = try Data(contentsOf: file)
                switch damage {
                case "flip": data[data.count / 2] ^= 0xFF
                case "truncate": data = data.prefix(data.count - 100)
                case "extend": data.append(0)
                default:
                    try FileManager.default.removeItem(at: file)
                    continue
                }
                try data.write(to: file)
            }
            #expect(await cache.entry(for: "a") == nil)
            #expect(await cache.entry(for: "big") == nil)
            #expect(cache.stats.corruptEntriesRemoved == 2)
            await cache.flush()
            #expect(cache.count == 0 && cache.totalSize == 0)
            #expect(blobFiles(in: directory).isEmpty)
            // And the cache still works.
            await cache.store(bytes(100, seed: 1), for: "a", metadata: CacheMetadata())
            #expect(await cache.entry(for: "a")?.data == bytes(100, seed: 1))
        }
    }

    @Test func openingReconcilesOrphansAndMissingFiles() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let cache = try openCache(directory)
                for key in ["a", "b", "c"] {
                    await cache.store(bytes(1000, seed: 1), for: key, metadata: CacheMetadata())
                }
                await cache.flush()
            }
            // A crash leaves: a half-written temporary file, an orphan blob, and a row whose file vanished.
            try Data(count: 10).write(to: directory.appendingPathComponent("tmp/00000000000000ff"))
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("blobs/fe"), withIntermediateDirectories: true)
            try Data(count: 20).write(to: directory.appendingPathComponent("blobs/fe/00000000000000fe"))
            try FileManager.default.removeItem(
                at: try #require(blobFiles(in: directory).first { !$0.path.hasSuffix("fe") }))
            let cache = try openCache(directory)
            #expect(cache.count == 2)
            #expect(cache.totalSize == 2000)
            #expect(cache.stats.recoveredAtOpen == 3)
            #expect(blobFileSizes(in: directory).sorted() == [1000, 1000])
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path)
                    .isEmpty)
        }
    }

    @Test(arguments: ["not a database", "SQLite format 3\u{0}" + String(repeating: "x", count: 200), ""])
    func anUnreadableIndexStartsTheCacheEmptyInsteadOfFailing(index: String) async throws {
        try await withTemporaryDirectory { directory in
            do {
                let cache = try openCache(directory)
                for key in ["a", "b"] { await cache.store(bytes(1000, seed: 1), for: key, metadata: CacheMetadata()) }
                await cache.flush()
            }
            let path = directory.appendingPathComponent("index.sqlite")
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path.path + suffix) }
            try Data(index.utf8).write(to: path)
            let cache = try openCache(directory)
            if index.isEmpty {
                // An empty file is a new database: the files no row names are orphans.
                #expect(cache.stats.recoveredAtOpen == 2)
            } else {
                #expect(cache.stats.recoveredAtOpen == 3)  // the two files and the index
            }
            #expect(cache.count == 0 && blobFileSizes(in: directory).isEmpty)
            await cache.store(bytes(10, seed: 2), for: "c", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "c")?.data == bytes(10, seed: 2))
        }
    }

    @Test func rowsThatShareAFileOrNameAnAbsurdOneAreForgotten() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let cache = try openCache(directory)
                await cache.store(bytes(100, seed: 1), for: "a", metadata: CacheMetadata())
                await cache.store(bytes(100, seed: 2), for: "b", metadata: CacheMetadata())
                await cache.flush()
            }
            do {
                // A hand (or a bug) points b at a's file, and adds a row with an id the cache never gives.
                let store = try IndexStore(path: directory.appendingPathComponent("index.sqlite").path)
                try store.database.execute(
                    "UPDATE entries SET file_id = (SELECT file_id FROM entries WHERE key = 'a') WHERE key = 'b'")
                try store.database.execute(
                    "INSERT INTO entries (key, file_id, size, checksum, stored_at, access_order, content_type, metadata) VALUES ('c', -1, 100, 0, 0, 99, NULL, '{\"storedAt\":0}')"
                )
            }
            let cache = try openCache(directory)
            #expect(cache.count == 0)
            #expect(await cache.entry(for: "a") == nil)
            #expect(await cache.entry(for: "b") == nil)
            #expect(blobFileSizes(in: directory).isEmpty)
            await cache.store(bytes(10, seed: 3), for: "d", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "d")?.data == bytes(10, seed: 3))
        }
    }

    @Test func removeTrimAndRemoveAllTakeEffectAtOnce() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try openCache(directory)
            for index in 0..<10 { await cache.store(bytes(1000, seed: 1), for: "k\(index)", metadata: CacheMetadata()) }
            await cache.flush()
            await cache.remove(for: "k0")
            #expect(await cache.entry(for: "k0") == nil)
            await cache.trim(toSize: 5000)
            #expect(cache.totalSize == 5000 && cache.count == 5)
            await cache.removeAll()
            #expect(cache.count == 0)
            #expect(await cache.entry(for: "k9") == nil)
            #expect(blobFiles(in: directory).isEmpty)
        }
    }

    /// The time to live is measured on the cache's own time (``DiskCache/Configuration/time``), moved
    /// by hand: an entry is a hit up to its age limit and a miss past it, whatever the machine's speed.
    @Test func entriesOlderThanTheTimeToLiveAreMisses() async throws {
        try await withTemporaryDirectory { directory in
            let time = ManualTime()
            var configuration = DiskCache.Configuration.patient(directory, ttl: 60)
            configuration.time = time.source
            let cache = try DiskCache(configuration: configuration)
            await cache.store(
                bytes(10, seed: 1), for: "old", metadata: CacheMetadata(storedAt: time.date.addingTimeInterval(-61)))
            await cache.store(bytes(10, seed: 1), for: "new", metadata: CacheMetadata(storedAt: time.date))
            await cache.flush()
            #expect(await cache.entry(for: "old") == nil)
            #expect(cache.openBody(for: "new") != nil)
            time.advance(by: .seconds(59))
            #expect(await cache.entry(for: "new") != nil, "59 s old: within the limit")
            #expect(await cache.metadata(for: "new") != nil)
            time.advance(by: .seconds(2))
            #expect(await cache.metadata(for: "new") == nil)
            #expect(cache.openBody(for: "new") == nil)
            #expect(await cache.entry(for: "new") == nil)
        }
    }

    /// A second cache on a directory one holds is refused: at once when it does not wait, after its
    /// wait when it does (the first is held throughout: no timing decides it).
    @Test func aDirectoryIsOpenedByOneCacheAtATime() async throws {
        try await withTemporaryDirectory { directory in
            let first = try openCache(directory)
            var configuration = DiskCache.Configuration(directory: directory)
            configuration.lockWait = .zero
            #expect(throws: DiskCacheError.self) { try DiskCache(configuration: configuration) }
            configuration.lockWait = .milliseconds(50)
            #expect(throws: DiskCacheError.self) { try DiskCache(configuration: configuration) }
            withExtendedLifetime(first) {}
        }
    }
}
