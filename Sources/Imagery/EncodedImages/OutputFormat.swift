/// The format an encoded image is written in, as far as it is known before its source is decoded:
/// a format, or a rule that picks one once the source's format, animation and alpha are known
/// (``resolved(source:animated:transparent:)``).
public enum OutputFormat: Sendable, Hashable {
    /// This format, whatever the source.
    case format(ImageFormat)
    /// A format chosen from an `Accept` header (``FormatNegotiation``). An animation gets `animation`
    /// instead when this one cannot animate (the first accepted format that can), else keeps its
    /// source's format.
    case negotiated(ImageFormat, animation: ImageFormat? = nil)
    /// The source's format where browsers show it (JPEG, PNG, WebP, an animated GIF); JPEG for an AVIF
    /// source, PNG for a still GIF, HEIC, JPEG XL, TIFF, BMP, ICO or SVG one.
    case source
    /// ``source``, but JPEG for a PNG source without alpha (thumbor's `autojpg()`).
    case opaquePNGAsJPEG
    /// The source's format when it is one of these; else the first of them that holds the image (its
    /// animation, its alpha), else the first (imgproxy's preferred formats).
    case preferred([ImageFormat])
    /// The format `table` names for the source's, else `otherwise`; with `opaquePNGAsJPEG`, JPEG for a
    /// PNG source without alpha (thumbor's rule: its engine keeps JPEG, PNG, WebP, GIF and AVIF, serves
    /// TIFF as PNG, and writes anything else as JPEG).
    case table([ImageFormat: ImageFormat], otherwise: ImageFormat, opaquePNGAsJPEG: Bool = false)

    /// The format to write an image from a source in `source`'s format.
    /// - Parameters:
    ///   - source: The source's format.
    ///   - animated: Whether the image has more than one frame.
    ///   - transparent: Whether the image has alpha (JPEG holds none).
    public func resolved(source: ImageFormat, animated: Bool = false, transparent: Bool = false) -> ImageFormat {
        switch self {
        case .format(let format):
            return format
        case .negotiated(let format, let animation):
            guard animated, !format.canAnimate else { return format }
            return animation ?? Self.source.resolved(source: source, animated: true)
        case .preferred(let formats):
            if formats.contains(source) { return source }
            let fitting = formats.first { (!animated || $0.canAnimate) && (!transparent || $0 != .jpeg) }
            return fitting ?? formats.first ?? Self.source.resolved(source: source, animated: animated)
        case .opaquePNGAsJPEG:
            return source == .png && !transparent ? .jpeg : Self.source.resolved(source: source, animated: animated)
        case .table(let table, let otherwise, let opaquePNGAsJPEG):
            if opaquePNGAsJPEG, source == .png, !transparent { return .jpeg }
            return table[source] ?? otherwise
        case .source:
            switch source {
            case .jpeg, .png, .webp: return source
            case .gif where animated: return .gif
            case .avif: return .jpeg
            case .gif, .heic, .jxl, .tiff, .bmp, .ico, .svg: return .png
            }
        }
    }

    /// The format, when it is known before the source is decoded (``format(_:)``, ``negotiated(_:animation:)``).
    public var knownFormat: ImageFormat? {
        switch self {
        case .format(let format), .negotiated(let format, _): format
        case .source, .opaquePNGAsJPEG, .preferred, .table: nil
        }
    }

    /// A short text for cache keys: `webp`, `avif|animation:webp`, `source`, `source-png-to-jpeg`,
    /// `preferred:png,jpeg`, `table:avif=avif,...;jpeg`.
    public var keyToken: String {
        switch self {
        case .format(let format), .negotiated(let format, nil): format.rawValue
        case .negotiated(let format, let animation?): "\(format.rawValue)|animation:\(animation.rawValue)"
        case .source: "source"
        case .opaquePNGAsJPEG: "source-png-to-jpeg"
        case .preferred(let formats): "preferred:" + formats.map(\.rawValue).joined(separator: ",")
        case .table(let table, let otherwise, let opaquePNGAsJPEG):
            "table:" + table.map { "\($0.key.rawValue)=\($0.value.rawValue)" }.sorted().joined(separator: ",") + ";"
                + otherwise.rawValue + (opaquePNGAsJPEG ? "+png-to-jpeg" : "")
        }
    }
}
