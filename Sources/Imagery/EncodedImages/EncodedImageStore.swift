import Foundation

/// Where encoded images are kept: a memory tier (optional) in front of the pipeline's disk cache (and
/// whatever shared tier stands behind it), under one key per variant
/// (``EncodedImageRequest/storageKey``). What it holds is answered as it is: the same bytes and ETag
/// after a restart and on every instance that shares the disk or the tier behind it.
///
/// The pipeline keeps one (``ImagePipeline/encodedImages``); a server that keeps other encoded answers
/// (a placeholder hash, a source passed on as it is) stores them here too, under keys made by
/// ``key(for:output:encoding:)``.
public struct EncodedImageStore: Sendable {
    private let memory: MemoryCache<String, EncodedImageResponse>?
    private let disk: (any DataCaching)?
    private let policy: HTTPCachePolicy

    /// - Parameters:
    ///   - memory: Encoded images in memory; `nil`: none.
    ///   - disk: Where they persist; `nil`: nowhere.
    ///   - policy: Judges the freshness of what is read back.
    public init(memory: MemoryCache<String, EncodedImageResponse>?, disk: (any DataCaching)?, policy: HTTPCachePolicy) {
        (self.memory, self.disk, self.policy) = (memory, disk, policy)
    }

    /// The key of an encoded answer: `response:` + the image's variant key (normalised source and
    /// recipe) + `output` (the format, or the rule that picks it, and what else selects the bytes) +
    /// `encoding` (quality 0: the format's default).
    /// - Parameters:
    ///   - request: The image request.
    ///   - output: What selects the bytes beyond the request and the encoding.
    ///   - encoding: How the image is written.
    public static func key(for request: ImageRequest, output: String, encoding: EncodingOptions) -> String {
        "response:\(request.imageKey.stringValue)|\(output)|\(encoding)"
    }

    /// What is stored under `key`, fresh or not: from memory, else from disk (then kept in memory);
    /// `nil` when absent (or, on disk, damaged: the disk cache checks every entry and drops a bad one).
    /// - Parameters:
    ///   - key: The storage key.
    ///   - readsMemory: Whether the memory tier is read.
    ///   - readsDisk: Whether the disk is read.
    public func stored(for key: String, readsMemory: Bool = true, readsDisk: Bool = true) async
        -> EncodedImageResponse?
    {
        if readsMemory, var hit = memory?[key] {
            hit.origin = .memory
            return hit
        }
        guard readsDisk, let entry = await disk?.entry(for: key), let contentType = entry.metadata.contentType else {
            return nil
        }
        let response = EncodedImageResponse(
            data: entry.data, contentType: contentType, source: entry.metadata, freshUntil: nil, policy: policy,
            origin: .disk)
        memory?[key] = response
        return response
    }

    /// Keeps a new encoded answer under `key`, in memory and on disk (queued by the disk cache, whose
    /// writer does the I/O). Answers of `no-store` sources are kept nowhere.
    /// - Parameters:
    ///   - response: The answer.
    ///   - key: The storage key.
    ///   - writesMemory: Whether the memory tier keeps it.
    ///   - writesDisk: Whether the disk keeps it.
    public func keep(
        _ response: EncodedImageResponse, for key: String, writesMemory: Bool = true, writesDisk: Bool = true
    ) async {
        guard response.cacheHeaders.isStorable else { return }
        if writesMemory { memory?[key] = response }
        guard writesDisk, let disk else { return }
        await disk.store(response.data, for: key, metadata: response.storedMetadata)
    }

    /// Keeps `response`, its source revalidated, under `key`: in memory, and its new freshness on disk
    /// (the bytes stay); a source that became `no-store` removes it from both.
    /// - Parameters:
    ///   - response: The refreshed answer (``EncodedImageResponse/refreshed(source:policy:)``).
    ///   - key: The storage key.
    public func keepRefreshed(_ response: EncodedImageResponse, for key: String) async {
        guard response.cacheHeaders.isStorable else {
            memory?[key] = nil
            await disk?.remove(for: key)
            return
        }
        memory?[key] = response
        await disk?.updateMetadata(response.storedMetadata, for: key)
    }

    /// Entries and bytes held in memory.
    public var memoryUsage: (count: Int, bytes: Int) { (memory?.count ?? 0, memory?.totalCost ?? 0) }
}
