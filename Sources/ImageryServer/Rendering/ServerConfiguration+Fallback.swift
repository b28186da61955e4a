import Foundation
import Imagery

extension ServerConfiguration {
    /// An image answered in place of a source that cannot be had (imgproxy's fallback image).
    public struct Fallback: Sendable {
        /// An image answered in place of a source that cannot be fetched or decoded (imgproxy's
        /// `IMGPROXY_FALLBACK_IMAGE_PATH`), made with the request's own options; default `nil`: the error.
        /// A file URL, a `data:` URL holding the image (base64; imgproxy's `IMGPROXY_FALLBACK_IMAGE_DATA`), or an
        /// http(s) URL downloaded once at start (`IMGPROXY_FALLBACK_IMAGE_URL`; `imagery serve` does it).
        public var image: URL?

        /// The status of a fallback response (imgproxy's `IMGPROXY_FALLBACK_IMAGE_HTTP_CODE`); 0: the
        /// error's own status. Default 200.
        public var status = 200

        /// The longest `Cache-Control` max-age of a fallback response, in seconds (imgproxy's
        /// `IMGPROXY_FALLBACK_IMAGE_TTL`); default 60, so that no cache keeps a placeholder for long.
        public var maxAge = 60

        public init() {}
    }
}

extension ServerConfiguration.Fallback: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require
        let seconds = ConfigurationRule.seconds
        try require(
            status == 0 || (100...599).contains(status), "fallback.status",
            "must be 0 (the error's status) or 100 to 599")
        try require(maxAge >= 0, "fallback.maxAge", "must be 0 or more seconds")
    }
}
