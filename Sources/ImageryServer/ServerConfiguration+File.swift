import Foundation
import Imagery

extension ServerConfiguration {
    /// A configuration file: JSON whose keys are the names of the properties
    /// (`host`, `port`, `cacheDirectory`, `memoryLimit`, `maximumInflightMemory`,
    /// `admissionQueueLength`, `admissionTimeoutSeconds`, `requestTimeoutSeconds`, `idleTimeoutSeconds`, `maximumConnections`,
    /// `maximumHeaderBytes`, `diskLimit`, `allowedHosts`,
    /// `privateNetworkHosts`, `maximumSourceBytes`, `maximumSourcePixels`, `maximumFrames`,
    /// `maximumOutputSide`, `originTimeoutSeconds`, `maximumConcurrentFetches`,
    /// `signingKey`, `answersHitsOnEventLoop`, `thumborURLs`, `thumborSecurityKey`, `thumborRefusesUnknownFilters`, `thumborRefusesBadFilterArguments`, `thumborAutoWebP`, `thumborAutoPNGToJPEG`, `imgproxyURLs`, `imgproxyKeys`, `imgproxySalts` (lists of hex), `imgproxySignatureSize`, `imgproxyPresets` (an object: name to options), `imgproxyAutoFormat`, `responseMaxAge`, `minimumFreshness`, `formatQualities` (an object: `{"jpeg": 85}`; formats not
    /// named keep their defaults), `autoQuality` (an object: ``AutoQualityFile``), `presets` (an object: name to query), `onlyPresets`, `watermarkFiles` (an
    /// object: name to file path), `s3Endpoint`, `s3Region`, `s3Bucket`, `s3Prefix`, `s3CredentialsFile`,
    /// `s3SourceBuckets`, `clusterInstances`, `clusterSelf`, `galleryDirectory`,
    /// `galleryURLs`, `maximumFramePixels`, `localFilesystemRoot`, `fallbackImageFile`, `fallbackImageStatus`,
    /// `fallbackImageMaxAge`, `imgproxyTrustedSignatures`, `imgproxyAllowsSecurityOptions`, `imgproxyPreservesHDR`,
    /// `imgproxySkipProcessingFormats` (names: `["jpeg", "gif"]`), `imgproxyStripsMetadata`, `imgproxyKeepsCopyright`,
    /// `imgproxyPreferredFormats`, `imgproxyEnforcedFormats` (names), `imgproxyStripsColorProfile`, `imgproxyAutoRotates`,
    /// `imgproxyAlwaysRasterizesSVG`, `imgproxyUsesLinearColorspace`, `imgproxyPathPrefix`,
    /// `imgproxyArgumentsSeparator`, `imgproxyBase64URLIncludesFilename`, `imgproxyBaseURL`,
    /// `imgproxyURLReplacements`, `imgproxyAllowedSources`, `imgproxyAllowedOptions`,
    /// `imgproxyWatermarkOpacity`); absent keys keep their defaults.
    /// `autoQuality`: `{"default": true, "target": 70, "minimum": 70, "maximum": 80, "tolerance": 0.5,
    /// "maximumPixels": 1000000}` (``AutoQualitySettings``; `target` a SSIMULACRA2 score).
    package struct AutoQualityFile: Decodable {
        var `default`: Bool?
        var target: Double?
        var minimum: Int?
        var maximum: Int?
        var tolerance: Double?
        var maximumPixels: Int?
    }

