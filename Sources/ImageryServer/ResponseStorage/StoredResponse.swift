import Foundation
import Hummingbird
import Imagery
import ImageryDiskCache
import Synchronization

/// A response body exactly as it was first sent, with its source's metadata and freshness:
/// what result storage (``ResponseStore``) keeps in memory and on disk, and answers later
/// requests with as it is (no decode, no encode), so its bytes and ETag never change.
struct StoredResponse: StoredHead, CacheCostReporting {
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
    /// The image's size in pixels, when known (kept with it on disk).
    let width: Int?
    let height: Int?
    let identity = StoredHeadIdentity.next()

    /// - Parameters:
    ///   - freshUntil: When it stops being fresh, if the caller kept it (the pipeline's images do);
    ///     `nil`: `policy`'s ``HTTPCachePolicy/freshUntil(_:)`` of `source`.
    ///   - policy: The policy that judges `source`.
    ///   - checksum: The ``Checksum`` of `data` when the caller has it (the disk cache verifies
    ///     one on every read); computed otherwise.
    ///   - chosenQuality: The quality the encoder chose for this image, if it chose one.
    init(
        data: Data, contentType: String, source: CacheMetadata, freshUntil: Date?, policy: HTTPCachePolicy,
        checksum: UInt64? = nil,
        chosenQuality: Int? = nil
    ) {
        let etag = Self.etag(checksum: checksum ?? Checksum.of(data), count: data.count)
        self.chosenQuality = chosenQuality
        (width, height) = (nil, nil)
        (body, self.contentType, self.etag, self.source) = (ByteBuffer(bytes: data), contentType, etag, source)
        (self.freshUntil, cacheHeaders) = ResponseCacheHeaders.of(source, policy: policy, freshUntil: freshUntil)
    }

    /// The library's encoded answer (`EncodedImageResponse`), its bytes in a buffer of their own.
    init(_ encoded: EncodedImageResponse) {
        (body, contentType, etag, source) = (
            ByteBuffer(bytes: encoded.data), encoded.contentType, encoded.etag, encoded.source
        )
        (freshUntil, cacheHeaders, chosenQuality) = (encoded.freshUntil, encoded.cacheHeaders, encoded.chosenQuality)
        (width, height) = (encoded.width, encoded.height)
    }

    /// As the library's encoded answer (its bytes copied), to be stored with the pipeline's.
    var encoded: EncodedImageResponse {
        var metadata = source
        (metadata.imageWidth, metadata.imageHeight, metadata.chosenQuality) = (width, height, chosenQuality)
        var response = EncodedImageResponse(
            data: Data(buffer: body, byteTransferStrategy: .copy), contentType: contentType, source: metadata,
            freshUntil: freshUntil, policy: HTTPCachePolicy(), origin: .memory)
        response.cacheHeaders = cacheHeaders
        return response
    }

    /// The response on disk as `file` and `head` describe it, with its bytes `body` (read from the file).
    init(body: ByteBuffer, file: DiskCache.Body, head: DiskHead) {
        let source = file.metadata.sourceFacts
        (width, height) = (file.metadata.imageWidth, file.metadata.imageHeight)
        (self.body, contentType, etag, self.source, chosenQuality) = (
            body, head.contentType, head.etag, source, head.chosenQuality
        )
        (freshUntil, cacheHeaders) = (head.freshUntil, head.cacheHeaders)
    }

    var cacheCost: Int { body.readableBytes }

    /// `"` + the 64-bit `Checksum` of the bytes + `-` + their length (`count`), in hex, + `"`
    /// (the library's `EncodedImageResponse.etag(checksum:count:)`): a function of the bytes alone
    /// (unlike `Hasher`), about 1 µs for a 30 KB thumbnail.
    static func etag(checksum: UInt64, count: Int) -> String {
        EncodedImageResponse.etag(checksum: checksum, count: count)
    }
}

/// What an answer with a stored response says of it besides its bytes
/// (``ImageAnswers/answer(_:terms:negotiated:validators:now:fields:)``): a response held in
/// memory (``StoredResponse``), or one on disk sent from its file (``DiskHead``).
protocol StoredHead: Sendable {
    /// Unique to this value (in this process): another value, even of the same bytes, has another.
    var identity: UInt64 { get }
    var contentType: String { get }
    var etag: String { get }
    var freshUntil: Date { get }
    var cacheHeaders: ResponseCacheHeaders { get }
    var chosenQuality: Int? { get }
}

extension StoredHead {
    /// Whether it may be sent at `now` (the server's ``ServerConfiguration/time``) without revalidating its source.
    func isFresh(at now: Date) -> Bool { now < freshUntil }
}

/// The head of a response result storage keeps on disk, worked out once from the entry's metadata
/// (``ResponseStore/fileOnDisk(_:)``): its body is sent from the entry's file. A class: a hit
/// copies a reference, not its fields.
final class DiskHead: StoredHead {
    let contentType: String
    let etag: String
    let freshUntil: Date
    let cacheHeaders: ResponseCacheHeaders
    let chosenQuality: Int?
    /// The revision of the entry's metadata it was worked out from (``DiskCache/Body/revision``).
    let revision: UInt64
    let identity = StoredHeadIdentity.next()
    /// How often it was answered lately (shared by the copies of this head).
    let heat = DiskHeat()

    init(_ body: DiskCache.Body, contentType: String, policy: HTTPCachePolicy) {
        let source = body.metadata.sourceFacts
        (self.contentType, chosenQuality, revision) = (contentType, body.metadata.chosenQuality, body.revision)
        etag = StoredResponse.etag(checksum: body.checksum, count: body.size)
        (freshUntil, cacheHeaders) = ResponseCacheHeaders.of(source, policy: policy, freshUntil: nil)
    }
}

/// How often a response on disk was answered from its file lately: hot at its second answer within
/// a minute of the first (``isHot(at:)`` says so once a minute at most), when it is worth a place in
/// memory.
final class DiskHeat: Sendable {
    private let state = Mutex<(since: Int, answers: Int)>((0, 0))

    /// Counts an answer at `second` (since 1970); `true` when it is the second within a minute.
    func isHot(at second: Int) -> Bool {
        state.withLock { state in
            if second - state.since >= 60 { state = (second, 0) }
            state.answers += 1
            return state.answers == 2
        }
    }
}

/// ``StoredHead/identity``: a count.
enum StoredHeadIdentity {
    private static let count = Atomic<UInt64>(0)
    static func next() -> UInt64 { count.wrappingAdd(1, ordering: .relaxed).newValue }
}

extension ResponseCacheHeaders {
    /// When a response made from `source` stops being fresh (`freshUntil`, else the policy's) and its
    /// cache headers: one reading of the source's headers gives both.
    static func of(_ source: CacheMetadata, policy: HTTPCachePolicy, freshUntil: Date?) -> (Date, ResponseCacheHeaders)
    {
        let assessment = policy.assess(source)
        let freshUntil = freshUntil ?? assessment.freshUntil
        return (freshUntil, ResponseCacheHeaders(source: source, assessment: assessment, freshUntil: freshUntil))
    }
}
