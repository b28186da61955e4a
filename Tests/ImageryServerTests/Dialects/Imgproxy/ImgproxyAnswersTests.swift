import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryServer

/// imgproxy's HTTP behaviour for imgproxy URLs, as its own processing-handler tests (eef3b312,
/// `integration_test/processing_handler_test.go`) set it up: validators and their switches and busters,
/// `max-age=TTL`, the canonical link, the Content-Security-Policy, and imgproxy's refusal statuses.
@Suite("imgproxy answers: headers and statuses")
struct ImgproxyAnswersTests {
    static let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"

    /// An origin that answers every request with rocket.jpg and `headers`.
    static func origin(_ headers: [(String, String)]) async throws -> TestOrigin {
        let body = try Fixtures.data("rocket.jpg")
        return try await TestOrigin.start { _ in
            TestOrigin.Response(status: 200, headers: [("Content-Type", "image/jpeg")] + headers, body: body)
        }
    }

    /// The configuration `variables` make, applied to the test server's.
    static func configure(_ variables: [String: String]) throws -> (inout ServerConfiguration) -> Void {
        var imgproxy = ServerConfiguration()
        _ = try ImgproxyEnvironment.apply(variables, to: &imgproxy)
        return {
            $0.imgproxy = imgproxy.imgproxy
            $0.caching.responseMaxAge = imgproxy.caching.responseMaxAge
            $0.limits.maximumSourceBytes = imgproxy.limits.maximumSourceBytes
        }
    }

    static func path(_ origin: TestOrigin) -> String {
        "/unsafe/rs:fill:4:4/plain/" + origin.url("a.jpg").absoluteString
    }

    @Test func byDefaultAYearsMaxAgeWhateverTheSourceSaysAndItsValidators() async throws {
        let origin = try await Self.origin([("Cache-Control", "max-age=1234"), ("Last-Modified", Self.lastModified)])
        try await withServer(origin: origin) { client, origin in
            let (status, headers, _) = try await get(client, Self.path(origin))
            #expect(status == .ok)
            #expect(headers[.cacheControl] == "max-age=31536000, public")
            #expect(headers[.lastModified] == Self.lastModified)
            #expect(headers[.eTag] != nil)
            #expect(headers[.contentSecurityPolicy] == ImageAnswers.contentSecurityPolicy)
            // A hit answers the same (on the event loop or by the router).
            let (_, again, _) = try await get(client, Self.path(origin))
            #expect(again[.cacheControl] == "max-age=31536000, public")
            // The native query keeps following the source.
            let (_, native, _) = try await get(client, imageURI(origin, "a.jpg", "w=4"))
            // (its max-age counts down from the source's 1234 s: no exact value, the test's time is the machine's)
            #expect(native[.cacheControl]?.hasPrefix("public, max-age=12") == true, "\(native[.cacheControl] ?? "")")
        }
    }

    @Test func passthroughFollowsTheSourceAndTTLSetsTheMaxAge() async throws {
        let origin = try await Self.origin([("Cache-Control", "max-age=1234")])
        try await withServer(
            origin: origin, configure: try Self.configure(["IMGPROXY_CACHE_CONTROL_PASSTHROUGH": "true"])
        ) { client, origin in
            let (_, headers, _) = try await get(client, Self.path(origin))
            // The source's max-age, counting down from 1234 s.
            #expect(headers[.cacheControl]?.hasPrefix("max-age=12") == true, "\(headers[.cacheControl] ?? "")")
            #expect(headers[.cacheControl]?.hasSuffix(", public") == true, "\(headers[.cacheControl] ?? "")")
        }
        // withServer stops its origin when it ends: each server gets its own.
        let second = try await Self.origin([("Cache-Control", "max-age=1234")])
        try await withServer(origin: second, configure: try Self.configure(["IMGPROXY_TTL": "600"])) { client, origin in
            let (_, headers, _) = try await get(client, Self.path(origin))
            #expect(headers[.cacheControl] == "max-age=600, public")
        }
    }