    package struct File: Decodable {
        var host: String?
        var port: Int?
        var cacheDirectory: String?
        var memoryLimit: Int?
        var maximumInflightMemory: Int?
        var admissionQueueLength: Int?
        var admissionTimeoutSeconds: Double?
        var idleTimeoutSeconds: Double?
        var requestTimeoutSeconds: Double?
        var maximumConnections: Int?
        var maximumHeaderBytes: Int?
        var diskLimit: Int?
        var allowedHosts: [String]?
        var privateNetworkHosts: [String]?
        var maximumSourceBytes: Int?
        var maximumSourcePixels: Int?
        var maximumFrames: Int?
        var maximumOutputSide: Int?
        var originTimeoutSeconds: Double?
        var maximumConcurrentFetches: Int?
        var signingKey: String?
        var thumborURLs: Bool?
        var answersHitsOnEventLoop: Bool?
        var thumborSecurityKey: String?
        var thumborRefusesUnknownFilters: Bool?
        var thumborRefusesBadFilterArguments: Bool?
        var thumborAutoWebP: Bool?
        var thumborAutoPNGToJPEG: Bool?
        var imgproxyURLs: Bool?
        var imgproxyKeys: [String]?
        var imgproxySalts: [String]?
        var imgproxySignatureSize: Int?
        var imgproxyPresets: [String: String]?
        var imgproxyAutoFormat: Bool?
        var responseMaxAge: Int?
        var minimumFreshness: Int?
        var formatQualities: [String: Int]?
        var autoQuality: AutoQualityFile?
        var presets: [String: String]?
        var watermarkFiles: [String: String]?
        var onlyPresets: Bool?
        var s3Endpoint: String?
        var s3Region: String?
        var s3Bucket: String?
        var s3Prefix: String?
        var s3CredentialsFile: String?
        var s3SourceBuckets: [String]?
        var clusterInstances: [String]?
        var clusterSelf: String?
        var galleryDirectory: String?
        var galleryURLs: [String]?
        var maximumFramePixels: Int?
        var localFilesystemRoot: String?
        var fallbackImageFile: String?
        var fallbackImageStatus: Int?
        var fallbackImageMaxAge: Int?
        var imgproxyTrustedSignatures: [String]?
        var imgproxyAllowsSecurityOptions: Bool?
        var imgproxyPreservesHDR: Bool?
        var imgproxySkipProcessingFormats: [String]?
        var imgproxyStripsMetadata: Bool?
        var imgproxyPreferredFormats: [String]?
        var imgproxyEnforcedFormats: [String]?
        var imgproxyStripsColorProfile: Bool?
        var imgproxyAutoRotates: Bool?
        var imgproxyAlwaysRasterizesSVG: Bool?
        var imgproxyUsesLinearColorspace: Bool?
        var imgproxyKeepsCopyright: Bool?
        var imgproxyPathPrefix: String?
        var imgproxyArgumentsSeparator: String?
        var imgproxyBase64URLIncludesFilename: Bool?
        var imgproxyBaseURL: String?
        var imgproxyURLReplacements: [String]?
        var imgproxyAllowedSources: [String]?
        var imgproxyAllowedOptions: [String]?
        var imgproxyWatermarkOpacity: Double?
    }

