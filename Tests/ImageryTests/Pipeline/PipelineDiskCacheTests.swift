import Foundation
import Testing

@testable import Imagery

/// The pipeline with a disk cache (a ``MockDataCache``) and an origin that sends caching headers:
/// RFC 9111 as a private cache, across restarts (pipelines made one after another on one disk
/// cache, each with empty memory), with time moved by hand.
@Suite("Pipeline disk cache and HTTP semantics")
struct PipelineDiskCacheTests {
    static let url = testURL("a.jpg")
    static let key = ImageRequest(url: url).sourceKey.stringValue

    /// Loads the original of ``url`` `count` times, each through a new pipeline (empty memory) on
    /// one disk cache, `advance` seconds apart; returns the origin's requests.
    static func loads(
        _ count: Int, headers: [String: String], notModifiedHeaders: [String: String] = [:],
        policy: HTTPCachePolicy = .init(), advance: Int = 0
    ) async throws -> [DataRequest] {
        let loader = MockDataLoader()
        loader.serveRevalidating(url, headers: headers, notModifiedHeaders: notModifiedHeaders)
        let first = TestPipeline(loader: loader, disk: MockDataCache(), configure: { $0.cachePolicy = policy })
        for index in 0..<count {
            if index > 0 { first.advance(seconds: advance) }
            let restarted = first.restarted(configure: { $0.cachePolicy = policy })
            let data = try await restarted.pipeline.data(for: ImageRequest(url: url))
            #expect(data == TestImage.data())
        }
        return loader.started.all
    }

    @Test func maxAgeServesAFreshEntryWithoutARequest() async throws {
        #expect(try await Self.loads(3, headers: ["cache-control": "max-age=600"]).count == 1)
    }

    @Test func noStoreIsNeverStored() async throws {
        let requests = try await Self.loads(2, headers: ["cache-control": "no-store, max-age=600", "etag": "\"v1\""])
        #expect(requests.count == 2)
        #expect(requests[1].headers["If-None-Match"] == nil)
    }

    @Test func noCacheRevalidatesWithTheETagAndA304ServesTheStoredBytes() async throws {
        let requests = try await Self.loads(2, headers: ["cache-control": "no-cache", "etag": "\"v1\""])
        #expect(requests.count == 2)
        #expect(requests[0].headers["If-None-Match"] == nil)
        #expect(requests[1].headers["If-None-Match"] == "\"v1\"")
    }

    @Test func aStaleEntryRevalidatesWithLastModified() async throws {
        let requests = try await Self.loads(
            2, headers: ["cache-control": "max-age=0", "last-modified": httpDate(-3600)]
        )
        #expect(requests.count == 2)
        #expect(requests[1].headers["If-Modified-Since"] == httpDate(-3600))
        #expect(requests[1].headers["If-None-Match"] == nil)
    }

    @Test func expiresMinusDateGivesFreshness() async throws {
        #expect(try await Self.loads(2, headers: ["expires": httpDate(600), "date": httpDate()]).count == 1)
        let expired = try await Self.loads(2, headers: ["expires": httpDate(-10), "date": httpDate(), "etag": "\"e\""])
        #expect(expired.count == 2)
        #expect(expired[1].headers["If-None-Match"] == "\"e\"")
    }

    @Test func anAgeOverMaxAgeMakesTheResponseStaleAtOnce() async throws {
        let requests = try await Self.loads(2, headers: ["cache-control": "max-age=60", "age": "120", "etag": "\"a\""])
        #expect(requests.count == 2)
        #expect(requests[1].headers["If-None-Match"] == "\"a\"")
    }

