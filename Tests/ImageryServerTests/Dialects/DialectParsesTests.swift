import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryServer

/// Each dialect reads a request once (``Dialect``): a thumbor or imgproxy path is split into its parts
/// once, a query decoded once, whatever the request asks for (an image, `/info`, thumbor's `meta/`)
/// and what its text says of the response (max-age, expiry, `Content-Disposition`); a request written
/// as one answered before is not read at all. The router is called in the test's task, so the
/// counter (``DialectParses``) sees every parse the request causes.
@Suite("Dialects: one parse per request")
struct DialectParsesTests {
    /// `uri` requested with a counter: its answer and the parses it caused.
    static func parses(_ client: any TestClientProtocol, _ uri: String) async throws -> (
        status: HTTPResponse.Status, headers: HTTPFields, body: Data, parses: Int
    ) {
        let counter = DialectParses.Counter()
        let answer = try await DialectParses.$counter.withValue(counter) { try await get(client, uri) }
        return (answer.status, answer.headers, answer.body, counter.value)
    }

    @Test func eachSyntaxIsReadOnceAndAHitNotAtAll() async throws {
        try await withServer(.router) { client, origin in
            let source = ServerThumborTests.source(origin, "rocket.jpg")
            let thumbor = try await Self.parses(client, "/unsafe/50x50/filters:max_age(60)/\(source)")
            #expect(thumbor.status == .ok)
            // max_age(60), from the path read once (plus the source's age, as for every max-age sent)
            let age = Int(thumbor.headers[.age] ?? "0") ?? 0
            #expect(thumbor.headers[.cacheControl]?.contains("max-age=\(60 + age)") == true)
            #expect(thumbor.parses == 1)
            #expect(try await Self.parses(client, "/unsafe/50x50/filters:max_age(60)/\(source)").parses == 0)

            let meta = try await Self.parses(client, "/unsafe/meta/50x50/\(source)?callback=show")
            #expect(meta.status == .ok)
            #expect(String(decoding: meta.body, as: UTF8.self).hasPrefix("show("))
            // the path, and the query for its callback
            #expect(meta.parses == 2)

            let imgproxyPath =
                "/_/exp:4102444800/fn:small/rs:fit:50:50/plain/\(origin.url("rocket.jpg").absoluteString)"
            let imgproxy = try await Self.parses(client, imgproxyPath)
            #expect(imgproxy.status == .ok)
            #expect(imgproxy.headers[.contentDisposition] == "inline; filename=\"small.jpg\"")
            #expect(imgproxy.parses == 1)
            let again = try await Self.parses(client, imgproxyPath)
            #expect(again.headers[.contentDisposition] == "inline; filename=\"small.jpg\"")
            #expect(again.parses == 0)

            let native = try await Self.parses(client, imageURI(origin, "rocket.jpg", "w=50"))
            #expect(native.status == .ok)
            #expect(native.parses == 1)
            #expect(try await Self.parses(client, imageURI(origin, "rocket.jpg", "w=50")).parses == 0)
            let info = try await Self.parses(
                client, imageURI(origin, "rocket.jpg").replacingOccurrences(of: "/image", with: "/info"))
            #expect(info.status == .ok)
            #expect(info.parses == 1)
        }
    }

    /// A request with a skipped filter or a refused one is read once too.
    @Test func skippedAndRefusedRequestsAreReadOnce() async throws {
        try await withServer(.router) { client, origin in
            let source = ServerThumborTests.source(origin, "rocket.jpg")
            let skipped = try await Self.parses(client, "/unsafe/50x50/filters:sharpen()/\(source)")
            #expect(skipped.status == .ok)
            #expect(skipped.headers[HTTPField.Name(ImageAnswers.skippedFiltersHeader)!] == "sharpen")
            #expect(skipped.parses == 1)
            let refused = try await Self.parses(client, imageURI(origin, "rocket.jpg", "w=wide"))
            #expect(refused.status == .badRequest)
            #expect(refused.parses == 1)
            let expired = try await Self.parses(client, "/_/exp:1000/plain/\(origin.url("rocket.jpg").absoluteString)")
            #expect(expired.status == .notFound)
            #expect(expired.parses == 1)
            #expect(try await Self.parses(client, "/nothing/here").status == .notFound)
        }
    }
}
