import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imagery
import ImageryDiskCache

/// The disk cache against a raw file read of the same bytes, and against
/// Foundation's URLCache (the seeds' choice) doing the same work.
enum DiskCacheBenchmark {
    static func run() async throws -> [Comparison] {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imagery-disk-bench-\(getpid())")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        var generator = SystemRandomNumberGenerator()
        let thumbnail = Data((0..<30_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let large = Data((0..<256 * 1024).map { _ in UInt8.random(in: 0...255, using: &generator) })

        // 1. A 30 KB hit: DiskCache.entry(for:) vs open/read/close of the same bytes.
        let cache = try DiskCache(directory: root.appendingPathComponent("hit"))
        await cache.store(thumbnail, for: "thumb", metadata: CacheMetadata(contentType: "image/jpeg"))
        await cache.flush()
        let rawPath = root.appendingPathComponent("raw.bin").path
        try thumbnail.write(to: URL(fileURLWithPath: rawPath))
        let reads = 20_000
        var bytes = 0
        for _ in 0..<1000 { bytes += await cache.entry(for: "thumb")?.data.count ?? 0 }  // warm up
        // Seven rounds, the two sides alternating, medians compared.
        var cacheSamples: [Double] = []
        var rawSamples: [Double] = []
        for _ in 0..<7 {
            let cacheStart = ContinuousClock.now
            for _ in 0..<reads { bytes += await cache.entry(for: "thumb")?.data.count ?? 0 }
            cacheSamples.append(seconds(ContinuousClock.now - cacheStart))
            rawSamples.append(medianSeconds(rounds: 1) {
                for _ in 0..<reads { bytes += rawRead(rawPath, size: thumbnail.count).count }
            })
        }
        let cacheSeconds = cacheSamples.sorted()[3]
        let rawSeconds = rawSamples.sorted()[3]
        precondition(bytes > 0 && cache.stats.corruptEntriesRemoved == 0)

        // URLCache on disk (memory capacity 0), same 30 KB entry.
        let urlCache = URLCache(memoryCapacity: 0, diskCapacity: 512 << 20, diskPath: root.appendingPathComponent("urlcache").path)
        let url = URL(string: "https://example.com/thumb.jpg")!
        let urlRequest = URLRequest(url: url)
        let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                       headerFields: ["Content-Type": "image/jpeg", "Cache-Control": "max-age=600"])!
        urlCache.storeCachedResponse(CachedURLResponse(response: response, data: thumbnail), for: urlRequest)
        var urlCacheHits = 0
        let urlCacheReads = 2_000
        let urlCacheSeconds = medianSeconds(rounds: 1) {
            for _ in 0..<urlCacheReads where urlCache.cachedResponse(for: urlRequest)?.data.count == thumbnail.count {
                urlCacheHits += 1
            }
        }
        print("URLCache: \(urlCacheHits) of \(urlCacheReads) reads hit")

        // 2. 1000 writes of 256 KB into a 64 MiB cache (eviction runs from the 257th on).
        let writes = 1000
        let bounded = try DiskCache(directory: root.appendingPathComponent("writes"), sizeLimit: 64 << 20)
        let writeStart = ContinuousClock.now
        for index in 0..<writes { await bounded.store(large, for: "entry-\(index)", metadata: CacheMetadata()) }
        await bounded.flush()
        let writeSeconds = seconds(ContinuousClock.now - writeStart)
        print("DiskCache after \(writes) writes: \(bounded.count) entries, \(bounded.totalSize >> 20) MiB, \(bounded.stats.evictions) evictions")

        let urlCacheWrites = URLCache(memoryCapacity: 0, diskCapacity: 64 << 20, diskPath: root.appendingPathComponent("urlcache-writes").path)
        let urlWriteSeconds = medianSeconds(rounds: 1) {
            for index in 0..<writes {
                let entryURL = URL(string: "https://example.com/\(index).jpg")!
                let entryResponse = HTTPURLResponse(url: entryURL, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
                urlCacheWrites.storeCachedResponse(CachedURLResponse(response: entryResponse, data: large), for: URLRequest(url: entryURL))
            }
        }
        print("URLCache after \(writes) writes: \(urlCacheWrites.currentDiskUsage >> 20) MiB on disk")

        return [
            Comparison(name: "30 KB hit vs raw open/read/close (ratio: time / raw time)", unit: "µs",
                       ours: cacheSeconds / Double(reads) * 1e6, peer: rawSeconds / Double(reads) * 1e6, peerName: "raw read"),
            Comparison(name: "30 KB hit (reads/s)", unit: "reads/s",
                       ours: Double(reads) / cacheSeconds, peer: Double(urlCacheReads) / urlCacheSeconds, peerName: "URLCache (disk)"),
            Comparison(name: "1000 writes of 256 KB, 64 MiB limit (writes/s)", unit: "writes/s",
                       ours: Double(writes) / writeSeconds, peer: Double(writes) / urlWriteSeconds, peerName: "URLCache (disk)"),
        ]
    }

    private static func rawRead(_ path: String, size: Int) -> Data {
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        var data = Data(count: size)
        _ = data.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, size) }
        return data
    }
}
