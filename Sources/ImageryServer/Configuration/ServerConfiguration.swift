import Foundation
import Imagery

/// Everything `imagery serve` can be told, in parts: each part is one component's settings, with its
/// defaults and its rules beside the code that uses it (``ConfigurationSetting``: their keys). Every default
/// is safe to expose.
public struct ServerConfiguration: Sendable {
    /// Where and how connections are taken: the address, timeouts, limits on connections and headers.
    public var listener = Listener()
    /// What a request may cost: memory (the budget admission keeps), time, and the size of sources and outputs.
    public var limits = Limits()
    /// The disk cache and how long answers stay fresh in caches.
    public var caching = Caching()
    /// Which sources may be fetched, and how.
    public var origins = Origins()
    /// What `/image` requests must carry: a signature, presets.
    public var requests = Requests()
    /// How outputs are made when a request does not say: qualities, quality searches, watermark images.
    public var rendering = Rendering()
    /// An S3-compatible store: the shared tier and `s3://` sources.
    public var s3 = S3()
    /// The instances of a cluster, so that each source is fetched by one of them.
    public var cluster = Cluster()
    /// The gallery page at `/`.
    public var gallery = Gallery()
    /// An image answered in place of a source that cannot be had (imgproxy's fallback image).
    public var fallback = Fallback()
    /// imgproxy URLs: their signatures, source rules and the defaults of their options (imgproxy's `IMGPROXY_*` names).
    public var imgproxy = Imgproxy()
    /// thumbor URLs: their signatures, filters and thumbor's settings (its `thumbor.conf` names).
    public var thumbor = Thumbor()

    /// thumbor 7.8's `BUILTIN_FILTERS`, by filter name.
    public static let thumborDefaultFilters: Set<String> = [
        "brightness", "colorize", "contrast", "rgb", "round_corner", "quality", "noise", "watermark", "equalize",
        "fill", "sharpen",
        "strip_exif", "strip_icc", "frame", "grayscale", "rotate", "format", "max_bytes", "convolution", "blur",
        "extract_focal",
        "focal", "no_upscale", "saturation", "max_age", "curve", "background_color", "upscale", "proportion", "stretch",
    ]

    public static let imgproxyDefaultPreferredFormats: [ImageFormat] = [.jpeg, .png, .gif]

    /// ``ServerConfiguration/Rendering/formatQualities``' defaults.
    public static let calibratedQualities: [ImageFormat: Int] = [.jpeg: 80, .webp: 81, .avif: 67, .jxl: 81]

    /// The clocks the server reads: the date for freshness and `Age` (result storage, the pipeline's
    /// caches, the disk cache's TTL), for imgproxy's `expires` and for when a disk response turns hot;
    /// the instant for how long an unreachable cluster owner or a failing shared tier is passed over,
    /// and for the disk cache's probes. Default `TimeSource.system`. Not read from files or the
    /// environment: a test sets `ManualTime.source` and moves time by hand instead of sleeping.
    /// (Timeouts, admission and idle connections keep the machine's clocks.)
    public var time: TimeSource = .system

    public init() {}
}

extension ServerConfiguration {
    /// `text` as a source URL the proxy fetches (absolute, `http` or `https`, with a host and a
    /// valid port, or `s3://BUCKET/KEY`: `SourceGuard/endpoint(of:)`), else `nil`.
    /// The one check behind `url=`, `--gallery-url` and ``ServerConfiguration/Gallery/urls``.
    public static func sourceURL(_ text: String) -> URL? {
        guard let url = URL(string: text), (try? SourceGuard.endpoint(of: url)) != nil else { return nil }
        return url
    }
}

extension ServerConfiguration {
    /// The bytes of a configured image: a file's, or a base64 `data:` URL's (imgproxy's `*_DATA` variables).
    /// (An http(s) URL is downloaded at start, ``downloadingRemoteImages()``: never here.)
    static func contents(of url: URL) -> Data? {
        guard url.scheme == "data" else { return url.isFileURL ? try? Data(contentsOf: url) : nil }
        let text = url.absoluteString
        guard let comma = text.firstIndex(of: ","), text[..<comma].hasSuffix(";base64") else { return nil }
        return Data(base64Encoded: String(text[text.index(after: comma)...]), options: .ignoreUnknownCharacters)
    }

    /// A configured image's file path, or `inline data` for a `data:` URL (never its bytes in a message).
    static func describe(_ url: URL) -> String {
        url.scheme == "data" ? "(inline data)" : url.path
    }

    /// A `data:` URL of base64 `value` (an `IMGPROXY_*_DATA` variable), checked to be base64.
    static func inlineImage(base64 value: String) throws(ConfigurationFileError) -> URL {
        let compact = value.filter { !$0.isWhitespace }
        guard Data(base64Encoded: compact) != nil,
            let url = URL(string: "data:application/octet-stream;base64," + compact)
        else {
            throw ConfigurationFileError(message: "expected base64")
        }
        return url
    }
}
