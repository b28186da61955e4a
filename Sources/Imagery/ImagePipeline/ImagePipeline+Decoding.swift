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
        if readsMemory, let image = configuration.imageCache?[key] { return image }
        return try await imageJobs.value(for: key, priority: priority, progress: progress) { [self] job in
            if readsMemory, let image = configuration.imageCache?[key] { return image }
            if let image = try await storedVariant(for: request) {
                remember(image, for: request)
                return image
            }
            let entry = try await loadData(request, priority: job.priority, progress: job.reportProgress)
            let decoder = configuration.decoder
            let thumbnail = request.thumbnail
            let image: Image
            do {
                image = try await decodingPool.run { try decoder.decode(entry.data, thumbnail: thumbnail) }
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
              let disk = configuration.diskCache,
              let entry = await disk.entry(for: request.imageKey.stringValue)
        else { return nil }
        let usable = request.options.contains(.returnCacheDataDontLoad)
            || configuration.cachePolicy.evaluate(entry.metadata, requestHeaders: request.headers) == .fresh
        guard usable else { return nil }
        let decoder = configuration.decoder
        guard let variant = try? await decodingPool.run({ try decoder.decode(entry.data, thumbnail: nil) }) else {
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
