import Foundation

/// What to load: a source (a URL or any async data source with an id), an
/// optional thumbnail size, and a priority.
///
/// Two requests with the same ``sourceKey`` share one download; two with the
/// same ``imageKey`` (source and thumbnail) also share one decode.
public struct ImageRequest: Sendable {
    /// Where the encoded bytes come from.
    public enum Source: Sendable {
        /// A URL, loaded by the pipeline's ``DataLoading`` (`http`, `https`, `file`).
        case url(URL)
        /// Any async data source; `id` identifies its bytes for caching and coalescing.
        case data(id: String, fetch: @Sendable () async throws -> Data)
    }

    /// Where the encoded bytes come from.
    public var source: Source
    /// What to make of the decoded source (crop, resize, effects); part of the variant key.
    /// Decoding shrinks on load as far as the recipe allows.
    public var recipe: ImageRecipe
    /// The recipe's resize: decode at this size instead of full size (shrink-on-load); `nil`: full size.
    public var thumbnail: Thumbnail? {
        get { recipe.resize }
        set { recipe.resize = newValue }
    }
    /// How urgent the request is. Change it on a running ``ImageTask`` with ``ImageTask/priority``.
    public var priority: Priority
    /// Which caches to read and write, whether to load at all, and whether its ``ImageTask`` gets previews;
    /// default none (use every cache, no previews).
    public var options: Options = []
    /// Extra HTTP request headers. They are part of the source key: requests
    /// with different headers never share a download or a cache entry.
    public var headers: [String: String] = [:]
    /// The caller's identity for a URL request's bytes, in place of its URL in every cache key and
    /// in the sharing of downloads (``CacheKey``); default `nil`: the normalised URL.
    public var cacheKey: CacheKey?
    /// Changes the HTTP request at send time, after the pipeline's
    /// ``ImagePipeline/Configuration/requestModifier``; not part of any key. Default `nil`.
    public var requestModifier: RequestModifier?

    /// A request for the image at `url`.
    /// - Parameters:
    ///   - url: An `http`, `https` or `file` URL.
    ///   - thumbnail: Decode at this size; default `nil` (full size).
    ///   - priority: Default ``Priority/normal``.
    public init(url: URL, thumbnail: Thumbnail? = nil, priority: Priority = .normal) {
        self.source = .url(url)
        self.recipe = ImageRecipe(resize: thumbnail)
        self.priority = priority
    }

    /// A request for the image at `url`, made with `recipe`.
    /// - Parameters:
    ///   - url: An `http`, `https` or `file` URL.
    ///   - recipe: What to make of the decoded image.
    ///   - priority: Default ``Priority/normal``.
    public init(url: URL, recipe: ImageRecipe, priority: Priority = .normal) {
        self.source = .url(url)
        self.recipe = recipe
        self.priority = priority
    }

    /// A request for bytes from any async source.
    /// - Parameters:
    ///   - id: Identifies the bytes `data` returns: requests with one id share loads and cache entries.
    ///   - thumbnail: Decode at this size; default `nil` (full size).
    ///   - priority: Default ``Priority/normal``.
    ///   - data: Returns the encoded image. Called at most once for concurrent requests with one id.
    public init(
        id: String,
        thumbnail: Thumbnail? = nil,
        priority: Priority = .normal,
        data: @escaping @Sendable () async throws -> Data
    ) {
        self.source = .data(id: id, fetch: data)
        self.recipe = ImageRecipe(resize: thumbnail)
        self.priority = priority
    }

    /// Identifies the encoded bytes: the normalised URL (or the request's ``cacheKey``), or the
    /// data source's id.
    public var sourceKey: SourceKey {
        switch source {
        case .url(let url):
            let base = cacheKey?.key(for: url) ?? SourceKey.normalized(url)
            guard !headers.isEmpty else { return .url(base) }
            // A normalised URL has no fragment, so "#" cannot collide with it.
            let suffix = headers.map { "\($0.key.lowercased())=\($0.value)" }.sorted().joined(separator: "&")
            return .url(base + "#headers:" + suffix)
        case .data(let id, _): return .id(id)
        }
    }

    /// Whether the source is a local file (`file:` URL): the disk cache never copies those,
    /// and could not tell when the file changes.
    public var isLocalFile: Bool {
        if case .url(let url) = source { return url.isFileURL }
        return false
    }

    /// Identifies the decoded image: source plus recipe.
    public var imageKey: ImageCacheKey { ImageCacheKey(source: sourceKey, recipe: recipe) }
}