    /// An entry is fresh for exactly its lifetime: one second before, no request; one after, a revalidation.
    @Test(
        arguments: [
            (["cache-control": "max-age=600"], 600),
            (["cache-control": "max-age=60", "age": "30"], 30),
            (["expires": httpDate(3600), "date": httpDate()], 3600),
            (["last-modified": httpDate(-864_000)], 86_400),  // 10% of ten days
            (["last-modified": httpDate(-100 * 86_400)], 86_400),  // capped at a day
            (["last-modified": httpDate(-1000)], 100),
        ] as [([String: String], Int)])
    func freshForItsLifetimeThenRevalidated(headers: [String: String], lifetime: Int) async throws {
        var withValidator = headers
        withValidator["etag"] = "\"t\""
        #expect(try await Self.loads(2, headers: withValidator, advance: lifetime - 1).count == 1)
        let requests = try await Self.loads(2, headers: withValidator, advance: lifetime + 1)
        #expect(requests.count == 2)
        #expect(requests.last?.headers["If-None-Match"] == "\"t\"")
    }

    @Test func varyStarIsNeverStored() async throws {
        #expect(try await Self.loads(2, headers: ["cache-control": "max-age=600", "vary": "*"]).count == 2)
    }

    @Test func aggressiveModeCachesWhatHeadersForbidForItsTTL() async throws {
        let policy = HTTPCachePolicy(mode: .aggressive(ttl: 600))
        let noStore = ["cache-control": "no-store"]
        #expect(try await Self.loads(2, headers: noStore, policy: policy, advance: 599).count == 1)
        #expect(try await Self.loads(2, headers: noStore, policy: policy, advance: 601).count == 2)
    }

    @Test func a304RefreshesTheStoredFreshness() async throws {
        // Stale at once (max-age=0); the 304 that revalidates it says max-age=600, so a third load
        // needs no request at all.
        let requests = try await Self.loads(
            3, headers: ["cache-control": "max-age=0", "etag": "\"x\""],
            notModifiedHeaders: ["cache-control": "max-age=600"]
        )
        #expect(requests.count == 2)
        #expect(requests[1].headers["If-None-Match"] == "\"x\"")
    }

    /// A 304 updates the stored entry's metadata on disk (its bytes stay), and the memory tier's copy.
    @Test func a304UpdatesTheMetadataOnDiskAndKeepsTheBytes() async throws {
        let loader = MockDataLoader()
        loader.serveRevalidating(
            Self.url, headers: ["cache-control": "max-age=10", "etag": "\"v\""],
            notModifiedHeaders: ["cache-control": "max-age=99"]
        )
        let test = TestPipeline(loader: loader, disk: MockDataCache())
        let disk = try #require(test.disk)
        _ = try await test.pipeline.data(for: ImageRequest(url: Self.url))
        test.advance(seconds: 11)
        let entry = try await test.pipeline.dataEntry(for: ImageRequest(url: Self.url))
        #expect(entry.data == TestImage.data())
        #expect(entry.metadata.storedAt == TestPipeline.epoch.addingTimeInterval(11))
        #expect(entry.metadata.http?.headers["cache-control"] == "max-age=99")
        #expect(disk.count(.updateMetadata(Self.key)) == 1)
        #expect(disk.storeCount == 1, "the bytes were stored once")
        #expect(disk[Self.key]?.metadata == entry.metadata)
        #expect(test.recorder.fetches.map(\.notModified) == [false, true])
        #expect(test.recorder.fetches.last?.bytes == 0)
    }

