import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageryServer
import ImageryTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Slow and hostile clients against the real server on 127.0.0.1, through raw sockets.
@Suite("Slow clients")
struct SlowClientTests {
    /// Real time must pass here (the server's idle timeout, 1 s): the test waits for every dripping
    /// connection to be closed, however long a loaded machine takes, answering others meanwhile. Its one
    /// bound on time is one no delay can break: none is closed before the timeout has run from its
    /// connection (measured from before the connections were made, a delay only lengthens it).
    @Test func aClientDrippingItsHeadersIsClosedAndDoesNotHoldUpOthers() async throws {
        try await withServer(.live, configure: { $0.listener.idleTimeout = .seconds(1) }) { client, _ in
            let port = try #require(client.port)
            let beforeConnecting = ContinuousClock.now
            let drippers = try (0..<8).map { _ in try RawConnection(port: port) }
            for dripper in drippers { try dripper.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n") }
            var closed = Set<Int>()
            var firstClosed: ContinuousClock.Instant?
            try await waitUntil("every dripping connection closed", every: .milliseconds(100)) {
                for (index, dripper) in drippers.enumerated() where !closed.contains(index) {
                    if (try? dripper.send("X-Drip: \(index)\r\n")) == nil || dripper.isClosedByPeer() {
                        closed.insert(index)
                        firstClosed = firstClosed ?? ContinuousClock.now
                    }
                }
                // Others are answered meanwhile (each on a connection of its own, made now).
                let other = try RawConnection(port: port)
                try other.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                #expect(try await other.receive().hasPrefix("HTTP/1.1 200"))
                return closed.count == drippers.count
            }
            let waited = try #require(firstClosed) - beforeConnecting
            // (Less 50 ms: the server's clock and this one are two readings of monotonic time.)
            #expect(waited >= .milliseconds(950), "not before the idle timeout: the first closed after \(waited)")
        }
    }

    static let clientClosed = "imagery_requests_total{route=\"/image\",status=\"499\"}"

    /// A download held by the origin after its head and 1 000 bytes (it goes on only if released: it is
    /// in flight for as long as the test needs): its announced size is reserved; the client leaves.
    @Test func aClientThatDisconnectsMidRequestFreesItsBudgetAndStopsTheFetch() async throws {
        try await withServer(.live) { client, origin in
            let port = try #require(client.port)
            let uri = imageURI(origin, "chelsea.png?held_at=1000&held=never", "w=64")
            let connection = try RawConnection(port: port)
            try connection.send("GET \(uri) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let held = try await waitFor("the download's reservation") { () async throws -> Double? in
                let held = try await metrics(client)["imagery_inflight_memory_bytes"] ?? 0
                return held > 0 ? held : nil
            }
            #expect(held >= 240_000, "the body's announced size is reserved while it streams")
            connection.close()
            let counted = try await waitFor("the budget given back, the download aborted, the answer counted") {
                () async throws -> [String: Double]? in
                let counted = try await metrics(client)
                let settled =
                    counted["imagery_inflight_memory_bytes"] == 0 && origin.abortedCount == 1
                    && counted[Self.clientClosed] != nil
                return settled ? counted : nil
            }
            // Its answer, which nobody reads, is counted as the client's leaving (nginx's 499), not as a server error.
            #expect(
                counted[Self.clientClosed] == 1, "\(counted.keys.filter { $0.hasPrefix("imagery_requests_total") })")
            #expect(counted["imagery_requests_total{route=\"/image\",status=\"500\"}"] == nil)
            #expect(counted["imagery_origin_fetches_in_flight"] == 0)
            #expect(origin.abortedCount == 1, "the download is aborted, not read to its end")
        }
    }

    /// The request timeout (1 s) against an origin that holds its answer until the test ends: the 504
    /// can only come from the timeout. Then the server still answers: a response stored on disk by an
    /// earlier run (with a request timeout that is a hang guard), which no timeout applies to.
    @Test func anImageNotReadyWithinTheRequestTimeoutIs504AndItsWorkIsCancelled() async throws {
        try await withTemporaryDirectory { directory in
            let origin = try await TestOrigin.serving(directory: Fixtures.directory)
            let quick = imageURI(origin, "chelsea.webp", "w=64")
            let stored = Box<Data>()
            try await serve(.live, origin: origin, configure: { $0.caching.directory = directory }) { client in
                let (status, _, body) = try await get(client, quick)
                #expect(status == .ok)
                stored.value = body
            }
            let configure = { (configuration: inout ServerConfiguration) in
                (configuration.caching.directory, configuration.limits.requestTimeout) = (directory, .seconds(1))
            }
            try await serve(.live, origin: origin, configure: configure) { client in
                let (status, headers, body) = try await get(client, imageURI(origin, "chelsea.png?held=never", "w=64"))
                #expect(status == .gatewayTimeout)
                #expect(headers[.cacheControl] == "no-store")
                #expect((try? JSONDecoder().decode(ErrorBody.self, from: body))?.error == "timeout")
                // Every download that started is aborted (the timeout may come before the download starts:
                // then there is none).
                let started = { origin.requestCount(path: "/chelsea.png") }
                let counted = try await waitFor("the work given up") { () async throws -> [String: Double]? in
                    let counted = try await metrics(client)
                    let settled = counted["imagery_inflight_memory_bytes"] == 0 && origin.abortedCount == started()
                    return settled ? counted : nil
                }
                #expect(counted["imagery_origin_fetches_in_flight"] == 0)
                #expect(started() <= 1, "the download is not tried again")
                let again = try await get(client, quick)
                #expect(again.status == .ok && again.body == stored.value)
            }
            #expect(origin.requestCount(path: "/chelsea.webp") == 1, "answered from disk, not made again")
            try await origin.shutdown()
        }
    }

    @Test func oversizedHeadersAreRefused() async throws {
        try await withServer(.live, configure: { $0.listener.maximumHeaderBytes = 4096 }) { client, _ in
            let connection = try RawConnection(port: try #require(client.port))
            try connection.send(
                "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "a", count: 8192))\r\n\r\n")
            let answer = try await connection.receive()
            #expect(answer.hasPrefix("HTTP/1.1 4"), "\(answer.prefix(40))")
        }
    }
}

/// A TCP connection to 127.0.0.1 that sends what it is told, byte for byte.
final class RawConnection: Sendable {
    private let descriptor: Int32
    private let closed = Mutex(false)

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard descriptor >= 0, connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close() }

    /// Closes the connection (once).
    func close() {
        let wasClosed = closed.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        guard !wasClosed else { return }
        Glibc.close(descriptor)
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw POSIXError(.EPIPE) }
    }

    /// Whether the server has closed the connection (a read would return end of file or an error).
    func isClosedByPeer() -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
    }

    /// The bytes the server sends next, within `wait` (a hang guard; empty: nothing came, or the
    /// connection closed).
    func receiveBytes(within wait: Duration = hangGuard) async throws -> Data {
        let descriptor = self.descriptor
        let milliseconds = Int32(
            clamping: wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
        return try await runBlocking {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, max(milliseconds, 0)) > 0 else { return Data() }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            return count > 0 ? Data(buffer.prefix(count)) : Data()
        }
    }

    /// What the server sends next, up to 64 KB (waited for on a thread of its own, under the hang
    /// guard: the server in this process needs the cooperative pool to answer); empty when the
    /// connection closed.
    func receive() async throws -> String {
        String(decoding: try await receiveBytes(), as: UTF8.self)
    }
}
