import Foundation
import Imagery

extension ServerConfiguration {
    /// imgproxy URLs: their signatures, source rules and the defaults of their options (imgproxy's `IMGPROXY_*` names).
    public struct Imgproxy: Sendable {
        /// Whether imgproxy URLs (`/SIGNATURE/rs:fill:300:200/plain/https://example.com/a.jpg`,
        /// `/SIGNATURE/OPTIONS/BASE64URL`) are answered; default `true`.
        public var enabled = true

        /// imgproxy's `IMGPROXY_KEY` and `IMGPROXY_SALT`: hex-encoded, pairwise (several pairs: any one
        /// signs, for rotating keys). With them, imgproxy URLs must carry the HMAC-SHA256 signature;
        /// without, the signature segment may be any string (with a native ``ServerConfiguration/Requests/signingKey``, imgproxy URLs
        /// are refused). Default none.
        public var keys: [String] = []

        public var salts: [String] = []

        /// imgproxy's `IMGPROXY_SIGNATURE_SIZE`: signature bytes kept, 1...32; default 32.
        public var signatureSize = 32

        /// imgproxy's `IMGPROXY_PATH_PREFIX`: imgproxy URLs start with it (`/imgproxy`); default none.
        public var pathPrefix = ""

        /// imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`: what separates an option's name and arguments; default `:`.
        public var argumentsSeparator: Character = ":"

        /// imgproxy's `IMGPROXY_BASE64_URL_INCLUDES_FILENAME`: a base64 source split by `/` ends with a file
        /// name that is not part of it; default `false`.
        public var base64URLIncludesFilename = false

        /// imgproxy's `IMGPROXY_BASE_URL`: put before every source that does not start with it; default none.
        public var baseURL = ""

        /// imgproxy's `IMGPROXY_URL_REPLACEMENTS`: `PATTERN=REPLACEMENT` rules applied in order to sources
        /// (a pattern is a prefix in which `*` is any run without `/`; `${1}` in the replacement is the first
        /// `*`'s text); default none.
        public var urlReplacements: [String] = []

        /// imgproxy's `IMGPROXY_ALLOWED_SOURCES`: source prefixes (with `*` as in replacements) imgproxy URLs
        /// may name; default none: any (this server's host rules still apply).
        public var allowedSources: [String] = []

        /// imgproxy's `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`: the option names imgproxy URLs may use (presets
        /// may use any); default none: all.
        public var allowedOptions: [String] = []

        /// imgproxy's `IMGPROXY_WATERMARK_OPACITY`: multiplies the opacity of imgproxy URLs' `watermark`
        /// (whose image is ``ServerConfiguration/Rendering/watermarkFiles``' `imgproxy`, imgproxy's `IMGPROXY_WATERMARK_PATH`); default 1.
        public var watermarkOpacity = 1.0

        /// imgproxy's `IMGPROXY_TRUSTED_SIGNATURES`: signatures accepted for any path (with keys); default none.
        public var trustedSignatures: [String] = []

        /// imgproxy's `IMGPROXY_ALLOW_SECURITY_OPTIONS`: whether imgproxy URLs may set `max_src_resolution`,
        /// `max_src_file_size`, `max_animation_frames` and `max_animation_frame_resolution` (never above
        /// this server's own limits); default `false`: such a URL is refused (403), as imgproxy does.
        public var allowsSecurityOptions = false

        /// imgproxy's `IMGPROXY_PRESERVE_HDR`: whether imgproxy URLs keep a 16-bit source's 16 bits in a
        /// format that holds them (PNG, AVIF, JPEG XL, TIFF) when they say nothing (`preserve_hdr`);
        /// default `false`: 8 bits, as imgproxy.
        public var preservesHDR = false

        /// imgproxy's `IMGPROXY_SKIP_PROCESSING_FORMATS`: source formats imgproxy URLs answer as they are
        /// (unless another format is asked for), as their `skip_processing` does; default none.
        public var skipProcessingFormats: [ImageFormat] = []

        /// imgproxy's `IMGPROXY_STRIP_METADATA` and `IMGPROXY_KEEP_COPYRIGHT`: whether imgproxy URLs' outputs
        /// drop the source's EXIF, XMP and IPTC, and keep its copyright notice then, when the URL does not
        /// say (`strip_metadata`, `keep_copyright`); default both `true`, as imgproxy.
        public var stripsMetadata = true

        public var keepsCopyright = true

        /// imgproxy's `IMGPROXY_PREFERRED_FORMATS`: an imgproxy URL that asks for no format (and gets none from
        /// `Accept`) keeps its source's format when it is one of these, else gets the first of them that holds
        /// the image (animation: GIF; transparency: not JPEG); default JPEG, PNG, GIF, as imgproxy. So a WebP,
        /// AVIF, TIFF or BMP source gives JPEG (PNG when transparent), as it does from imgproxy.
        public var preferredFormats = ServerConfiguration.imgproxyDefaultPreferredFormats

