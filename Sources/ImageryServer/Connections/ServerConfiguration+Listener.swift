import Foundation
import Imagery

extension ServerConfiguration {
    /// Where and how connections are taken: the address, timeouts, limits on connections and headers.
    public struct Listener: Sendable {
        /// The address to listen on; default `127.0.0.1`.
        public var host = "127.0.0.1"

        /// The port; default 8080 (0 picks a free one).
        public var port = 8080

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

        public init() {}
    }
}

extension ServerConfiguration.Listener: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require
        let longest = ConfigurationRule.longest
        try require((0...65535).contains(port), "listener.port", "must be from 0 to 65535")
        try require(
            idleTimeout > .zero && idleTimeout <= longest, "listener.idleTimeoutSeconds",
            "must be more than 0 and at most a year")
        try require(
            (1...1 << 20).contains(maximumConnections), "listener.maximumConnections", "must be from 1 to 1048576")
        try require(
            (1024...(1 << 20)).contains(maximumHeaderBytes), "listener.maximumHeaderBytes",
            "must be from 1024 to 1048576")
    }
}
