import Foundation
import Hummingbird
import Imagery

/// The query of `GET /image`, validated: `url` (http/https, or `/files/NAME`), `w` and `h`
/// (1...max), `fit` (cover, contain, fill, inside), `format` (jpeg, png, webp,
/// avif, gif; absent: negotiated from `Accept`), `q` (1...100).
package struct ImageParameters: Sendable, Hashable {
    package let url: URL
    package let width: Int?
    package let height: Int?
    package let fit: ImageRequest.Thumbnail.Fit
    package let format: ImageFormat?
    package let quality: Int?

    /// - Parameter gallery: Resolves `url=/files/NAME` to a file of the gallery directory.
    package init(query: [String: String], maximumSide: Int, gallery: Gallery? = nil) throws {
        guard let text = query["url"], !text.isEmpty else {
            throw ServerError.badParameter("url is required: /image?url=https://example.com/photo.jpg&w=256")
        }
        if let gallery, text.hasPrefix(Gallery.filePrefix) {
            url = try gallery.fileURL(forParameter: text)
        } else {
            guard let url = ServerConfiguration.sourceURL(text) else {
                throw ServerError.badParameter("url must be an absolute http or https URL, or /files/NAME for a gallery file")
            }
            self.url = url
        }
        width = try Self.integer(query, "w", in: 1...maximumSide)
        height = try Self.integer(query, "h", in: 1...maximumSide)
        if let text = query["fit"] {
            guard let fit = ImageRequest.Thumbnail.Fit(rawValue: text) else {
                throw ServerError.badParameter("fit must be cover, contain, fill or inside")
            }
            self.fit = fit
        } else {
            fit = .cover
        }
        if let text = query["format"] {
            guard let format = ImageFormat(fileExtension: text), format != .heic else {
                throw ServerError.badParameter("format must be jpeg, png, webp, avif or gif")
            }
            self.format = format
        } else {
            format = nil
        }
        quality = try Self.integer(query, "q", in: 1...100)
    }

    /// Everything but the output format, as a cache key: the URL as given, size, fit, quality.
    package var responseKey: String {
        "\(url.absoluteString)|\(width ?? 0)x\(height ?? 0)|\(fit.rawValue)|\(quality ?? 0)"
    }

    /// The decode size: both sides give the box; one side scales to it (never enlarging).
    package func thumbnail(maximumSide: Int) -> ImageRequest.Thumbnail? {
        switch (width, height) {
        case let (width?, height?): ImageRequest.Thumbnail(width: width, height: height, fit: fit)
        case let (width?, nil): ImageRequest.Thumbnail(width: width, height: maximumSide, fit: .inside)
        case let (nil, height?): ImageRequest.Thumbnail(width: maximumSide, height: height, fit: .inside)
        case (nil, nil): nil
        }
    }

    /// What the response will be encoded as, decided before any image is loaded:
    /// a format, or "whatever the source is" (known only once decoded).
    package enum OutputChoice: Hashable, Sendable {
        case format(ImageFormat)
        case sourceFormat

        /// The format to encode for a source of `source`'s format
        /// (the source's own, but JPEG for AVIF and PNG for GIF and HEIC).
        package func resolved(source: ImageFormat) -> ImageFormat {
            switch self {
            case .format(let format): format
            case .sourceFormat:
                switch source {
                case .jpeg, .png, .webp: source
                case .avif: .jpeg
                case .gif, .heic: .png
                }
            }
        }

        var cacheToken: String {
            switch self {
            case .format(let format): format.rawValue
            case .sourceFormat: "source"
            }
        }
    }

    /// The format asked for; else WebP or AVIF when `Accept` names it (with a weight above 0);
    /// else the source's.
    package func outputChoice(accept: String?) -> OutputChoice {
        if let format { return .format(format) }
        let accept = AcceptHeader(accept)
        if accept.accepts("image/webp") { return .format(.webp) }
        if accept.accepts("image/avif") { return .format(.avif) }
        return .sourceFormat
    }

    /// Whether the response depends on `Accept` (no `format` parameter): `Vary: Accept`.
    var isNegotiated: Bool { format == nil }

    private static func integer(_ query: [String: String], _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = query[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ServerError.badParameter("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}
