import Foundation
import Testing

@testable import Imagery

/// Identical requests share one download and one decode; requests for other thumbnails of one source
/// share the download; what is in memory needs neither.
@Suite("Pipeline coalescing")
struct PipelineCoalescingTests {
    @Test(arguments: [2, 10, 50])
    func concurrentIdenticalRequestsMakeOneLoadAndOneDecode(count: Int) async throws {
        let gate = Gate()
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg", gate: gate), 32, 32)
        let tasks = (0..<count).map { _ in test.pipeline.imageTask(for: request) }
        try await test.loader.waitForLoads(1)
        // Every task has joined the one image job before the origin answers.
        try await eventually("every task joined") {
            test.pipeline.imageJobs.waiterCount(for: request.imageKey) == count
        }
        gate.open()
        for task in tasks {
            let image = try await task.image
            #expect((image.width, image.height) == (32, 32))
        }
        #expect(test.loader.loadCount == 1)
        #expect(test.decoder.decodeCount == 1)
        #expect(test.pipeline.activeJobCount == (0, 0))
    }

    @Test func twoThumbnailSizesOfOneSourceShareOneDownloadAndDecodeTwice() async throws {
        let gate = Gate()
        let test = TestPipeline()
        let url = test.serve("a.jpg", gate: gate)
        let small = test.pipeline.imageTask(for: thumbnailRequest(url, 16, 16))
        let large = test.pipeline.imageTask(for: thumbnailRequest(url, 40, 30))
        try await test.loader.waitForLoads(1)
        try await eventually("both decode jobs wait on the download") {
            test.pipeline.dataJobs.waiterCount(for: ImageRequest(url: url).sourceKey) == 2
        }
        gate.open()
        let (a, b) = try await (small.image, large.image)
        #expect((a.width, b.width) == (16, 40))
        #expect(test.loader.loadCount == 1)
        #expect(test.decoder.decodeCount == 2)
        #expect(Set(test.decoder.calls.all.map(\.recipe.resize?.width)) == [16, 40])
    }

    @Test func aNewThumbnailOfACachedOriginalNeedsNoDownload() async throws {
        let test = TestPipeline()
        let url = test.serve("a.jpg")
        let request = thumbnailRequest(url, 20, 20)
        _ = try await test.pipeline.image(for: request)
        #expect(test.cached(request)?.width == 20)
        #expect(test.cached(thumbnailRequest(url, 10, 10)) == nil)
        _ = try await test.pipeline.image(for: thumbnailRequest(url, 10, 10))
        _ = try await test.pipeline.image(for: request)  // a memory hit: no decode
        #expect(test.loader.loadCount == 1)
        #expect(test.decoder.decodeCount == 2)
        #expect(test.recorder.lookups(.memoryImage) == [false, false, true])
        #expect(test.recorder.lookups(.memoryData) == [false, true])
    }

