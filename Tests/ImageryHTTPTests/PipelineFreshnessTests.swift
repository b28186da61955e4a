import Foundation
import Imagery
import ImageryTestSupport
import Testing

/// The memory tiers follow the same HTTP policy as the disk tier (``ImagePipeline/Configuration/MemoryFreshness/http``),
/// unless a library user asks for the old working-set behaviour (``ImagePipeline/Configuration/MemoryFreshness/ignored``).
@Suite("Pipeline freshness in memory")
struct PipelineFreshnessTests {
    /// A harness whose pipeline and origin read `time` (moved by hand: a response goes stale when the
    /// test says, however long the machine took).
    func withCachingHarness(
        time: ManualTime = ManualTime(),
        configure: (inout ImagePipeline.Configuration) -> Void = { _ in },
        _ body: (PipelineHarness) async throws -> Void
    ) async throws {
        try await withHarness(
            origin: try await TestOrigin.caching(time: time.source),
            configure: {
                $0.time = time.source
                configure(&$0)
            }, body)
    }

    @Test func aStaleImageInMemoryIsRevalidatedAndA304KeepsItWithoutADecode() async throws {
        let time = ManualTime()
        try await withCachingHarness(time: time) { harness in
            let request = ImageRequest(
                url: harness.origin.url("rocket.jpg?cc=max-age%3D60&etag=v1&cc304=max-age%3D600"),
                thumbnail: .init(width: 32, height: 32))
            _ = try await harness.pipeline.image(for: request)
            time.advance(by: .seconds(50))
            #expect(harness.pipeline.cachedImage(for: request) != nil, "fresh for 60 s")
            time.advance(by: .seconds(20))
            #expect(
                harness.pipeline.cachedImage(for: request) == nil, "stale: not handed out without asking the source")
            let response = try await harness.pipeline.imageResponse(for: request)
            #expect(response.image.width == 32)
            #expect(harness.origin.requestCount == 2)
            #expect(harness.origin.requests.last?.headers["if-none-match"] == "\"v1\"")
            #expect(harness.decoder.count == 1, "the 304 said: the same version, so the decoded image stands")
            #expect(response.freshUntil.timeIntervalSince(time.date) > 500)
            // A new size: the refreshed original is in memory, fresh: no origin request.
            _ = try await harness.pipeline.image(
                for: ImageRequest(
                    url: harness.origin.url("rocket.jpg?cc=max-age%3D60&etag=v1&cc304=max-age%3D600"),
                    thumbnail: .init(width: 40, height: 40)))
            #expect(harness.origin.requestCount == 2)
        }
    }

}
