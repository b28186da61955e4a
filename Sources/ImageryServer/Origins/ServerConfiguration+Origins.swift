import Foundation
import Imagery

extension ServerConfiguration {
    /// Which sources may be fetched, and how.
    public struct Origins: Sendable {
        /// If not empty, only these source hosts are fetched (exact names, or `*.example.com`); default empty (any public host).
        public var allowedHosts: [String] = []

        /// Hosts fetched even though they resolve to loopback, private, link-local or
        /// multicast addresses (refused for every other host); default none.
        public var privateNetworkHosts: [String] = []

        /// The most time an origin fetch may take; default 10 s.
        public var timeout: Duration = .seconds(10)

        /// Attempts per origin fetch, the first included, when it fails for a transient reason (a refused
        /// or reset connection; HTTP 408, 429, 500, 502, 503, 504); default 2; 1: never tried again.
        /// The retry waits 100 ms (with jitter), or what `Retry-After` asks up to 1 s, and only
        /// while ``timeout`` allows (``retryPolicy``).
        public var maximumAttempts = 2

        /// The most origin fetches at once; default 8 a usable processor, at least 16 (``MachineDefaults``).
        public var maximumConcurrentFetches = MachineDefaults.current.maximumConcurrentFetches

        /// imgproxy's `IMGPROXY_LOCAL_FILESYSTEM_ROOT`: imgproxy URLs may name `local:///PATH` sources,
        /// files under this directory (never outside it); default `nil`: no `local://` sources.
        public var localFilesystemRoot: URL?

        /// How source hosts are resolved: the system's resolver; tests give a fake one (a name that
        /// never answers, a name resolving to an address inside an IPv6 form).
        package var resolver: SourceGuard.Resolver = SourceGuard.resolve

        public init() {}

        /// How the pipeline retries origin fetches: ``maximumAttempts``, short waits (a client is
        /// waiting), within ``timeout``.
        public var retryPolicy: RetryPolicy {
            RetryPolicy(
                maximumAttempts: maximumAttempts, initialDelay: .milliseconds(100), maximumDelay: .seconds(1),
                maximumRetryAfter: .seconds(1), deadline: timeout)
        }
    }
}

extension ServerConfiguration.Origins: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require
        let longest = ConfigurationRule.longest
        try require(
            timeout > .zero && timeout <= longest, "origins.timeoutSeconds",
            "must be more than 0 and at most a year")
        try require((1...10).contains(maximumAttempts), "origins.maximumAttempts", "must be from 1 to 10")
        try require(
            (1...1 << 16).contains(maximumConcurrentFetches), "origins.maximumConcurrentFetches",
            "must be from 1 to 65536")
        if let root = localFilesystemRoot {
            try require(
                ServerConfiguration.isDirectory(root), "origins.localFilesystemRoot", "\(root.path) is not a directory")
        }
    }
}
