import Foundation
import Hummingbird
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryS3
import ImageryVips
import Logging

/// Answers made without processing: a source passed on as it is, and a local file read whole.
extension ImageService {
    /// The source as it is when `passthrough` applies to its format (imgproxy's `skip_processing`, `raw`,
    /// and its SVG passed on): a raster's header checked against the pixel and frame limits (no image bomb
    /// is passed on), nothing decoded or encoded, nothing stored twice (the original is in the pipeline's
    /// caches already); an SVG sanitised (``SVGSanitizer``: what it runs or fetches removed), and that
    /// stored as a response; `nil` when it does not apply (the response is made as any other).
    /// - Throws: 415 for a source that is no image (even `raw` passes on images only), 413 over the limits,
    ///   422 for an SVG refused.
    func unprocessed(_ target: Target, _ passthrough: ImageParameters.Passthrough) async throws
        -> StoredResponse?
    {
        // The decoded image in memory says the source's format without loading it (the original may be in no
        // cache), unless the request reloads its source.
        if !target.request.options.contains(.disableMemoryCacheReads),
            let decoded = pipeline.cachedImage(for: target.request),
            !passthrough.applies(to: decoded.sourceFormat, asked: target.askedFormat)
        {
            return nil
        }
        let source = try await pipeline.dataEntry(for: target.request)
        guard let format = ImageFormat(sniffing: source.data) else {
            // No image: not kept (as the pipeline forgets a source it cannot decode), so the next request tries the origin again.
            await pipeline.removeCachedData(for: target.request)
            throw ImageDecodingError.unsupportedFormat
        }
        guard passthrough.applies(to: format, asked: target.askedFormat) else { return nil }
        let freshUntil = cachePolicy.freshUntil(source.metadata)
        guard format != .svg else {
            let (pool, responses, policy) = (encodingPool, self.responses, cachePolicy)
            return try await encodes.value(for: target.memoryKey) {
                let clean = try await pool.run { try SVGSanitizer.sanitized(source.data) }
                let response = StoredResponse(
                    data: clean, contentType: format.mimeType, source: source.metadata, freshUntil: freshUntil,
                    policy: policy)
                await responses.keep(response, memoryKey: target.memoryKey, diskKey: target.diskKey)
                return response
            }
        }
        let inspector = sourceInspector
        try await encodingPool.run { _ = try inspector.estimatedDecodeMemory(source.data, recipe: ImageRecipe()) }
        return StoredResponse(
            data: source.data, contentType: format.mimeType, source: source.metadata, freshUntil: freshUntil,
            policy: cachePolicy)
    }

    /// A local image file, read on a worker thread (not an event loop or the cooperative pool).
    /// - Throws: a 404 ``ServerError`` if it cannot be read, 413 if it is over the source byte
    ///   limit (checked before reading), 415 if it is no image.
    func readFile(_ url: URL) async throws -> StoredResponse {
        let limit = configuration.limits.maximumSourceBytes
        return try await encodingPool.run {
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
            if let size, size > limit { throw DataLoadingError.tooLarge(limit: limit) }
            guard let data = try? Data(contentsOf: url) else {
                throw ServerError(.notFound, "not_found", "there is no gallery file \(url.lastPathComponent)")
            }
            guard let format = ImageFormat(sniffing: data) else { throw ImageDecodingError.unsupportedFormat }
            return StoredResponse(
                data: data, contentType: format.mimeType, source: CacheMetadata(), freshUntil: .distantFuture,
                policy: HTTPCachePolicy())
        }
    }
}
