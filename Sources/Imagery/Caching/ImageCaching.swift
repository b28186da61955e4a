import Foundation

/// Holds decoded images in memory, keyed by source and thumbnail, each with its
/// source's metadata and freshness (``ImageResponse``). The pipeline reads it
/// synchronously (``ImagePipeline/cachedImage(for:)``), so implementations must be
/// fast and thread-safe. The pipeline checks freshness itself: a cache only stores.
public protocol ImageCaching: AnyObject, Sendable {
    /// The image for `key`; setting `nil` removes it.
    subscript(key: ImageCacheKey) -> ImageResponse? { get set }
    /// Removes every image.
    func removeAll()
}

extension MemoryCache: ImageCaching where Key == ImageCacheKey, Value == ImageResponse {}

/// Holds encoded bytes with their ``CacheMetadata``, keyed by strings
/// (``SourceKey/stringValue`` for originals, ``ImageCacheKey/stringValue`` for
/// processed variants). The pipeline uses two: one in memory (in front), and
/// optionally a persistent one (`DiskCache` from ImageryDiskCache).
public protocol DataCaching: Sendable {
    /// The bytes and metadata stored for `key`, or `nil`.
    func entry(for key: String) async -> CacheEntry?
    /// The metadata stored for `key`, or `nil`, for a caller that may not need the bytes (a fresh
    /// original already on disk). The default reads the entry; a cache that can answer without
    /// reading the bytes (`DiskCache`) does. A requirement, so that a call through `any DataCaching`
    /// reaches the cache's own answer.
    func metadata(for key: String) async -> CacheMetadata?
    /// Stores `data` for `key`, replacing what was there.
    func store(_ data: Data, for key: String, metadata: CacheMetadata) async
    /// Replaces the metadata of the entry for `key` (after a 304), keeping its bytes.
    func updateMetadata(_ metadata: CacheMetadata, for key: String) async
    /// Removes the entry for `key`.
    func remove(for key: String) async
    /// Removes every entry.
    func removeAll() async
    /// Returns once what was stored is durable (queued writes done, recency recorded), before a
    /// process exits. The default returns at once (memory has nothing to make durable); `DiskCache`
    /// waits for its writer. A requirement, so that a call through `any DataCaching` reaches the cache's own.
    func flush() async
}

extension DataCaching {
    /// The bytes stored for `key`, or `nil`.
    public func data(for key: String) async -> Data? { await entry(for: key)?.data }

    /// The metadata stored for `key`, or `nil`: this default reads the entry.
    public func metadata(for key: String) async -> CacheMetadata? { await entry(for: key)?.metadata }

    /// Nothing to make durable: returns at once.
    public func flush() async {}
}

/// Bytes and what is known about them.
public struct CacheEntry: Sendable, Hashable, CacheCostReporting {
    /// The encoded bytes.
    public var data: Data
    /// Where they came from and how long they stay fresh.
    public var metadata: CacheMetadata

    public init(data: Data, metadata: CacheMetadata) {
        self.data = data
        self.metadata = metadata
    }

    /// The byte count.
    public var cacheCost: Int { data.count }
}

extension MemoryCache: DataCaching where Key == String, Value == CacheEntry {
    public func entry(for key: String) async -> CacheEntry? { value(for: key) }
    public func store(_ data: Data, for key: String, metadata: CacheMetadata) async {
        insert(CacheEntry(data: data, metadata: metadata), for: key, cost: data.count)
    }
    public func updateMetadata(_ metadata: CacheMetadata, for key: String) async {
        guard var entry = value(for: key) else { return }
        entry.metadata = metadata
        insert(entry, for: key, cost: entry.data.count)
    }
    public func remove(for key: String) async { removeValue(for: key) }
}
