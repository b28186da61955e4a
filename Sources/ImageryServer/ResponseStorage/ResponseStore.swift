import Foundation
import Imagery
import ImageryDiskCache

/// Result storage: the proxy's final response bodies, kept from the bytes of the first
/// response and answered with as they are.
///
/// - **Memory**: keyed by the request as written (``ImageParameters/responseKey`` and the
///   output choice), so a hit costs no URL parsing.
/// - **Disk** (the server's ``DiskCache``, beside the originals, and the shared tier behind it):
///   the library's store of encoded answers (`EncodedImageStore`, the pipeline's), keyed by
///   everything that selects the bytes (`EncodedImageRequest.storageKey`: the normalised source,
///   the recipe, the output, the encoding), so a restart or an eviction from memory is answered
///   from disk with the same bytes and ETag, with no decode and no encode. Written on the disk
///   cache's writer thread: a response never waits for it.
///
/// Every entry carries its source's metadata; the disk entry's metadata is the source's
/// (with the output's content type), so the one ``HTTPCachePolicy`` judges both tiers.
final class ResponseStore: Sendable {
    private let memory: MemoryCache<String, StoredResponse>
    /// The memory key each request, as it was written, resolved to (``alias(for:)``).
    private let aliases = MemoryCache<String, Alias>(countLimit: 16_384)
    /// The heads of responses sent from their disk files (``fileOnDisk(_:)``), by entry file.
    private let diskHeads = MemoryCache<UInt64, DiskHead>(countLimit: 16_384)

    /// What a request written one way resolved to: its memory and disk keys, whether its format was
    /// negotiated, and what its text says of the response (``ResponseTerms``).
    /// A class: a hit copies a reference, not its keys and terms.
    final class Alias: Sendable {
        let memoryKey: String
        let diskKey: String?
        let negotiated: Bool
        let terms: ResponseTerms

        init(memoryKey: String, diskKey: String?, negotiated: Bool, terms: ResponseTerms = ResponseTerms()) {
            (self.memoryKey, self.diskKey, self.negotiated, self.terms) = (memoryKey, diskKey, negotiated, terms)
        }
    }

    /// The request key of a request as written: its raw query (signature included) and its `Accept`.
    static func requestKey(rawQuery: String, accept: String?) -> String {
        accept.map { rawQuery + "\n" + $0 } ?? rawQuery
    }

    /// What a request written exactly this way resolved to before, if it was seen: a hit answers it
    /// without parsing, validating or signing it again (all of which depend on its text alone, and it
    /// passed them the first time).
    /// - Complexity: One memory-cache lookup.
    func alias(for requestKey: String) -> Alias? {
        aliases[requestKey]
    }

    /// Remembers what the request written as `requestKey` resolved to.
    func remember(_ requestKey: String, as alias: Alias) {
        aliases[requestKey] = alias
    }
    /// The pipeline's encoded answers: where bodies persist.
    private let encoded: EncodedImageStore
    /// This instance's disk, for sending a body from its file (``fileOnDisk(_:)``).
    private let local: DiskCache?
    private let policy: HTTPCachePolicy

    /// - Parameters:
    ///   - memoryLimit: Bytes of bodies kept in memory.
    ///   - encoded: Where bodies persist (the pipeline's store: the instance's disk, then the shared tier).
    ///   - local: The instance's disk cache, whose files are sent as they are; `nil`: none.
    ///   - policy: Judges the freshness of what is read from disk.
    init(memoryLimit: Int, encoded: EncodedImageStore, local: DiskCache?, policy: HTTPCachePolicy) {
        memory = MemoryCache(costLimit: memoryLimit)
        (self.encoded, self.local, self.policy) = (encoded, local, policy)
    }

    /// The response held in memory for `key`, fresh or not.
    /// - Complexity: One memory-cache lookup.
    func inMemory(_ key: String) -> StoredResponse? {
        memory[key]
    }

    /// The response stored on disk for `key`, fresh or not; `nil` when absent or damaged (the disk
    /// cache checks every entry's checksum and drops a bad one, so it is made and stored again).
    func onDisk(_ key: String) async -> StoredResponse? {
        await encoded.stored(for: key, readsMemory: false).map(StoredResponse.init)
    }

    /// The file of the response stored on this instance's disk for `key`, with its head (worked out
    /// once per file), fresh or not, for sending as it is: its bytes are not kept in memory; `nil`
    /// when absent, damaged or not written yet. Synchronous.
    /// - Complexity: The disk cache's lookup, and one of the head by the entry's file; the first
    ///   time, a read of the file.
    func fileOnDisk(_ key: String) -> (body: DiskCache.Body, head: DiskHead)? {
        guard let local, let body = local.openBody(for: key), let contentType = body.metadata.contentType
        else { return nil }
        if let head = diskHeads[body.fileID], head.revision == body.revision { return (body, head) }
        let head = DiskHead(body, contentType: contentType, policy: policy)
        diskHeads[body.fileID] = head
        return (body, head)
    }

    /// Keeps a new response: in memory under `memoryKey`, and with the pipeline's encoded answers under
    /// `diskKey` (queued, not awaited; `nil`: it stored the response itself, or it is not to be stored).
    /// Responses of `no-store` sources are kept nowhere.
    func keep(_ response: StoredResponse, memoryKey: String, diskKey: String? = nil) async {
        guard response.cacheHeaders.isStorable else { return }
        memory[memoryKey] = response
        guard let diskKey else { return }
        await encoded.keep(response.encoded, for: diskKey)
    }

    /// Keeps `response` (read from disk) in memory under `memoryKey`.
    func keepInMemory(_ response: StoredResponse, memoryKey: String) {
        memory[memoryKey] = response
    }

    /// Entries and bytes held in memory.
    var memoryUsage: (count: Int, bytes: Int) { (memory.count, memory.totalCost) }
}
