import Configuration
import Foundation
import Imagery

extension ServerConfiguration {
    static let s3Settings: [ConfigurationSetting] = [
        ConfigurationSetting(
            "s3.endpoint", .value, file: "s3Endpoint", option: "s3-endpoint",
            "An S3-compatible store (http://127.0.0.1:8333) for s3.bucket and s3.sourceBuckets; default none."
        ) { configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            guard !text.isEmpty else { return configuration.s3.endpoint = nil }
            guard let url = s3EndpointURL(text) else {
                throw ConfigurationFileError(
                    message: "takes an http or https URL with a host, such as http://127.0.0.1:8333, not '\(text)'")
            }
            configuration.s3.endpoint = url
        } write: {
            .string($0.s3.endpoint?.absoluteString ?? "")
        },
        .text(
            "s3.region", file: "s3Region", option: "s3-region", \.s3.region, "The store's region; default us-east-1."),
        .optionalText(
            "s3.bucket", file: "s3Bucket", option: "s3-bucket", \.s3.bucket,
            "A bucket shared by every instance: originals and stored responses; default none."
        ),
        .text(
            "s3.prefix", file: "s3Prefix", option: "s3-prefix", \.s3.prefix,
            "The prefix of the shared objects' names; default imagery/."),
        .path(
            "s3.credentialsFile", file: "s3CredentialsFile", option: "s3-credentials-file", \.s3.credentialsFile,
            "An AWS shared credentials file; default: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY."
        ),
        .list(
            "s3.sourceBuckets", file: "s3SourceBuckets", option: "s3-source-bucket", \.s3.sourceBuckets,
            "Buckets s3://BUCKET/KEY sources may be read from; default none."
        ),
    ]

    static let clusterSettings: [ConfigurationSetting] = [
        .list(
            "cluster.instances", file: "clusterInstances", option: "cluster-instance", \.cluster.instances,
            "HOST:PORT of every instance of the cluster, this one included; default none."
        ),
        .optionalText(
            "cluster.self", file: "clusterSelf", option: "cluster-self", \.cluster.selfAddress,
            "This instance's HOST:PORT among them."),
    ]

    static let gallerySettings: [ConfigurationSetting] = [
        .path(
            "gallery.directory", file: "galleryDirectory", option: "gallery-dir", \.gallery.directory,
            "Its images are shown on the gallery page at / and served at /files/NAME; default none."
        ),
        ConfigurationSetting(
            "gallery.urls", .list, file: "galleryURLs", option: "gallery-url",
            "Image URLs shown on the gallery page; default none."
        ) { configuration, content throws(ConfigurationFileError) in
            var urls: [URL] = []
            for text in try SettingText.strings(content) {
                guard let url = sourceURL(text) else {
                    throw ConfigurationFileError(message: "\(text) is not an absolute http or https URL")
                }
                urls.append(url)
            }
            configuration.gallery.urls = urls
        } write: {
            .stringArray($0.gallery.urls.map(\.absoluteString))
        },
    ]

    static let fallbackSettings: [ConfigurationSetting] = [
        ConfigurationSetting(
            "fallback.image", .value, file: "fallbackImageFile",
            "An image answered in place of a source that cannot be had: a file, a data: URL or an http(s) URL; default none."
        ) { configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration.fallback.image = text.isEmpty ? nil : imageLocation(text)
        } write: {
            .string($0.fallback.image.map(showLocation) ?? "")
        },
        .integer(
            "fallback.status", file: "fallbackImageStatus", \.fallback.status,
            "The fallback response's status; 0: the error's own; default 200."
        ),
        .integer(
            "fallback.maxAge", file: "fallbackImageMaxAge", \.fallback.maxAge,
            "The longest max-age of a fallback response, in seconds; default 60."
        ),
    ]
}
