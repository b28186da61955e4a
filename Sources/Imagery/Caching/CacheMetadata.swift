import Foundation

/// What a data cache keeps beside an entry's bytes.
public struct CacheMetadata: Sendable, Codable, Hashable {
    /// The media type the source declared (`Content-Type`), if any.
    public var contentType: String?
    /// When the entry was stored or last refreshed (a 304 refreshes it).
    public var storedAt: Date
    /// The HTTP response facts freshness is computed from; `nil` for sources
    /// that are not HTTP (files, custom data sources): fresh until evicted.
    public var http: HTTPResponseInfo?
    /// For an encoded response (a server's result storage): the quality its encoder chose for this
    /// image (``AutoQuality``); `nil` otherwise.
    public var chosenQuality: Int?
    /// For an encoded image (``EncodedImageStore``): its width in pixels; `nil` otherwise.
    public var imageWidth: Int?
    /// For an encoded image: its height in pixels; `nil` otherwise.
    public var imageHeight: Int?

    /// Metadata for bytes stored now.
    public init(contentType: String? = nil, storedAt: Date = Date(), http: HTTPResponseInfo? = nil) {
        self.contentType = contentType
        self.storedAt = storedAt
        self.http = http
    }

    /// This metadata without what it says of an encoded image (``chosenQuality``, ``imageWidth``,
    /// ``imageHeight``): its source's.
    public var sourceFacts: CacheMetadata {
        var source = self
        (source.chosenQuality, source.imageWidth, source.imageHeight) = (nil, nil, nil)
        return source
    }

    /// Whether `other` describes the same version of the source as this metadata, by its
    /// validators: the same strong `ETag`, or (with no `ETag` on either) the same `Last-Modified`.
    /// Without validators nothing can be told apart: `false`. A derived entry (a decoded
    /// image, a base, a stored response) of a stale source is still right when the source,
    /// revalidated, is the same version.
    public func isSameVersion(as other: CacheMetadata) -> Bool {
        guard let mine = http?.headers, let theirs = other.http?.headers else { return false }
        if let etag = mine["etag"] ?? theirs["etag"] {
            // A weak tag promises equivalence, not the same bytes: not enough for what was made from them.
            return !etag.hasPrefix("W/") && etag == mine["etag"] && etag == theirs["etag"]
        }
        guard let modified = mine["last-modified"] else { return false }
        return modified == theirs["last-modified"]
    }
}

/// The parts of an HTTP exchange a private cache needs (RFC 9111): the
/// response's cache headers, when the request went out and the response came
/// back, and the request headers the response varies on.
public struct HTTPResponseInfo: Sendable, Codable, Hashable {
    /// The response status.
    public var statusCode: Int
    /// The response headers that matter to caching, names lower-cased
    /// (`cache-control`, `expires`, `date`, `age`, `etag`, `last-modified`, `vary`, `content-type`).
    public var headers: [String: String]
    /// When the request was sent.
    public var requestTime: Date
    /// When the response arrived.
    public var responseTime: Date
    /// For each header named in `Vary`, the request's value when stored (lower-cased names; "" when absent).
    public var varyingRequestHeaders: [String: String]

    /// The headers caching needs, out of all response headers.
    public static let keptHeaders: Set<String> = [
        "cache-control", "expires", "date", "age", "etag", "last-modified", "vary", "content-type", "pragma",
    ]

    /// Response facts from a full header list (names any case); keeps only ``keptHeaders``.
    public init(
        statusCode: Int,
        headers: [String: String],
        requestTime: Date,
        responseTime: Date,
        requestHeaders: [String: String]
    ) {
        self.statusCode = statusCode
        var kept: [String: String] = [:]
        for (name, value) in headers where Self.keptHeaders.contains(name.lowercased()) {
            kept[name.lowercased()] = value
        }
        self.headers = kept
        self.requestTime = requestTime
        self.responseTime = responseTime
        var lowerRequest: [String: String] = [:]
        for (name, value) in requestHeaders { lowerRequest[name.lowercased()] = value }
        var varying: [String: String] = [:]
        for name in HTTPCachePolicy.varyNames(kept["vary"]) where name != "*" {
            varying[name] = lowerRequest[name] ?? ""
        }
        self.varyingRequestHeaders = varying
    }
}
