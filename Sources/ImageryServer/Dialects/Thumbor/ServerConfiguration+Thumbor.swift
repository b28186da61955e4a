import Foundation
import Imagery

extension ServerConfiguration {
    /// thumbor URLs: their signatures, filters and thumbor's settings (its `thumbor.conf` names).
    public struct Thumbor: Sendable {
        /// Whether thumbor URLs (`/unsafe/300x200/smart/example.com/a.jpg`, `/SIGNATURE/...`) are answered; default `true`.
        public var enabled = true

        /// thumbor's `SECURITY_KEY`: thumbor URLs must carry its HMAC-SHA1 signature (as libthumbor makes
        /// them), and `/unsafe/` ones are refused; default `nil`.
        public var securityKey: String?

        /// Whether a thumbor filter with no equivalent here is a 400; default `false`: skipped, as thumbor
        /// skips filters it has not loaded.
        public var refusesUnknownFilters = false

        /// Whether a loaded thumbor filter whose arguments thumbor's grammar rejects (`sharpen()`,
        /// `watermark(URL,30)`) is a 400 naming what is wrong; default `false`: skipped, as thumbor skips
        /// it, and said (`X-Imagery-Skipped-Filters`, `imagery_thumbor_filters_skipped_total`, a warning).
        public var refusesBadFilterArguments = false

        /// thumbor's `AUTO_WEBP`: a thumbor URL without `format()` gets the format `Accept` allows (WebP,
        /// AVIF, JPEG XL), with `Vary: Accept`; default `false`: the source's format, as thumbor.
        public var autoWebP = false

        /// thumbor's `AUTO_PNG_TO_JPG`: a PNG source without transparency is answered as JPEG by thumbor
        /// URLs without `format()` (a URL's `autojpg()` turns it off); default `false`: only URLs with
        /// `autojpg()` do, as in thumbor.
        public var autoPNGToJPEG = false

        /// The thumbor filters thumbor URLs may use, by name (thumbor's `FILTERS`, its modules' last parts:
        /// `thumbor.filters.brightness` is `brightness`, `thumbor.filters.redeye` is `red_eye`); others are
        /// skipped, as thumbor skips filters it has not loaded (or refused with
        /// ``ServerConfiguration/Thumbor/refusesUnknownFilters``). Default: thumbor 7.8's own default list, which leaves out
        /// `autojpg` and `red_eye`.
        public var filters = ServerConfiguration.thumborDefaultFilters

        /// thumbor's `ALLOW_UNSAFE_URL`: whether `/unsafe/` thumbor URLs are answered; `nil` (default): only
        /// when no thumbor security key is set (with one, thumbor URLs must be signed).
        public var allowsUnsafeURLs: Bool?

        /// thumbor's `RESPECT_ORIENTATION`: whether thumbor URLs apply the source's EXIF orientation; default
        /// `true` (thumbor's own default is `false`: a thumbor configuration file without it turns it off).
        public var respectsOrientation = true

        /// thumbor's `MAX_WIDTH` and `MAX_HEIGHT`: a larger width or height asked for is made this one (not
        /// refused, as thumbor); 0 (default): no limit but ``ServerConfiguration/Limits/maximumOutputSide``.
        public var maximumWidth = 0

        public var maximumHeight = 0

        /// thumbor's `META_CALLBACK_NAME`: `meta/` answers are JavaScript calling it; `nil` (default): JSON,
        /// unless the URL's `callback=` names one.
        public var metaCallback: String?

        public init() {}
    }
}

extension ServerConfiguration.Thumbor: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require

        try require(
            securityKey.map { !$0.isEmpty } ?? true, "thumbor.securityKey",
            "cannot be empty (leave it out for /unsafe/ URLs)")
        try require(
            maximumWidth >= 0 && maximumHeight >= 0, "thumbor.maximumWidth",
            "maximumWidth and maximumHeight must be 0 or more")
    }
}
