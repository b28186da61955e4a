import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Imagery
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Sends a request to the instance that owns its source, so that every spelling of a source (a
/// percent-encoded `url=`, a thumbor URL, imgproxy's plain and base64 forms) meets on one instance and
/// costs one origin fetch in the whole cluster, whatever the load balancer hashed.
///
/// The owner is the first instance of the source's key on nginx's ring (``SourceRing``), the key the
/// caches use (the source URL, decoded and normalised): for a source nginx reads as it is written (a
/// plain `url=`), nginx already chose the owner and nothing is forwarded. A forwarded request carries
/// ``header`` and is never forwarded again (one hop; no loops, whatever the instances' rings say).
/// An owner that cannot be reached (refused, timed out) is passed over for ``passOverSeconds``, as nginx
/// passes over a failed upstream, and the next instance on the ring is asked; when that is this
/// instance, or none answers after two, the request is served here.
final class OwnerForwarding: Sendable {
    /// Marks a forwarded request (its value: the instance that forwarded it).
    static let header = HTTPField.Name("X-Imagery-Forwarded")!
    static let passOverSeconds = 10
    /// The most owners asked before the request is served here (nginx's `proxy_next_upstream_tries 2`).
    static let maximumTries = 2

    let ring: SourceRing
    let this: String
    private let client: HTTPClient
    private let requestTimeout: Duration
    private let passedOver = Mutex<[String: ContinuousClock.Instant]>([:])
    private let metrics: ServerMetrics?
    private let logger: Logger
    /// Whose instant says when a passed-over owner is asked again.
    private let time: TimeSource

    /// - Parameters:
    ///   - instances: Every instance's `HOST:PORT`, as nginx's `server` lines write them.
    ///   - this: This instance's `HOST:PORT` among them.
    ///   - time: The clock of ``passOverSeconds`` (``ServerConfiguration/time``).
    init(
        instances: [String], this: String, requestTimeout: Duration, metrics: ServerMetrics?, logger: Logger,
        time: TimeSource = .system
    ) {
        ring = SourceRing(instances: instances)
        self.this = this
        self.time = time
        self.requestTimeout = requestTimeout
        self.metrics = metrics
        self.logger = logger
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(
            connect: .seconds(1), read: .seconds(Int64(requestTimeout.components.seconds) + 5))
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        // As many connections to an owner as requests go there at once: the client's default (8 a
        // host) made a 64-request burst wait for the pool past the connect timeout, and the owner,
        // busy but well, was passed over (17 of 29 forwards; their sources fetched twice).
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1024
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    func shutdown() async throws { try await client.shutdown() }

    /// The owner's answer to `request`, whose source's cache key is `key`; `nil` when it is to be
    /// served here (this instance owns it, it was forwarded already, or no owner answered).
    func response(to request: Request, key: some StringProtocol) async -> Response? {
        guard request.headers[Self.header] == nil else { return nil }
        var tries = 0
        for owner in ring.owners(of: key) {
            if owner == this || tries == Self.maximumTries { return nil }
            if isPassedOver(owner) { continue }
            tries += 1
            do {
                let response = try await forward(request, to: owner)
                metrics?.clusterForward("forwarded")
                return response
            } catch {
                passOver(owner)
                metrics?.clusterForward("owner_failed")
                logger.warning(
                    "the owner of a source did not answer; the next on the ring is asked",
                    metadata: [
                        "owner": .string(owner), "error": .string(String(describing: error)),
                    ])
            }
        }
        return nil
    }

    private func forward(_ request: Request, to owner: String) async throws -> Response {
        var outgoing = HTTPClientRequest(url: "http://\(owner)\(request.uri.description)")
        outgoing.method = request.method == .head ? .HEAD : .GET
        for field in request.headers where Self.forwardedRequestFields.contains(field.name) {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        outgoing.headers.replaceOrAdd(name: Self.header.rawName, value: this)
        let answer = try await client.execute(outgoing, timeout: .seconds(Int64(requestTimeout.components.seconds) + 5))
        var headers = HTTPFields()
        for (name, value) in answer.headers {
            guard let field = HTTPField.Name(name), !Self.hopByHopFields.contains(field) else { continue }
            headers.append(HTTPField(name: field, value: value))
        }
        let length = answer.headers.first(name: "content-length").flatMap(Int.init)
        let body = answer.body
        return Response(
            status: HTTPResponse.Status(code: Int(answer.status.code)), headers: headers,
            body: ResponseBody(contentLength: length) { writer in
                for try await buffer in body { try await writer.write(buffer) }
                try await writer.finish(nil)
            }
        )
    }

    private func isPassedOver(_ owner: String) -> Bool {
        passedOver.withLock { table in
            guard let until = table[owner] else { return false }
            if time.instant() < until { return true }
            table[owner] = nil
            return false
        }
    }

    private func passOver(_ owner: String) {
        passedOver.withLock { $0[owner] = time.instant() + .seconds(Self.passOverSeconds) }
    }

    /// What the owner needs to answer as this instance would: negotiation and revalidation.
    static let forwardedRequestFields: Set<HTTPField.Name> = [
        .accept, .ifNoneMatch, .ifModifiedSince, .userAgent, .init("X-Forwarded-For")!, .init("Referer")!,
    ]
    /// Fields of one connection, not of the answer.
    static let hopByHopFields: Set<HTTPField.Name> = [
        .connection, .transferEncoding, .contentLength, .init("Keep-Alive")!, .date, .server,
    ]
}
