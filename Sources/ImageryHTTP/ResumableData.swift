import Foundation
import Imagery

/// The bytes of downloads that stopped part way (cancelled, or cut by the network), kept with the
/// source's validator so that the next download of the same resource asks only for the rest
/// (`Range` with `If-Range`, ``HTTPDataLoader``).
///
/// Bytes are kept only when the origin said it serves ranges (`Accept-Ranges: bytes`, or a 206)
/// and gave a strong validator (an `ETag` that is not weak, else `Last-Modified`): with
/// `If-Range`, an origin whose source changed sends the whole new version, so bytes of two
/// versions are never joined. Bounded in memory (least recently kept go first) and, with a disk
/// cache, kept there instead, under `partial:` keys within its own size limit.
public final class ResumableData: Sendable {
    /// Bytes received so far and the validator of the response they came from.
    struct Partial: Sendable {
        let data: Data
        let validator: String
    }

    private let memory: MemoryCache<String, CacheEntry>?
    private let disk: (any DataCaching)?
    /// Partial downloads smaller than this are not worth a request header: not kept.
    public let minimumBytes: Int

    /// - Parameters:
    ///   - memoryLimit: Bytes kept in memory when there is no disk; default 32 MiB.
    ///   - disk: Where to keep them instead (a `DiskCache`); default `nil`.
    ///   - minimumBytes: Default 16 KiB.
    public init(memoryLimit: Int = 32 << 20, disk: (any DataCaching)? = nil, minimumBytes: Int = 16_384) {
        self.memory = disk == nil && memoryLimit > 0 ? MemoryCache(costLimit: memoryLimit) : nil
        self.disk = disk
        self.minimumBytes = minimumBytes
    }

    /// The store key of `key` (the request as the loader keys it).
    private static func storeKey(_ key: String) -> String { "partial:" + key }

    /// The bytes kept for `key`, removed (one download resumes them; if it stops again, it keeps
    /// what it then has).
    func take(_ key: String) async -> Partial? {
        let key = Self.storeKey(key)
        let entry: CacheEntry?
        if let memory {
            entry = memory.removeValue(for: key)
        } else if let disk {
            entry = await disk.entry(for: key)
            if entry != nil { await disk.remove(for: key) }
        } else {
            entry = nil
        }
        guard let entry,
            let validator = entry.metadata.http?.headers["etag"] ?? entry.metadata.http?.headers["last-modified"]
        else {
            return nil
        }
        return Partial(data: entry.data, validator: validator)
    }

    /// How many bytes are kept for `key`, without taking them (for tests that wait until a stopped
    /// transfer has kept its bytes).
    func keptByteCount(for key: String) async -> Int? {
        let key = Self.storeKey(key)
        if let memory { return memory[key]?.data.count }
        return await disk?.entry(for: key)?.data.count
    }

    /// Keeps `partial` for `key` (replacing what was kept) when it is large enough.
    func keep(_ partial: Partial, for key: String) async {
        guard partial.data.count >= minimumBytes else { return }
        let name = partial.validator.hasPrefix("\"") ? "etag" : "last-modified"
        let now = Date()
        let metadata = CacheMetadata(
            http: HTTPResponseInfo(
                statusCode: 206, headers: [name: partial.validator], requestTime: now, responseTime: now,
                requestHeaders: [:]
            ))
        let key = Self.storeKey(key)
        if let memory {
            memory.insert(CacheEntry(data: partial.data, metadata: metadata), for: key, cost: partial.data.count)
        } else {
            await disk?.store(partial.data, for: key, metadata: metadata)
        }
    }

    /// The validator `If-Range` may carry for a response with `headers` (names lower-cased) that
    /// serves ranges; `nil` when it does not serve them or has no strong validator.
    static func validator(of headers: [String: String], status: Int) -> String? {
        guard status == 206 || headers["accept-ranges"]?.lowercased().contains("bytes") == true else { return nil }
        if let etag = headers["etag"] { return etag.hasPrefix("W/") ? nil : etag }
        return headers["last-modified"]
    }

    /// The first byte and the complete length of a `Content-Range: bytes FIRST-LAST/LENGTH`.
    static func contentRange(_ value: String?) -> (first: Int, length: Int)? {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/")
        guard parts.count == 2, let first = parts[0].split(separator: "-").first.flatMap({ Int($0) }),
            let length = Int(parts[1]), first >= 0, first < length
        else { return nil }
        return (first, length)
    }
}
