import Foundation
import Imagery
import ImageryHTTP
import ImageryS3
import Synchronization

/// Keeps the proxy from becoming a relay into private networks: a source URL
/// (and every redirect) must be http(s), on an allowed host, and resolve only
/// to public addresses, unless the operator allowed its host explicitly.
///
/// DNS rebinding (a name that resolves to a public address for the check and to
/// a private one a moment later, for the connection) is closed: ``check(_:)``
/// returns the address it checked and the loader connects to it for `http`
/// (``HTTPDataLoader/Configuration/validateURL``). `https` connects by name, and
/// a rebound private address cannot present a certificate for that name.
///
/// `s3://BUCKET/KEY` sources are read with the server's S3 credentials, so only from the buckets
/// the operator listed (``s3SourceBuckets``): an open `s3://` would hand anyone every bucket those
/// credentials can read.
///
/// Every address is judged by ``IPAddress/isPublic``, which unwraps each IPv6 form that carries an
/// IPv4 address (6to4, Teredo, NAT64, mapped, compatible, ISATAP) before it decides. The name's
/// lookup has the origin's time limit (``lookupTimeout``): a name that does not resolve in time is a
/// 504, not a request holding its connection and fetch slot for the resolver's own retries.
package struct SourceGuard: Sendable {
    /// Resolves a host and port to addresses (`[]`: it does not resolve).
    package typealias Resolver = @Sendable (_ host: String, _ port: Int) async throws -> [IPAddress]

    let allowedHosts: [String]
    let privateNetworkHosts: [String]
    var s3SourceBuckets: [String] = []
    /// The most time a name's lookup may take; the origin's timeout.
    var lookupTimeout: Duration = .seconds(10)
    /// How names are resolved: the system's resolver (`getaddrinfo`) unless a test gives another.
    var resolver: Resolver = SourceGuard.resolve

    package init(
        allowedHosts: [String], privateNetworkHosts: [String], s3SourceBuckets: [String] = [],
        lookupTimeout: Duration = .seconds(10), resolver: @escaping Resolver = SourceGuard.resolve
    ) {
        self.allowedHosts = allowedHosts
        self.privateNetworkHosts = privateNetworkHosts
        self.s3SourceBuckets = s3SourceBuckets
        self.lookupTimeout = lookupTimeout
        self.resolver = resolver
    }

    /// Throws a 403 ``ServerError`` if `url` may not be fetched; otherwise returns the
    /// checked address to connect to (`nil`: connect by name, for an IP literal or a host
    /// the operator allowed into private networks).
    package func check(_ url: URL) async throws -> String? {
        let (bareHost, port) = try Self.endpoint(of: url)
        if url.scheme?.lowercased() == "s3" {
            guard s3SourceBuckets.contains(bareHost) else {
                throw ServerError(
                    .forbidden, "forbidden_source",
                    "the S3 bucket \(bareHost) is not one this server reads sources from")
            }
            return nil
        }
        if !allowedHosts.isEmpty, !Self.matches(bareHost, allowedHosts) {
            throw ServerError(
                .forbidden, "forbidden_source", "the source host \(bareHost) is not on this server's allow-list")
        }
        if Self.matches(bareHost, privateNetworkHosts) { return nil }
        let addresses = try await lookUp(bareHost, port: port)
        guard let first = addresses.first else {
            throw ServerError(.badGateway, "origin_unreachable", "the source host \(bareHost) does not resolve")
        }
        if let address = addresses.first(where: { !$0.isPublic }) {
            throw ServerError(
                .forbidden, "forbidden_source",
                "the source host \(bareHost) resolves to a non-public address (\(address)); this server does not fetch from private networks"
            )
        }
        return IPAddress(bareHost) == nil ? first.description : nil
    }

    /// The host (lower-cased, without an IPv6 literal's brackets) and port an http(s) `url` connects
    /// to; for `s3://BUCKET/KEY`, the bucket (and 443).
    /// - Throws: a 400 ``ServerError`` for any other URL.
    package static func endpoint(of url: URL) throws -> (host: String, port: Int) {
        if url.scheme?.lowercased() == "s3" {
            guard let (bucket, _) = S3DataLoader.location(of: url) else {
                throw ServerError.badParameter("an S3 source is s3://BUCKET/KEY")
            }
            return (bucket, 443)
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased(), !host.isEmpty
        else { throw ServerError.badParameter("url must be an absolute http, https or s3 URL") }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        guard !bareHost.isEmpty, (1...65535).contains(port) else {
            throw ServerError.badParameter("url must be an absolute http or https URL with a port from 1 to 65535")
        }
        return (bareHost, port)
    }

    /// Exact names, or `*.example.com` for any subdomain.
    package static func matches(_ host: String, _ patterns: [String]) -> Bool {
        patterns.contains { pattern in
            let pattern = pattern.lowercased()
            if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) }
            return host == pattern
        }
    }

    /// The addresses `host` resolves to, through ``resolver``, within ``lookupTimeout``.
    /// - Throws: a 504 ``ServerError`` when the lookup has not answered in time (the lookup is
    ///   abandoned: a blocked `getaddrinfo` finishes on its own thread, holding nothing of the request's).
    func lookUp(_ host: String, port: Int) async throws -> [IPAddress] {
        let answer = FirstAnswer<[IPAddress]>()
        let resolver = resolver
        let lookup = Task { answer.give(await Result(awaiting: { try await resolver(host, port) })) }
        let limit = lookupTimeout
        let timer = DeadlineTimers.shared.schedule(after: limit) {
            answer.give(
                .failure(
                    ServerError(
                        .gatewayTimeout, "origin_timeout",
                        "the source host \(host) was not resolved within the origin's time limit of \(limit)")))
        }
        defer {
            DeadlineTimers.shared.cancel(timer)
            lookup.cancel()
        }
        return try await withTaskCancellationHandler {
            try await answer.value()
        } onCancel: {
            answer.give(.failure(CancellationError()))
        }
    }

    /// The addresses `host` resolves to (getaddrinfo, on a thread of its own: it blocks).
    package static func resolve(_ host: String, port: Int) async throws -> [IPAddress] {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var result: UnsafeMutablePointer<addrinfo>?
                guard getaddrinfo(host, String(port), &hints, &result) == 0 else {
                    continuation.resume(returning: [])
                    return
                }
                defer { freeaddrinfo(result) }
                var addresses: [IPAddress] = []
                var cursor = result
                while let info = cursor {
                    if let address = IPAddress(info.pointee.ai_addr) { addresses.append(address) }
                    cursor = info.pointee.ai_next
                }
                continuation.resume(returning: addresses)
            }.start()
        }
    }
}

/// The first of several answers (a lookup, its time limit, a cancellation) to reach one waiter; the
/// others are dropped.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case answered(Result<Value, any Error>)
        case done
    }
    private let state = Mutex(State.empty)

    func give(_ result: Result<Value, any Error>) {
        let waiter: CheckedContinuation<Value, any Error>? = state.withLock { state in
            switch state {
            case .empty:
                state = .answered(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .answered, .done:
                return nil
            }
        }
        waiter?.resume(with: result)
    }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Value, any Error>? = state.withLock { state in
                if case .answered(let result) = state {
                    state = .done
                    return result
                }
                state = .waiting(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

extension Result where Failure == any Error {
    fileprivate init(awaiting body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
