import Foundation
import Testing

@testable import Imagery

/// The configuration's documented defaults, how the pipeline reads its limits, and its diagnostics.
@Suite("ImagePipeline configuration and diagnostics")
struct ImagePipelineConfigurationTests {
    @Test func theDefaultsAreTheDocumentedOnes() {
        let configuration = ImagePipeline.Configuration(decoder: MockImageDecoder())
        #expect(configuration.dataLoader is FileDataLoader)
        #expect(configuration.imageCache is MemoryCache<ImageCacheKey, ImageResponse>)
        #expect(configuration.dataCache is MemoryCache<String, CacheEntry>)
        #expect(
            (configuration.imageCache as? MemoryCache<ImageCacheKey, ImageResponse>)?.costLimit
                == ImagePipeline.Configuration.defaultImageCacheCostLimit)
        #expect(configuration.baseImageCacheCostLimit == ImagePipeline.Configuration.defaultImageCacheCostLimit / 4)
        #expect(configuration.baseImageCacheTTL == nil)
        #expect(configuration.diskCache == nil && configuration.encoder == nil)
        #expect(configuration.cachePolicy == HTTPCachePolicy(minimumHeuristicLifetime: 300))
        #expect(configuration.memoryFreshness == .http)
        #expect(configuration.memoryBudget == nil && configuration.observer == nil)
        #expect(configuration.maximumConcurrentDownloads == 6)
        #expect(configuration.maximumConcurrentPrefetches == 1)
        #expect(configuration.maximumConcurrentDecodes == UsableProcessors.current.count)
        #expect(ImagePipeline.Configuration.defaultImageCacheCostLimit <= 512 << 20)
        #expect(ImagePipeline.Configuration.defaultDataCacheCostLimit <= 128 << 20)
    }

    /// Limits under 1 are read as 1: a pipeline always makes progress.
    @Test func limitsBelowOneAreReadAsOne() async throws {
        let gate = Gate()
        let loader = MockDataLoader(fallback: { _ in MockDataLoader.Stub(data: TestImage.data(), gate: gate) })
        let test = TestPipeline(
            loader: loader,
            configure: {
                $0.maximumConcurrentDownloads = 0
                $0.maximumConcurrentPrefetches = -1
                $0.maximumConcurrentDecodes = 0
            })
        #expect(test.pipeline.decodingPool.threadCount == 1)
        let tasks = (0..<3).map { test.pipeline.imageTask(for: ImageRequest(url: testURL("\($0).jpg"))) }
        try await loader.waitForLoads(1)
        try await eventually("two wait") { test.pipeline.queuedDownloadCount == 2 }
        gate.open()
        for task in tasks { _ = try await task.image }
        #expect(loader.peakInFlight == 1)
    }

    /// The diagnostics count the work in flight, and read zero once it ends.
    @Test func diagnosticsCountTheWorkInFlight() async throws {
        let gate = Gate()
        let test = TestPipeline(configure: { $0.maximumConcurrentDownloads = 1 })
        let first = test.pipeline.imageTask(for: ImageRequest(url: test.serve("a.jpg", gate: gate)))
        try await test.loader.waitForLoads(1)
        let second = test.pipeline.imageTask(for: ImageRequest(url: test.serve("b.jpg")))
        let tasks = [first, second]
        try await eventually("one runs, one waits") { test.pipeline.queuedDownloadCount == 1 }
        #expect(test.pipeline.activeJobCount == (decodes: 2, downloads: 2))
        #expect(test.pipeline.runningDownloadCount == 1)
        #expect(test.pipeline.runningDownloadsByLane == (urgent: 1, prefetch: 0))
        gate.open()
        for task in tasks { _ = try await task.image }
        try await eventually("all ended") { test.pipeline.runningDownloadCount == 0 }
        #expect(test.pipeline.activeJobCount == (0, 0))
        #expect(test.pipeline.queuedDownloadCount == 0)
    }

    /// `waitForStores` returns once the thumbnails being encoded for disk are stored (at once when none are).
    @Test func waitForStoresReturnsOnceTheVariantsAreOnDisk() async throws {
        let test = TestPipeline(disk: MockDataCache())
        await test.pipeline.waitForStores()
        let requests = (0..<5).map { thumbnailRequest(test.serve("\($0).jpg"), 8, 8) }
        for request in requests { _ = try await test.pipeline.image(for: request) }
        await test.pipeline.waitForStores()
        #expect(requests.allSatisfy { test.disk?[$0.imageKey.stringValue] != nil })
        #expect(test.encoder?.encodes.count == 5)
    }

    /// The pipeline's own configuration, as given.
    @Test func thePipelineKeepsItsConfiguration() {
        let test = TestPipeline(configure: {
            $0.maximumConcurrentDownloads = 3
            $0.memoryFreshness = .ignored
        })
        #expect(test.pipeline.configuration.maximumConcurrentDownloads == 3)
        #expect(test.pipeline.configuration.memoryFreshness == .ignored)
        #expect(test.pipeline.configuration.time.date() == TestPipeline.epoch)
        test.advance(seconds: 10)
        #expect(test.pipeline.configuration.time.date() == TestPipeline.epoch.addingTimeInterval(10))
    }

    /// A custom ``ImageCaching`` is used as the memory tier: the pipeline reads and writes through it.
    @Test func aCustomImageCacheIsUsed() async throws {
        final class DictionaryCache: ImageCaching, @unchecked Sendable {
            private let lock = NSLock()
            private var storage: [ImageCacheKey: ImageResponse] = [:]
            let writes = Counter()
            subscript(key: ImageCacheKey) -> ImageResponse? {
                get { lock.withLock { storage[key] } }
                set {
                    writes.increment()
                    lock.withLock { storage[key] = newValue }
                }
            }
            func removeAll() { lock.withLock { storage.removeAll() } }
        }
        let cache = DictionaryCache()
        let test = TestPipeline(configure: { $0.imageCache = cache })
        let request = thumbnailRequest(test.serve("a.jpg"), 8, 8)
        _ = try await test.pipeline.image(for: request)
        #expect(cache[request.imageKey]?.image.width == 8)
        #expect(cache.writes.value == 1)
        await test.pipeline.removeAllCachedData()
        #expect(cache[request.imageKey] == nil)
    }
}
