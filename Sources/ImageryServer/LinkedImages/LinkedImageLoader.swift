import Foundation
import Imagery
import ImageryDiskCache
import ImageryVips

/// Loads the images a recipe links to by URL (thumbor's `watermark(URL,...)` and `frame(URL)`) before
/// the recipe runs, through the pipeline as any source: the same source guard and allow-list on the URL
/// and every redirect, the same byte limit, the same memory and disk caches, one fetch however many
/// requests use one watermark at once. The bytes join the recipe (``ImageRecipe/resolvingLinks(_:)``),
/// named by their URL and checksum, so a changed watermark is another variant.
struct LinkedImageLoader: Sendable {
    let pipeline: ImagePipeline
    /// Reads headers, for the pixel limit.
    let inspector: VipsImageDecoder
    /// The largest linked image, in pixels (the sources' limit).
    let maximumPixels: Int

    /// The formats a linked image may be in: raster formats libvips reads (no SVG: its text is not
    /// sanitised on this path; BMP and ICO are read by Imagery's own decoder, not by the compositor).
    static let formats: Set<ImageFormat> = [.jpeg, .png, .webp, .gif, .avif, .heic, .tiff]

    /// `recipe` with every linked image loaded.
    /// - Throws: A ``ServerError`` naming the linked image that could not be loaded, or is no image.
    func resolving(_ recipe: ImageRecipe) async throws -> ImageRecipe {
        let urls = recipe.linkedSources
        guard !urls.isEmpty else { return recipe }
        var images: [URL: ImageRecipe.EncodedImage] = [:]
        for url in urls { images[url] = try await load(url) }
        return recipe.resolvingLinks { images[$0] }
    }

    private func load(_ url: URL) async throws -> ImageRecipe.EncodedImage {
        let data: Data
        do {
            data = try await pipeline.dataEntry(for: ImageRequest(url: url)).data
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // thumbor answers 400 for a watermark or frame it cannot load; a refusal (403) and the
            // server's own trouble (503, 504: worth retrying) keep their status.
            let failure = ServerError.from(error)
            let status =
                [.forbidden, .serviceUnavailable, .gatewayTimeout].contains(failure.status)
                ? failure.status : .badRequest
            throw ServerError(
                status, failure.code, "the watermark or frame image \(url.absoluteString): \(failure.message)",
                retryAfter: failure.retryAfter)
        }
        guard let format = ImageFormat(sniffing: data), Self.formats.contains(format) else {
            throw ServerError(
                .unprocessableContent, "undecodable",
                "the watermark or frame image \(url.absoluteString) is not a JPEG, PNG, WebP, GIF, AVIF, HEIC or TIFF image"
            )
        }
        guard let header = try? inspector.inspect(data) else {
            throw ServerError(
                .unprocessableContent, "undecodable",
                "the watermark or frame image \(url.absoluteString) could not be read: it is corrupt or truncated")
        }
        guard header.width * header.height <= maximumPixels else {
            throw ServerError(
                .unprocessableContent, "source_over_limit",
                "the watermark or frame image \(url.absoluteString) is \(header.width)x\(header.height) pixels, over the limit of \(maximumPixels)"
            )
        }
        return ImageRecipe.EncodedImage(id: "\(url.absoluteString)#\(String(Checksum.of(data), radix: 16))", data: data)
    }
}
