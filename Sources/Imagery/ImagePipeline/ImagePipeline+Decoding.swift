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
            let entry = try await loadData(request, priority: job.priority, progress: job.reportProgress)
            let image: Image
            do {
                image = try await decode(entry.data, thumbnail: request.thumbnail)
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

    /// Decodes on a decode thread (never the cooperative pool), reporting how long the decode itself took.
    private func decode(_ data: Data, thumbnail: ImageRequest.Thumbnail?) async throws -> Image {
        let decoder = configuration.decoder
        let (result, duration) = try await decodingPool.run { () -> (Result<Image, any Error>, Duration) in
            let start = ContinuousClock.now
            let result = Result { try decoder.decode(data, thumbnail: thumbnail) }
            return (result, ContinuousClock.now - start)
        }
        switch result {
        case .success(let image):
            record(.decoded(duration: duration, width: image.width, height: image.height))
            return image
        case .failure(let error):
            record(.decodeFailed(duration: duration))
            throw error
        }
    }

    private func forgetSource(of request: ImageRequest) async {
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
