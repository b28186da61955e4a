import Foundation

/// Holds decoded images in memory, keyed by source and thumbnail. The pipeline
/// reads it synchronously (``ImagePipeline/cachedImage(for:)``), so
/// implementations must be fast and thread-safe.
public protocol ImageCaching: AnyObject, Sendable {
    /// The image for `key`; setting `nil` removes it.
    subscript(key: ImageCacheKey) -> Image? { get set }
    /// Removes every image.
    func removeAll()
}

extension MemoryCache: ImageCaching where Key == ImageCacheKey, Value == Image {}

/// Holds encoded bytes, keyed by a source's ``SourceKey/stringValue``. The
/// pipeline's second level: a new thumbnail of a cached original needs no download.
public protocol DataCaching: Sendable {
    /// The bytes for `key`, or `nil`.
    func cachedData(for key: String) async -> Data?
    /// Stores `data` for `key`.
    func storeData(_ data: Data, for key: String) async
    /// Removes the bytes for `key`.
    func removeData(for key: String) async
    /// Removes every entry.
    func removeAllData() async
}

extension MemoryCache: DataCaching where Key == String, Value == Data {
    public func cachedData(for key: String) async -> Data? { value(for: key) }
    public func storeData(_ data: Data, for key: String) async { insert(data, for: key, cost: data.count) }
    public func removeData(for key: String) async { removeValue(for: key) }
    public func removeAllData() async { removeAll() }
}
