import Foundation
import Hummingbird
import Imagery

/// The query of `GET /image`, validated, as a source, a recipe and an output: `url` (http/https, or
/// `/files/NAME`), the recipe's parameters (``ImageParameters/recipe(from:maximumSide:)``: `w`, `h`,
/// `fit`, `enlarge`, `gravity`, `dpr`, `crop`, `trim`, `rotate`, `flip`, `flop`, `pad`, `bg`, `blur`,
/// `sharpen`, `grayscale`), `format` (jpeg, png, webp, avif, gif; absent: negotiated from `Accept`),
/// `q` (1...100). The README has the table; every bad value is a 400 that names the parameter and
/// what it accepts.
package struct ImageParameters: Sendable, Hashable {
    package let url: URL
    /// What to make of the source.
    package let recipe: ImageRecipe
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
        let reader = QueryReader(query)
        recipe = try Self.recipe(from: reader, maximumSide: maximumSide)
        format = try reader.choice("format", ["jpeg": .jpeg, "jpg": .jpeg, "png": .png, "webp": .webp, "avif": .avif, "gif": .gif])
        quality = try reader.integer("q", in: 1...100)
    }

    /// Everything but the output format, as a cache key: the URL as given, the recipe, the quality.
    package var responseKey: String {
        "\(url.absoluteString)|\(recipe)|\(quality ?? 0)"
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
}
