import Foundation
import Imagery

/// Everything `imagery serve` can be told. Every default is safe to expose.
public struct ServerConfiguration: Sendable {
    /// The address to listen on; default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// The port; default 8080 (0 picks a free one).
    public var port = 8080
    /// The disk cache directory; default `.imagery-cache` in the working directory. `nil` disables the disk cache.
    public var cacheDirectory: URL? = URL(fileURLWithPath: ".imagery-cache")
    /// The memory the server's caches and its work in flight may use together; default 128 MiB a
    /// usable processor, at least 512 MiB, at most half the memory the process may use
    /// (``MachineDefaults``).
    /// ``maximumInflightMemory`` of it bounds downloads and decodes in flight; the caches
    /// (responses, decoded images, originals, bases) share the rest.
    public var memoryLimit = MachineDefaults.current.memoryLimit
    /// The bytes downloads and decodes in flight may hold at once (`MemoryBudget`), part of
    /// ``memoryLimit``; `nil` (the default): half of it. Work that does not fit waits in line
    /// (at most ``admissionQueueLength`` requests, as long as ``admissionTimeout`` allows), else is
    /// answered 503 with `Retry-After`; a source that alone needs more is answered 413.
    public var maximumInflightMemory: Int?
    /// The most requests waiting for memory or a decode at once; more are answered 503 at once.
    /// Default 32 a usable processor, at least 64 (``MachineDefaults``).
    public var admissionQueueLength = MachineDefaults.current.admissionQueueLength
    /// The longest a request waits for memory before it is answered 503. `nil` (the default): as
    /// long as it can still be answered within ``requestTimeout`` at the pace decodes have been
    /// going (the request timeout less its own decode and encode); a request the decodes ahead of
    /// it say cannot is answered 503 at once. A browser does not retry an `<img>` answered 503: a
    /// page's burst is better served late than refused.
    public var admissionTimeout: Duration?
    /// Bytes of the disk cache; default 2 GiB.
    public var diskLimit = 2 << 30
    /// If not empty, only these source hosts are fetched (exact names, or `*.example.com`); default empty (any public host).
    public var allowedHosts: [String] = []
    /// Hosts fetched even though they resolve to loopback, private, link-local or
    /// multicast addresses (refused for every other host); default none.
    public var privateNetworkHosts: [String] = []
    /// The largest source accepted, in bytes; default 50 MB.
    public var maximumSourceBytes = 50_000_000
    /// The most pixels a source may declare (checked from its header, before decoding); default 100 MP.
    public var maximumSourcePixels = 100_000_000
    /// The most frames of an animated source processed together (each resized and kept in GIF and
    /// WebP outputs); default 1 000. All its frames together count against ``maximumSourcePixels``.
    /// An animation over either limit is 413 before a frame is decoded (`frame=N` still takes one).
    public var maximumFrames = 1_000
    /// The most pixels of each frame of an animation (imgproxy's `IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION`);
    /// default `nil`: each frame is bounded by ``maximumSourcePixels`` with the others.
    public var maximumFramePixels: Int?
    /// The largest `w` or `h`; default 8192.
    public var maximumOutputSide = 8192
    /// The most time an origin fetch may take; default 10 s.
    public var originTimeout: Duration = .seconds(10)
    /// The most origin fetches at once; default 8 a usable processor, at least 16 (``MachineDefaults``).
    public var maximumConcurrentFetches = MachineDefaults.current.maximumConcurrentFetches
    /// The longest an image may take to make (revalidation, admission, fetch, decode, encode);
    /// past it the work is cancelled and the request answered 504. Default 30 s.
    public var requestTimeout: Duration = .seconds(30)
    /// A connection that sends no complete request for this long is closed: idle keep-alive
    /// connections, and clients that drip a request's headers (slowloris). Default 30 s.
    public var idleTimeout: Duration = .seconds(30)
    /// The most connections open at once; more wait in the kernel's accept queue. Default 10 000.
    public var maximumConnections = 10_000
    /// Whether a request written as one answered before, whose response memory holds fresh, is
    /// answered on the connection's event loop, before the router (`HitHandler`): the same
    /// answer at a fraction of the cost; a response on disk is then sent from its file (`sendfile`)
    /// and not kept in memory. Default `true`; `false` sends every request through the router, and
    /// keeps what it reads from disk in memory. (`imagery serve` only: routes mounted in another
    /// application go through its router.)
    public var answersHitsOnEventLoop = true
    /// The most bytes of a request's headers (each field at most half of it; at most 100 fields);
    /// more is answered 400 and the connection closed. Default 32 KiB.
    public var maximumHeaderBytes = 32 * 1024
    /// When set, every `/image` query must be signed with it (``RequestSigner``); default `nil` (no signing).
    /// `/unsafe/` thumbor URLs are refused then too.
    public var signingKey: String?
    /// Whether thumbor URLs (`/unsafe/300x200/smart/example.com/a.jpg`, `/SIGNATURE/...`) are answered; default `true`.
    public var thumborURLs = true
    /// thumbor's `SECURITY_KEY`: thumbor URLs must carry its HMAC-SHA1 signature (as libthumbor makes
    /// them), and `/unsafe/` ones are refused; default `nil`.
    public var thumborSecurityKey: String?
    /// Whether a thumbor filter with no equivalent here is a 400; default `false`: skipped, as thumbor
    /// skips filters it has not loaded.
    public var thumborRefusesUnknownFilters = false
    /// Whether a loaded thumbor filter whose arguments thumbor's grammar rejects (`sharpen()`,
    /// `watermark(URL,30)`) is a 400 naming what is wrong; default `false`: skipped, as thumbor skips
    /// it, and said (`X-Imagery-Skipped-Filters`, `imagery_thumbor_filters_skipped_total`, a warning).
    public var thumborRefusesBadFilterArguments = false
    /// thumbor's `AUTO_WEBP`: a thumbor URL without `format()` gets the format `Accept` allows (WebP,
    /// AVIF, JPEG XL), with `Vary: Accept`; default `false`: the source's format, as thumbor.
    public var thumborAutoWebP = false
    /// thumbor's `AUTO_PNG_TO_JPG`: a PNG source without transparency is answered as JPEG by thumbor
    /// URLs without `format()` (a URL's `autojpg()` turns it off); default `false`: only URLs with
    /// `autojpg()` do, as in thumbor.
    public var thumborAutoPNGToJPEG = false
    /// The thumbor filters thumbor URLs may use, by name (thumbor's `FILTERS`, its modules' last parts:
    /// `thumbor.filters.brightness` is `brightness`, `thumbor.filters.redeye` is `red_eye`); others are
    /// skipped, as thumbor skips filters it has not loaded (or refused with
    /// ``thumborRefusesUnknownFilters``). Default: thumbor 7.8's own default list, which leaves out
    /// `autojpg` and `red_eye`.
    public var thumborFilters = ServerConfiguration.thumborDefaultFilters
    /// thumbor's `ALLOW_UNSAFE_URL`: whether `/unsafe/` thumbor URLs are answered; `nil` (default): only
    /// when no thumbor security key is set (with one, thumbor URLs must be signed).
    public var thumborAllowsUnsafeURLs: Bool?
    /// thumbor's `RESPECT_ORIENTATION`: whether thumbor URLs apply the source's EXIF orientation; default
    /// `true` (thumbor's own default is `false`: a thumbor configuration file without it turns it off).
    public var thumborRespectsOrientation = true
    /// thumbor's `MAX_WIDTH` and `MAX_HEIGHT`: a larger width or height asked for is made this one (not
    /// refused, as thumbor); 0 (default): no limit but ``maximumOutputSide``.
    public var thumborMaximumWidth = 0
    public var thumborMaximumHeight = 0
    /// thumbor's `META_CALLBACK_NAME`: `meta/` answers are JavaScript calling it; `nil` (default): JSON,
    /// unless the URL's `callback=` names one.
    public var thumborMetaCallback: String?