        /// imgproxy's `IMGPROXY_ENFORCE_JXL`, `_AVIF`, `_WEBP`: formats that replace even the format an imgproxy
        /// URL asks for when `Accept` takes them (in that order); default none.
        public var enforcedFormats: [ImageFormat] = []

        /// imgproxy's `IMGPROXY_STRIP_COLOR_PROFILE` and `IMGPROXY_AUTO_ROTATE`: what imgproxy URLs do when they
        /// do not say (`strip_color_profile`, `auto_rotate`); default both `true`, as imgproxy.
        public var stripsColorProfile = true

        public var autoRotates = true

        /// imgproxy's `IMGPROXY_ALWAYS_RASTERIZE_SVG`: an SVG source of an imgproxy URL that asks for no format is
        /// rasterised (PNG) rather than passed on sanitised; default `false`, as imgproxy.
        public var alwaysRasterizesSVG = false

        /// imgproxy's `IMGPROXY_USE_LINEAR_COLORSPACE`: imgproxy URLs resize in linear light
        /// (`ImageRecipe.resizesInLinearLight`); default `false`, as imgproxy.
        public var usesLinearColorspace = false

        /// imgproxy's `IMGPROXY_PRESETS`: name to options (`rs:fill:300:300/q:80`); a preset named
        /// `default` applies to every imgproxy URL first. Default none.
        public var presets: [String: String] = [:]

        /// imgproxy's `AUTO_WEBP`/`AUTO_AVIF`: an imgproxy URL with no format gets the one `Accept`
        /// allows, with `Vary: Accept`; default `false`: the source's format, as imgproxy.
        public var autoFormat = false

        /// The formats ``ServerConfiguration/Imgproxy/autoFormat`` lets `Accept` choose, in imgproxy's order (JPEG XL, AVIF, WebP;
        /// an animation: WebP): those whose `AUTO_*` variable is set, all three when the file sets it.
        public var autoFormats: [ImageFormat] = [.jxl, .avif, .webp]

        /// imgproxy's `IMGPROXY_USE_ETAG` and `IMGPROXY_USE_LAST_MODIFIED`: whether imgproxy URLs' answers
        /// carry `ETag` and `Last-Modified` (and honour `If-None-Match` and `If-Modified-Since`); default
        /// both `true`, as imgproxy.
        public var usesETag = true

        public var usesLastModified = true

        /// imgproxy's `IMGPROXY_ETAG_BUSTER`: a text in every imgproxy ETag (`"BUSTER/…"`), so that changing it
        /// makes every client fetch again; default none.
        public var etagBuster: String?

        /// imgproxy's `IMGPROXY_LAST_MODIFIED_BUSTER` (RFC 3339): a source's `Last-Modified` older than this is
        /// sent as this; default none.
        public var lastModifiedBuster: Date?

        /// imgproxy's `IMGPROXY_SET_CANONICAL_HEADER`: an answer from an http(s) source carries
        /// `Link: <SOURCE>; rel="canonical"`; default `false`.
        public var setsCanonicalHeader = false

        /// imgproxy's `IMGPROXY_CACHE_CONTROL_PASSTHROUGH`: imgproxy URLs' `Cache-Control` follows the source's
        /// (at most ``ServerConfiguration/Caching/responseMaxAge``, as every other answer here); default
        /// `false`: `max-age=TTL, public` (``ttl``) whatever the source says, as imgproxy.
        public var cacheControlPassthrough = false

        /// imgproxy's `IMGPROXY_TTL`: the `max-age` of imgproxy URLs' answers without passthrough, in seconds;
        /// default a year (31,536,000), as imgproxy; 0: `no-cache`.
        public var ttl = 31_536_000

        public init() {}
    }
}

extension ServerConfiguration.Imgproxy: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require

        try require(
            keys.isEmpty && salts.isEmpty
                || ImgproxySigner(keys: keys, salts: salts, size: signatureSize) != nil,
            "imgproxy.keys",
            "imgproxy.keys and imgproxy.salts must be hex, as many salts as keys (keys not empty), and imgproxy.signatureSize from 1 to 32"
        )
        try require((1...32).contains(signatureSize), "imgproxy.signatureSize", "must be from 1 to 32")
        try require(ttl >= 0, "imgproxy.ttl", "must be 0 or more seconds")
        try require(
            etagBuster.map { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0 != "\"" && !$0.isWhitespace } } ?? true,
            "imgproxy.etagBuster", "must be printable ASCII without quotes or spaces")
        try require(
            watermarkOpacity > 0 && watermarkOpacity <= 1, "imgproxy.watermarkOpacity",
            "must be above 0, at most 1")
    }
}
