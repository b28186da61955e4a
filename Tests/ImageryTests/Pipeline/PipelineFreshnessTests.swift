import Foundation
import Testing

@testable import Imagery

/// The memory tiers follow the same HTTP policy as the disk tier (``ImagePipeline/MemoryFreshness/http``),
/// unless the working-set behaviour is asked for (``ImagePipeline/MemoryFreshness/ignored``). Time is
/// ``ManualTime``: a test moves it past an expiry instead of sleeping through it.
@Suite("Pipeline freshness in memory")
struct PipelineFreshnessTests {
    static let url = testURL("a.jpg")

    @Test func aStaleImageInMemoryIsRevalidatedAndA304KeepsItWithoutADecode() async throws {
        let test = TestPipeline()
        test.loader.serveRevalidating(
            Self.url, headers: ["cache-control": "max-age=15", "etag": "\"v1\""],
            notModifiedHeaders: ["cache-control": "max-age=600"]
        )
        let request = thumbnailRequest(Self.url, 32, 32)
        _ = try await test.pipeline.image(for: request)
        test.advance(seconds: 14)
        #expect(test.cached(request) != nil)
        test.advance(seconds: 1)
        #expect(test.cached(request) == nil, "stale: not handed out without asking the source")
        let response = try await test.pipeline.imageResponse(for: request)
        #expect(response.image.width == 32)
        #expect(test.loader.loadCount == 2)
        #expect(test.loader.started.all.last?.headers["If-None-Match"] == "\"v1\"")
        #expect(test.decoder.decodeCount == 1, "the 304 said: the same version, so the decoded image stands")
        #expect(response.freshUntil == TestPipeline.epoch.addingTimeInterval(15 + 600))
        #expect(test.cached(request) != nil, "refreshed in memory")
        // A new size: the refreshed original is in memory, fresh: no request.
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 40, 40))
        #expect(test.loader.loadCount == 2)
    }

    /// `Last-Modified` shows the same version as well as an `ETag` does.
    @Test func aLastModifiedValidatorKeepsTheDecodedImageToo() async throws {
        let test = TestPipeline()
        test.loader.serveRevalidating(
            Self.url, headers: ["cache-control": "max-age=10", "last-modified": httpDate(-86_400)]
        )
        let request = thumbnailRequest(Self.url, 32, 32)
        _ = try await test.pipeline.image(for: request)
        test.advance(seconds: 11)
        _ = try await test.pipeline.image(for: request)
        #expect(test.loader.started.all.last?.headers["If-Modified-Since"] == httpDate(-86_400))
        #expect(test.decoder.decodeCount == 1)
    }

    /// A weak ETag promises equivalence, not the same bytes: the 304 refreshes the original, but
    /// the image is decoded again from it (no new download).
    @Test func aWeakETagRefreshesTheOriginalButTheImageIsDecodedAgain() async throws {
        let test = TestPipeline()
        test.loader.serveRevalidating(Self.url, headers: ["cache-control": "max-age=10", "etag": "W/\"v1\""])
        let request = thumbnailRequest(Self.url, 32, 32)
        _ = try await test.pipeline.image(for: request)
        test.advance(seconds: 11)
        _ = try await test.pipeline.image(for: request)
        #expect(test.loader.loadCount == 2)
        #expect(test.recorder.fetches.map(\.notModified) == [false, true])
        #expect(test.decoder.decodeCount == 2)
    }

    @Test func aSourceWithoutValidatorsIsDownloadedAndDecodedAgain() async throws {
        let test = TestPipeline()
        test.serve("a.jpg", headers: ["cache-control": "max-age=1"])
        let request = thumbnailRequest(Self.url, 32, 32)
        _ = try await test.pipeline.image(for: request)
        test.advance(seconds: 2)
        _ = try await test.pipeline.image(for: request)
        #expect(test.loader.loadCount == 2)
        #expect(test.loader.started.all.last?.headers["If-None-Match"] == nil)
        #expect(test.decoder.decodeCount == 2)
    }

    /// A new version (a new ETag) replaces the image in memory.
    @Test func aChangedSourceReplacesTheImage() async throws {
        let version = Shared<UInt8>(1)
        let test = TestPipeline()
        test.loader.serveRevalidating(Self.url) {
            (TestImage.data(tag: version.value), ["cache-control": "max-age=10", "etag": "\"v\(version.value)\""])
        }
        let request = thumbnailRequest(Self.url, 32, 32)
        #expect(try await test.pipeline.image(for: request).testTag == 1)
        version.value = 2
        test.advance(seconds: 5)
        #expect(try await test.pipeline.image(for: request).testTag == 1, "still fresh: the origin is not asked")
        test.advance(seconds: 6)
        #expect(try await test.pipeline.image(for: request).testTag == 2)
        #expect(test.cached(request)?.testTag == 2)
        #expect(test.loader.started.all.last?.headers["If-None-Match"] == "\"v1\"")
        #expect(test.decoder.decodeCount == 2)
    }

    /// `no-cache`: every use of the image asks the origin first; a 304 each time keeps the decoded image.
    @Test func noCacheRevalidatesBeforeEachUse() async throws {
        let test = TestPipeline()
        test.loader.serveRevalidating(Self.url, headers: ["cache-control": "no-cache", "etag": "\"v\""])
        let request = thumbnailRequest(Self.url, 32, 32)
        for _ in 0..<3 { _ = try await test.pipeline.image(for: request) }
        #expect(test.cached(request) == nil)
        #expect(test.loader.loadCount == 3)
        #expect(test.decoder.decodeCount == 1)
    }

    @Test func noStoreServesTheWaitingRequestsAndKeepsNothing() async throws {
        let gate = Gate()
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg", headers: ["cache-control": "no-store"], gate: gate), 32, 32)
        let tasks = (0..<4).map { _ in test.pipeline.imageTask(for: request) }
        try await test.loader.waitForLoads(1)
        try await eventually("every task joined") { test.pipeline.imageJobs.waiterCount(for: request.imageKey) == 4 }
        gate.open()
        for task in tasks { #expect(try await task.image.width == 32) }
        #expect(test.cached(request) == nil)
        #expect(await test.pipeline.configuration.dataCache?.entry(for: request.sourceKey.stringValue) == nil)
        _ = try await test.pipeline.image(for: request)
        #expect(test.loader.loadCount == 2, "one fetch for the four that waited together, one for the next")
    }

    @Test func ignoringFreshnessKeepsTheWorkingSetInMemory() async throws {
        let test = TestPipeline(configure: { $0.memoryFreshness = .ignored })
        test.serve("a.jpg", headers: ["cache-control": "no-cache", "etag": "\"v1\""])
        let request = thumbnailRequest(Self.url, 32, 32)
        _ = try await test.pipeline.image(for: request)
        test.advance(seconds: 86_400 * 30)
        #expect(test.cached(request) != nil)
        _ = try await test.pipeline.image(for: thumbnailRequest(Self.url, 40, 40))
        #expect(test.loader.loadCount == 1)
    }

    /// Many requests for one stale image share one revalidation.
    @Test func concurrentRequestsForAStaleImageShareOneRevalidation() async throws {
        let gate = Gate()
        let calls = Counter()
        let test = TestPipeline()
        test.loader.respond(to: Self.url) { request in
            calls.increment()
            if request.headers["If-None-Match"] == "\"v\"" {
                return MockDataLoader.Stub(data: Data(), statusCode: 304, gate: gate)
            }
            return MockDataLoader.Stub(headers: ["cache-control": "max-age=10", "etag": "\"v\""])
        }
        let request = thumbnailRequest(Self.url, 32, 32)
        _ = try await test.pipeline.image(for: request)
        test.advance(seconds: 11)
        let tasks = (0..<10).map { _ in test.pipeline.imageTask(for: request) }
        try await test.loader.waitForLoads(2)
        try await eventually("every task joined") { test.pipeline.imageJobs.waiterCount(for: request.imageKey) == 10 }
        gate.open()
        for task in tasks { #expect(try await task.image.width == 32) }
        #expect(calls.value == 2)
        #expect(test.decoder.decodeCount == 1)
    }

    /// The original in memory is revalidated as the disk's is: `data(for:)` of a stale entry sends
    /// its validator, and the 304 refreshes the memory entry.
    @Test func aStaleOriginalInMemoryIsRevalidated() async throws {
        let test = TestPipeline()
        test.loader.serveRevalidating(Self.url, headers: ["cache-control": "max-age=10", "etag": "\"v\""])
        _ = try await test.pipeline.data(for: ImageRequest(url: Self.url))
        test.advance(seconds: 11)
        let entry = try await test.pipeline.dataEntry(for: ImageRequest(url: Self.url))
        #expect(entry.data == TestImage.data())
        #expect(entry.metadata.storedAt == TestPipeline.epoch.addingTimeInterval(11))
        _ = try await test.pipeline.data(for: ImageRequest(url: Self.url))
        #expect(test.loader.loadCount == 2, "fresh again for ten seconds")
        #expect(test.recorder.lookups(.memoryData) == [false, false, true])
    }

    /// Time spent on the transfer counts towards the response's age: the pipeline records when the
    /// request went out and when the response came, both from its ``TimeSource``.
    @Test func theTransferTimeCountsAgainstFreshness() async throws {
        let gate = Gate()
        let test = TestPipeline()
        test.serve("a.jpg", headers: ["cache-control": "max-age=60"], gate: gate)
        let task = Task { try await test.pipeline.dataEntry(for: ImageRequest(url: Self.url)) }
        try await test.loader.waitForLoads(1)
        test.advance(seconds: 5)
        gate.open()
        let entry = try await task.value
        let http = try #require(entry.metadata.http)
        #expect(http.requestTime == TestPipeline.epoch)
        #expect(http.responseTime == TestPipeline.epoch.addingTimeInterval(5))
        #expect(entry.metadata.storedAt == TestPipeline.epoch.addingTimeInterval(5))
        let freshUntil = test.pipeline.configuration.cachePolicy.freshUntil(entry.metadata)
        #expect(freshUntil == TestPipeline.epoch.addingTimeInterval(60))
    }

    /// The default policy gives a source that states no expiry 300 s in memory.
    @Test func aSourceWithoutExpiryIsFreshForTheDefaultFiveMinutes() async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg"), 8, 8)
        _ = try await test.pipeline.image(for: request)
        test.advance(seconds: 299)
        #expect(test.cached(request) != nil)
        test.advance(seconds: 1)
        #expect(test.cached(request) == nil)
    }

    /// A configuration made without a time source reads the system's.
    @Test func theDefaultTimeIsTheSystemsTime() {
        let configuration = ImagePipeline.Configuration(decoder: MockImageDecoder())
        let before = Date()
        let now = configuration.time.date()
        #expect(now >= before && now <= Date())
        let instant = configuration.time.instant()
        #expect(instant <= ContinuousClock.now)
    }
}
