import Foundation
import HTTPTypes
import Imagery
import NIOCore
import NIOEmbedded
import Testing

@testable import ImageryServer

/// ``HitHandler`` in an `EmbeddedChannel` over result storage in memory (``HitChannel``): hits answered
/// with the stored bytes, everything else passed on whole, in order, to the decoder and the router.
@Suite struct HitHandlerTests {
    static let body: [UInt8] =
        Array("stored image bytes \u{0}\u{1}\u{2}\r\n\r\nHTTP/1.1 200 OK".utf8) + (0...255).map { UInt8($0) }
    static let text = "url=http%3A%2F%2Forigin%2Fa.jpg&w=64"
    static let target = "/image?" + text

    /// `GET target` (or `method`) with `fields`, as a client writes it.
    static func request(_ target: String = target, method: String = "GET", fields: String = "Host: imagery\r\n")
        -> String
    {
        "\(method) \(target) HTTP/1.1\r\n\(fields)\r\n"
    }

    /// Runs `body` with result storage holding ``body`` for ``text``.
    static func withStoredHit(
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (StoredHitsFixture, StoredResponse) throws -> Void
    ) async throws {
        let fixture = try StoredHitsFixture(configure: configure)
        let stored = fixture.store(Self.body, text: Self.text)
        do {
            try body(fixture, stored)
        } catch {
            try await fixture.shutdown()
            throw error
        }
        try await fixture.shutdown()
    }

    // MARK: - Hits

    @Test func aHitIsAnsweredWithTheStoredHeadAndBody() async throws {
        try await Self.withStoredHit { fixture, stored in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request())
            let responses = connection.wire.responses()
            try #require(responses.count == 1, "\(connection.wire.written)")
            let response = responses[0]
            #expect(response.statusLine == "HTTP/1.1 200 OK")
            #expect(response.body == Self.body)
            // The route's fields, in the route's order, then the server's.
            let routeFields = fixture.routeFields(of: stored)
            #expect(Array(response.timelessFields.prefix(routeFields.count)) == routeFields)
            #expect(
                Array(response.timelessFields.dropFirst(routeFields.count)) == [
                    "Content-Length: \(Self.body.count)", "Server: imagery",
                ])
            #expect(response.field("etag") == stored.etag && response.field("content-type") == "image/jpeg")
            #expect(response.field("date").flatMap(HTTPDate.parse) != nil)
            // Answered here: nothing passed on, nothing routed; counted, and logged as a route's answer is.
            #expect(connection.passedOn.reads.isEmpty && connection.route.requests.isEmpty)
            #expect(fixture.eventLoopHits == 1)
            #expect(fixture.log.lines(withMetadata: "path", "/image") == ["request"])
            #expect(fixture.log.lines(withMetadata: "bytes", String(Self.body.count)) == ["request"])
            #expect(connection.channel.isActive)
        }
    }

    @Test func aHeadRequestIsAnsweredWithTheHeadAlone() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request(method: "HEAD") + Self.request())
            let responses = connection.wire.responses(toHEAD: [0])
            try #require(responses.count == 2)
            #expect(responses[0].statusLine == "HTTP/1.1 200 OK" && responses[0].body.isEmpty)
            #expect(responses[0].field("content-length") == String(Self.body.count))
            #expect(responses[0].timelessFields == responses[1].timelessFields)
            #expect(responses[1].body == Self.body)
            #expect(fixture.log.lines(withMetadata: "method", "HEAD") == ["request"])
        }
    }

    /// An `If-None-Match` value, made from the stored response's ETag.
    enum IfNoneMatch: CaseIterable, Sendable {
        case etag, weakETag, any, listWithETag, otherETag

        func value(for etag: String) -> String {
            switch self {
            case .etag: etag
            case .weakETag: "W/" + etag
            case .any: "*"
            case .listWithETag: "\"other\", " + etag
            case .otherETag: "\"other\""
            }
        }

        var matches: Bool { self != .otherETag }
    }

    @Test(arguments: IfNoneMatch.allCases)
    func ifNoneMatchIsAnswered304WhenItMatches(_ condition: IfNoneMatch) async throws {
        try await Self.withStoredHit { fixture, stored in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request(fields: "If-None-Match: \(condition.value(for: stored.etag))\r\n"))
            let responses = connection.wire.responses()
            try #require(responses.count == 1)
            if condition.matches {
                #expect(responses[0].statusLine == "HTTP/1.1 304 Not Modified")
                #expect(responses[0].body.isEmpty && responses[0].field("content-length") == nil)
                #expect(responses[0].field("etag") == stored.etag)
                #expect(fixture.log.lines(withMetadata: "status", "304") == ["request"])
            } else {
                #expect(responses[0].statusLine == "HTTP/1.1 200 OK" && responses[0].body == Self.body)
            }
            #expect(connection.passedOn.reads.isEmpty)
        }
    }

    /// The route's answer to a conditional request, field for field.
    @Test func aConditionalAnswerHasTheRoutesFields() async throws {
        try await Self.withStoredHit { fixture, stored in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request(fields: "If-None-Match: \(stored.etag)\r\n"))
            let response = try #require(connection.wire.responses().first)
            let routeFields = fixture.routeFields(of: stored, requestHeaders: [.ifNoneMatch: stored.etag])
            #expect(response.timelessFields == routeFields + ["Server: imagery"])
        }
    }

    @Test func pipelinedHitsAreAnsweredInOrderInOneFlush() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request() + Self.request(method: "HEAD") + Self.request())
            let responses = connection.wire.responses(toHEAD: [1])
            #expect(responses.map(\.body) == [Self.body, [], Self.body])
            #expect(fixture.eventLoopHits == 3)
            #expect(connection.passedOn.reads.isEmpty)
        }
    }

    /// Memory holds the response for one `Accept`: the text with another is another request.
    @Test func aHitIsFoundByItsTextAndAccept() async throws {
        try await Self.withStoredHit { fixture, _ in
            fixture.store([1, 2, 3], text: Self.text, accept: "image/webp,*/*")
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request(fields: "Accept: image/webp,*/*\r\n") + Self.request())
            #expect(connection.wire.responses().map(\.body) == [[1, 2, 3], Self.body])
            try connection.send(Self.request(fields: "Accept: image/avif\r\n"))
            #expect(connection.route.requests == ["GET \(Self.target)"])
        }
    }

    /// imgproxy's and thumbor's paths are texts of their own (`#` + the path), when those syntaxes are on.
    @Test(arguments: [true, false])
    func pathSyntaxesAreHitsWhenTheyAreOn(_ on: Bool) async throws {
        try await Self.withStoredHit(configure: {
            $0.imgproxy.enabled = on
            $0.thumbor.enabled = on
        }) { fixture, _ in
            let path = "/_/w:64/plain/http://origin/a.jpg"
            fixture.store([7, 7], text: "#" + path)
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request(path))
            #expect(connection.wire.responses().map(\.body) == (on ? [[7, 7]] : []))
            #expect(connection.route.requests == (on ? [] : ["GET \(path)"]))
        }
    }
}
