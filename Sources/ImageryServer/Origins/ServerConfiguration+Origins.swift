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

        /// The most origin fetches at once; default 8 a usable processor, at least 16 (``MachineDefaults``).
        public var maximumConcurrentFetches = MachineDefaults.current.maximumConcurrentFetches

        /// imgproxy's `IMGPROXY_LOCAL_FILESYSTEM_ROOT`: imgproxy URLs may name `local:///PATH` sources,
        /// files under this directory (never outside it); default `nil`: no `local://` sources.
        public var localFilesystemRoot: URL?

        public init() {}
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
        try require(
            (1...1 << 16).contains(maximumConcurrentFetches), "origins.maximumConcurrentFetches",
            "must be from 1 to 65536")
        if let root = localFilesystemRoot {
            try require(
                ServerConfiguration.isDirectory(root), "origins.localFilesystemRoot", "\(root.path) is not a directory")
        }
    }
}