    /// `stale-if-error` serves the stale entry while the origin fails, within its window; `must-revalidate` never does.
    @Test(arguments: [
        ("max-age=0, stale-if-error=600", 0, true),
        ("max-age=0, stale-if-error=600", 599, true),
        ("max-age=0, stale-if-error=600", 601, false),
        ("max-age=0, must-revalidate", 0, false),
        ("max-age=0", 0, false),
    ])
    func staleIfErrorServesTheStaleEntryWhileTheOriginFails(
        cacheControl: String, after: Int, served: Bool
    ) async throws {
        let failing = Shared(false)
        let loader = MockDataLoader()
        loader.respond(to: Self.url) { _ in
            failing.value
                ? .failure(DataLoadingError.badStatus(500))
                : MockDataLoader.Stub(headers: ["cache-control": cacheControl])
        }
        let first = TestPipeline(loader: loader, disk: MockDataCache())
        _ = try await first.pipeline.data(for: ImageRequest(url: Self.url))
        failing.value = true
        first.advance(seconds: after)
        let second = first.restarted()
        if served {
            #expect(try await second.pipeline.data(for: ImageRequest(url: Self.url)) == TestImage.data())
        } else {
            await #expect(throws: DataLoadingError.badStatus(500)) {
                try await second.pipeline.data(for: ImageRequest(url: Self.url))
            }
        }
        #expect(second.recorder.fetchFailures == 1)
    }

    /// With an encoder, a thumbnail is stored on disk under its variant key: after a restart it is
    /// served from there alone (the original removed to prove it), with its original's format.
    @Test func aStoredVariantServesTheThumbnailAfterARestart() async throws {
        let loader = MockDataLoader()
        let webp = TestImage.data(width: 200, height: 100, format: .webp)
        loader.stub(Self.url, data: webp, headers: ["cache-control": "max-age=600"])
        let first = TestPipeline(loader: loader, disk: MockDataCache())
        let disk = try #require(first.disk)
        let request = thumbnailRequest(Self.url, 64, 64)
        _ = try await first.pipeline.image(for: request)
        await first.pipeline.waitForStores()
        #expect(disk.keys == [Self.key, request.imageKey.stringValue])
        #expect(first.encoder?.encodes.all == [.jpeg], "no alpha, still: stored as JPEG")
        disk[Self.key] = nil
        let second = first.restarted()
        let image = try await second.pipeline.image(for: request)
        #expect((image.width, image.height) == (64, 64))
        #expect(image.sourceFormat == .webp, "the original's format, recorded beside the variant")
        #expect(loader.loadCount == 1)
        #expect(second.decoder.calls.all.map(\.recipe) == [ImageRecipe()], "the variant decoded as it is")
        #expect(second.recorder.lookups(.diskVariant) == [true])
    }

    @Test func aNewSizeOfAStoredOriginalNeedsNoDownload() async throws {
        let loader = MockDataLoader()
        loader.stub(Self.url, data: TestImage.data(), headers: ["cache-control": "max-age=600"])
        let first = TestPipeline(loader: loader, disk: MockDataCache())
        _ = try await first.pipeline.image(for: thumbnailRequest(Self.url, 64, 64))
        await first.pipeline.waitForStores()
        let second = first.restarted()
        let other = try await second.pipeline.image(for: thumbnailRequest(Self.url, 100, 50))
        #expect((other.width, other.height) == (100, 50))
        #expect(loader.loadCount == 1)
        #expect(second.recorder.lookups(.diskVariant) == [false])
        #expect(second.recorder.lookups(.diskData) == [true])
    }

    /// A variant past its source's freshness is not used: the original is revalidated instead.
    @Test func aStaleVariantIsNotUsed() async throws {
        let loader = MockDataLoader()
        loader.serveRevalidating(Self.url, headers: ["cache-control": "max-age=60", "etag": "\"v\""])
        let first = TestPipeline(loader: loader, disk: MockDataCache())
        let request = thumbnailRequest(Self.url, 16, 16)
        _ = try await first.pipeline.image(for: request)
        await first.pipeline.waitForStores()
        first.advance(seconds: 61)
        let second = first.restarted()
        _ = try await second.pipeline.image(for: request)
        #expect(second.recorder.lookups(.diskVariant) == [false])
        #expect(loader.started.all.last?.headers["If-None-Match"] == "\"v\"")
        #expect(loader.loadCount == 2)
    }

    @Test func anUnreadableVariantIsRemovedAndTheThumbnailMadeFromTheOriginal() async throws {
        let test = TestPipeline(disk: MockDataCache())
        let disk = try #require(test.disk)
        let url = test.serve("a.jpg", headers: ["cache-control": "max-age=600"])
        let request = thumbnailRequest(url, 16, 16)
        let variantKey = request.imageKey.stringValue
        disk[variantKey] = CacheEntry(data: Data("garbage".utf8), metadata: CacheMetadata(storedAt: TestPipeline.epoch))
        let image = try await test.pipeline.image(for: request)
        #expect(image.width == 16)
        #expect(disk.count(.remove(variantKey)) == 1)
        #expect(test.loader.loadCount == 1)
        await test.pipeline.waitForStores()
        #expect(disk[variantKey].map { try? TestImage.header(of: $0.data) }??.width == 16, "stored anew")
    }

    @Test func anEncoderFailureStoresNoVariantAndStillServesTheImage() async throws {
        let test = TestPipeline(disk: MockDataCache())
        test.encoder?.fail(with: ImageEncodingError.failed("test"))
        let request = thumbnailRequest(test.serve("a.jpg"), 16, 16)
        #expect(try await test.pipeline.image(for: request).width == 16)
        await test.pipeline.waitForStores()
        #expect(test.disk?.keys == [request.sourceKey.stringValue])
    }

    /// Only thumbnails are stored as variants (a full-size image is its original), and nothing of a
    /// source that may not be stored, nor of a local file.
    @Test func variantsAreStoredOnlyForStorableThumbnailsOfRemoteSources() async throws {
        let loader = MockDataLoader()
        let file = URL(fileURLWithPath: "/images/local.jpg")
        loader.stub(file, data: TestImage.data())
        let test = TestPipeline(loader: loader, disk: MockDataCache())
        let noStore = test.serve("no-store.jpg", headers: ["cache-control": "no-store"])
        let plain = test.serve("plain.jpg")
        _ = try await test.pipeline.image(for: ImageRequest(url: plain))
        _ = try await test.pipeline.image(for: thumbnailRequest(noStore, 8, 8))
        _ = try await test.pipeline.image(for: thumbnailRequest(file, 8, 8))
        await test.pipeline.waitForStores()
        #expect(test.disk?.keys == [ImageRequest(url: plain).sourceKey.stringValue])
        #expect(test.encoder?.encodes.count == 0)
    }

    /// Bytes that are no image (an error page sent with 200) are removed from every tier, so that the
    /// next request asks the origin again.
    @Test func bytesThatAreNoImageDoNotStayCached() async throws {
        let fixed = Shared(false)
        let loader = MockDataLoader()
        loader.respond(to: Self.url) { _ in
            let body = fixed.value ? TestImage.data() : Data("<html>oops</html>".utf8)
            return MockDataLoader.Stub(data: body, headers: ["cache-control": "max-age=600"])
        }
        let test = TestPipeline(loader: loader, disk: MockDataCache())
        let request = thumbnailRequest(Self.url, 32, 32)
        await #expect(throws: ImageDecodingError.unsupportedFormat) { try await test.pipeline.image(for: request) }
        #expect(test.disk?[Self.key] == nil)
        #expect(test.disk?.count(.remove(Self.key)) == 1)
        fixed.value = true
        #expect(try await test.pipeline.image(for: request).width == 32)
        #expect(loader.loadCount == 2)
    }

    @Test func cacheOnlyAndReloadOptionsWithADiskCache() async throws {
        let loader = MockDataLoader()
        loader.stub(Self.url, data: TestImage.data(), headers: ["cache-control": "max-age=600"])
        let test = TestPipeline(loader: loader, disk: MockDataCache())
        var request = ImageRequest(url: Self.url)
        request.options = .returnCacheDataDontLoad
        await #expect(throws: ImagePipelineError.notCached) { try await test.pipeline.data(for: request) }
        #expect(loader.loadCount == 0)
        request.options = []
        _ = try await test.pipeline.data(for: request)
        request.options = .returnCacheDataDontLoad
        _ = try await test.restarted().pipeline.data(for: request)  // from disk
        #expect(loader.loadCount == 1)
        request.options = .reloadIgnoringCachedData
        _ = try await test.pipeline.data(for: request)
        #expect(loader.loadCount == 2)
    }

    /// A cache-only request is answered by a stale entry too (it asked not to load).
    @Test func aCacheOnlyRequestIsAnsweredByAStaleEntry() async throws {
        let loader = MockDataLoader()
        loader.stub(Self.url, data: TestImage.data(tag: 5), headers: ["cache-control": "max-age=10"])
        let test = TestPipeline(loader: loader, disk: MockDataCache())
        _ = try await test.pipeline.data(for: ImageRequest(url: Self.url))
        test.advance(seconds: 3600)
        var request = thumbnailRequest(Self.url, 8, 8)
        request.options = .returnCacheDataDontLoad
        #expect(try await test.restarted().pipeline.image(for: request).testTag == 5)
        #expect(loader.loadCount == 1)
    }

    @Test func disablingDiskReadsAndWrites() async throws {
        let loader = MockDataLoader()
        loader.stub(Self.url, data: TestImage.data(), headers: ["cache-control": "max-age=600"])
        let test = TestPipeline(loader: loader, disk: MockDataCache())
        let disk = try #require(test.disk)
        var request = ImageRequest(url: Self.url)
        request.options = .disableDiskCacheWrites
        _ = try await test.pipeline.data(for: request)
        #expect(disk.storeCount == 0)
        _ = try await test.restarted().pipeline.data(for: ImageRequest(url: Self.url))
        #expect(disk.storeCount == 1)
        request.options = .disableDiskCacheReads
        _ = try await test.restarted().pipeline.data(for: request)
        #expect(loader.loadCount == 3)
        #expect(disk.count(.read(Self.key)) == 2, "read by the first two loads, not by the third")
    }

    @Test func localFilesAreNeverCopiedToDisk() async throws {
        let loader = MockDataLoader()
        let file = URL(fileURLWithPath: "/images/local.jpg")
        loader.stub(file, data: TestImage.data())
        let test = TestPipeline(loader: loader, disk: MockDataCache())
        _ = try await test.pipeline.data(for: ImageRequest(url: file))
        #expect(test.disk?.storeCount == 0)
    }

    /// The origin that now forbids storing (`no-store` after a revalidation) serves the request,
    /// and the old copy goes from disk and memory.
    @Test func aSourceThatBecomesNoStoreIsRemovedFromEveryTier() async throws {
        let headers = Shared(["cache-control": "max-age=10"])
        let loader = MockDataLoader()
        loader.respond(to: Self.url) { _ in MockDataLoader.Stub(data: TestImage.data(tag: 2), headers: headers.value) }
        let test = TestPipeline(loader: loader, disk: MockDataCache())
        _ = try await test.pipeline.data(for: ImageRequest(url: Self.url))
        headers.value = ["cache-control": "no-store"]
        test.advance(seconds: 11)
        #expect(try await test.pipeline.data(for: ImageRequest(url: Self.url)) == TestImage.data(tag: 2))
        #expect(test.disk?[Self.key] == nil)
        #expect(await test.pipeline.configuration.dataCache?.entry(for: Self.key) == nil)
        _ = try await test.pipeline.data(for: ImageRequest(url: Self.url))
        #expect(loader.loadCount == 3)
    }

    /// Removing a request's cached data removes its original and its variant from disk too.
    @Test func removingCachedDataRemovesTheOriginalAndTheVariantFromDisk() async throws {
        let test = TestPipeline(disk: MockDataCache())
        let request = thumbnailRequest(test.serve("a.jpg"), 8, 8)
        _ = try await test.pipeline.image(for: request)
        await test.pipeline.waitForStores()
        #expect(test.disk?.keys.count == 2)
        await test.pipeline.removeCachedData(for: request)
        #expect(test.disk?.keys == [])
        // Removing everything from memory keeps the disk.
        _ = try await test.pipeline.image(for: request)
        await test.pipeline.waitForStores()
        await test.pipeline.removeAllCachedData()
        #expect(test.disk?.keys.count == 2)
        #expect(test.disk?.count(.removeAll) == 0)
    }
}
