import Foundation
import Hummingbird
import Imagery
import ImageryDiskCache

/// A response body exactly as it was first sent, with its source's metadata and freshness:
/// what result storage (``ResponseStore``) keeps in memory and on disk, and answers later
/// requests with as it is (no decode, no encode), so its bytes and ETag never change.
struct StoredResponse: Sendable, CacheCostReporting {
    /// The body; shared, not copied, by every response that sends it.
    let body: ByteBuffer
    /// Its media type: an image format's, or `text/plain` for a placeholder hash.
    let contentType: String
    /// A strong validator: a hash of the bytes, the same after a restart and on every instance.
    let etag: String
    /// The metadata of the source it was made from (for files and gallery images: no HTTP facts).
    let source: CacheMetadata
    /// When it stops being fresh: its source's freshness (``HTTPCachePolicy/freshUntil(_:)``).
    let freshUntil: Date
    /// Its cache headers, worked out from the source once.
    let cacheHeaders: ResponseCacheHeaders
    /// The quality the encoder chose for this image (`AutoQuality`), kept with it on disk; `nil`: none was chosen.
    let chosenQuality: Int?

    /// - Parameters:
    ///   - freshUntil: When it stops being fresh, if the caller kept it (the pipeline's images do);
    ///     `nil`: `policy`'s ``HTTPCachePolicy/freshUntil(_:)`` of `source`.
    ///   - policy: The policy that judges `source`.
    ///   - checksum: The ``Checksum`` of `data` when the caller has it (the disk cache verifies
    ///     one on every read); computed otherwise.
    ///   - chosenQuality: The quality the encoder chose for this image, if it chose one.
    init(
        data: Data, contentType: String, source: CacheMetadata, freshUntil: Date?, policy: HTTPCachePolicy, checksum: UInt64? = nil,
        chosenQuality: Int? = nil
    ) {
        let etag = Self.etag(checksum: checksum ?? Checksum.of(data), count: data.count)
        self.init(
            body: ByteBuffer(bytes: data), contentType: contentType, etag: etag, source: source, freshUntil: freshUntil, policy: policy,
            chosenQuality: chosenQuality
        )
    }

    private init(
        body: ByteBuffer, contentType: String, etag: String, source: CacheMetadata, freshUntil: Date?, policy: HTTPCachePolicy,
        chosenQuality: Int?
    ) {
        self.chosenQuality = chosenQuality
        // One reading of the source's headers gives the freshness and the cache headers.
        let assessment = policy.assess(source)
        let freshUntil = freshUntil ?? assessment.freshUntil
        (self.body, self.contentType, self.etag, self.source, self.freshUntil) = (body, contentType, etag, source, freshUntil)
        cacheHeaders = ResponseCacheHeaders(source: source, assessment: assessment, freshUntil: freshUntil)
    }

    /// The same bytes with the freshness of their source revalidated (a 304, or a 200 of the same version).
    func refreshed(source: CacheMetadata, policy: HTTPCachePolicy) -> StoredResponse {
        StoredResponse(body: body, contentType: contentType, etag: etag, source: source, freshUntil: nil, policy: policy, chosenQuality: chosenQuality)
    }

    /// Whether it may be sent at `now` without revalidating its source.
    func isFresh(at now: Date = Date()) -> Bool { now < freshUntil }

    var cacheCost: Int { body.readableBytes }

    /// `"` + the 64-bit ``Checksum`` of the bytes + `-` + their length (`count`), in hex, + `"`:
    /// a function of the bytes alone (unlike `Hasher`), about 1 µs for a 30 KB thumbnail.
    static func etag(checksum: UInt64, count: Int) -> String {
        "\"\(String(checksum, radix: 16))-\(String(count, radix: 16))\""
    }
}
