import Foundation
import Hummingbird
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryS3
import ImageryVips
import Logging

/// What the service is built from: the watermark images and the S3 clients its configuration names.
extension ImageService {
    /// The watermark files read, by recipe name, and those names by configured name.
    /// - Throws: ``ConfigurationFileError`` naming a file that cannot be read or is no image.
    static func loadWatermarks(_ files: [String: URL]) throws -> (images: [String: Data], ids: [String: String]) {
        var (images, ids) = ([String: Data](), [String: String]())
        for (name, url) in files {
            guard let data = ServerConfiguration.contents(of: url), ImageFormat(sniffing: data) != nil else {
                throw ConfigurationFileError(
                    message: "watermark \(name): \(ServerConfiguration.describe(url)) cannot be read or is not an image"
                )
            }
            let id = "\(name)-\(String(Checksum.of(data), radix: 16))"
            (images[id], ids[name]) = (data, id)
        }
        return (images, ids)
    }

    /// An S3 client of `configuration`'s endpoint, if it has one and it is used for `forSources`
    /// (`s3://` sources: the origin's time limit) or else for the shared tier (a cache: a store that is
    /// down must cost a request little, so short connects and one retry).
    /// - Throws: ``ConfigurationFileError`` when no credentials can be found.
    static func s3Client(_ configuration: ServerConfiguration, forSources: Bool) throws -> S3Client? {
        guard let endpoint = configuration.s3.endpoint,
            forSources ? !configuration.s3.sourceBuckets.isEmpty : configuration.s3.bucket != nil
        else { return nil }
        do {
            let credentials =
                try configuration.s3.credentialsFile.map { file throws(S3Error) in try S3Credentials.fromFile(file) }
                ?? S3Credentials.fromEnvironment()
            guard let credentials else {
                throw S3Error.credentials("none found for \(endpoint.absoluteString)")
            }
            var client = S3Client.Configuration(
                endpoint: endpoint, region: configuration.s3.region, credentials: credentials)
            client.maximumObjectBytes = configuration.limits.maximumSourceBytes
            if forSources {
                client.timeout = configuration.origins.timeout
            } else {
                (client.timeout, client.connectTimeout, client.maximumAttempts) = (.seconds(2), .milliseconds(250), 2)
            }
            return try S3Client(configuration: client)
        } catch let error as S3Error {
            throw ConfigurationFileError(message: error.description)
        }
    }
}