    @Test func validatorsCanBeSwitchedOff() async throws {
        let origin = try await Self.origin([("Last-Modified", Self.lastModified)])
        let variables = ["IMGPROXY_USE_ETAG": "false", "IMGPROXY_USE_LAST_MODIFIED": "false"]
        try await withServer(origin: origin, configure: try Self.configure(variables)) { client, origin in
            let (status, headers, _) = try await get(client, Self.path(origin))
            #expect(status == .ok)
            #expect(headers[.eTag] == nil)
            #expect(headers[.lastModified] == nil)
            // Without validators, a conditional request is answered whole.
            let (conditional, _, body) = try await get(
                client, Self.path(origin), headers: [.ifModifiedSince: "Thu, 25 Feb 2021 01:45:00 GMT"])
            #expect(conditional == .ok && !body.isEmpty)
        }
    }

    @Test func bustersChangeTheValidators() async throws {
        let origin = try await Self.origin([("Last-Modified", Self.lastModified)])
        let variables = ["IMGPROXY_ETAG_BUSTER": "buster", "IMGPROXY_LAST_MODIFIED_BUSTER": "2024-01-02T03:04:05Z"]
        try await withServer(origin: origin, configure: try Self.configure(variables)) { client, origin in
            let (_, headers, _) = try await get(client, Self.path(origin))
            let etag = try #require(headers[.eTag])
            #expect(etag.hasPrefix("\"buster/"), "\(etag)")
            #expect(headers[.lastModified] == "Tue, 02 Jan 2024 03:04:05 GMT")
            let (status, _, _) = try await get(client, Self.path(origin), headers: [.ifNoneMatch: etag])
            #expect(status == .notModified)
        }
    }

    @Test func aLastModifiedThatIsNoDateIsNotPassedOn() async throws {
        let origin = try await Self.origin([("Last-Modified", "not-a-time")])
        try await withServer(origin: origin) { client, origin in
            let (status, headers, _) = try await get(client, Self.path(origin))
            #expect(status == .ok && headers[.lastModified] == nil)
        }
    }

    @Test func theCanonicalLinkNamesTheSource() async throws {
        let origin = try await Self.origin([])
        try await withServer(origin: origin, configure: try Self.configure(["IMGPROXY_SET_CANONICAL_HEADER": "true"])) {
            client, origin in
            let (_, headers, _) = try await get(client, Self.path(origin))
            #expect(headers[HTTPField.Name("Link")!] == "<\(origin.url("a.jpg").absoluteString)>; rel=\"canonical\"")
        }
    }

    /// imgproxy's statuses: a source not allowed is 404, one over `IMGPROXY_MAX_SRC_FILE_SIZE` 422, a format
    /// that cannot be written 422; the native query keeps this server's (403, 413, 415).
    @Test func refusalsHaveImgproxysStatuses() async throws {
        let origin = try await Self.origin([])
        try await withServer(
            origin: origin,
            configure: try Self.configure(["IMGPROXY_ALLOWED_SOURCES": "https://images.example.com/"])
        ) { client, origin in
            let (status, _, body) = try await get(client, Self.path(origin))
            #expect(status == .notFound)
            #expect(String(decoding: body, as: UTF8.self).contains("forbidden_source"))
        }
        try await withServer(
            origin: try await Self.origin([]), configure: try Self.configure(["IMGPROXY_MAX_SRC_FILE_SIZE": "1"])
        ) {
            client, origin in
            let imgproxy = try await get(client, Self.path(origin)).status
            let native = try await get(client, imageURI(origin, "a.jpg", "w=4")).status
            #expect(imgproxy == .unprocessableContent && native == .contentTooLarge)
        }
        try await withServer(origin: try await Self.origin([])) { client, origin in
            let imgproxy = try await get(client, Self.path(origin) + "@svg").status
            let native = try await get(client, imageURI(origin, "a.jpg", "format=svg")).status
            #expect(imgproxy == .unprocessableContent && native != .ok)
        }
    }

    /// The stream (`raw`) answers carry the policy too: an SVG passed on runs no script on the image host.
    @Test func rawAnswersCarryTheContentSecurityPolicy() async throws {
        try await withServer { client, origin in
            let (status, headers, _) = try await get(
                client, "/unsafe/raw:1/plain/" + origin.url("rocket.jpg").absoluteString)
            #expect(status == .ok)
            #expect(headers[.contentSecurityPolicy] == ImageAnswers.contentSecurityPolicy)
        }
    }
}
