import Foundation
import Imagery
import ImageryHTTP
import ImageryTestSupport
import Testing

/// Retries through the real HTTP loader: its statuses and `Retry-After` reach the pipeline's policy,
/// and a send-time modifier's headers reach the origin on every attempt.
@Suite("HTTP loader retries")
struct HTTPRetryTests {
    @Test func anOriginAnswering503TwiceThen200GivesTheImageInThreeRequests() async throws {
        let unavailable = TestOrigin.Response(status: 503, headers: [("Retry-After", "1")], body: Data("busy".utf8))
        let origin = try await TestOrigin.failing(
            [unavailable, unavailable], thenServing: try Fixtures.data("rocket.jpg"))
        let waits = Locked<[Duration]>([])
        let token = Locked(0)
        try await withHarness(origin: origin) { configuration in
            var policy = RetryPolicy.standard
            policy.wait = { duration in waits.withLock { $0.append(duration) } }
            let start = ContinuousClock.now  // moved only by the waits: a slow machine does not spend the deadline
            policy.now = { start + waits.withLock { $0.reduce(.zero, +) } }
            configuration.retryPolicy = policy
            configuration.requestModifier = .headers {
                let next = token.withLock { count in
                    count += 1
                    return count
                }
                return ["Authorization": "Bearer \(next)"]
            }
        } _: { harness in
            let image = try await harness.pipeline.image(
                for: ImageRequest(url: origin.url("rocket.jpg"), thumbnail: .init(width: 32, height: 32)))
            #expect(image.width == 32)
            #expect(origin.requestCount == 3)
            #expect(waits.withLock { $0 } == [.seconds(1), .seconds(1)], "Retry-After, read by the loader")
            #expect(origin.requests.map { $0.headers["authorization"] } == ["Bearer 1", "Bearer 2", "Bearer 3"])
        }
    }

    @Test func aNotFoundIsNotRetried() async throws {
        try await withHarness { harness in
            await #expect(throws: DataLoadingError.badStatus(404)) {
                try await harness.pipeline.data(for: ImageRequest(url: harness.origin.url("missing.jpg")))
            }
            #expect(harness.origin.requestCount == 1)
        }
    }
}
