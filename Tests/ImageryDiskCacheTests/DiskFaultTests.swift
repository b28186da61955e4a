import Foundation
import Imagery
import ImageryDiskCache
import ImageryTestSupport
import Testing

/// Real faults on real filesystems: a full tmpfs, an ext4 the kernel turns read-only, a directory
/// removed, an index damaged. The cache keeps working (memory-only when it must), reports each
/// fault once and its end once, and never serves bytes no row vouches for.
@Suite("Disk cache faults")
struct DiskFaultTests {
    /// Events a cache reports, collected.
    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [DiskCache.Event] = []

        func append(_ event: DiskCache.Event) { lock.withLock { events.append(event) } }
        var all: [DiskCache.Event] { lock.withLock { events } }
        func count(_ kind: DiskCache.Event.Kind) -> Int { all.filter { $0.kind == kind }.count }
    }

    /// A cache on `directory` that reports to `events` and retries an unusable directory every
    /// ``DiskCache/Configuration/probeInterval`` of `time` (moved by hand: a probe happens when a test
    /// says, never because the machine was slow).
    static func configuration(
        _ directory: URL, sizeLimit: Int = 1 << 30, events: Events, time: ManualTime = ManualTime()
    ) -> DiskCache.Configuration {
        var configuration = DiskCache.Configuration.patient(directory, sizeLimit: sizeLimit)
        configuration.onEvent = { events.append($0) }
        configuration.retriesUnusableDirectory = true
        configuration.time = time.source
        return configuration
    }

    /// The page an operator measured, scaled down: 40 originals and 80 responses (2 sizes each)
    /// competing for a cache that holds a seventh of the originals. A response hit needs nothing
    /// else; a miss reads (or stores) the original and stores the response. On a second pass,
    /// LRU has evicted every response before it is asked again; GreedyDual-Size keeps them all.
    @Test func sizeAwareEvictionKeepsTheResponsesLRULoses() async throws {
        var hits: [DiskCache.Eviction: Int] = [:]
        for eviction in [DiskCache.Eviction.leastRecentlyUsed, .greedyDualSize] {
            try await withTemporaryDirectory { directory in
                var configuration = DiskCache.Configuration.patient(directory, sizeLimit: 800_000)
                configuration.eviction = eviction
                let cache = try DiskCache(configuration: configuration)
                var secondPassHits = 0
                for pass in 0..<2 {
                    for source in 0..<40 {
                        for size in 0..<2 {
                            if await cache.entry(for: "response-\(source)-\(size)") != nil {
                                if pass == 1 { secondPassHits += 1 }
                                continue
                            }
                            if await cache.entry(for: "original-\(source)") == nil {
                                await cache.store(
                                    bytes(140_000, seed: UInt8(source)), for: "original-\(source)",
                                    metadata: CacheMetadata())
                            }
                            await cache.store(
                                bytes(3_000, seed: UInt8(size)), for: "response-\(source)-\(size)",
                                metadata: CacheMetadata())
                            await cache.flush()
                        }
                    }
                }
                #expect(cache.totalSize <= 800_000)
                hits[eviction] = secondPassHits
            }
        }
        #expect(hits[.leastRecentlyUsed] == 0)
        #expect(hits[.greedyDualSize] == 80)
    }

    /// Orders kept across a restart: the index stores each entry's priority.
    @Test func theEvictionOrderSurvivesARestart() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let cache = try openCache(directory, sizeLimit: 300_000)
                await cache.store(bytes(100_000, seed: 1), for: "large", metadata: CacheMetadata())
                for index in 0..<10 {
                    await cache.store(bytes(1_000, seed: 2), for: "small-\(index)", metadata: CacheMetadata())
                }
                await cache.flush()
            }
            let cache = try openCache(directory, sizeLimit: 300_000)
            await cache.store(bytes(150_000, seed: 3), for: "another", metadata: CacheMetadata())
            await cache.store(bytes(100_000, seed: 3), for: "third", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "large") == nil, "the large entry goes before the small ones")
            for index in 0..<10 { #expect(await cache.entry(for: "small-\(index)") != nil) }
        }
    }

    /// A full filesystem: the limit in effect drops to what it holds, entries are evicted to stay
    /// under it, every write still lands, it is reported once; after a restart the entries are
    /// there. Space freed: the limit comes back, reported once.
    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a tmpfs"))
    func aFullFilesystemLowersTheLimitAndKeepsStoring() async throws {
        try await SmallFilesystem.with(megabytes: 4) { filesystem in
            let directory = filesystem.mountPoint.appendingPathComponent("cache")
            let events = Events()
            var last: [String] = []
            do {
                let cache = try DiskCache(configuration: Self.configuration(directory, events: events))
                for index in 0..<60 {
                    await cache.store(bytes(100_000, seed: UInt8(index)), for: "k\(index)", metadata: CacheMetadata())
                    await cache.flush()
                }
                #expect(events.count(.fault(.noSpace)) == 1, "\(events.all)")
                #expect(cache.sizeLimitInEffect < 4 << 20)
                #expect(cache.totalSize <= cache.sizeLimitInEffect)
                #expect(cache.count >= 25, "a 4 MB filesystem holds more than 25 entries of 100 KB")
                #expect(cache.stats.failedWrites[.noSpace, default: 0] == 0, "room is made before writing")
                for index in 55..<60 {
                    #expect(await cache.entry(for: "k\(index)")?.data == bytes(100_000, seed: UInt8(index)))
                }
                last = (0..<60).map { "k\($0)" }
                let held = cache.count
                // Something else fills the filesystem: the cache gives way, and keeps the newest.
                filesystem.fill()
                await cache.store(bytes(100_000, seed: 99), for: "after-fill", metadata: CacheMetadata())
                await cache.flush()
                #expect(cache.count < held)
                #expect(events.count(.fault(.noSpace)) == 1, "reported once")
                filesystem.unfill()
            }
            let reopened = try DiskCache(configuration: Self.configuration(directory, events: events))
            var found = 0
            for key in last where await reopened.entry(for: key) != nil { found += 1 }
            let afterFill = await reopened.entry(for: "after-fill") == nil ? 0 : 1
            #expect(found >= 5 && found + afterFill == reopened.count)
            #expect(reopened.stats.corruptEntriesRemoved == 0)
        }
    }

    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a tmpfs"))
    func spaceFreedRaisesTheLimitBack() async throws {
        try await SmallFilesystem.with(megabytes: 8) { filesystem in
            let events = Events()
            let cache = try DiskCache(
                configuration: Self.configuration(
                    filesystem.mountPoint.appendingPathComponent("cache"), sizeLimit: 2 << 20, events: events))
            await cache.store(bytes(100_000, seed: 1), for: "a", metadata: CacheMetadata())
            await cache.flush()
            #expect(cache.sizeLimitInEffect == 2 << 20 && events.all.isEmpty)
            filesystem.fill()
            await cache.store(bytes(100_000, seed: 2), for: "b", metadata: CacheMetadata())
            await cache.flush()
            #expect(cache.sizeLimitInEffect < 2 << 20)
            #expect(events.count(.fault(.noSpace)) == 1)
            filesystem.unfill()
            await cache.store(bytes(100_000, seed: 3), for: "c", metadata: CacheMetadata())
            await cache.flush()
            #expect(cache.sizeLimitInEffect == 2 << 20)
            #expect(events.count(.recovered(.noSpace)) == 1)
            #expect(await cache.entry(for: "c")?.data == bytes(100_000, seed: 3))
        }
    }

    /// The kernel turns the filesystem read-only under the cache (an I/O error): writes fail, the
    /// cache lets the directory go (memory-only, reported once), the operator repairs and mounts
    /// it again, and the cache comes back with what it had written.
    @Test(.enabled(if: SmallFilesystem.canMakeExt4, "needs root, loop devices and mkfs.ext4"))
    func aFilesystemTurnedReadOnlyIsLetGoAndTakenBackWhenWritable() async throws {
        try await SmallFilesystem.with(megabytes: 16, .ext4) { filesystem in
            let directory = filesystem.mountPoint.appendingPathComponent("cache")
            let events = Events()
            let time = ManualTime()
            let cache = try DiskCache(configuration: Self.configuration(directory, events: events, time: time))
            for key in ["a", "b"] { await cache.store(bytes(10_000, seed: 1), for: key, metadata: CacheMetadata()) }
            await cache.flush()
            sync()  // written back long before the error (else the error loses them, as it would any file's)
            try filesystem.breakIntoReadOnly()
            for key in ["c", "d", "e"] {
                await cache.store(bytes(10_000, seed: 2), for: key, metadata: CacheMetadata())
                await cache.flush()
            }
            #expect(cache.currentMode == .unavailable)
            #expect(events.count(.fault(.readOnly)) == 1, "\(events.all)")
            #expect(cache.stats.failedWrites[.readOnly, default: 0] >= 2)
            #expect(cache.count == 0 && cache.totalSize == 0)
            #expect(await cache.entry(for: "a") == nil)
            try filesystem.repair()
            // Not tried again before the probe interval has passed...
            await cache.store(bytes(10_000, seed: 3), for: "f", metadata: CacheMetadata())
            await cache.flush()
            #expect(cache.currentMode == .unavailable)
            // ...and at the first write after it.
            time.advance(by: cache.configuration.probeInterval)
            // skipped, but tries the directory again
            await cache.store(bytes(10_000, seed: 3), for: "f", metadata: CacheMetadata())
            await cache.flush()
            #expect(cache.currentMode == .readWrite)
            #expect(events.count(.recovered(.readOnly)) == 1)
            #expect(await cache.entry(for: "a")?.data == bytes(10_000, seed: 1))
            await cache.store(bytes(10_000, seed: 4), for: "g", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "g")?.data == bytes(10_000, seed: 4))
        }
    }

    /// Read-only when the cache opens: it opens memory-only instead of failing, and takes the
    /// directory (with its entries) once it is writable.
    @Test(.enabled(if: SmallFilesystem.isAvailable, "needs root to mount a tmpfs"))
    func aReadOnlyDirectoryAtOpenIsTakenWhenItBecomesWritable() async throws {
        try await SmallFilesystem.with(megabytes: 4) { filesystem in
            let directory = filesystem.mountPoint.appendingPathComponent("cache")
            let events = Events()
            do {
                let cache = try DiskCache(configuration: Self.configuration(directory, events: events))
                await cache.store(bytes(1_000, seed: 1), for: "a", metadata: CacheMetadata())
                await cache.flush()
            }
            try filesystem.setReadOnly(true)
            #expect(throws: DiskCacheError.self) { try DiskCache(directory: directory) }
            let time = ManualTime()
            let cache = try DiskCache(configuration: Self.configuration(directory, events: events, time: time))
            #expect(cache.currentMode == .unavailable)
            #expect(events.count(.fault(.readOnly)) == 1)
            #expect(events.all.first?.message.contains(directory.path) == true)
            #expect(await cache.entry(for: "a") == nil)
            try filesystem.setReadOnly(false)
            await cache.store(bytes(1_000, seed: 2), for: "b", metadata: CacheMetadata())
            await cache.flush()
            #expect(cache.currentMode == .unavailable, "not tried again before the probe interval has passed")
            time.advance(by: cache.configuration.probeInterval)
            await cache.store(bytes(1_000, seed: 2), for: "b", metadata: CacheMetadata())
            await cache.flush()
            #expect(cache.currentMode == .readWrite)
            #expect(await cache.entry(for: "a")?.data == bytes(1_000, seed: 1))
        }
    }

    /// `rm -rf` of the directory while the cache runs: the next write finds it gone, the cache
    /// says so once, creates it again and goes on storing.
    @Test func aRemovedDirectoryIsCreatedAgain() async throws {
        try await withTemporaryDirectory { parent in
            let directory = parent.appendingPathComponent("cache")
            let events = Events()
            let cache = try DiskCache(configuration: Self.configuration(directory, events: events))
            for index in 0..<30 {
                await cache.store(bytes(1_000, seed: UInt8(index)), for: "k\(index)", metadata: CacheMetadata())
            }
            await cache.flush()
            try FileManager.default.removeItem(at: directory)
            await cache.store(bytes(1_000, seed: 1), for: "new", metadata: CacheMetadata())
            await cache.flush()
            #expect(events.count(.fault(.directoryMissing)) == 1, "\(events.all)")
            #expect(events.count(.recovered(.directoryMissing)) == 1)
            #expect(cache.currentMode == .readWrite)
            #expect(cache.count == 0, "the entries went with the directory")
            #expect(await cache.entry(for: "k1") == nil)
            await cache.store(bytes(1_000, seed: 2), for: "after", metadata: CacheMetadata())
            await cache.flush()
            #expect(await cache.entry(for: "after")?.data == bytes(1_000, seed: 2))
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("index.sqlite").path))
        }
    }

    /// A cache that only reads notices too: a file that cannot be read because the directory went.
    @Test func aRemovedDirectoryIsNoticedByReads() async throws {
        try await withTemporaryDirectory { parent in
            let directory = parent.appendingPathComponent("cache")
            let events = Events()
            var configuration = Self.configuration(directory, events: events)
            configuration.openFileLimit = 0
            let cache = try DiskCache(configuration: configuration)
            for index in 0..<5 {
                await cache.store(bytes(1_000, seed: UInt8(index)), for: "k\(index)", metadata: CacheMetadata())
            }
            await cache.flush()
            try FileManager.default.removeItem(at: directory)
            #expect(await cache.entry(for: "k1") == nil)
            await cache.flush()
            #expect(events.count(.fault(.directoryMissing)) == 1, "\(events.all)")
            #expect(cache.count == 0)
        }
    }

    /// Pages of the index overwritten while stopped: the cache opens, keeps the rows that still
    /// read (each checked against its file), sets the file aside and says so; no body is wrong.
    @Test func aDamagedIndexIsSalvagedAndSetAside() async throws {
        try await withTemporaryDirectory { directory in
            let events = Events()
            do {
                let cache = try DiskCache(configuration: Self.configuration(directory, events: events))
                for index in 0..<400 {
                    await cache.store(
                        bytes(200, seed: UInt8(index % 256)), for: "key-\(index)-" + String(repeating: "x", count: 200),
                        metadata: CacheMetadata())
                }
                await cache.flush()
            }
            let path = directory.appendingPathComponent("index.sqlite").path
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            let size = try handle.seekToEnd()
            #expect(size > 40_000)
            try handle.seek(toOffset: size / 2)
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096))
            try handle.close()
            var kept = 0
            do {
                let cache = try DiskCache(configuration: Self.configuration(directory, events: events))
                #expect(events.count(.indexDamaged) == 1, "\(events.all)")
                #expect(FileManager.default.fileExists(atPath: path + ".damaged"))
                #expect(cache.count > 100 && cache.count < 400, "\(cache.count) rows kept")
                var served = 0
                for index in 0..<400 {
                    guard let entry = await cache.entry(for: "key-\(index)-" + String(repeating: "x", count: 200))
                    else { continue }
                    #expect(entry.data == bytes(200, seed: UInt8(index % 256)))
                    served += 1
                }
                #expect(served == cache.count)
                #expect(blobFileSizes(in: directory).count == cache.count, "files no row names are removed")
                await cache.flush()
                kept = cache.count
            }
            // The new index holds what was kept.
            let reopened = try openCache(directory)
            #expect(reopened.count == kept)
        }
    }
}
