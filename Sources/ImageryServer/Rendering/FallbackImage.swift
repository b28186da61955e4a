import Foundation
import Imagery
import ImageryDiskCache

/// An image answered in place of a source that cannot be fetched or decoded (imgproxy's fallback
/// image): made with the request's own recipe and output, like any source (one fetch: it is in
/// memory; its variants go through the caches), with a status, a short `Cache-Control` max-age so
/// that a CDN does not keep a placeholder for long, and a header saying it is the fallback.
struct FallbackImage: Sendable {
    /// The source URL the fallback's bytes are loaded under (``SourceLoader`` answers it from
    /// memory), named by their checksum: another image is another source in every cache.
    let url: URL
    /// The header that marks a fallback response.
    static let header = "X-Fallback-Image"

    let data: Data
    /// The status of a fallback response; 0: the status the error would have had.
    let status: Int
    /// The longest `Cache-Control` max-age of a fallback response, in seconds.
    let maximumAge: Int

    /// - Throws: ``ConfigurationFileError`` when the file cannot be read or is not an image.
    init?(_ configuration: ServerConfiguration) throws(ConfigurationFileError) {
        guard let file = configuration.fallback.image else { return nil }
        guard let data = ServerConfiguration.contents(of: file), ImageFormat(sniffing: data) != nil else {
            throw ConfigurationFileError(
                message: "the fallback image \(ServerConfiguration.describe(file)) cannot be read or is not an image")
        }
        (self.data, status, maximumAge) = (data, configuration.fallback.status, configuration.fallback.maxAge)
        url = URL(string: "fallback:image-\(String(Checksum.of(data), radix: 16))")!
    }

    /// The codes of the errors a fallback answers: the source could not be fetched (the origin
    /// failed, refused, timed out or has no such file) or is no image this server decodes. Bad
    /// requests, limits, signatures and a busy server keep their own answers.
    static let replacedErrors: Set<String> = [
        "origin_not_found", "origin_failed", "origin_unreachable", "origin_timeout", "source_not_found",
        "unsupported_source", "undecodable",
    ]
}
