import Foundation
import Imagery

/// A `thumbor.conf` read into a configuration (`imagery serve --thumbor-config FILE`), so that a
/// thumbor site moves with the file it has: the settings that decide what thumbor URLs mean, what
/// may be fetched and how responses are made, with thumbor 7.8's defaults for those the file leaves
/// out (so that a URL means what it meant under that file). The rest is reported, never silently
/// dropped: thumbor's own machinery (loaders, storages, engines, detectors, queues), which Imagery
/// replaces with its own, and any other setting, which is not applied.
package enum ThumborConfigurationFile {
    /// What a file held that was not applied.
    package struct Report: Equatable {
        /// thumbor settings that change behaviour and are not applied here.
        package var unsupported: [String] = []
        /// thumbor settings for its own parts (loader, storage, engine...), which Imagery's replace.
        package var machinery: [String] = []
        /// Names that are no thumbor setting (a typo, a custom module's).
        package var unknown: [String] = []
        /// Lines that are not simple assignments (line number and text).
        package var unreadLines: [String] = []
    }

    /// What a `thumbor.conf` may import and have read: `BUILTIN_FILTERS`, thumbor 7.8's list of its
    /// filter modules (`FILTERS = BUILTIN_FILTERS + ['thumbor.filters.autojpg']`, as thumbor's
    /// documentation adds filters).
    static let importable: [String: [String: PythonAssignments.Value]] = [
        "thumbor.filters": [
            "BUILTIN_FILTERS": .list(
                ServerConfiguration.thumborDefaultFilters.sorted().map { .string("thumbor.filters." + $0) })
        ]
    ]

    /// Applies the thumbor settings of `text` to `configuration`.
    /// - Throws: ``ConfigurationFileError`` naming a setting whose value is of the wrong kind or cannot
    ///   be honoured (an `ALLOWED_SOURCES` pattern that is a regular expression Imagery cannot read).
    package static func apply(_ text: String, to configuration: inout ServerConfiguration)
        throws(ConfigurationFileError) -> Report
    {
        try apply(PythonAssignments(text, importable: importable), to: &configuration)
    }

    /// Applies the thumbor settings `file` assigns to `configuration` (``apply(_:to:)``, the file read).
    static func apply(_ file: PythonAssignments, to configuration: inout ServerConfiguration)
        throws(ConfigurationFileError) -> Report
    {
        var settings: [String: PythonAssignments.Value] = [:]
        var report = Report()
        for (name, value) in file.values { settings[name] = value }
        report.unreadLines = file.unreadLines.map { "line \($0.line): \($0.text)" }

        func value(_ name: String) -> PythonAssignments.Value? { settings[name] }
        func boolean(_ name: String, default fallback: Bool) throws(ConfigurationFileError) -> Bool {
            switch value(name) {
            case nil: return fallback
            case .boolean(let value): return value
            case .integer(let value): return value != 0
            default: throw ConfigurationFileError(message: "\(name) in the thumbor configuration must be True or False")
            }
        }
        func number(_ name: String) throws(ConfigurationFileError) -> Double? {
            switch value(name) {
            case nil, .none?: return nil
            case .integer(let value): return Double(value)
            case .float(let value): return value
            default: throw ConfigurationFileError(message: "\(name) in the thumbor configuration must be a number")
            }
        }
        func string(_ name: String) throws(ConfigurationFileError) -> String? {
            switch value(name) {
            case nil, .none?: return nil
            case .string(let value): return value
            default: throw ConfigurationFileError(message: "\(name) in the thumbor configuration must be a string")
            }
        }
        func strings(_ name: String) throws(ConfigurationFileError) -> [String]? {
            switch value(name) {
            case nil, .none?: return nil
            case .list(let items):
                var result: [String] = []
                for item in items {
                    guard case .string(let text) = item else {
                        throw ConfigurationFileError(
                            message: "\(name) in the thumbor configuration must be a list of strings")
                    }
                    result.append(text)
                }
                return result
            default:
                throw ConfigurationFileError(message: "\(name) in the thumbor configuration must be a list of strings")
            }
        }
        func quality(_ name: String) throws(ConfigurationFileError) -> Int? {
            guard let value = try number(name) else { return nil }
            guard (1...100).contains(value) else {
                throw ConfigurationFileError(message: "\(name) in the thumbor configuration must be from 1 to 100")
            }
            return Int(value)
        }
        func side(_ name: String) throws(ConfigurationFileError) -> Int {
            guard let value = try number(name) else { return 0 }
            guard value >= 0, value < 1e9 else {
                throw ConfigurationFileError(message: "\(name) in the thumbor configuration must be 0 or more")
            }
            return Int(value)
        }

        // Signatures.
        if let key = try string("SECURITY_KEY"), !key.isEmpty { configuration.thumbor.securityKey = key }
        configuration.thumbor.allowsUnsafeURLs = try boolean("ALLOW_UNSAFE_URL", default: true)
        // What a URL makes.
        let general = try quality("QUALITY") ?? 80
        configuration.rendering.formatQualities[.jpeg] = general
        configuration.rendering.formatQualities[.webp] = try quality("WEBP_QUALITY") ?? general
        configuration.rendering.formatQualities[.avif] = try quality("AVIF_QUALITY") ?? general
        configuration.rendering.formatQualities[.heic] = try quality("HEIF_QUALITY") ?? general
        configuration.thumbor.autoWebP = try boolean("AUTO_WEBP", default: false)
        configuration.thumbor.autoPNGToJPEG = try boolean("AUTO_PNG_TO_JPG", default: false)
        configuration.thumbor.respectsOrientation = try boolean("RESPECT_ORIENTATION", default: false)
        configuration.thumbor.maximumWidth = try side("MAX_WIDTH")
        configuration.thumbor.maximumHeight = try side("MAX_HEIGHT")
        if let pixels = try number("MAX_PIXELS") {
            guard pixels >= 1, pixels < 1e12 else {
                throw ConfigurationFileError(message: "MAX_PIXELS in the thumbor configuration must be 1 or more")
            }
            configuration.limits.maximumSourcePixels = Int(pixels)
        }
        if let modules = try strings("FILTERS") {
            configuration.thumbor.filters = Set(
                modules.map { module in
                    let name = module.split(separator: ".").last.map(String.init) ?? module
                    return name == "redeye" ? "red_eye" : name
                })
        }
        configuration.thumbor.metaCallback = try string("META_CALLBACK_NAME")
        // Responses.
        if let seconds = try number("MAX_AGE") {
            guard seconds >= 0, seconds < 1e10 else {
                throw ConfigurationFileError(message: "MAX_AGE in the thumbor configuration must be 0 or more seconds")
            }
            configuration.caching.responseMaxAge = Int(seconds)
        } else {
            configuration.caching.responseMaxAge = 86_400  // thumbor's default: a day
        }
        // Sources.
        if let sources = try strings("ALLOWED_SOURCES"), !sources.isEmpty {
            var hosts: [String] = []
            for source in sources { hosts += try hostPatterns(source) }
            configuration.origins.allowedHosts = hosts
        }
        if let seconds = try number("HTTP_LOADER_REQUEST_TIMEOUT"), seconds > 0 {
            configuration.origins.timeout = .milliseconds(Int64(min(seconds, 86_400) * 1000))
        }

        let applied: Set<String> = [
            "SECURITY_KEY", "ALLOW_UNSAFE_URL", "QUALITY", "WEBP_QUALITY", "AVIF_QUALITY", "HEIF_QUALITY", "AUTO_WEBP",
            "AUTO_PNG_TO_JPG",
            "RESPECT_ORIENTATION", "MAX_WIDTH", "MAX_HEIGHT", "MAX_PIXELS", "FILTERS", "META_CALLBACK_NAME", "MAX_AGE",
            "ALLOWED_SOURCES",
            "HTTP_LOADER_REQUEST_TIMEOUT",
        ]
        for (name, value) in file.values where !applied.contains(name) {
            if let behaviour = fixed[name] {
                if value != behaviour { report.unsupported.append(name) }
            } else if machinery.contains(name) || machineryPrefixes.contains(where: name.hasPrefix) {
                report.machinery.append(name)
            } else if settingNames.contains(name) {
                report.unsupported.append(name)
            } else {
                report.unknown.append(name)
            }
        }
        return report
    }

    /// An `ALLOWED_SOURCES` entry as host patterns: a host name as it is; thumbor's regular expressions
    /// of the forms that mean "any subdomain of" (`.+\.example\.com`, `.*\.example\.com`) as
    /// `*.example.com`, and "the domain or any subdomain" (`(.*\.)?example\.com`) as both.
    static func hostPatterns(_ entry: String) throws(ConfigurationFileError) -> [String] {
        var pattern = entry
        if pattern.hasPrefix("^") { pattern.removeFirst() }
        if pattern.hasSuffix("$") { pattern.removeLast() }
        for prefix in [".+\\.", ".*\\.", "(.+\\.)?", "(.*\\.)?"] where pattern.hasPrefix(prefix) {
            let domain = pattern.dropFirst(prefix.count).replacingOccurrences(of: "\\.", with: ".").lowercased()
            guard isHostName(domain) else { break }
            return prefix.hasPrefix("(") ? [domain, "*." + domain] : ["*." + domain]
        }
        let plain = pattern.replacingOccurrences(of: "\\.", with: ".")
        guard isHostName(plain) else {
            throw ConfigurationFileError(
                message:
                    "ALLOWED_SOURCES entry \(entry) is a regular expression Imagery cannot read: give host names, or .+\\.example\\.com for any subdomain"
            )
        }
        return [plain.lowercased()]
    }

    private static func isHostName(_ text: String) -> Bool {
        !text.isEmpty
            && text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-" }
    }

    /// Settings whose thumbor default is what Imagery always does: another value is not supported.
    static let fixed: [String: PythonAssignments.Value] = [
        "ENABLE_ETAGS": .boolean(true), "ALLOW_ANIMATED_GIFS": .boolean(true),
        "HTTP_LOADER_FOLLOW_REDIRECTS": .boolean(true),
        "SEND_IF_MODIFIED_LAST_MODIFIED_HEADERS": .boolean(false), "USE_BLACKLIST": .boolean(false),
        "UPLOAD_ENABLED": .boolean(false),
    ]

    /// thumbor's parts, which Imagery replaces with its own (settings that have no meaning here).
    static let machinery: Set<String> = [
        "LOADER", "STORAGE", "RESULT_STORAGE", "ENGINE", "GIF_ENGINE", "DETECTORS", "OPTIMIZERS", "METRICS",
        "URL_SIGNER", "APP_CLASS",
        "HANDLER_LISTS", "ENGINE_THREADPOOL_SIZE", "GC_INTERVAL", "NON_BLOCKING_SOCKETS", "USE_GIFSICLE_ENGINE",
        "JPEGTRAN_PATH",
        "JPEGTRAN_SCANS_FILE", "FFMPEG_PATH", "FILE_LOADER_ROOT_PATH", "FILE_STORAGE_ROOT_PATH",
        "STORAGE_EXPIRATION_SECONDS",
        "STORES_CRYPTO_KEY_FOR_EACH_IMAGE", "HEALTHCHECK_ROUTE", "USE_CUSTOM_ERROR_HANDLING", "ERROR_HANDLER_MODULE",
        "ERROR_FILE_NAME_USE_CONTEXT", "FACE_DETECTOR_CASCADE_FILE", "GLASSES_DETECTOR_CASCADE_FILE",
        "PROFILE_DETECTOR_CASCADE_FILE",
        "MAX_WAIT_SECONDS_BEFORE_SERVER_SHUTDOWN", "MAX_WAIT_SECONDS_BEFORE_IO_SHUTDOWN", "IGNORE_SMART_ERRORS",
        "MAX_ID_LENGTH",
        "HTTP_LOADER_CURL_ASYNC_HTTP_CLIENT", "HTTP_LOADER_MAX_CLIENTS",
    ]
    static let machineryPrefixes = [
        "THUMBOR_LOG_", "STATSD_", "REDIS_", "SQS_", "SENTRY_", "MIXED_STORAGE_", "RESULT_STORAGE_", "COMPATIBILITY_",
        "PILLOW_",
        "UPLOAD_", "AWS_", "TC_AWS_",
    ]

    /// Every setting thumbor 7.8 defines (`thumbor/config.py`), for telling its settings from typos.
    static let settingNames: Set<String> = [
        "MAX_WIDTH", "MAX_HEIGHT", "MAX_PIXELS", "MIN_WIDTH", "MIN_HEIGHT", "ALLOWED_SOURCES", "QUALITY",
        "PROGRESSIVE_JPEG",
        "WEBP_QUALITY", "AVIF_QUALITY", "AVIF_SPEED", "AVIF_CODEC", "AVIF_CODEC_FALLBACK", "HEIF_QUALITY",
        "SRGB_PROFILE",
        "PNG_COMPRESSION_LEVEL", "AUTO_WEBP", "AUTO_AVIF", "AUTO_JPG", "AUTO_HEIF", "AUTO_PNG", "AUTO_PNG_TO_JPG",
        "SVG_DPI", "MAX_AGE",
        "MAX_AGE_TEMP_IMAGE", "RESPECT_ORIENTATION", "PRESERVE_EXIF_INFO", "PRESERVE_EXIF_COPYRIGHT_INFO",
        "PRESERVE_IPTC_INFO",
        "SECURITY_KEY", "ALLOW_UNSAFE_URL", "HTTP_LOADER_CONNECT_TIMEOUT", "HTTP_LOADER_REQUEST_TIMEOUT",
        "HTTP_LOADER_MAX_REDIRECTS",
        "HTTP_LOADER_FORWARD_USER_AGENT", "HTTP_LOADER_FORWARD_ALL_HEADERS", "HTTP_LOADER_FORWARD_HEADERS_WHITELIST",
        "HTTP_LOADER_DEFAULT_USER_AGENT", "HTTP_LOADER_PROXY_HOST", "HTTP_LOADER_PROXY_PORT",
        "HTTP_LOADER_PROXY_USERNAME",
        "HTTP_LOADER_PROXY_PASSWORD", "HTTP_LOADER_CA_CERTS", "HTTP_LOADER_VALIDATE_CERTS", "HTTP_LOADER_CLIENT_KEY",
        "HTTP_LOADER_CLIENT_CERT", "HTTP_LOADER_CURL_LOW_SPEED_TIME", "HTTP_LOADER_CURL_LOW_SPEED_LIMIT",
        "META_CALLBACK_NAME", "FILTERS",
        "ACCESS_CONTROL_ALLOW_ORIGIN_HEADER",
    ]
}
