import Foundation
import Imagery

extension ServerConfiguration {
    /// The instances of a cluster, so that each source is fetched by one of them.
    public struct Cluster: Sendable {
        /// Every instance of the cluster (`HOST:PORT`, as `imagery cluster nginx-config --instance` and
        /// nginx's `server` lines write them) and ``ServerConfiguration/Cluster/selfAddress``, this instance among them: a request whose
        /// source another instance owns on nginx's ring is sent there (`OwnerForwarding`), so that every
        /// spelling of a source costs one origin fetch in the cluster. Default none: every request served here.
        public var instances: [String] = []

        /// This instance's `HOST:PORT` in ``ServerConfiguration/Cluster/instances``; default `nil`.
        public var selfAddress: String?

        public init() {}
    }
}

extension ServerConfiguration.Cluster: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require

        try require(
            instances.allSatisfy(ServerConfiguration.isInstanceAddress), "cluster.instances",
            "must be HOST:PORT addresses, such as 10.0.0.11:8080")
        try require(
            instances.isEmpty == (selfAddress == nil) && (selfAddress.map(instances.contains) ?? true),
            "cluster.self",
            "cluster.self and cluster.instances go together: this instance's HOST:PORT, one of cluster.instances"
        )
    }
}
