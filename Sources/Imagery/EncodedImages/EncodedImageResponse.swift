import Foundation

/// An encoded image as ``ImagePipeline/encodedImage(for:)`` answers it: the bytes, their format and
/// size, and what an HTTP response needs to send them (validators, cache headers, `Vary`).
///
/// The ETag is a hash of the bytes, so it is the same after a restart and on every instance that
/// stores the same bytes; the freshness and the cache headers are the source's (what the origin said
/// of its bytes holds for everything made from them).
public struct EncodedImageResponse: Sendable, CacheCostReporting {
    /// The encoded bytes.
    public var data: Data
    /// Their media type (`image/avif`, ...).
    public var contentType: String
    /// The image's size in pixels, when known (always for an image encoded by this version).
    public var width: Int?
    /// The image's height in pixels, when known.
    public var height: Int?
    /// A strong validator: `"` + a 64-bit ``Checksum`` of the bytes + `-` + their length, in hex, + `"`.
    public var etag: String
    /// The metadata of the source the image was made from (its HTTP facts, for files none).
    public var source: CacheMetadata
    /// When it stops being fresh: its source's freshness.
    public var freshUntil: Date
    /// `Cache-Control`, `Age` and `Last-Modified`, worked out from the source once.
    public var cacheHeaders: ResponseCacheHeaders
    /// The quality the encoder chose (``EncodingOptions/autoQuality``); `nil`: none was chosen.
    public var chosenQuality: Int?
    /// Whether the format was chosen by `Accept` (send `Vary: Accept`).
    public var variesWithAccept: Bool
    /// Where it came from.
    public var origin: Origin

    /// Where an encoded image came from.
    public enum Origin: Sendable, Hashable {
        /// The pipeline's memory tier of encoded images.
        case memory
        /// The disk cache (or a shared tier behind it): encoded before, perhaps by another process.
        case disk
        /// Decoded and encoded for this request (or for an identical one it joined).
        case encoded
        /// Stored before; its source, stale, was revalidated and is the same version: the same bytes.
        case revalidated
        /// Stored before and stale, sent within its source's `stale-while-revalidate` window while it is
        /// revalidated in the background.
        case staleWhileRevalidating
    }

    /// - Parameters:
    ///   - data: The encoded bytes.
    ///   - contentType: Their media type.
    ///   - source: The metadata of the source the image was made from; what it says of an encoded image
    ///     (``CacheMetadata/imageWidth``, ``CacheMetadata/imageHeight``, ``CacheMetadata/chosenQuality``) is this image's.
    ///   - freshUntil: When it stops being fresh (as the pipeline kept it); `nil`: `policy`'s judgement of `source`.
    ///   - policy: The policy that judges `source`.
    ///   - origin: Where it came from.
    ///   - checksum: The ``Checksum`` of `data` when the caller has it; computed otherwise.
    public init(
        data: Data, contentType: String, source: CacheMetadata, freshUntil: Date?, policy: HTTPCachePolicy,
        origin: Origin, checksum: UInt64? = nil
    ) {
        self.data = data
        self.contentType = contentType
        self.etag = Self.etag(checksum: checksum ?? Checksum.of(data), count: data.count)
        (width, height, chosenQuality) = (source.imageWidth, source.imageHeight, source.chosenQuality)
        let source = source.sourceFacts  // what it says of the image is the image's, not its source's
        self.source = source
        let assessment = policy.assess(source)
        self.freshUntil = freshUntil ?? assessment.freshUntil
        cacheHeaders = ResponseCacheHeaders(source: source, assessment: assessment, freshUntil: self.freshUntil)
        variesWithAccept = false
        self.origin = origin
    }

    /// The format of the bytes, if they are an image format.
    public var format: ImageFormat? { ImageFormat(mimeType: contentType) }

    /// The source's `Last-Modified`, if it said one.
    public var lastModified: String? { cacheHeaders.lastModified }

    /// Whether it may be used at `now` without revalidating its source.
    /// - Parameter now: The time to judge at.
    public func isFresh(at now: Date = Date()) -> Bool { now < freshUntil }

    /// Whether a conditional request with these fields is answered 304 Not Modified: `If-None-Match`
    /// names its ETag (weak comparison, or `*`), or, without `If-None-Match`, `If-Modified-Since` is not
    /// before its `Last-Modified` (RFC 9110 13.1).
    /// - Parameters:
    ///   - ifNoneMatch: The request's `If-None-Match`, if any.
    ///   - ifModifiedSince: The request's `If-Modified-Since`, if any.
    public func isNotModified(ifNoneMatch: String?, ifModifiedSince: String? = nil) -> Bool {
        Self.isNotModified(
            ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince, etag: etag, lastModified: lastModified)
    }

    /// Whether a conditional request with these fields is answered 304 Not Modified by a response with
    /// `etag` and `lastModified` (``isNotModified(ifNoneMatch:ifModifiedSince:)``'s rule).
    /// - Parameters:
    ///   - ifNoneMatch: The request's `If-None-Match`, if any.
    ///   - ifModifiedSince: The request's `If-Modified-Since`, if any.
    ///   - etag: The response's ETag.
    ///   - lastModified: The response's `Last-Modified`, if any.
    public static func isNotModified(
        ifNoneMatch: String?, ifModifiedSince: String?, etag: String, lastModified: String?
    )
        -> Bool
    {
        if let ifNoneMatch { return matches(ifNoneMatch, etag: etag) }
        guard let since = ifModifiedSince.flatMap(HTTPDate.parse), let modified = lastModified.flatMap(HTTPDate.parse)
        else { return false }
        return modified <= since
    }

    /// The metadata stored beside the bytes: the source's, with the bytes' media type, the image's size
    /// and the quality chosen.
    public var storedMetadata: CacheMetadata {
        var metadata = source
        metadata.contentType = contentType
        (metadata.imageWidth, metadata.imageHeight, metadata.chosenQuality) = (width, height, chosenQuality)
        return metadata
    }

    /// The same bytes, their source revalidated (a 304, or a 200 of the same version).
    /// - Parameters:
    ///   - source: The source's new metadata.
    ///   - policy: The policy that judges it.
    public func refreshed(source: CacheMetadata, policy: HTTPCachePolicy) -> EncodedImageResponse {
        var refreshed = self
        refreshed.source = source
        let assessment = policy.assess(source)
        refreshed.freshUntil = assessment.freshUntil
        refreshed.cacheHeaders = ResponseCacheHeaders(
            source: source, assessment: assessment, freshUntil: assessment.freshUntil)
        refreshed.origin = .revalidated
        return refreshed
    }

    /// The bytes' length.
    public var cacheCost: Int { data.count }

    /// The ETag of bytes with this ``Checksum`` and length: a function of the bytes alone.
    /// - Parameters:
    ///   - checksum: The ``Checksum`` of the bytes.
    ///   - count: Their length.
    public static func etag(checksum: UInt64, count: Int) -> String {
        "\"\(String(checksum, radix: 16))-\(String(count, radix: 16))\""
    }

    /// Whether an `If-None-Match` header names `etag`: `*`, or a list of entity tags compared weakly
    /// (RFC 9110 13.1.2).
    /// - Parameters:
    ///   - header: The `If-None-Match` value.
    ///   - etag: The response's ETag.
    public static func matches(_ header: String, etag: String) -> Bool {
        HTTPHeaderList.elements(header).contains { element in
            let tag = element.utf8.starts(with: "W/".utf8) ? element.utf8.dropFirst(2) : element.utf8[...]
            return tag.elementsEqual("*".utf8) || tag.elementsEqual(etag.utf8)
        }
    }
}