    /// thumbor 7.8's `BUILTIN_FILTERS`, by filter name.
    public static let thumborDefaultFilters: Set<String> = [
        "brightness", "colorize", "contrast", "rgb", "round_corner", "quality", "noise", "watermark", "equalize",
        "fill", "sharpen",
        "strip_exif", "strip_icc", "frame", "grayscale", "rotate", "format", "max_bytes", "convolution", "blur",
        "extract_focal",
        "focal", "no_upscale", "saturation", "max_age", "curve", "background_color", "upscale", "proportion", "stretch",
    ]
    /// Whether imgproxy URLs (`/SIGNATURE/rs:fill:300:200/plain/https://example.com/a.jpg`,
    /// `/SIGNATURE/OPTIONS/BASE64URL`) are answered; default `true`.
    public var imgproxyURLs = true
    /// imgproxy's `IMGPROXY_KEY` and `IMGPROXY_SALT`: hex-encoded, pairwise (several pairs: any one
    /// signs, for rotating keys). With them, imgproxy URLs must carry the HMAC-SHA256 signature;
    /// without, the signature segment may be any string (with a native ``signingKey``, imgproxy URLs
    /// are refused). Default none.
    public var imgproxyKeys: [String] = []
    public var imgproxySalts: [String] = []
    /// imgproxy's `IMGPROXY_SIGNATURE_SIZE`: signature bytes kept, 1...32; default 32.
    public var imgproxySignatureSize = 32
    /// imgproxy's `IMGPROXY_LOCAL_FILESYSTEM_ROOT`: imgproxy URLs may name `local:///PATH` sources,
    /// files under this directory (never outside it); default `nil`: no `local://` sources.
    public var localFilesystemRoot: URL?
    /// imgproxy's `IMGPROXY_PATH_PREFIX`: imgproxy URLs start with it (`/imgproxy`); default none.
    public var imgproxyPathPrefix = ""
    /// imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`: what separates an option's name and arguments; default `:`.
    public var imgproxyArgumentsSeparator: Character = ":"
    /// imgproxy's `IMGPROXY_BASE64_URL_INCLUDES_FILENAME`: a base64 source split by `/` ends with a file
    /// name that is not part of it; default `false`.
    public var imgproxyBase64URLIncludesFilename = false
    /// imgproxy's `IMGPROXY_BASE_URL`: put before every source that does not start with it; default none.
    public var imgproxyBaseURL = ""
    /// imgproxy's `IMGPROXY_URL_REPLACEMENTS`: `PATTERN=REPLACEMENT` rules applied in order to sources
    /// (a pattern is a prefix in which `*` is any run without `/`; `${1}` in the replacement is the first
    /// `*`'s text); default none.
    public var imgproxyURLReplacements: [String] = []
    /// imgproxy's `IMGPROXY_ALLOWED_SOURCES`: source prefixes (with `*` as in replacements) imgproxy URLs
    /// may name; default none: any (this server's host rules still apply).
    public var imgproxyAllowedSources: [String] = []
    /// imgproxy's `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`: the option names imgproxy URLs may use (presets
    /// may use any); default none: all.
    public var imgproxyAllowedOptions: [String] = []
    /// An image answered in place of a source that cannot be fetched or decoded (imgproxy's
    /// `IMGPROXY_FALLBACK_IMAGE_PATH`), made with the request's own options; default `nil`: the error.
    /// A file URL, a `data:` URL holding the image (base64; imgproxy's `IMGPROXY_FALLBACK_IMAGE_DATA`), or an
    /// http(s) URL downloaded once at start (`IMGPROXY_FALLBACK_IMAGE_URL`; `imagery serve` does it).
    public var fallbackImageFile: URL?
    /// The status of a fallback response (imgproxy's `IMGPROXY_FALLBACK_IMAGE_HTTP_CODE`); 0: the
    /// error's own status. Default 200.
    public var fallbackImageStatus = 200
    /// The longest `Cache-Control` max-age of a fallback response, in seconds (imgproxy's
    /// `IMGPROXY_FALLBACK_IMAGE_TTL`); default 60, so that no cache keeps a placeholder for long.
    public var fallbackImageMaxAge = 60
    /// imgproxy's `IMGPROXY_WATERMARK_OPACITY`: multiplies the opacity of imgproxy URLs' `watermark`
    /// (whose image is ``watermarkFiles``' `imgproxy`, imgproxy's `IMGPROXY_WATERMARK_PATH`); default 1.
    public var imgproxyWatermarkOpacity = 1.0
    /// imgproxy's `IMGPROXY_TRUSTED_SIGNATURES`: signatures accepted for any path (with keys); default none.
    public var imgproxyTrustedSignatures: [String] = []
    /// imgproxy's `IMGPROXY_ALLOW_SECURITY_OPTIONS`: whether imgproxy URLs may set `max_src_resolution`,
    /// `max_src_file_size`, `max_animation_frames` and `max_animation_frame_resolution` (never above
    /// this server's own limits); default `false`: such a URL is refused (403), as imgproxy does.
    public var imgproxyAllowsSecurityOptions = false
    /// imgproxy's `IMGPROXY_PRESERVE_HDR`: whether imgproxy URLs keep a 16-bit source's 16 bits in a
    /// format that holds them (PNG, AVIF, JPEG XL, TIFF) when they say nothing (`preserve_hdr`);
    /// default `false`: 8 bits, as imgproxy.
    public var imgproxyPreservesHDR = false
    /// imgproxy's `IMGPROXY_SKIP_PROCESSING_FORMATS`: source formats imgproxy URLs answer as they are
    /// (unless another format is asked for), as their `skip_processing` does; default none.
    public var imgproxySkipProcessingFormats: [ImageFormat] = []
    /// imgproxy's `IMGPROXY_STRIP_METADATA` and `IMGPROXY_KEEP_COPYRIGHT`: whether imgproxy URLs' outputs
    /// drop the source's EXIF, XMP and IPTC, and keep its copyright notice then, when the URL does not
    /// say (`strip_metadata`, `keep_copyright`); default both `true`, as imgproxy.
    public var imgproxyStripsMetadata = true
    public var imgproxyKeepsCopyright = true
    /// imgproxy's `IMGPROXY_PREFERRED_FORMATS`: an imgproxy URL that asks for no format (and gets none from
    /// `Accept`) keeps its source's format when it is one of these, else gets the first of them that holds
    /// the image (animation: GIF; transparency: not JPEG); default JPEG, PNG, GIF, as imgproxy. So a WebP,
    /// AVIF, TIFF or BMP source gives JPEG (PNG when transparent), as it does from imgproxy.
    public var imgproxyPreferredFormats = Self.imgproxyDefaultPreferredFormats
    public static let imgproxyDefaultPreferredFormats: [ImageFormat] = [.jpeg, .png, .gif]
    /// imgproxy's `IMGPROXY_ENFORCE_JXL`, `_AVIF`, `_WEBP`: formats that replace even the format an imgproxy
    /// URL asks for when `Accept` takes them (in that order); default none.
    public var imgproxyEnforcedFormats: [ImageFormat] = []
    /// imgproxy's `IMGPROXY_STRIP_COLOR_PROFILE` and `IMGPROXY_AUTO_ROTATE`: what imgproxy URLs do when they
    /// do not say (`strip_color_profile`, `auto_rotate`); default both `true`, as imgproxy.
    public var imgproxyStripsColorProfile = true
    public var imgproxyAutoRotates = true
    /// imgproxy's `IMGPROXY_ALWAYS_RASTERIZE_SVG`: an SVG source of an imgproxy URL that asks for no format is
    /// rasterised (PNG) rather than passed on sanitised; default `false`, as imgproxy.
    public var imgproxyAlwaysRasterizesSVG = false
    /// imgproxy's `IMGPROXY_USE_LINEAR_COLORSPACE`: imgproxy URLs resize in linear light
    /// (`ImageRecipe.resizesInLinearLight`); default `false`, as imgproxy.
    public var imgproxyUsesLinearColorspace = false
    /// imgproxy's `IMGPROXY_PRESETS`: name to options (`rs:fill:300:300/q:80`); a preset named
    /// `default` applies to every imgproxy URL first. Default none.
    public var imgproxyPresets: [String: String] = [:]
    /// imgproxy's `AUTO_WEBP`/`AUTO_AVIF`: an imgproxy URL with no format gets the one `Accept`
    /// allows, with `Vary: Accept`; default `false`: the source's format, as imgproxy.
    public var imgproxyAutoFormat = false
    /// The formats ``imgproxyAutoFormat`` lets `Accept` choose, in imgproxy's order (JPEG XL, AVIF, WebP;
    /// an animation: WebP): those whose `AUTO_*` variable is set, all three when the file sets it.
    public var imgproxyAutoFormats: [ImageFormat] = [.jxl, .avif, .webp]
    /// The longest `Cache-Control` max-age of image responses, in seconds; a response says less
    /// when its source's remaining freshness is shorter (`ResponseCacheHeaders`). Default one day.
    public var responseMaxAge = 86_400
    /// The least freshness, in seconds, given to a source whose response states no expiry
    /// (no `max-age`, no `Expires`; many origins send none), in every cache tier and in the
    /// responses' `max-age`. Explicit `max-age`, `Expires`, `no-cache` and `no-store` are followed
    /// as sent. Default one hour.
    public var minimumFreshness = 3600
    /// The quality of each lossy output format when a request gives no `q`; default JPEG 80, WebP 81,
    /// AVIF 67, JPEG XL 81: each the quality whose mean score over the corpus at 256 px is JPEG 80's,
    /// between what butteraugli and SSIMULACRA2 say (within 5 % of JPEG's by both; BENCHMARKS.md, issue 28).
    public var formatQualities: [ImageFormat: Int] = ServerConfiguration.calibratedQualities
    /// ``formatQualities``' defaults.
    public static let calibratedQualities: [ImageFormat: Int] = [.jpeg: 80, .webp: 81, .avif: 67, .jxl: 81]
    /// Qualities chosen per image (`q=auto`, imgproxy's `autoquality`): the target, the bounds, and
    /// whether requests that ask for no quality get a search (default: no).
    public var autoQuality = AutoQualitySettings()
    /// Named sets of `/image` parameters (name to query, `"thumb": "w=200&h=200&format=webp"`):
    /// `preset=thumb` stands for them; the request's own parameters override. Default none.
    public var presets: [String: String] = [:]
    /// Whether `/image` takes presets only (`url`, `preset` and `sig`; anything else is a 400): for
    /// operators who cannot sign URLs but must fix every output. Default `false`.
    public var onlyPresets = false
    /// Watermark images by name (PNG with alpha, usually): `watermark=NAME` on `/image` lays one over
    /// the output. Read at start; default none.
    public var watermarkFiles: [String: URL] = [:]
    /// An S3-compatible store (`http://127.0.0.1:8333`, `https://s3.eu-west-1.amazonaws.com`), for the
    /// shared tier (``s3Bucket``) and `s3://` sources (``s3SourceBuckets``); path-style requests, signed
    /// with SigV4. Credentials come from ``s3CredentialsFile`` or the environment (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), never from the command line. Default `nil`: none.
    public var s3Endpoint: URL?
    /// The store's region (part of every signature); default `us-east-1`.
    public var s3Region = "us-east-1"
    /// The bucket of the tier shared by every instance: originals and stored responses, looked up
    /// after the instance's memory and disk and before the origin (`PersistentTiers`). Default `nil`:
    /// no shared tier.
    public var s3Bucket: String?
    /// The prefix of the shared tier's object names; default `imagery/`.
    public var s3Prefix = "imagery/"
    /// An AWS shared credentials file (`[default]` with `aws_access_key_id`, `aws_secret_access_key`);
    /// default `nil`: the environment.
    public var s3CredentialsFile: URL?
    /// The buckets `s3://BUCKET/KEY` sources may be read from (any other is 403); default none.
    public var s3SourceBuckets: [String] = []
    /// The images of this directory are shown on the gallery page at `/` and served at
    /// `/files/NAME` (everything with an image extension in it is public); default `nil`.
    public var galleryDirectory: URL?
    /// Image URLs shown on the gallery page, before the directory's files; default none.
    public var galleryURLs: [URL] = []
    /// Every instance of the cluster (`HOST:PORT`, as `imagery cluster nginx-config --instance` and
    /// nginx's `server` lines write them) and ``clusterSelf``, this instance among them: a request whose
    /// source another instance owns on nginx's ring is sent there (`OwnerForwarding`), so that every
    /// spelling of a source costs one origin fetch in the cluster. Default none: every request served here.
    public var clusterInstances: [String] = []
    /// This instance's `HOST:PORT` in ``clusterInstances``; default `nil`.
    public var clusterSelf: String?
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
    /// The in-flight budget in bytes: ``maximumInflightMemory``, else half of ``memoryLimit``.
    public var inflightMemory: Int { maximumInflightMemory ?? memoryLimit / 2 }

    /// The bytes the caches share: ``memoryLimit`` less the in-flight budget (which must be less).
    public var cacheMemory: Int { max(0, memoryLimit - inflightMemory) }

    /// The resident memory past which the server gives memory back to the system even while busy:
    /// ``memoryLimit`` and 100 MiB for what no budget counts (code, stacks, connections).
    public var residentCeiling: Int { memoryLimit + 100 << 20 }

    /// `text` as a source URL the proxy fetches (absolute, `http` or `https`, with a host and a
    /// valid port, or `s3://BUCKET/KEY`: `SourceGuard/endpoint(of:)`), else `nil`.
    /// The one check behind `url=`, `--gallery-url` and `galleryURLs`.
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