    @Test func sequentialRequestsForACachedImageNeitherLoadNorDecode() async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg"), 8, 8)
        for _ in 0..<5 { _ = try await test.pipeline.image(for: request) }
        #expect(test.loader.loadCount == 1)
        #expect(test.decoder.decodeCount == 1)
        #expect(test.recorder.hits(.memoryImage) == 4)
    }

    @Test func aCustomDataSourceIsCalledOnceForConcurrentRequestsWithItsID() async throws {
        let test = TestPipeline()
        let calls = Counter()
        let gate = Gate()
        let bytes = TestImage.data(width: 100, height: 100, tag: 9)
        let request: @Sendable (Int) -> ImageRequest = { size in
            ImageRequest(id: "cat", thumbnail: .init(width: size, height: size)) {
                calls.increment()
                try await gate.wait()
                return bytes
            }
        }
        let tasks = (0..<20).map { test.pipeline.imageTask(for: request($0.isMultiple(of: 2) ? 32 : 64)) }
        try await eventually("both thumbnails wait on the one source") {
            test.pipeline.dataJobs.waiterCount(for: .id("cat")) == 2 && calls.value == 1
        }
        gate.open()
        for task in tasks { _ = try await task.image }
        #expect(calls.value == 1)
        #expect(test.decoder.decodeCount == 2)
        #expect(test.loader.loadCount == 0, "a custom source never reaches the data loader")
        #expect(test.cached(request(32))?.width == 32)
        #expect(test.cached(request(64))?.testTag == 9)
        #expect(test.cached(request(16)) == nil)
        #expect(test.cached(ImageRequest(id: "dog", thumbnail: .init(width: 32, height: 32)) { bytes }) == nil)
    }

    /// Spellings of one URL (case of scheme and host, a default port, a fragment) share one download.
    @Test func spellingsOfOneURLShareOneDownload() async throws {
        let loader = MockDataLoader(fallback: { _ in MockDataLoader.Stub(data: TestImage.data()) })
        let test = TestPipeline(loader: loader)
        let spellings = [
            "https://origin.test/a.jpg", "HTTPS://Origin.TEST/a.jpg", "https://origin.test:443/a.jpg",
            "https://origin.test/a.jpg#top",
        ]
        for spelling in spellings {
            _ = try await test.pipeline.image(for: thumbnailRequest(URL(string: spelling)!, 8, 8))
        }
        #expect(test.loader.loadCount == 1)
        #expect(test.decoder.decodeCount == 1)
    }

    /// Extra request headers are part of the source key: the same URL with other headers is another source.
    @Test func requestsWithOtherHeadersDoNotShareADownload() async throws {
        let test = TestPipeline()
        let url = test.serve("a.jpg")
        var plain = ImageRequest(url: url)
        var webp = ImageRequest(url: url)
        webp.headers = ["Accept": "image/webp"]
        var webpAgain = ImageRequest(url: url)
        webpAgain.headers = ["accept": "image/webp"]
        _ = try await test.pipeline.image(for: plain)
        _ = try await test.pipeline.image(for: webp)
        _ = try await test.pipeline.image(for: webpAgain)  // names are compared lower-cased
        #expect(test.loader.loadCount == 2)
        #expect(test.loader.started.all.map { $0.headers["Accept"] } == [nil, "image/webp"])
        plain.priority = .veryHigh  // the priority is no part of any key
        #expect(test.cached(plain) != nil)
    }

    /// `data(for:)` and `image(for:)` of one source at once share the download.
    @Test func dataAndImageRequestsShareOneDownload() async throws {
        let gate = Gate()
        let test = TestPipeline()
        let url = test.serve("a.jpg", gate: gate)
        async let data = test.pipeline.data(for: ImageRequest(url: url))
        async let image = test.pipeline.image(for: thumbnailRequest(url, 8, 8))
        try await test.loader.waitForLoads(1)
        try await eventually("both wait on the download") {
            test.pipeline.dataJobs.waiterCount(for: ImageRequest(url: url).sourceKey) == 2
        }
        gate.open()
        let (bytes, decoded) = try await (data, image)
        #expect(bytes == TestImage.data())
        #expect(decoded.width == 8)
        #expect(test.loader.loadCount == 1)
    }

    /// The download job ends with the download: a request after it that misses every cache loads again.
    @Test func aRequestAfterTheJobEndedStartsANewOne() async throws {
        let test = TestPipeline(configure: {
            $0.dataCache = nil
            $0.imageCache = nil
        })
        let url = test.serve("a.jpg")
        _ = try await test.pipeline.image(for: ImageRequest(url: url))
        _ = try await test.pipeline.image(for: ImageRequest(url: url))
        #expect(test.loader.loadCount == 2)
        #expect(test.decoder.decodeCount == 2)
    }

    /// Many sources at once: one load and one decode each, never more.
    @Test func manySourcesAtOnceLoadEachOnce() async throws {
        let test = TestPipeline(
            loader: MockDataLoader(fallback: { request in
                MockDataLoader.Stub(data: TestImage.data(tag: UInt8(request.url.lastPathComponent.count)))
            }))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<120 {
                group.addTask {
                    let url = testURL("image\(index % 30).jpg")
                    let image = try await test.pipeline.image(for: thumbnailRequest(url, 8 + (index / 30) % 2, 8))
                    #expect(image.height == 8)
                }
            }
            try await group.waitForAll()
        }
        #expect(test.loader.loadCount == 30)
        #expect(Set(test.loader.loadedURLs).count == 30)
        #expect(test.decoder.decodeCount == 60)
    }
}
