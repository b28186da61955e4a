import Foundation
import ImageryHTTP
import ImageryS3

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
package struct SourceGuard: Sendable {
    let allowedHosts: [String]
    let privateNetworkHosts: [String]
    var s3SourceBuckets: [String] = []

    /// Throws a 403 ``ServerError`` if `url` may not be fetched; otherwise returns the
    /// checked address to connect to (`nil`: connect by name, for an IP literal or a host
    /// the operator allowed into private networks).
    func check(_ url: URL) async throws -> String? {
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
        let addresses = try await Self.resolve(bareHost, port: port)
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

    /// The addresses `host` resolves to (getaddrinfo, on a thread of its own: it blocks).
    static func resolve(_ host: String, port: Int) async throws -> [IPAddress] {
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
