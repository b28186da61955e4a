import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryServer

/// The proxy retries origin fetches with the pipeline's mechanism, on its own defaults
/// (``ServerConfiguration/Origins/maximumAttempts``), and counts each retry.
@Suite("Proxy origin retries")
struct OriginRetryTests {
    @Test func aServiceUnavailableOriginIsAskedAgainAndTheRetryCounted() async throws {
        let origin = try await TestOrigin.failing(
            [TestOrigin.Response(status: 503, headers: [("Retry-After", "0")])],
            thenServing: try Fixtures.data("rocket.jpg"))
        try await withServer(origin: origin) { client, origin in
            let response = try await get(client, imageURI(origin, "rocket.jpg", "w=40"))
            #expect(response.status == .ok)
            #expect(origin.requestCount == 2)
            let counters = try await metrics(client)
            #expect(counters[#"imagery_origin_retries_total{reason="503"}"#] == 1)
        }
    }

    @Test func oneAttemptMeansNoRetry() async throws {
        let origin = try await TestOrigin.failing(
            [TestOrigin.Response(status: 502)], thenServing: try Fixtures.data("rocket.jpg"))
        try await withServer(origin: origin, configure: { $0.origins.maximumAttempts = 1 }) { client, origin in
            let status = try await get(client, imageURI(origin, "rocket.jpg", "w=40")).status
            #expect(status == .badGateway)
            #expect(origin.requestCount == 1)
        }
    }

    /// imgproxy's HTTP tests have an origin that answers 304 to a request that was not conditional: it
    /// has no body to use, so it is the origin's fault (502, its status named), never a 500.
    @Test func a304ToAnUnconditionalRequestIsTheOriginsFault() async throws {
        let origin = try await TestOrigin.start { _ in TestOrigin.Response(status: 304) }
        try await withServer(origin: origin, configure: { $0.origins.maximumAttempts = 1 }) { client, origin in
            let response = try await get(client, imageURI(origin, "rocket.jpg", "w=40"))
            #expect(response.status == .badGateway)
            #expect(String(decoding: response.body, as: UTF8.self).contains("origin_failed"))
            #expect(String(decoding: response.body, as: UTF8.self).contains("HTTP 304"))
            #expect(origin.requestCount == 1)
        }
    }

    @Test func aMissingSourceIsNotRetried() async throws {
        try await withServer { client, origin in
            let status = try await get(client, imageURI(origin, "missing.jpg", "w=40")).status
            #expect(status == .notFound)
            #expect(origin.requestCount == 1)
        }
    }
}
