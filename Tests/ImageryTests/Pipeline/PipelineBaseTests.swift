import Foundation
import Testing

@testable import Imagery

/// Several sizes of one source with a decoder that keeps bases (``ThumbnailDeriving``): one download,
/// one decode, the other sizes made from the kept base while it has enough pixels and its source is fresh.
@Suite("Pipeline thumbnails from kept bases")
struct PipelineBaseTests {
    static let url = testURL("photo.jpg")

    /// A pipeline that keeps bases, serving a 640 × 427 source at ``url`` with `headers`.
    static func make(
        headers: [String: String] = [:], configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
    ) -> TestPipeline {
        let test = TestPipeline(deriving: true, configure: configure)
        test.serve("photo.jpg", width: 640, height: 427, headers: headers)
        return test
    }

    static func inside(_ width: Int) -> ImageRequest {
        ImageRequest(url: url, thumbnail: .init(width: width, height: 8192, fit: .inside))
    }

    @Test func laterSizesOfASourceAreMadeFromItsBase() async throws {
        let test = Self.make()
        let deriving = try #require(test.deriving)
        // 100 × 100 decodes at 1/4 (a 160 × 106 base): 110 × 90 fits in it.
        let first = try await test.pipeline.image(for: thumbnailRequest(Self.url, 100, 100))
        let contain = ImageRequest(url: Self.url, thumbnail: .init(width: 110, height: 90, fit: .contain))
        let second = try await test.pipeline.image(for: contain)
        #expect((first.width, first.height, second.width, second.height) == (100, 100, 110, 90))
        #expect(test.decoder.decodeCount == 1)
        #expect(deriving.derivations.count == 1)
        #expect(test.pipeline.baseCacheCost == 160 * 106)
        // A size the base is too small for is decoded (from the original in memory); its base replaces the old one.
        #expect(try await test.pipeline.image(for: Self.inside(300)).width == 300)
        #expect(test.decoder.decodeCount == 2)
        #expect(test.pipeline.baseCacheCost == 320 * 213)
        _ = try await test.pipeline.image(for: Self.inside(280))
        #expect(test.decoder.decodeCount == 2)
        #expect(deriving.derivations.count == 2)
        #expect(test.loader.loadCount == 1)
        #expect(test.recorder.lookups(.memoryBase) == [false, true, false, true])
        #expect(test.recorder.derivations.map(\.width) == [110, 280])
    }

