import Foundation
import Imagery

extension ServerConfiguration {
    /// The defaults overridden by the configuration file at `url` (JSON, or YAML when its name ends in
    /// `.yaml` or `.yml`; ``ConfigurationFile``), then ``validate()``d.
    /// - Throws: ``ConfigurationFileError`` naming the file and what is wrong with it.
    public init(contentsOf url: URL) throws(ConfigurationFileError) {
        self = try Self.naming(url.path) { () throws(ConfigurationFileError) in
            try ConfigurationLoader.load([ConfigurationFile.layer(contentsOf: url).layer]).configuration
        }
    }

    /// The defaults overridden by the JSON configuration `data`, then ``validate()``d.
    /// - Parameters:
    ///   - data: The configuration file's bytes (a JSON object: ``ConfigurationFile``).
    ///   - name: What errors call the configuration (its file's path).
    /// - Throws: ``ConfigurationFileError`` naming the key, `name` and what is wrong.
    public init(json data: Data, name: String) throws(ConfigurationFileError) {
        self = try Self.naming(name) { () throws(ConfigurationFileError) in
            try ConfigurationLoader.load([ConfigurationFile.layer(data, name: name).layer]).configuration
        }
    }

    /// `load`'s configuration, or its error naming the file `name` (a rule between settings names none).
    private static func naming(
        _ name: String, _ load: () throws(ConfigurationFileError) -> ServerConfiguration
    ) throws(ConfigurationFileError) -> ServerConfiguration {
        do {
            return try load()
        } catch {
            guard !error.message.contains(name) else { throw error }
            throw ConfigurationFileError(message: "\(name): \(error.message)", key: error.key)
        }
    }

    /// The longest duration a configuration may give, in seconds: a year.
    public static let longestDuration: Double = 365 * 86_400

    /// `value` seconds as a duration (to the millisecond), `nil` unless from 0 to ``longestDuration``
    /// (the check between a number from a file or the command line and `Duration`'s arithmetic).
    public static func duration(seconds value: Double) -> Duration? {
        guard value.isFinite, (0...longestDuration).contains(value) else { return nil }
        return .milliseconds(Int64((value * 1000).rounded()))
    }

