import Foundation
import NIOCore
import Testing

@testable import ImageryServer

/// Heads in pieces: whatever the reads, the same answers and the same bytes passed on.
extension HitHandlerTests {
    /// The connection's bytes given in reads that end at `offsets`: what is written (answers, with
    /// their `Date` taken out) and what is passed on.
    static func outcome(of bytes: [UInt8], splitAt offsets: [Int], fixture: StoredHitsFixture) throws -> (
        written: [String], passedOn: [UInt8]
    ) {
        let connection = try HitChannel(fixture)
        defer { connection.finish() }
        for (start, end) in zip([0] + offsets, offsets + [bytes.count]) where end > start {
            try connection.send(Array(bytes[start..<end]))
        }
        let written = connection.wire.responses(toHEAD: []).map {
            $0.timelessFields.joined(separator: "\n") + "\n\n" + "\($0.body)"
        }
        return (written, connection.passedOn.bytes)
    }

    @Test func aHeadSplitAtEveryOffsetIsAnsweredAsInOneRead() async throws {
        try await Self.withStoredHit { fixture, _ in
            let bytes = Array(
                Self.request(fields: "Host: imagery\r\nUser-Agent: test/1.0\r\nIf-None-Match: \"other\"\r\n").utf8)
            let whole = try Self.outcome(of: bytes, splitAt: [], fixture: fixture)
            try #require(whole.written.count == 1 && whole.passedOn.isEmpty)
            for offset in 1..<bytes.count {
                let split = try Self.outcome(of: bytes, splitAt: [offset], fixture: fixture)
                #expect(split.written == whole.written && split.passedOn.isEmpty, "split at \(offset)")
            }
            let byteByByte = try Self.outcome(of: bytes, splitAt: Array(1..<bytes.count), fixture: fixture)
            #expect(byteByByte.written == whole.written, "a byte a read")
        }
    }

    /// Two hits and a miss between them, in reads split at every offset: the answers and the bytes
    /// passed on are those of one read.
    @Test func pipelinedRequestsSplitAtEveryOffsetAreAnsweredAsInOneRead() async throws {
        try await Self.withStoredHit { fixture, _ in
            let bytes = Array((Self.request() + Self.request("/image?url=miss") + Self.request()).utf8)
            let whole = try Self.outcome(of: bytes, splitAt: [], fixture: fixture)
            #expect(whole.written.count == 1)
            #expect(whole.passedOn == Array((Self.request("/image?url=miss") + Self.request()).utf8))
            for offset in 1..<bytes.count {
                let split = try Self.outcome(of: bytes, splitAt: [offset], fixture: fixture)
                #expect(split.written == whole.written && split.passedOn == whole.passedOn, "split at \(offset)")
            }
        }
    }

    /// A request whose head it cannot read, split: what came before it is held until the head is
    /// whole, then everything is passed on as one.
    @Test func aSplitRequestItDoesNotReadIsPassedOnWhole() async throws {
        try await Self.withStoredHit { fixture, _ in
            let post = Array("POST /image?url=a HTTP/1.1\r\nContent-Length: 2\r\n\r\nok".utf8)
            for offset in 1..<post.count {
                let connection = try HitChannel(fixture)
                defer { connection.finish() }
                try connection.send(Array(post[..<offset]))
                try connection.send(Array(post[offset...]))
                #expect(connection.passedOn.bytes == post, "split at \(offset)")
                #expect(
                    connection.route.requests == ["POST /image?url=a"] && connection.route.bodyBytes == 2,
                    "split at \(offset)")
            }
        }
    }

    /// Bytes past the limit of a head with no end: the decoder's from there on (its limits and errors hold).
    @Test func aHeadPastTheLimitIsPassedOn() async throws {
        try await Self.withStoredHit { fixture, _ in
            let limits = RequestHead.Limits(maximumHeadBytes: 64, maximumFieldBytes: 32, maximumFieldCount: 4)
            let connection = try HitChannel(fixture, limits: limits)
            defer { connection.finish() }
            let start = Array("GET /image?url=".utf8)
            try connection.send(start)
            try connection.send(Array(repeating: UInt8(ascii: "a"), count: 64 - start.count))
            #expect(connection.passedOn.reads.isEmpty)  // held: the start of a head
            try connection.send([UInt8(ascii: "a")])
            #expect(connection.passedOn.reads.map(\.count) == [65])  // the decoder's now, all of it
            try connection.send(Array(" HTTP/1.1\r\n\r\n".utf8) + Array(Self.request().utf8))
            #expect(connection.route.requests.count == 2)  // read by the decoder, the hit behind it too
            #expect(connection.wire.written.isEmpty)
        }
    }
}