    @Test func removingASourcesCachedDataRemovesItsBase() async throws {
        let test = Self.make()
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 100, 100))
        await test.pipeline.removeCachedData(for: thumbnailRequest(Self.url, 50, 50))
        #expect(test.pipeline.baseCacheCost == 0)
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 90, 90))
        #expect(test.decoder.decodeCount == 2)
        #expect(test.loader.loadCount == 2)
    }

    @Test func removingDecodedImagesRemovesTheBaseAndKeepsTheOriginal() async throws {
        let test = Self.make()
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 100, 100))
        test.pipeline.removeDecodedImages(for: thumbnailRequest(Self.url, 100, 100))
        #expect(test.pipeline.baseCacheCost == 0)
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 90, 90))
        #expect(test.decoder.decodeCount == 2)
        #expect(test.loader.loadCount == 1)
    }

    @Test func removingAllCachedDataEmptiesTheBases() async throws {
        let test = Self.make()
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 100, 100))
        await test.pipeline.removeAllCachedData()
        #expect(test.pipeline.baseCacheCost == 0)
    }

    @Test(arguments: [100, 110, 120])
    func withoutBasesEverySizeIsDecoded(width: Int) async throws {
        let test = Self.make(configure: { $0.baseImageCacheCostLimit = 0 })
        for size in [width, width + 1, width + 2] {
            _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, size, size))
        }
        #expect(test.decoder.decodeCount == 3)
        #expect(test.deriving?.derivations.count == 0)
        #expect(test.pipeline.baseCacheCost == nil)
    }

    /// A plain decoder has no bases at all.
    @Test func aDecoderThatKeepsNoBasesHasNoBaseCache() {
        #expect(TestPipeline().pipeline.baseCacheCost == nil)
    }

    /// A full-size request neither keeps nor uses a base.
    @Test func aFullSizeRequestDoesNotUseBases() async throws {
        let test = Self.make()
        _ = try await test.pipeline.image(for: ImageRequest(url: Self.url))
        #expect(test.pipeline.baseCacheCost == 0)
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 10, 10))
        #expect(test.decoder.decodeCount == 2)
        #expect(test.recorder.lookups(.memoryBase) == [false])
    }

    /// Requests that skip memory reads decode anew; those that skip memory writes keep no base.
    @Test func memoryOptionsApplyToBases() async throws {
        let test = Self.make()
        var noWrites = thumbnailRequest(Self.url, 100, 100)
        noWrites.options = .disableMemoryCacheWrites
        _ = try await test.pipeline.image(for: noWrites)
        #expect(test.pipeline.baseCacheCost == 0)
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 100, 100))
        var noReads = thumbnailRequest(Self.url, 90, 90)
        noReads.options = .disableMemoryCacheReads
        _ = try await test.pipeline.image(for: noReads)
        #expect(test.decoder.decodeCount == 3)
        #expect(test.deriving?.derivations.count == 0)
    }

    /// Nothing is kept of a source that may not be stored.
    @Test func noBaseIsKeptOfANoStoreSource() async throws {
        let test = Self.make(headers: ["cache-control": "no-store"])
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 100, 100))
        #expect(test.pipeline.baseCacheCost == 0)
    }

    /// A stale base is used once its source, revalidated, is the same version; a changed source drops it.
    @Test(arguments: [true, false])
    func aStaleBaseIsUsedAfterARevalidationShowsTheSameVersion(sameVersion: Bool) async throws {
        let version = Shared<UInt8>(1)
        let test = TestPipeline(deriving: true)
        test.loader.serveRevalidating(Self.url) {
            let headers = ["cache-control": "max-age=10", "etag": "\"v\(version.value)\""]
            return (TestImage.data(width: 640, height: 427, tag: version.value), headers)
        }
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 100, 100))
        if !sameVersion { version.value = 2 }
        test.advance(seconds: 11)
        let image = try await test.pipeline.image(for: thumbnailRequest(Self.url, 90, 90))
        #expect(test.loader.loadCount == 2)
        #expect(test.loader.started.all.last?.headers["If-None-Match"] == "\"v1\"")
        #expect(image.testTag == version.value)
        #expect(test.decoder.decodeCount == (sameVersion ? 1 : 2))
        #expect(test.deriving?.derivations.count == (sameVersion ? 1 : 0))
    }

    /// A kept base lives for ``ImagePipeline/Configuration/baseImageCacheTTL`` on the pipeline's time.
    @Test func aKeptBaseExpiresAfterItsTimeToLive() async throws {
        let test = Self.make(headers: ["cache-control": "max-age=86400"], configure: { $0.baseImageCacheTTL = 60 })
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 100, 100))
        test.advance(seconds: 59)
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 90, 90))
        #expect(test.deriving?.derivations.count == 1)
        test.advance(seconds: 2)
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 80, 80))
        #expect(test.deriving?.derivations.count == 1)
        #expect(test.decoder.decodeCount == 2, "the base expired: decoded again, from the original in memory")
        #expect(test.loader.loadCount == 1)
    }

    /// Decodes of several sizes at once, while no base exists yet, each decode on its own; later ones derive.
    @Test func concurrentSizesBeforeABaseExistsAreEachDecoded() async throws {
        let gate = Gate()
        let test = TestPipeline(deriving: true)
        test.serve("photo.jpg", width: 640, height: 427, gate: gate)
        let tasks = [100, 90, 80].map { test.pipeline.imageTask(for: thumbnailRequest(Self.url, $0, $0)) }
        try await test.loader.waitForLoads(1)
        try await eventually("all three wait on the download") {
            test.pipeline.dataJobs.waiterCount(for: ImageRequest(url: Self.url).sourceKey) == 3
        }
        gate.open()
        for task in tasks { _ = try await task.image }
        #expect(test.decoder.decodeCount + (test.deriving?.derivations.count ?? 0) == 3)
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 70, 70))
        #expect(test.loader.loadCount == 1)
        #expect(test.deriving?.derivations.all.last?.resize?.width == 70)
    }
}
