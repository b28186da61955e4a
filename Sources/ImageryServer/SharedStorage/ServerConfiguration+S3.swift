import Foundation
import Imagery

extension ServerConfiguration {
    /// An S3-compatible store: the shared tier and `s3://` sources.
    public struct S3: Sendable {
        /// An S3-compatible store (`http://127.0.0.1:8333`, `https://s3.eu-west-1.amazonaws.com`), for the
        /// shared tier (``ServerConfiguration/S3/bucket``) and `s3://` sources (``ServerConfiguration/S3/sourceBuckets``); path-style requests, signed
        /// with SigV4. Credentials come from ``ServerConfiguration/S3/credentialsFile`` or the environment (`AWS_ACCESS_KEY_ID`,
        /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), never from the command line. Default `nil`: none.
        public var endpoint: URL?

        /// The store's region (part of every signature); default `us-east-1`.
        public var region = "us-east-1"

        /// The bucket of the tier shared by every instance: originals and stored responses, looked up
        /// after the instance's memory and disk and before the origin (`PersistentTiers`). Default `nil`:
        /// no shared tier.
        public var bucket: String?

        /// The prefix of the shared tier's object names; default `imagery/`.
        public var prefix = "imagery/"

        /// An AWS shared credentials file (`[default]` with `aws_access_key_id`, `aws_secret_access_key`);
        /// default `nil`: the environment.
        public var credentialsFile: URL?

        /// The buckets `s3://BUCKET/KEY` sources may be read from (any other is 403); default none.
        public var sourceBuckets: [String] = []

        public init() {}
    }
}

extension ServerConfiguration.S3: ConfigurationPart {
    /// Checks that every value is one the server can run with.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        let require = ConfigurationRule.require

        try require(
            endpoint != nil || (bucket == nil && sourceBuckets.isEmpty), "s3.endpoint",
            "s3.bucket and s3.sourceBuckets need s3.endpoint (the store to use)"
        )
        try require(
            bucket.map(ServerConfiguration.isBucketName) ?? true, "s3.bucket",
            "must be a bucket name: 3 to 63 of a-z, 0-9, '.', '-'"
        )
        try require(
            sourceBuckets.allSatisfy(ServerConfiguration.isBucketName), "s3.sourceBuckets",
            "must be bucket names: 3 to 63 of a-z, 0-9, '.', '-'")
        try require(
            !region.isEmpty && region.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") },
            "s3.region",
            "must be a region name such as us-east-1"
        )
    }
}