extension ImageRequest {
    /// A target size for decoding, how the image fits it, whether it may grow, and which part is kept.
    public struct Thumbnail: Sendable, Hashable, CustomStringConvertible {
        /// How an image fits the target box. None enlarges the image unless ``enlarge`` is set.
        public enum Fit: String, Sendable, Hashable, CaseIterable {
            /// Covers the box, keeping the aspect ratio, and crops the overflow (where ``gravity`` says).
            /// A source smaller than the box (not enlarged) gives at most the box.
            case cover
            /// Fits the whole image in the box, keeping the aspect ratio, and fills the rest of the box
            /// with the background (transparent, or black where the output has no alpha): the result
            /// is the box size, the image placed by ``gravity`` (edges and corners; centred otherwise).
            case contain
            /// Fills the box by stretching: the aspect ratio is not kept.
            case fill
            /// Fits the whole image in the box, keeping the aspect ratio, with no padding: at most the box.
            case inside
            /// Covers the box, keeping the aspect ratio, with no crop: at least the box (when enlarged).
            case outside
            /// ``cover``, but a source smaller than the box (not enlarged) is cropped to the box's aspect
            /// ratio instead of to the box: imgproxy's `fill-down`.
            case coverDown = "cover-down"
            /// ``cover`` when the box and the source have the same orientation (both landscape or square,
            /// or both portrait), ``inside`` otherwise: imgproxy's `auto`.
            case auto
        }

        /// Target width in pixels (at least 1).
        public var width: Int
        /// Target height in pixels (at least 1).
        public var height: Int
        /// How the image fits the box; default ``Fit/cover``.
        public var fit: Fit
        /// Whether a source smaller than the box is enlarged to it; default `false`.
        public var enlarge: Bool
        /// Which part ``Fit/cover`` keeps, and where ``Fit/contain`` places the image; default centre.
        public var gravity: ImageRecipe.Gravity
        /// Turns the box to the source's orientation (a landscape box for a landscape source, a
        /// portrait one for a portrait source) before fitting: thumbor's `adaptive-fit-in`. Default `false`.
        public var adaptsOrientation = false
        /// Takes the box's width from the image it fits (the source after trim and crop, turned as the
        /// recipe turns it), whatever ``width`` says: thumbor's `origxH`. Default `false`.
        public var widthIsSource = false
        /// Takes the box's height from the image it fits: thumbor's `Wxorig`. Default `false`.
        public var heightIsSource = false

        /// A target box of `width` x `height` pixels.
        public init(
            width: Int, height: Int, fit: Fit = .cover, enlarge: Bool = false, gravity: ImageRecipe.Gravity = .center
        ) {
            self.width = width
            self.height = height
            self.fit = fit
            self.enlarge = enlarge
            self.gravity = gravity
        }

        /// `WIDTHxHEIGHT FIT`, then `+enlarge`, `+adaptive` and the gravity when they are not the defaults.
        public var description: String {
            "\(widthIsSource ? "src" : "\(width)")x\(heightIsSource ? "src" : "\(height)") \(fit.rawValue)"
                + (enlarge ? " +enlarge" : "")
                + (adaptsOrientation ? " +adaptive" : "")
                + (gravity == .center ? "" : " \(gravity)")
        }

        /// The box turned to a source of `width` × `height` when ``adaptsOrientation`` says so.
        public func oriented(toWidth width: Int, height: Int) -> Thumbnail {
            guard adaptsOrientation,
                (width < height && self.width > self.height) || (width > height && self.width < self.height)
            else {
                return self
            }
            var turned = self
            (turned.width, turned.height) = (self.height, self.width)
            return turned
        }
    }

    /// Which caches a request reads and writes, and what its task reports.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Do not read decoded images or encoded data from memory.
        public static let disableMemoryCacheReads = Options(rawValue: 1 << 0)
        /// Do not store decoded images or encoded data in memory.
        public static let disableMemoryCacheWrites = Options(rawValue: 1 << 1)
        /// Do not read from the disk cache.
        public static let disableDiskCacheReads = Options(rawValue: 1 << 2)
        /// Do not write to the disk cache.
        public static let disableDiskCacheWrites = Options(rawValue: 1 << 3)
        /// Load from the source even if a cache holds the image (the result is still stored).
        public static let reloadIgnoringCachedData: Options = [.disableMemoryCacheReads, .disableDiskCacheReads]
        /// Never load: answer from the caches (even stale entries) or fail with
        /// ``ImagePipelineError/notCached``.
        public static let returnCacheDataDontLoad = Options(rawValue: 1 << 4)
        /// The request's ``ImageTask`` reports previews (``ImageTask/Event/preview(_:)``) while a
        /// progressive JPEG downloads, when its pipeline makes them
        /// (``ImagePipeline/Configuration/progressivePreviews``). Previews are never cached.
        public static let progressivePreviews = Options(rawValue: 1 << 5)
    }

    /// How urgent a request is. Higher priorities are downloaded first.
    public enum Priority: Int, Sendable, Hashable, Comparable, CaseIterable {
        case veryLow = 0
        case low = 1
        case normal = 2
        case high = 3
        case veryHigh = 4

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }
}