    /// The defaults overridden by the JSON configuration file at `url`.
    /// - Throws: ``ConfigurationFileError`` naming the file and what is wrong with it.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigurationFileError(message: "cannot read the configuration file \(url.path)")
        }
        try self.init(json: data, name: url.path)
    }

    /// The defaults overridden by the JSON configuration `data`, then ``validate()``d.
    /// - Parameters:
    ///   - data: The configuration file's bytes (a JSON object).
    ///   - name: What errors call the configuration (its file's path).
    /// - Throws: ``ConfigurationFileError`` naming `name` and what is wrong.
    public init(json data: Data, name: String) throws {
        self.init()
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch DecodingError.typeMismatch(_, let context), DecodingError.dataCorrupted(let context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw ConfigurationFileError(message: "\(name): \(key.isEmpty ? "not valid JSON" : "wrong type for \(key)")")
        } catch {
            throw ConfigurationFileError(message: "\(name): not a valid configuration (\(error.localizedDescription))")
        }
        func seconds(_ value: Double, _ key: String) throws -> Duration {
            guard let duration = Self.duration(seconds: value) else {
                throw ConfigurationFileError(message: "\(name): \(key) must be a number of seconds from 0 to \(Int(Self.longestDuration))")
            }
            return duration
        }
        if let value = file.host { host = value }
        if let value = file.port { port = value }
        if let value = file.cacheDirectory { cacheDirectory = URL(fileURLWithPath: value) }
        if let value = file.memoryLimit { memoryLimit = value }
        if let value = file.maximumInflightMemory { maximumInflightMemory = value }
        if let value = file.admissionQueueLength { admissionQueueLength = value }
        if let value = file.admissionTimeoutSeconds { admissionTimeout = try seconds(value, "admissionTimeoutSeconds") }
        if let value = file.idleTimeoutSeconds { idleTimeout = try seconds(value, "idleTimeoutSeconds") }
        if let value = file.requestTimeoutSeconds { requestTimeout = try seconds(value, "requestTimeoutSeconds") }
        if let value = file.maximumConnections { maximumConnections = value }
        if let value = file.maximumHeaderBytes { maximumHeaderBytes = value }
        if let value = file.diskLimit { diskLimit = value }
        if let value = file.allowedHosts { allowedHosts = value }
        if let value = file.privateNetworkHosts { privateNetworkHosts = value }
        if let value = file.maximumSourceBytes { maximumSourceBytes = value }
        if let value = file.maximumSourcePixels { maximumSourcePixels = value }
        if let value = file.maximumFrames { maximumFrames = value }
        if let value = file.maximumOutputSide { maximumOutputSide = value }
        if let value = file.originTimeoutSeconds { originTimeout = try seconds(value, "originTimeoutSeconds") }
        if let value = file.maximumConcurrentFetches { maximumConcurrentFetches = value }
        if let value = file.signingKey { signingKey = value }
        if let value = file.thumborURLs { thumborURLs = value }
        if let value = file.answersHitsOnEventLoop { answersHitsOnEventLoop = value }
        if let value = file.thumborSecurityKey { thumborSecurityKey = value }
        if let value = file.thumborRefusesUnknownFilters { thumborRefusesUnknownFilters = value }
        if let value = file.thumborRefusesBadFilterArguments { thumborRefusesBadFilterArguments = value }
        if let value = file.thumborAutoWebP { thumborAutoWebP = value }
        if let value = file.thumborAutoPNGToJPEG { thumborAutoPNGToJPEG = value }
        if let value = file.imgproxyURLs { imgproxyURLs = value }
        if let value = file.imgproxyKeys { imgproxyKeys = value }
        if let value = file.imgproxySalts { imgproxySalts = value }
        if let value = file.imgproxySignatureSize { imgproxySignatureSize = value }
        if let value = file.imgproxyPresets { imgproxyPresets = value }
        if let value = file.imgproxyAutoFormat { imgproxyAutoFormat = value }
        if let value = file.responseMaxAge { responseMaxAge = value }
        if let value = file.minimumFreshness { minimumFreshness = value }
        for (formatName, quality) in file.formatQualities ?? [:] {
            guard let format = ImageFormat(fileExtension: formatName), Self.lossyFormats.contains(format) else {
                throw ConfigurationFileError(message: "\(name): formatQualities: \(formatName) is not one of jpeg, webp, avif, jxl")
            }
            formatQualities[format] = quality
        }
        if let auto = file.autoQuality {
            if let value = auto.default { autoQuality.isDefault = value }
            if let value = auto.target { autoQuality.target = .ssimulacra2(value) }
            if let value = auto.minimum { autoQuality.minimum = value }
            if let value = auto.maximum { autoQuality.maximum = value }
            if let value = auto.tolerance { autoQuality.tolerance = value }
            if let value = auto.maximumPixels { autoQuality.maximumPixels = value }
        }
        if let value = file.maximumFramePixels { maximumFramePixels = value }
        if let value = file.localFilesystemRoot { localFilesystemRoot = URL(fileURLWithPath: value) }
        if let value = file.fallbackImageFile { fallbackImageFile = Self.imageLocation(value) }
        if let value = file.fallbackImageStatus {
            guard value == 0 || (100...599).contains(value) else {
                throw ConfigurationFileError(message: "\(name): fallbackImageStatus must be 0 (the error's status) or 100 to 599")
            }
            fallbackImageStatus = value
        }
        if let value = file.fallbackImageMaxAge { fallbackImageMaxAge = value }
        if let value = file.imgproxyTrustedSignatures { imgproxyTrustedSignatures = value }
        if let value = file.imgproxyAllowsSecurityOptions { imgproxyAllowsSecurityOptions = value }
        if let value = file.imgproxyPreservesHDR { imgproxyPreservesHDR = value }
        if let value = file.imgproxyStripsMetadata { imgproxyStripsMetadata = value }
        if let value = file.imgproxyKeepsCopyright { imgproxyKeepsCopyright = value }
        func formats(_ names: [String], _ key: String) throws(ConfigurationFileError) -> [ImageFormat] {
            do {
                return try ImgproxyOptions.formats(named: names)
            } catch {
                throw ConfigurationFileError(message: "\(name): \(key): \(error.message)")
            }
        }
        if let value = file.imgproxySkipProcessingFormats { imgproxySkipProcessingFormats = try formats(value, "imgproxySkipProcessingFormats") }
        if let value = file.imgproxyPreferredFormats, !value.isEmpty { imgproxyPreferredFormats = try formats(value, "imgproxyPreferredFormats") }
        if let value = file.imgproxyEnforcedFormats { imgproxyEnforcedFormats = try formats(value, "imgproxyEnforcedFormats") }
        if let value = file.imgproxyStripsColorProfile { imgproxyStripsColorProfile = value }
        if let value = file.imgproxyAutoRotates { imgproxyAutoRotates = value }
        if let value = file.imgproxyAlwaysRasterizesSVG { imgproxyAlwaysRasterizesSVG = value }
        if let value = file.imgproxyUsesLinearColorspace { imgproxyUsesLinearColorspace = value }
        if let value = file.imgproxyPathPrefix { imgproxyPathPrefix = value }
        if let value = file.imgproxyArgumentsSeparator {
            guard value.count == 1, let separator = value.first, separator != "/" else {
                throw ConfigurationFileError(message: "\(name): imgproxyArgumentsSeparator must be one character other than /")
            }
            imgproxyArgumentsSeparator = separator
        }
        if let value = file.imgproxyBase64URLIncludesFilename { imgproxyBase64URLIncludesFilename = value }
        if let value = file.imgproxyBaseURL { imgproxyBaseURL = value }
        if let value = file.imgproxyURLReplacements { imgproxyURLReplacements = value }
        if let value = file.imgproxyAllowedSources { imgproxyAllowedSources = value }
        if let value = file.imgproxyAllowedOptions { imgproxyAllowedOptions = value }
        if let value = file.imgproxyWatermarkOpacity {
            guard value > 0, value <= 1 else { throw ConfigurationFileError(message: "\(name): imgproxyWatermarkOpacity must be above 0, at most 1") }
            imgproxyWatermarkOpacity = value
        }
        if let value = file.presets { presets = value }
        if let value = file.onlyPresets { onlyPresets = value }
        if let value = file.watermarkFiles { watermarkFiles = value.mapValues { URL(fileURLWithPath: $0) } }
        if let value = file.s3Endpoint {
            guard let url = Self.s3EndpointURL(value) else {
                throw ConfigurationFileError(message: "\(name): s3Endpoint \(value) is not an http or https URL with a host")
            }
            s3Endpoint = url
        }
        if let value = file.s3Region { s3Region = value }
        if let value = file.s3Bucket { s3Bucket = value }
        if let value = file.s3Prefix { s3Prefix = value }
        if let value = file.s3CredentialsFile { s3CredentialsFile = URL(fileURLWithPath: value) }
        if let value = file.s3SourceBuckets { s3SourceBuckets = value }
        if let value = file.clusterInstances { clusterInstances = value }
        if let value = file.clusterSelf { clusterSelf = value }
        if let value = file.galleryDirectory { galleryDirectory = URL(fileURLWithPath: value) }
        if let value = file.galleryURLs {
            galleryURLs = try value.map { text in
                guard let image = Self.sourceURL(text) else {
                    throw ConfigurationFileError(message: "\(name): galleryURLs: \(text) is not an absolute http or https URL")
                }
                return image
            }
        }
        do {
            try validate()
        } catch {
            throw ConfigurationFileError(message: "\(name): \(error.message)")
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
    /// timeouts, an in-flight budget below the memory limit).
    /// - Throws: ``ConfigurationFileError`` naming the first property that is not.
    public func validate() throws(ConfigurationFileError) {
        func require(_ condition: Bool, _ message: String) throws(ConfigurationFileError) {
            if !condition { throw ConfigurationFileError(message: message) }
        }
        let longest = Duration.seconds(Int64(Self.longestDuration))
        try require((0...65535).contains(port), "port must be from 0 to 65535")
        if let root = localFilesystemRoot {
            var isDirectory: ObjCBool = false
            try require(
                FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory) && isDirectory.boolValue,
                "localFilesystemRoot (IMGPROXY_LOCAL_FILESYSTEM_ROOT) \(root.path) is not a directory"
            )
        }
        let bytes = 1...(1 << 50)  // up to a pebibyte: sums of limits never overflow
        try require((1 << 20...1 << 50).contains(memoryLimit), "memoryLimit must be from 1 MiB to 1 PiB")
        if let inflight = maximumInflightMemory {
            try require(inflight > 0 && inflight < memoryLimit, "maximumInflightMemory must be positive and less than memoryLimit (the caches get the rest)")
        }
        try require((0...1 << 20).contains(admissionQueueLength), "admissionQueueLength must be from 0 to 1048576")
        if let admissionTimeout {
            try require(admissionTimeout >= .zero && admissionTimeout <= longest, "admissionTimeoutSeconds must be from 0 to a year")
        }
        for (name, value) in [("idleTimeoutSeconds", idleTimeout), ("requestTimeoutSeconds", requestTimeout), ("originTimeoutSeconds", originTimeout)] {
            try require(value > .zero && value <= longest, "\(name) must be more than 0 and at most a year")
        }
        try require((1...1 << 20).contains(maximumConnections), "maximumConnections must be from 1 to 1048576")
        try require((1024...(1 << 20)).contains(maximumHeaderBytes), "maximumHeaderBytes must be from 1024 to 1048576")
        try require(diskLimit == 0 || bytes.contains(diskLimit), "diskLimit must be from 0 to 1 PiB")
        try require(bytes.contains(maximumSourceBytes), "maximumSourceBytes must be from 1 to 1 PiB")
        try require(bytes.contains(maximumSourcePixels), "maximumSourcePixels must be from 1 to 2^50")
        try require((1...100_000).contains(maximumFrames), "maximumFrames must be from 1 to 100000")
        try require((1...1 << 20).contains(maximumOutputSide), "maximumOutputSide must be from 1 to 1048576")
        try require((1...1 << 16).contains(maximumConcurrentFetches), "maximumConcurrentFetches must be from 1 to 65536")
        try require(signingKey.map { !$0.isEmpty } ?? true, "signingKey cannot be empty (leave it out to turn signing off)")
        try require(thumborSecurityKey.map { !$0.isEmpty } ?? true, "thumborSecurityKey cannot be empty (leave it out for /unsafe/ URLs)")
        try require(
            imgproxyKeys.isEmpty && imgproxySalts.isEmpty
                || ImgproxySigner(keys: imgproxyKeys, salts: imgproxySalts, size: imgproxySignatureSize) != nil,
            "imgproxyKeys and imgproxySalts must be hex, as many salts as keys (keys not empty), and imgproxySignatureSize from 1 to 32"
        )
        let seconds = 0...Int(Self.longestDuration) * 100
        try require(seconds.contains(responseMaxAge), "responseMaxAge must be from 0 to 100 years in seconds")
        try require(seconds.contains(minimumFreshness), "minimumFreshness must be from 0 to 100 years in seconds")
        for (format, quality) in formatQualities {
            try require((1...100).contains(quality), "formatQualities: \(format.rawValue) must be from 1 to 100")
        }
        if case .ssimulacra2(let score) = autoQuality.target {
            try require((0...100).contains(score), "autoQuality: target must be a SSIMULACRA2 score from 0 to 100")
        }
        let bounds = [autoQuality.minimum, autoQuality.maximum].compactMap { $0 } + autoQuality.formatMinimums.values + autoQuality.formatMaximums.values
        try require(bounds.allSatisfy((1...100).contains), "autoQuality: minimum and maximum must be from 1 to 100")
        try require(autoQuality.tolerance >= 0 && autoQuality.tolerance.isFinite, "autoQuality: tolerance must be 0 or more")
        try require(autoQuality.maximumPixels >= 1, "autoQuality: maximumPixels must be 1 or more")
        try require(
            s3Endpoint != nil || (s3Bucket == nil && s3SourceBuckets.isEmpty), "s3Bucket and s3SourceBuckets need s3Endpoint (the store to use)"
        )
        try require(s3Bucket.map(Self.isBucketName) ?? true, "s3Bucket must be a bucket name: 3 to 63 of a-z, 0-9, '.', '-'")
        try require(s3SourceBuckets.allSatisfy(Self.isBucketName), "s3SourceBuckets must be bucket names: 3 to 63 of a-z, 0-9, '.', '-'")
        try require(!s3Region.isEmpty && s3Region.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }, "s3Region must be a region name such as us-east-1")
        try require(!onlyPresets || !presets.isEmpty || !imgproxyPresets.isEmpty, "onlyPresets needs at least one preset")
        try require(clusterInstances.allSatisfy(Self.isInstanceAddress), "clusterInstances must be HOST:PORT addresses, such as 10.0.0.11:8080")
        try require(
            clusterInstances.isEmpty == (clusterSelf == nil) && (clusterSelf.map(clusterInstances.contains) ?? true),
            "clusterSelf and clusterInstances go together: this instance's HOST:PORT, one of clusterInstances"
        )
        let checked = try Presets(presets, onlyPresets: false)
        for name in checked.names {
            do {
                _ = try ImageParameters(
                    query: checked.expand(["url": "https://example.com/a.jpg", "preset": name]), maximumSide: maximumOutputSide,
                    watermarks: Dictionary(uniqueKeysWithValues: watermarkFiles.keys.map { ($0, $0) })
                )
            } catch {
                throw ConfigurationFileError(message: "presets: \(name): \(ServerError.from(error).message)")
            }
        }
    }

    /// `text` as an S3 endpoint: an http or https URL with a host, else `nil`.
    /// `HOST:PORT` of an instance, as nginx's `server` lines take it.
    public static func isInstanceAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), colon != text.startIndex, let port = Int(text[text.index(after: colon)...]),
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
        (3...63).contains(name.count) && name.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "." || $0 == "-" }
    }

    /// The formats whose quality can be set.
    static let lossyFormats: [ImageFormat] = [.jpeg, .webp, .avif, .jxl, .heic]
}

/// A configuration file that cannot be used, and why.
public struct ConfigurationFileError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}
