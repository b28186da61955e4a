import Foundation

extension ImagePipeline {
    /// The image stage: memory, then a thumbnail variant on disk, then data + decode.
    func loadImage(
        _ request: ImageRequest,
        priority: PriorityCell,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> Image {
        let key = request.imageKey
        let readsMemory = !request.options.contains(.disableMemoryCacheReads)
        if readsMemory {
            let cached = configuration.imageCache?[key]
            if configuration.imageCache != nil { record(.cacheLookup(.memoryImage, hit: cached != nil)) }
            if let cached { return cached }
        }
        return try await imageJobs.value(for: key, priority: priority, progress: progress) { [self] job in
            if readsMemory, let image = configuration.imageCache?[key] { return image }
            if let image = try await storedVariant(for: request) {
                remember(image, for: request)
                return image
            }
            if let (image, source) = try await derivedFromBase(request) {
                remember(image, for: request)
                storeVariant(image, for: request, source: source)
                return image
            }
            let entry = try await loadData(request, priority: job.priority, progress: job.reportProgress)
            let image: Image
            do {
                image = try await decode(entry, for: request)
            } catch let error as ImageDecodingError {
                // Bytes that are no image (an error page sent with 200, a truncated file) must not
                // stay cached: the next request asks the origin again.
                await forgetSource(of: request)
                throw error
            }
            remember(image, for: request)
            storeVariant(image, for: request, source: entry.metadata)
            return image
        }
    }

    /// Decodes the thumbnail `request` asks for, keeping the decoder's base for later
    /// sizes of the source when the decoder makes one (``ThumbnailDeriving``).
    private func decode(_ entry: CacheEntry, for request: ImageRequest) async throws -> Image {
        guard let thumbnail = request.thumbnail, let bases, !request.options.contains(.disableMemoryCacheWrites),
              let deriving = configuration.decoder as? any ThumbnailDeriving
        else { return try await decode(entry.data, thumbnail: request.thumbnail) }
        let data = entry.data
        let (image, base) = try await timedDecode {
            let decoded = try deriving.decodeKeepingBase(data, thumbnail: thumbnail)
            return (decoded.image, decoded.base)
        }
        if let base { bases[request.sourceKey] = KeptBase(base: base, source: entry.metadata) }
        return image
    }

    /// Decodes on a decode thread (never the cooperative pool), reporting how long the decode itself took.
    private func decode(_ data: Data, thumbnail: ImageRequest.Thumbnail?) async throws -> Image {
        let decoder = configuration.decoder
        return try await timedDecode { (try decoder.decode(data, thumbnail: thumbnail), ()) }.image
    }

    private func timedDecode<Extra: Sendable>(
        _ work: @escaping @Sendable () throws -> (image: Image, extra: Extra)
    ) async throws -> (image: Image, extra: Extra) {
        let (result, duration) = try await decodingPool.run { () -> (Result<(image: Image, extra: Extra), any Error>, Duration) in
            let start = ContinuousClock.now
            let result = Result { try work() }
            return (result, ContinuousClock.now - start)
        }
        switch result {
        case .success(let value):
            record(.decoded(duration: duration, width: value.image.width, height: value.image.height))
            return value
        case .failure(let error):
            record(.decodeFailed(duration: duration))
            throw error
        }
    }

    /// The thumbnail made from the source's kept base, with the source's metadata, when the
    /// base has enough pixels for it; no download and no decode.
    private func derivedFromBase(_ request: ImageRequest) async throws -> (Image, CacheMetadata)? {
        guard let thumbnail = request.thumbnail, let bases, !request.options.contains(.disableMemoryCacheReads),
              let deriving = configuration.decoder as? any ThumbnailDeriving
        else { return nil }
        guard let kept = bases[request.sourceKey] else {
            record(.cacheLookup(.memoryBase, hit: false))
            return nil
        }
        let (image, duration) = try await decodingPool.run { () -> (Image?, Duration) in
            let start = ContinuousClock.now
            let image = try? deriving.thumbnail(thumbnail, from: kept.base)  // a failure just means: decode
            return (image, ContinuousClock.now - start)
        }
        record(.cacheLookup(.memoryBase, hit: image != nil))
        guard let image else { return nil }
        record(.derived(duration: duration, width: image.width, height: image.height))
        return (image, kept.source)
    }

    private func forgetSource(of request: ImageRequest) async {
        bases?[request.sourceKey] = nil
        let key = request.sourceKey.stringValue
        await configuration.dataCache?.remove(for: key)
        await configuration.diskCache?.remove(for: key)
    }

    private func remember(_ image: Image, for request: ImageRequest) {
        guard !request.options.contains(.disableMemoryCacheWrites) else { return }
        configuration.imageCache?[request.imageKey] = image
    }

    /// A fresh thumbnail stored on disk under the variant key, decoded.
    private func storedVariant(for request: ImageRequest) async throws -> Image? {
        guard request.thumbnail != nil, !request.options.contains(.disableDiskCacheReads),
              let disk = configuration.diskCache
        else { return nil }
        let entry = await disk.entry(for: request.imageKey.stringValue)
        let usable = entry.map {
            request.options.contains(.returnCacheDataDontLoad)
                || configuration.cachePolicy.evaluate($0.metadata, requestHeaders: request.headers) == .fresh
        } ?? false
        record(.cacheLookup(.diskVariant, hit: usable))
        guard let entry, usable else { return nil }
        guard let variant = try? await decode(entry.data, thumbnail: nil) else {
            await disk.remove(for: request.imageKey.stringValue)  // unreadable: forget it
            return nil
        }
        // Report the original's format, recorded when the variant was stored.
        let sourceFormat = entry.metadata.contentType.flatMap(ImageFormat.init(mimeType:)) ?? variant.sourceFormat
        return Image(width: variant.width, height: variant.height, pixelFormat: variant.pixelFormat,
                     pixels: variant.pixels, sourceFormat: sourceFormat)
    }

    /// Encodes a thumbnail and stores it on disk in the background, with its source's freshness.
    private func storeVariant(_ image: Image, for request: ImageRequest, source: CacheMetadata) {
        guard request.thumbnail != nil, !request.options.contains(.disableDiskCacheWrites), !request.isLocalFile,
              let disk = configuration.diskCache, let encoder = configuration.encoder,
              source.http.map(configuration.cachePolicy.isStorable) ?? true
        else { return }
        var metadata = source
        metadata.contentType = image.sourceFormat.mimeType
        let key = request.imageKey.stringValue
        let pool = decodingPool
        Task.detached(priority: .utility) {
            let format: ImageFormat = image.pixelFormat.hasAlpha ? .png : .jpeg
            guard let data = try? await pool.run({ try encoder.encode(image, as: format, quality: 90) }) else { return }
            await disk.store(data, for: key, metadata: metadata)
        }
    }
}

/// A decoder's base for a source, with the source's cache metadata (for the variants made from it).
struct KeptBase: Sendable, CacheCostReporting {
    let base: ThumbnailBase
    let source: CacheMetadata
    var cacheCost: Int { base.cacheCost }
}
