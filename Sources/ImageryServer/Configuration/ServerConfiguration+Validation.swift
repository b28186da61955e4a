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
        for part: any ConfigurationPart in [
            listener, limits, caching, origins, rendering, s3, cluster, gallery, fallback, imgproxy, thumbor,
        ] as [any ConfigurationPart] {
            try part.validate()
        }
        // requests: its presets are checked with the limits and the watermarks they are made under.
        let require = ConfigurationRule.require
        try require(
            requests.signingKey.map { !$0.isEmpty } ?? true, "requests.signingKey",
            "cannot be empty (leave it out to turn signing off)")
        try require(
            !requests.onlyPresets || !requests.presets.isEmpty || !imgproxy.presets.isEmpty, "requests.onlyPresets",
            "needs at least one preset")
        let checked: Presets
        do {
            checked = try Presets(requests.presets, onlyPresets: false)
        } catch {
            throw ConfigurationFileError(message: error.message, key: "requests.presets")
        }
        for name in checked.names {
            do {
                _ = try ImageParameters(
                    query: checked.expand(["url": "https://example.com/a.jpg", "preset": name]),
                    maximumSide: limits.maximumOutputSide,
                    watermarks: Dictionary(uniqueKeysWithValues: rendering.watermarkFiles.keys.map { ($0, $0) })
                )
            } catch {
                throw ConfigurationFileError(
                    message: "\(name): \(ServerError.from(error).message)", key: "requests.presets")
            }
        }
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

/// A part of ``ServerConfiguration``: it checks its own values.
public protocol ConfigurationPart: Sendable {
    /// - Throws: ``ConfigurationFileError`` naming the first setting (its key) whose value cannot be used.
    func validate() throws(ConfigurationFileError)
}

/// What the parts' checks share.
enum ConfigurationRule {
    /// Throws `message` about `key` unless `condition` holds.
    static func require(_ condition: Bool, _ key: String, _ message: String) throws(ConfigurationFileError) {
        if !condition { throw ConfigurationFileError(message: message, key: key) }
    }
    /// The longest duration a setting may give: a year.
    static let longest = Duration.seconds(Int64(ServerConfiguration.longestDuration))
    /// Byte counts up to a pebibyte: sums of limits never overflow.
    static let bytes = 1...(1 << 50)
    /// Seconds up to 100 years.
    static let seconds = 0...Int(ServerConfiguration.longestDuration) * 100
}
