import Foundation
import Imagery

extension ServerConfiguration {
    /// The disk cache and how long answers stay fresh in caches.
    public struct Caching: Sendable {
        /// The disk cache directory; default `.imagery-cache` in the working directory. `nil` disables the disk cache.
        public var directory: URL? = URL(fileURLWithPath: ".imagery-cache")

        /// Bytes of the disk cache; default 2 GiB.
        public var diskLimit = 2 << 30

        /// The longest `Cache-Control` max-age of image responses, in seconds; a response says less
        /// when its source's remaining freshness is shorter (`ResponseCacheHeaders`). Default one day.
        public var responseMaxAge = 86_400

        /// The least freshness, in seconds, given to a source whose response states no expiry
        /// (no `max-age`, no `Expires`; many origins send none), in every cache tier and in the
        /// responses' `max-age`. Explicit `max-age`, `Expires`, `no-cache` and `no-store` are followed
        /// as sent. Default one hour.
        public var minimumFreshness = 3600

        public init() {}
    }
}

extension ServerConfiguration.Caching: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require
        let bytes = ConfigurationRule.bytes
        let seconds = ConfigurationRule.seconds
        try require(diskLimit == 0 || bytes.contains(diskLimit), "caching.diskLimit", "must be from 0 to 1 PiB")
        try require(
            seconds.contains(responseMaxAge), "caching.responseMaxAge", "must be from 0 to 100 years in seconds")
        try require(
            seconds.contains(minimumFreshness), "caching.minimumFreshness", "must be from 0 to 100 years in seconds")
    }
}
