import Foundation
import Testing

@testable import Imagery

/// A caller's cache key (``ImageRequest/CacheKey``) and send-time modifiers (``RequestModifier``):
/// URLs that differ only in a token share the caches and the download; headers set at send time
/// reach the origin without splitting the cache.
@Suite("Pipeline cache keys and request modifiers")
struct PipelineCacheKeyTests {
    /// An origin that serves one image at `/photo.jpg` whatever the query, honouring its validator.
    static func presignedOrigin(gate: Gate? = nil) -> MockDataLoader {
        MockDataLoader { request in
            guard request.url.path == "/photo.jpg" else { return .failure(DataLoadingError.badStatus(404)) }
            if request.headers["If-None-Match"] == "\"v1\"" {
                return .notModified(headers: ["cache-control": "max-age=60"])
            }
            return MockDataLoader.Stub(headers: ["etag": "\"v1\"", "cache-control": "max-age=60"], gate: gate)
        }
    }

    static func presigned(_ token: String) -> ImageRequest {
        var request = thumbnailRequest(
            URL(string: "https://origin.test/photo.jpg?X-Amz-Signature=\(token)&X-Amz-Date=\(token)&v=1")!, 8, 8)
        request.cacheKey = .removingQueryItems(["x-amz-signature", "X-Amz-Date"])
        return request
    }

    @Test func urlsDifferingOnlyInTheirTokenShareOneDownloadAndOneCacheEntry() async throws {
        let gate = Gate()
        let test = TestPipeline(loader: Self.presignedOrigin(gate: gate), disk: MockDataCache())
        let first = Task { try await test.pipeline.image(for: Self.presigned("aaa")) }
        try await test.loader.waitForLoads(1)
        let second = Task { try await test.pipeline.image(for: Self.presigned("bbb")) }
        try await eventually("the second request joins the download") {
            test.pipeline.imageJobs.waiterCount(for: Self.presigned("bbb").imageKey) == 2
        }
        gate.open()
        _ = try await (first.value, second.value)
        #expect(test.loader.loadCount == 1)
        #expect(Self.presigned("aaa").sourceKey == .url("https://origin.test/photo.jpg?v=1"))
        let originals = try #require(test.disk?.keys.filter { !$0.contains("#variant") })
        #expect(originals == ["url:https://origin.test/photo.jpg?v=1"])
    }

    @Test func aStaleEntryIsRevalidatedWithTheOriginsValidatorUnderANewToken() async throws {
        let test = TestPipeline(loader: Self.presignedOrigin(), disk: MockDataCache())
        _ = try await test.pipeline.image(for: Self.presigned("aaa"))
        test.advance(seconds: 120)
        _ = try await test.pipeline.data(for: Self.presigned("ccc"))
        let requests = try await test.loader.waitForLoads(2)
        #expect(requests[1].url.query?.contains("X-Amz-Signature=ccc") == true, "the request's own URL is loaded")
        #expect(requests[1].headers["If-None-Match"] == "\"v1\"")
        #expect(test.loader.ended.all.last?.outcome == .answered(status: 304))
    }

    @Test func aFixedStringKeyNamesTheImageWhateverItsURL() {
        var first = ImageRequest(url: URL(string: "https://a.test/1.jpg")!)
        var second = ImageRequest(url: URL(string: "https://b.test/2.jpg?t=9")!)
        first.cacheKey = .string("avatar-42")
        second.cacheKey = .string("avatar-42")
        #expect(first.sourceKey == second.sourceKey)
        second.cacheKey = .removingQuery
        #expect(second.sourceKey == .url("https://b.test/2.jpg"))
        second.cacheKey = .derived { $0.lastPathComponent }
        #expect(second.sourceKey == .url("2.jpg"))
    }

    @Test func aTokenRefreshedBetweenRequestsReachesTheOriginWithoutSplittingTheCache() async throws {
        let token = Shared("one")
        let test = TestPipeline(loader: Self.presignedOrigin(), disk: MockDataCache()) { configuration in
            configuration.requestModifier = .headers { ["Authorization": "Bearer \(token.value)"] }
        }
        let request = thumbnailRequest(URL(string: "https://origin.test/photo.jpg")!, 8, 8)
        _ = try await test.pipeline.image(for: request)
        token.value = "two"
        test.advance(seconds: 120)
        _ = try await test.pipeline.image(for: request)
        let requests = try await test.loader.waitForLoads(2)
        #expect(requests.map { $0.headers["Authorization"] } == ["Bearer one", "Bearer two"])
        #expect(requests[1].headers["If-None-Match"] == "\"v1\"", "the refreshed token revalidates the same entry")
        #expect(test.disk?.keys.filter { !$0.contains("#variant") } == ["url:https://origin.test/photo.jpg"])
    }

    @Test func aRequestsModifierRunsAfterThePipelinesAndMayRefuse() async throws {
        let test = TestPipeline(loader: Self.presignedOrigin()) { configuration in
            configuration.requestModifier = .headers { ["X-Order": "pipeline", "X-Pipeline": "yes"] }
        }
        var request = thumbnailRequest(URL(string: "https://origin.test/photo.jpg")!, 8, 8)
        request.requestModifier = .headers { ["x-order": "request"] }
        _ = try await test.pipeline.image(for: request)
        let sent = try await test.loader.waitForLoads(1)[0]
        #expect(sent.headers["x-order"] == "request" && sent.headers["X-Order"] == nil)
        #expect(sent.headers["X-Pipeline"] == "yes")

        struct NoToken: Error {}
        var refused = thumbnailRequest(URL(string: "https://origin.test/photo.jpg?other")!, 8, 8)
        refused.requestModifier = RequestModifier { _ in throw NoToken() }
        await #expect(throws: NoToken.self) { try await test.pipeline.image(for: refused) }
        #expect(test.loader.loadCount == 1, "a refused request is never sent")
    }
}
