import Foundation
import Testing

@testable import Imagery

/// The memory tiers: decoded images (``ImagePipeline/Configuration/imageCache``) and encoded originals
/// (``ImagePipeline/Configuration/dataCache``), what `cachedImage` answers, and the ways to empty them.
@Suite("Pipeline memory caches")
struct PipelineMemoryCacheTests {
    @Test func cachedImageAnswersFromMemoryAndNeverLoads() async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg"), 12, 12)
        #expect(test.cached(request) == nil)
        #expect(test.loader.loadCount == 0)
        let image = try await test.pipeline.image(for: request)
        #expect(test.cached(request) == image)
        #expect(test.cached(ImageRequest(url: testURL("a.jpg"))) == nil, "another recipe: another entry")
    }

    /// What the decoded-image cache holds: the image with its source's metadata and freshness.
    @Test func theImageCacheHoldsTheImageWithItsSourceAndFreshness() async throws {
        let images = MemoryCache<ImageCacheKey, ImageResponse>()
        let test = TestPipeline(configure: { $0.imageCache = images })
        let headers = ["cache-control": "max-age=60", "content-type": "image/jpeg", "etag": "\"v1\""]
        let url = test.serve("a.jpg", headers: headers)
        let request = thumbnailRequest(url, 12, 12)
        let response = try await test.pipeline.imageResponse(for: request)
        let cached = try #require(images[request.imageKey])
        #expect(cached.image == response.image)
        #expect(cached.freshUntil == TestPipeline.epoch.addingTimeInterval(60))
        #expect(cached.source.contentType == "image/jpeg")
        #expect(cached.source.storedAt == TestPipeline.epoch)
        #expect(cached.source.http?.headers["etag"] == "\"v1\"")
        #expect(cached.isFresh(at: TestPipeline.epoch.addingTimeInterval(59)))
        #expect(!cached.isFresh(at: TestPipeline.epoch.addingTimeInterval(60)))
        #expect(cached.cacheCost == 12 * 12)
    }

    /// The freshness a decoded image gets from its source's headers, by the default policy (300 s
    /// for a source that states no expiry), or none at all when memory ignores freshness.
    @Test(
        arguments: [
            ([:], ImagePipeline.MemoryFreshness.http, 300.0),
            (["cache-control": "max-age=60"], .http, 60),
            (["cache-control": "max-age=6000"], .http, 6000),
            (["cache-control": "max-age=60"], .ignored, .infinity),
            (["cache-control": "no-cache"], .http, -.infinity),
        ] as [([String: String], ImagePipeline.MemoryFreshness, TimeInterval)])
    func aDecodedImageIsFreshForItsSourcesLifetime(
        headers: [String: String], freshness: ImagePipeline.MemoryFreshness, lifetime: TimeInterval
    ) async throws {
        let test = TestPipeline(configure: { $0.memoryFreshness = freshness })
        let request = ImageRequest(url: test.serve("a.jpg", headers: headers))
        let response = try await test.pipeline.imageResponse(for: request)
        switch lifetime {
        case .infinity: #expect(response.freshUntil == .distantFuture)
        case -.infinity: #expect(response.freshUntil == .distantPast)
        default: #expect(response.freshUntil == TestPipeline.epoch.addingTimeInterval(lifetime))
        }
    }

    /// Sources that are not HTTP (custom data sources, `file:` URLs) have no expiry: fresh until evicted.
    @Test func sourcesThatAreNotHTTPStayFresh() async throws {
        let loader = MockDataLoader()
        let file = URL(fileURLWithPath: "/images/a.jpg")
        loader.stub(file, data: TestImage.data())
        let test = TestPipeline(loader: loader)
        let custom = ImageRequest(id: "custom") { TestImage.data(tag: 4) }
        for request in [custom, ImageRequest(url: file)] {
            let response = try await test.pipeline.imageResponse(for: request)
            #expect(response.freshUntil == .distantFuture)
            #expect(response.source.http == nil)
        }
        test.advance(seconds: 86_400 * 365)
        #expect(test.cached(custom)?.testTag == 4)
        #expect(test.cached(ImageRequest(url: file)) != nil)
    }

    @Test func withoutAnImageCacheEveryRequestDecodesAgain() async throws {
        let test = TestPipeline(configure: { $0.imageCache = nil })
        let request = thumbnailRequest(test.serve("a.jpg"), 12, 12)
        _ = try await test.pipeline.image(for: request)
        _ = try await test.pipeline.image(for: request)
        #expect(test.cached(request) == nil)
        #expect(test.loader.loadCount == 1, "the original is still in the data cache")
        #expect(test.decoder.decodeCount == 2)
        #expect(test.recorder.lookups(.memoryImage).isEmpty)
    }

    @Test func withoutADataCacheANewSizeDownloadsAgain() async throws {
        let test = TestPipeline(configure: { $0.dataCache = nil })
        let url = test.serve("a.jpg")
        _ = try await test.pipeline.image(for: thumbnailRequest(url, 12, 12))
        _ = try await test.pipeline.image(for: thumbnailRequest(url, 20, 20))
        _ = try await test.pipeline.image(for: thumbnailRequest(url, 12, 12))  // decoded image still in memory
        #expect(test.loader.loadCount == 2)
        #expect(test.decoder.decodeCount == 2)
    }

    @Test func disablingMemoryReadsLoadsAgainAndStoresTheNewImage() async throws {
        let test = TestPipeline()
        let url = testURL("a.jpg")
        test.loader.stub(url, data: TestImage.data(tag: 1))
        _ = try await test.pipeline.image(for: ImageRequest(url: url))
        test.loader.stub(url, data: TestImage.data(tag: 2))
        var request = ImageRequest(url: url)
        request.options = .disableMemoryCacheReads
        #expect(try await test.pipeline.image(for: request).testTag == 2)
        #expect(test.loader.loadCount == 2)
        #expect(test.cached(ImageRequest(url: url))?.testTag == 2, "what was loaded replaced the old image")
    }

    @Test func disablingMemoryWritesKeepsNothingInMemory() async throws {
        let test = TestPipeline()
        var request = thumbnailRequest(test.serve("a.jpg"), 12, 12)
        request.options = .disableMemoryCacheWrites
        _ = try await test.pipeline.image(for: request)
        #expect(test.cached(request) == nil)
        request.options = []
        _ = try await test.pipeline.image(for: request)
        #expect(test.loader.loadCount == 2, "the original was not kept either")
        #expect(test.cached(request) != nil)
    }

    /// ``ImageRequest/Options/reloadIgnoringCachedData`` goes to the source even with a fresh image in memory.
    @Test func reloadingIgnoresAFreshImageAndReplacesIt() async throws {
        let test = TestPipeline()
        let url = testURL("a.jpg")
        test.loader.stub(url, data: TestImage.data(tag: 1), headers: ["cache-control": "max-age=600"])
        let plain = thumbnailRequest(url, 12, 12)
        _ = try await test.pipeline.image(for: plain)
        test.loader.stub(url, data: TestImage.data(tag: 2), headers: ["cache-control": "max-age=600"])
        var reload = plain
        reload.options = .reloadIgnoringCachedData
        #expect(try await test.pipeline.image(for: reload).testTag == 2)
        #expect(test.cached(plain)?.testTag == 2)
        #expect(try await test.pipeline.data(for: plain) == TestImage.data(tag: 2))
        #expect(test.loader.loadCount == 2)
    }

    /// ``ImageRequest/Options/returnCacheDataDontLoad`` answers from memory or fails, never loading.
    @Test func cacheOnlyRequestsAnswerFromMemoryOrFail() async throws {
        let test = TestPipeline()
        let url = test.serve("a.jpg")
        var cacheOnly = thumbnailRequest(url, 12, 12)
        cacheOnly.options = .returnCacheDataDontLoad
        await #expect(throws: ImagePipelineError.notCached) { try await test.pipeline.image(for: cacheOnly) }
        await #expect(throws: ImagePipelineError.notCached) { try await test.pipeline.data(for: cacheOnly) }
        #expect(test.loader.loadCount == 0)
        _ = try await test.pipeline.data(for: ImageRequest(url: url))
        // The original is in memory: the thumbnail is decoded from it, still without a load.
        #expect(try await test.pipeline.image(for: cacheOnly).width == 12)
        #expect(test.loader.loadCount == 1)
        #expect(ImagePipelineError.notCached.description.contains("not in any cache"))
    }

    @Test func removingDecodedImagesKeepsTheOriginal() async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg"), 12, 12)
        _ = try await test.pipeline.image(for: request)
        test.pipeline.removeDecodedImages(for: request)
        #expect(test.cached(request) == nil)
        _ = try await test.pipeline.image(for: request)
        #expect(test.loader.loadCount == 1)
        #expect(test.decoder.decodeCount == 2)
    }

    @Test func removingCachedDataForgetsImageAndOriginal() async throws {
        let test = TestPipeline()
        let url = test.serve("a.jpg")
        let request = thumbnailRequest(url, 12, 12)
        let other = thumbnailRequest(test.serve("b.jpg"), 12, 12)
        _ = try await test.pipeline.image(for: request)
        _ = try await test.pipeline.image(for: other)
        await test.pipeline.removeCachedData(for: request)
        #expect(test.cached(request) == nil)
        #expect(test.cached(other) != nil, "other sources stay")
        _ = try await test.pipeline.image(for: request)
        #expect(test.loader.loadCount(of: url) == 2)
    }

    @Test func removingAllCachedDataEmptiesEveryMemoryTier() async throws {
        let test = TestPipeline()
        let requests = (0..<3).map { thumbnailRequest(test.serve("\($0).jpg"), 12, 12) }
        for request in requests { _ = try await test.pipeline.image(for: request) }
        await test.pipeline.removeAllCachedData()
        #expect(requests.allSatisfy { test.cached($0) == nil })
        for request in requests { _ = try await test.pipeline.image(for: request) }
        #expect(test.loader.loadCount == 6)
    }

    /// A request's keys: the priority and the request's identity play no part; the recipe is part of
    /// the image key, not of the source key; a full-size recipe and no recipe are one key.
    @Test func requestKeysNameTheSourceAndTheRecipe() {
        let url = testURL("a.jpg")
        let plain = ImageRequest(url: url)
        let urgent = ImageRequest(url: url, priority: .veryHigh)
        let small = thumbnailRequest(url, 12, 12)
        let recipe = ImageRequest(url: url, recipe: ImageRecipe())
        #expect(plain.imageKey == urgent.imageKey)
        #expect(plain.imageKey == recipe.imageKey)
        #expect(plain.sourceKey == small.sourceKey)
        #expect(plain.imageKey != small.imageKey)
        #expect(plain.imageKey.stringValue == plain.sourceKey.stringValue)
        #expect(small.imageKey.stringValue.hasPrefix(plain.sourceKey.stringValue + "#variant:"))
        #expect(plain.sourceKey == .url("https://origin.test/a.jpg"))
        #expect(plain.sourceKey.stringValue == "url:https://origin.test/a.jpg")
        #expect(ImageRequest(id: "a.jpg") { Data() }.sourceKey.stringValue == "id:a.jpg", "ids never collide with URLs")
        #expect(small.imageKey == ImageCacheKey(source: small.sourceKey, thumbnail: .init(width: 12, height: 12)))
        #expect(small.imageKey.thumbnail == .init(width: 12, height: 12))
    }

    @Test(arguments: [
        ("https://origin.test/a.jpg", "https://origin.test/a.jpg"),
        ("HTTPS://ORIGIN.test/a.jpg", "https://origin.test/a.jpg"),
        ("https://origin.test:443/a.jpg", "https://origin.test/a.jpg"),
        ("http://origin.test:80/a.jpg", "http://origin.test/a.jpg"),
        ("http://origin.test:8080/a.jpg", "http://origin.test:8080/a.jpg"),
        ("https://origin.test/a.jpg#part", "https://origin.test/a.jpg"),
        ("https://origin.test", "https://origin.test/"),
        ("https://origin.test/A.jpg?x=1", "https://origin.test/A.jpg?x=1"),
    ])
    func sourceKeysNormaliseSpellingsOfAURL(spelling: String, normal: String) {
        #expect(ImageRequest(url: URL(string: spelling)!).sourceKey == .url(normal))
        #expect(SourceKey.normalized(URL(string: spelling)!) == SourceKey.normalizedByParsing(URL(string: spelling)!))
    }

    @Test func headersArePartOfTheSourceKeyWhateverTheirCaseAndOrder() {
        var first = ImageRequest(url: testURL("a.jpg"))
        first.headers = ["Accept": "image/webp", "X-Tenant": "7"]
        var second = ImageRequest(url: testURL("a.jpg"))
        second.headers = ["x-tenant": "7", "accept": "image/webp"]
        var other = ImageRequest(url: testURL("a.jpg"))
        other.headers = ["Accept": "image/avif"]
        #expect(first.sourceKey == second.sourceKey)
        #expect(first.sourceKey != other.sourceKey)
        #expect(first.sourceKey != ImageRequest(url: testURL("a.jpg")).sourceKey)
        #expect(first.sourceKey.stringValue.contains("#headers:accept=image/webp&x-tenant=7"))
    }
}