    /// Checks that every value is one the server can run with (a port, positive limits and
    /// timeouts, an in-flight budget below the memory limit), each part's rules in turn.
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value is not.
    public func validate() throws(ConfigurationFileError) {
        func require(_ condition: Bool, _ key: String, _ message: String) throws(ConfigurationFileError) {
            if !condition { throw ConfigurationFileError(message: message, key: key) }
        }
        let longest = Duration.seconds(Int64(Self.longestDuration))
        let bytes = 1...(1 << 50)  // up to a pebibyte: sums of limits never overflow
        let seconds = 0...Int(Self.longestDuration) * 100
        // listener
        try require((0...65535).contains(port), "listener.port", "must be from 0 to 65535")
        try require(
            idleTimeout > .zero && idleTimeout <= longest, "listener.idleTimeoutSeconds",
            "must be more than 0 and at most a year")
        try require(
            (1...1 << 20).contains(maximumConnections), "listener.maximumConnections", "must be from 1 to 1048576")
        try require(
            (1024...(1 << 20)).contains(maximumHeaderBytes), "listener.maximumHeaderBytes",
            "must be from 1024 to 1048576")
        // limits
        try require((1 << 20...1 << 50).contains(memoryLimit), "limits.memoryLimit", "must be from 1 MiB to 1 PiB")
        if let inflight = maximumInflightMemory {
            try require(
                inflight > 0 && inflight < memoryLimit, "limits.maximumInflightMemory",
                "must be positive and less than limits.memoryLimit (the caches get the rest)"
            )
        }
        try require(
            (0...1 << 20).contains(admissionQueueLength), "limits.admissionQueueLength", "must be from 0 to 1048576")
        if let admissionTimeout {
            try require(
                admissionTimeout >= .zero && admissionTimeout <= longest, "limits.admissionTimeoutSeconds",
                "must be from 0 to a year")
        }
        try require(
            requestTimeout > .zero && requestTimeout <= longest, "limits.requestTimeoutSeconds",
            "must be more than 0 and at most a year")
        try require(bytes.contains(maximumSourceBytes), "limits.maximumSourceBytes", "must be from 1 to 1 PiB")
        try require(bytes.contains(maximumSourcePixels), "limits.maximumSourcePixels", "must be from 1 to 2^50")
        try require((1...100_000).contains(maximumFrames), "limits.maximumFrames", "must be from 1 to 100000")
        try require(
            maximumFramePixels.map(bytes.contains) ?? true, "limits.maximumFramePixels", "must be from 1 to 2^50")
        try require((1...1 << 20).contains(maximumOutputSide), "limits.maximumOutputSide", "must be from 1 to 1048576")
        // caching
        try require(diskLimit == 0 || bytes.contains(diskLimit), "caching.diskLimit", "must be from 0 to 1 PiB")
        try require(
            seconds.contains(responseMaxAge), "caching.responseMaxAge", "must be from 0 to 100 years in seconds")
        try require(
            seconds.contains(minimumFreshness), "caching.minimumFreshness", "must be from 0 to 100 years in seconds")
        // origins
        try require(
            originTimeout > .zero && originTimeout <= longest, "origins.timeoutSeconds",
            "must be more than 0 and at most a year")
        try require(
            (1...1 << 16).contains(maximumConcurrentFetches), "origins.maximumConcurrentFetches",
            "must be from 1 to 65536")
        if let root = localFilesystemRoot {
            try require(Self.isDirectory(root), "origins.localFilesystemRoot", "\(root.path) is not a directory")
        }
        // requests
        try require(
            signingKey.map { !$0.isEmpty } ?? true, "requests.signingKey",
            "cannot be empty (leave it out to turn signing off)")
        try require(
            !onlyPresets || !presets.isEmpty || !imgproxyPresets.isEmpty, "requests.onlyPresets",
            "needs at least one preset")
        let checked: Presets
        do {
            checked = try Presets(presets, onlyPresets: false)
        } catch {
            throw ConfigurationFileError(message: error.message, key: "requests.presets")
        }
        for name in checked.names {
            do {
                _ = try ImageParameters(
                    query: checked.expand(["url": "https://example.com/a.jpg", "preset": name]),
                    maximumSide: maximumOutputSide,
                    watermarks: Dictionary(uniqueKeysWithValues: watermarkFiles.keys.map { ($0, $0) })
                )
            } catch {
                throw ConfigurationFileError(
                    message: "\(name): \(ServerError.from(error).message)", key: "requests.presets")
            }
        }
        // rendering
        for (format, quality) in formatQualities {
            try require(
                (1...100).contains(quality), "rendering.formatQualities", "\(format.rawValue) must be from 1 to 100")
        }
        if case .ssimulacra2(let score) = autoQuality.target {
            try require(
                (0...100).contains(score), "rendering.autoQuality.target", "must be a SSIMULACRA2 score from 0 to 100")
        }
        let bounds =
            [autoQuality.minimum, autoQuality.maximum].compactMap { $0 } + autoQuality.formatMinimums.values
            + autoQuality.formatMaximums.values
        try require(
            bounds.allSatisfy((1...100).contains), "rendering.autoQuality.minimum",
            "minimum and maximum must be from 1 to 100")
        try require(
            autoQuality.tolerance >= 0 && autoQuality.tolerance.isFinite, "rendering.autoQuality.tolerance",
            "must be 0 or more")
        try require(autoQuality.maximumPixels >= 1, "rendering.autoQuality.maximumPixels", "must be 1 or more")
        // s3
        try require(
            s3Endpoint != nil || (s3Bucket == nil && s3SourceBuckets.isEmpty), "s3.endpoint",
            "s3.bucket and s3.sourceBuckets need s3.endpoint (the store to use)"
        )
        try require(
            s3Bucket.map(Self.isBucketName) ?? true, "s3.bucket", "must be a bucket name: 3 to 63 of a-z, 0-9, '.', '-'"
        )
        try require(
            s3SourceBuckets.allSatisfy(Self.isBucketName), "s3.sourceBuckets",
            "must be bucket names: 3 to 63 of a-z, 0-9, '.', '-'")
        try require(
            !s3Region.isEmpty && s3Region.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") },
            "s3.region",
            "must be a region name such as us-east-1"
        )
        // cluster
        try require(
            clusterInstances.allSatisfy(Self.isInstanceAddress), "cluster.instances",
            "must be HOST:PORT addresses, such as 10.0.0.11:8080")
        try require(
            clusterInstances.isEmpty == (clusterSelf == nil) && (clusterSelf.map(clusterInstances.contains) ?? true),
            "cluster.self",
            "cluster.self and cluster.instances go together: this instance's HOST:PORT, one of cluster.instances"
        )
        // gallery
        if let galleryDirectory {
            try require(
                Self.isDirectory(galleryDirectory), "gallery.directory", "\(galleryDirectory.path) is not a directory")
        }
        // fallback
        try require(
            fallbackImageStatus == 0 || (100...599).contains(fallbackImageStatus), "fallback.status",
            "must be 0 (the error's status) or 100 to 599")
        try require(fallbackImageMaxAge >= 0, "fallback.maxAge", "must be 0 or more seconds")
        // imgproxy
        try require(
            imgproxyKeys.isEmpty && imgproxySalts.isEmpty
                || ImgproxySigner(keys: imgproxyKeys, salts: imgproxySalts, size: imgproxySignatureSize) != nil,
            "imgproxy.keys",
            "imgproxy.keys and imgproxy.salts must be hex, as many salts as keys (keys not empty), and imgproxy.signatureSize from 1 to 32"
        )
        try require((1...32).contains(imgproxySignatureSize), "imgproxy.signatureSize", "must be from 1 to 32")
        try require(
            imgproxyWatermarkOpacity > 0 && imgproxyWatermarkOpacity <= 1, "imgproxy.watermarkOpacity",
            "must be above 0, at most 1")
        // thumbor
        try require(
            thumborSecurityKey.map { !$0.isEmpty } ?? true, "thumbor.securityKey",
            "cannot be empty (leave it out for /unsafe/ URLs)")
        try require(
            thumborMaximumWidth >= 0 && thumborMaximumHeight >= 0, "thumbor.maximumWidth",
            "maximumWidth and maximumHeight must be 0 or more")
    }

    static func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// `text` as an S3 endpoint: an http or https URL with a host, else `nil`.
    /// `HOST:PORT` of an instance, as nginx's `server` lines take it.
    public static func isInstanceAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), colon != text.startIndex,
            let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port)
        else { return false }
        return !text.contains { $0 == ";" || $0 == "{" || $0 == "}" || $0 == "/" || $0.isWhitespace }
    }

    public static func s3EndpointURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }

    /// Whether `name` is a valid S3 bucket name (3–63 of lower-case letters, digits, `.` and `-`).
    static func isBucketName(_ name: String) -> Bool {
        (3...63).contains(name.count)
            && name.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "." || $0 == "-" }
    }

    /// The formats whose quality can be set.
    static let lossyFormats: [ImageFormat] = [.jpeg, .webp, .avif, .jxl, .heic]
}

/// A configuration file that cannot be used, and why.
public struct ConfigurationFileError: Error, CustomStringConvertible, Sendable {
    public let message: String
    /// The setting the message is about (`limits.memoryLimit`), when it is about one.
    public var key: String?
    public var description: String { message }

    public init(message: String, key: String? = nil) {
        self.message = message
        self.key = key
    }
}
