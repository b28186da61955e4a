import Foundation
import NIOCore
import Testing

@testable import ImageryServer

/// The idle timeout ``HitHandler`` keeps for the server: a connection with no whole request and no
/// answer ending for that long is closed, never while a route answers a request read whole.
///
/// The checks run on the `EmbeddedEventLoop`'s clock (``HitChannel/runIdleChecks()``), with a
/// timeout of 0: a check finds the connection idle whenever it runs, so what is asserted is which
/// states close it and which do not, never how long anything took.
extension HitHandlerTests {
    @Test func anIdleConnectionIsClosed() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture, idleTimeout: .zero)
            defer { connection.finish() }
            #expect(connection.channel.isActive)
            connection.runIdleChecks()
            #expect(!connection.channel.isActive)
        }
    }

    @Test func aConnectionAfterItsHitsIsClosedWhenIdle() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture, idleTimeout: .zero)
            defer { connection.finish() }
            try connection.send(Self.request() + Self.request())
            #expect(connection.wire.responses().count == 2)
            connection.runIdleChecks()
            #expect(!connection.channel.isActive)
        }
    }

    /// A head dripping in, byte by byte, is no activity: closed.
    @Test func aDrippingHeadIsClosed() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture, idleTimeout: .zero)
            defer { connection.finish() }
            for byte in Self.request().utf8.prefix(10) { try connection.send([byte]) }
            connection.runIdleChecks()
            #expect(!connection.channel.isActive)
            #expect(connection.wire.written.isEmpty && connection.passedOn.reads.isEmpty)
        }
    }

    /// While the router answers a request read whole, the connection is not idle, however long it
    /// takes; once the answer has ended, it is checked again.
    @Test func aConnectionIsNotClosedWhileARouteAnswers() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture, idleTimeout: .zero)
            defer { connection.finish() }
            try connection.send(Self.request("/image?url=miss"))
            #expect(connection.route.requests.count == 1)
            connection.runIdleChecks()
            connection.runIdleChecks()
            #expect(connection.channel.isActive)
            try connection.answerRoute()
            connection.runIdleChecks()
            #expect(!connection.channel.isActive)
        }
    }

    /// A request passed on whose body is still to come (its head read, not its end) is a connection
    /// still being read: idle when nothing comes.
    @Test func aRequestBodyThatStopsComingIsClosed() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture, idleTimeout: .zero)
            defer { connection.finish() }
            try connection.send("POST /image HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc")
            #expect(connection.route.requests.count == 1 && connection.route.ends == 0)
            connection.runIdleChecks()
            #expect(!connection.channel.isActive)
        }
    }

    /// Without an idle timeout nothing is scheduled: the connection stays open.
    @Test func withoutAnIdleTimeoutTheConnectionStaysOpen() async throws {
        try await Self.withStoredHit { fixture, _ in
            let connection = try HitChannel(fixture, idleTimeout: nil)
            defer { connection.finish() }
            try connection.send(Array(Self.request().utf8.prefix(10)))
            connection.runIdleChecks()
            #expect(connection.channel.isActive)
        }
    }
}
