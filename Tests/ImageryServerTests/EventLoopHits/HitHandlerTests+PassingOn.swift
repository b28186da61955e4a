import Foundation
import NIOCore
import Testing

@testable import ImageryServer

/// What ``HitHandler`` does not answer goes on to the decoder, byte for byte, and the router answers
/// it; hits behind it wait their turn.
extension HitHandlerTests {
    @Test func aMissIsPassedOnWhole() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            let miss = Self.request(
                "/image?url=http%3A%2F%2Forigin%2Fb.jpg&w=64", fields: "Host: imagery\r\nAccept: */*\r\nX-Other: 1\r\n")
            try connection.send(miss)
            #expect(connection.passedOn.bytes == Array(miss.utf8))
            #expect(
                connection.route.requests == ["GET /image?url=http%3A%2F%2Forigin%2Fb.jpg&w=64"]
                    && connection.route.ends == 1)
            #expect(connection.wire.written.isEmpty)
            #expect(fixture.eventLoopHits == 0)
        }
    }

    /// Requests only a route answers, though their text is stored: passed on, one request at a time.
    @Test(arguments: [
        ("Connection: close", "Connection: close\r\n"),
        ("an upgrade", "Connection: upgrade\r\nUpgrade: websocket\r\n"),
        ("an expectation", "Expect: 100-continue\r\n"),
        ("Accept given twice", "Accept: */*\r\nAccept: */*\r\n"),
    ])
    func aStoredTextThatOnlyARouteMayAnswerIsPassedOn(_ description: String, _ fields: String) async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            let request = Self.request(fields: fields)
            try connection.send(request)
            #expect(connection.passedOn.reads == [Array(request.utf8)], "\(description)")
            #expect(connection.route.requests == ["GET \(Self.target)"])
            #expect(connection.wire.written.isEmpty)
        }
    }

    /// Not hits: another route's path, a response gone stale, an imgproxy URL past its `expires`.
    @Test func requestsStorageDoesNotAnswerArePassedOn() async throws {
        try await Self.withStoredHit { fixture, _ in
            fixture.store([1], text: "url=stale", freshUntil: Date().addingTimeInterval(-1))
            fixture.store(
                [2], text: "#/expired", terms: ResponseTerms(expiresAt: Int(Date().timeIntervalSince1970) - 1))
            fixture.store([3], text: "")  // `/health` has no query: the text of `/image` alone, never `/health`'s
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            let targets = ["/image?url=stale", "/expired", "/health", "/metrics"]
            for target in targets {
                try connection.send(Self.request(target))
                try connection.answerRoute()
            }
            #expect(connection.route.requests == targets.map { "GET \($0)" })
            #expect(connection.passedOn.bytes == Array(targets.map { Self.request($0) }.joined().utf8))
            #expect(
                connection.wire.written
                    == Array(repeating: [.routeHead(200), .routeEnd], count: targets.count).flatMap { $0 })
        }
    }

    /// A hit behind a miss waits for the miss's answer: the router answers it, in turn; once every
    /// request passed on is answered, hits are answered here again.
    @Test func pipelinedHitMissHitKeepTheirOrder() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            let miss = "/image?url=other"
            try connection.send(Self.request() + Self.request(miss) + Self.request())
            // The first hit answered; the miss and the hit behind it passed on, one read each.
            #expect(connection.wire.responses().map(\.body) == [Self.body])
            #expect(connection.passedOn.reads == [Array(Self.request(miss).utf8), Array(Self.request().utf8)])
            #expect(connection.route.requests == ["GET \(miss)", "GET \(Self.target)"])
            try connection.answerRoute(.notFound)
            // Still one answer to come from the router: a hit now waits for it as well.
            try connection.send(Self.request())
            #expect(connection.route.requests.count == 3)
            try connection.answerRoute()
            try connection.answerRoute()
            try connection.send(Self.request())
            let answers = connection.wire.written.compactMap { written -> String? in
                switch written {
                case .bytes(let bytes): bytes.starts(with: "HTTP/1.1 ".utf8) ? "hit" : nil  // a head (its body follows)
                case .routeHead(let status): "route \(status)"
                case .routeEnd: "end"
                case .file: "file"
                }
            }
            #expect(answers == ["hit", "route 404", "end", "route 200", "end", "route 200", "end", "hit"])
            #expect(fixture.eventLoopHits == 2)
        }
    }

    /// A request whose bytes the handler does not read (a body, another method, HTTP/1.0) hands the
    /// connection to the decoder for good: every byte from there on is passed on as it came, hits too.
    @Test(arguments: [
        ("POST with a body", "POST /image?url=a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
        ("GET with a body", "GET \(target) HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"),
        ("a chunked body", "GET \(target) HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
        ("HTTP/1.0", "GET \(target) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"),
        ("DELETE", "DELETE \(target) HTTP/1.1\r\n\r\n"),
    ])
    func aRequestItDoesNotReadHandsTheConnectionToTheDecoder(_ description: String, _ request: String) async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture)
            defer { connection.finish() }
            try connection.send(Self.request() + request + Self.request())
            #expect(connection.wire.responses().map(\.body) == [Self.body], "\(description)")
            // Passed on from the request it does not read: it and what follows, in the one read.
            #expect(connection.passedOn.reads == [Array((request + Self.request()).utf8)])
            #expect(connection.route.requests.count == 2 && connection.route.ends == 2)
            try connection.answerRoute()
            try connection.answerRoute()
            // Every answer ended, and still the decoder's: the next hit, split in two, goes there as it came.
            let next = Array(Self.request().utf8)
            try connection.send(Array(next[..<5]))
            try connection.send(Array(next[5...]))
            #expect(connection.passedOn.reads.suffix(2) == [Array(next[..<5]), Array(next[5...])])
            #expect(connection.route.requests.count == 3)
            #expect(connection.wire.responses().count == 1)
            #expect(fixture.eventLoopHits == 1)
        }
    }
}
