import Foundation
import Imagery

/// imgproxy's configuration variables (`IMGPROXY_*`, as docker-compose files and Helm values set
/// them), read with imgproxy's names, syntax and meaning into the one ``ServerConfiguration``:
/// nothing after this knows which peer a setting came from. A variable imgproxy has that changes
/// nothing here is accepted and named at start; one this server cannot honour is reported.
package enum ImgproxyEnvironment {
    /// What reading the environment found beyond the settings it applied.
    package struct Report: Sendable, Equatable {
        /// `IMGPROXY_*` variables that are imgproxy's but not honoured here (their setting is not applied).
        package var unsupported: [String] = []
        /// `IMGPROXY_*` variables that imgproxy does not have.
        package var unknown: [String] = []
    }

    /// Reads every `IMGPROXY_*` variable of `environment` into `configuration` (an empty value is
    /// unset, as imgproxy reads it).
    /// - Throws: ``ConfigurationFileError`` naming the variable whose value is not valid.
    package static func apply(_ environment: [String: String], to configuration: inout ServerConfiguration) throws(ConfigurationFileError) -> Report {
        var report = Report()
        // In name order, but the general quality before the per-format ones it stands behind.
        let ordered = environment.sorted { ($0.key == "IMGPROXY_QUALITY" ? "" : $0.key) < ($1.key == "IMGPROXY_QUALITY" ? "" : $1.key) }
        for (name, raw) in ordered where name.hasPrefix("IMGPROXY_") {
            let value = raw.trimmingCharacters(in: .whitespaces)
            if let read = readers[name] {
                guard !value.isEmpty else { continue }
                do {
                    try read(value, &configuration)
                } catch {
                    let reason = (error as? ConfigurationFileError)?.message ?? "\(error)"
                    throw ConfigurationFileError(message: "\(name)=\(raw) is not valid: \(reason)")
                }
            } else if ignored.contains(name) {
                continue
            } else if let behaviour = fixed[name] {
                // Honoured when it asks for what this server does; another value is not supported.
                guard (try? boolean(value)) == behaviour || value.isEmpty else {
                    report.unsupported.append(name)
                    continue
                }
            } else if imgproxyNames.contains(name) {
                report.unsupported.append(name)
            } else {
                report.unknown.append(name)
            }
        }
        if environment["IMGPROXY_SALT"] != nil || environment["IMGPROXY_KEY"] != nil,
           configuration.imgproxyKeys.count != configuration.imgproxySalts.count {
            throw ConfigurationFileError(message: "IMGPROXY_KEY and IMGPROXY_SALT must list as many hex keys as salts")
        }
        return report
    }

    /// The name imgproxy's watermark image has among the server's watermarks (``ServerConfiguration/watermarkFiles``).
    package static let watermarkName = "imgproxy"

    private typealias Reader = @Sendable (String, inout ServerConfiguration) throws -> Void

    /// The variables read, each with imgproxy's syntax.
    private static let readers: [String: Reader] = [
        "IMGPROXY_KEY": { value, configuration in configuration.imgproxyKeys = list(value) },
        "IMGPROXY_SALT": { value, configuration in configuration.imgproxySalts = list(value) },
        "IMGPROXY_SIGNATURE_SIZE": { value, configuration in configuration.imgproxySignatureSize = try integer(value, in: 1...32) },
        "IMGPROXY_TRUSTED_SIGNATURES": { value, configuration in configuration.imgproxyTrustedSignatures = list(value) },
        "IMGPROXY_PRESETS": { value, configuration in
            for entry in list(value) where !entry.hasPrefix("#") {
                let parts = entry.split(separator: "=", omittingEmptySubsequences: false)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                    throw ConfigurationFileError(message: "a preset is NAME=OPTIONS (thumb=rs:fill:300:300/q:80), not \(entry)")
                }
                configuration.imgproxyPresets[String(parts[0]).trimmingCharacters(in: .whitespaces)] = String(parts[1])
            }
        },
        "IMGPROXY_ONLY_PRESETS": { value, configuration in configuration.onlyPresets = try boolean(value) },
        "IMGPROXY_QUALITY": { value, configuration in
            let quality = try integer(value, in: 1...100)
            for format in ServerConfiguration.lossyFormats { configuration.formatQualities[format] = quality }
        },
        "IMGPROXY_FORMAT_QUALITY": { value, configuration in
            for entry in list(value) {
                let parts = entry.split(separator: "=")
                guard parts.count == 2, let format = ImageFormat(fileExtension: String(parts[0]).trimmingCharacters(in: .whitespaces)) else {
                    throw ConfigurationFileError(message: "format qualities are FORMAT=QUALITY pairs (webp=79,avif=63), not \(entry)")
                }
                configuration.formatQualities[format] = try integer(String(parts[1]).trimmingCharacters(in: .whitespaces), in: 1...100)
            }
        },
        "IMGPROXY_AUTO_WEBP": { value, configuration in configuration.imgproxyAutoFormat = try configuration.imgproxyAutoFormat || boolean(value) },
        "IMGPROXY_AUTO_AVIF": { value, configuration in configuration.imgproxyAutoFormat = try configuration.imgproxyAutoFormat || boolean(value) },
        "IMGPROXY_AUTO_JXL": { value, configuration in configuration.imgproxyAutoFormat = try configuration.imgproxyAutoFormat || boolean(value) },
        "IMGPROXY_MAX_SRC_RESOLUTION": { value, configuration in configuration.maximumSourcePixels = try megapixels(value) },
        "IMGPROXY_MAX_SRC_FILE_SIZE": { value, configuration in
            let bytes = try integer(value, in: 0...Int.max)
            if bytes > 0 { configuration.maximumSourceBytes = bytes }  // 0: no limit in imgproxy; this server keeps its own
        },
        "IMGPROXY_MAX_ANIMATION_FRAMES": { value, configuration in configuration.maximumFrames = try integer(value, in: 1...Int.max) },
        "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": { value, configuration in
            let pixels = try megapixels(value)
            configuration.maximumFramePixels = pixels > 0 ? pixels : nil
        },
        "IMGPROXY_MAX_RESULT_DIMENSION": { value, configuration in
            let side = try integer(value, in: 0...Int.max)
            if side > 0 { configuration.maximumOutputSide = min(configuration.maximumOutputSide, side) }
        },
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": { value, configuration in configuration.imgproxyAllowsSecurityOptions = try boolean(value) },
        "IMGPROXY_PRESERVE_HDR": { value, configuration in configuration.imgproxyPreservesHDR = try boolean(value) },
        "IMGPROXY_STRIP_METADATA": { value, configuration in configuration.imgproxyStripsMetadata = try boolean(value) },
        "IMGPROXY_KEEP_COPYRIGHT": { value, configuration in configuration.imgproxyKeepsCopyright = try boolean(value) },
        "IMGPROXY_SKIP_PROCESSING_FORMATS": { value, configuration in configuration.imgproxySkipProcessingFormats = try formats(value) },
        "IMGPROXY_PREFERRED_FORMATS": { value, configuration in
            let formats = try formats(value)
            guard !formats.isEmpty else { throw ConfigurationFileError(message: "expected at least one format") }
            configuration.imgproxyPreferredFormats = formats
        },
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": { value, configuration in configuration.localFilesystemRoot = URL(fileURLWithPath: value) },
        "IMGPROXY_PATH_PREFIX": { value, configuration in configuration.imgproxyPathPrefix = value },
        "IMGPROXY_ARGUMENTS_SEPARATOR": { value, configuration in
            guard value.count == 1, let separator = value.first, separator != "/" else {
                throw ConfigurationFileError(message: "expected one character other than /")
            }
            configuration.imgproxyArgumentsSeparator = separator
        },
        "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": { value, configuration in configuration.imgproxyBase64URLIncludesFilename = try boolean(value) },
        "IMGPROXY_BASE_URL": { value, configuration in configuration.imgproxyBaseURL = value },
        "IMGPROXY_URL_REPLACEMENTS": { value, configuration in
            let rules = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard rules.allSatisfy({ $0.contains("=") }) else { throw ConfigurationFileError(message: "expected PATTERN=REPLACEMENT rules separated by ;") }
            configuration.imgproxyURLReplacements = rules
        },
        "IMGPROXY_ALLOWED_SOURCES": { value, configuration in configuration.imgproxyAllowedSources = list(value) },
        "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": { value, configuration in configuration.imgproxyAllowedOptions = list(value) },
        "IMGPROXY_WATERMARK_PATH": { value, configuration in configuration.watermarkFiles[watermarkName] = URL(fileURLWithPath: value) },
        "IMGPROXY_WATERMARK_OPACITY": { value, configuration in
            guard let opacity = Double(value), opacity > 0, opacity <= 1 else { throw ConfigurationFileError(message: "expected a number above 0, at most 1") }
            configuration.imgproxyWatermarkOpacity = opacity
        },
        "IMGPROXY_FALLBACK_IMAGE_PATH": { value, configuration in configuration.fallbackImageFile = URL(fileURLWithPath: value) },
        "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": { value, configuration in
            let status = try integer(value, in: 0...599)
            guard status == 0 || status >= 100 else { throw ConfigurationFileError(message: "expected 0 (the error's status) or 100 to 599") }
            configuration.fallbackImageStatus = status
        },
        "IMGPROXY_FALLBACK_IMAGE_TTL": { value, configuration in
            let seconds = try integer(value, in: 0...Int.max)
            if seconds > 0 { configuration.fallbackImageMaxAge = seconds }  // 0: imgproxy's default; this server keeps its short one
        },
        "IMGPROXY_TTL": { value, configuration in configuration.responseMaxAge = try integer(value, in: 0...Int.max) },
    ]

    /// imgproxy's variables that change nothing here: errors are always JSON with a message and never
    /// leak internals (`DEVELOPMENT_ERRORS_MODE`). Logging and concurrency settings are not among them:
    /// they have this server's own options, and are reported as not applied.
    private static let ignored: Set<String> = ["IMGPROXY_DEVELOPMENT_ERRORS_MODE"]

    /// imgproxy's switches this server has one setting of (`true`: what it always does), with that setting.
    private static let fixed: [String: Bool] = [
        "IMGPROXY_USE_LINEAR_COLORSPACE": false, "IMGPROXY_SANITIZE_SVG": true,
    ]

    /// imgproxy's other variables (open-source and Pro), named so that a deployment's setting this
    /// server does not honour is reported as unsupported rather than unknown.
    private static let imgproxyNames: Set<String> = [
        "IMGPROXY_BIND", "IMGPROXY_NETWORK", "IMGPROXY_TIMEOUT", "IMGPROXY_LOG_LEVEL", "IMGPROXY_LOG_FORMAT", "IMGPROXY_WORKERS",
        "IMGPROXY_REQUESTS_QUEUE_SIZE", "IMGPROXY_DOWNLOAD_TIMEOUT",
        "IMGPROXY_READ_REQUEST_TIMEOUT", "IMGPROXY_KEEP_ALIVE_TIMEOUT", "IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT", "IMGPROXY_MAX_REDIRECTS",
        "IMGPROXY_USER_AGENT", "IMGPROXY_SECRET", "IMGPROXY_ALLOW_ORIGIN", "IMGPROXY_HEALTH_CHECK_PATH",
        "IMGPROXY_PRESETS_SEPARATOR", "IMGPROXY_PRESETS_PATH", "IMGPROXY_ENFORCE_WEBP",
        "IMGPROXY_ENFORCE_AVIF", "IMGPROXY_ENFORCE_JXL",
        "IMGPROXY_JPEG_PROGRESSIVE", "IMGPROXY_PNG_INTERLACED", "IMGPROXY_PNG_QUANTIZE", "IMGPROXY_PNG_QUANTIZATION_COLORS",
        "IMGPROXY_WEBP_EFFORT", "IMGPROXY_WEBP_PRESET", "IMGPROXY_AVIF_SPEED", "IMGPROXY_JXL_EFFORT",
        "IMGPROXY_USE_S3", "IMGPROXY_USE_GCS", "IMGPROXY_USE_ABS", "IMGPROXY_USE_SWIFT", "IMGPROXY_CACHE_CONTROL_PASSTHROUGH",
        "IMGPROXY_SET_CANONICAL_HEADER", "IMGPROXY_USE_ETAG", "IMGPROXY_USE_LAST_MODIFIED", "IMGPROXY_ETAG_BUSTER",
        "IMGPROXY_LAST_MODIFIED_BUSTER", "IMGPROXY_ENABLE_DEBUG_HEADERS", "IMGPROXY_FALLBACK_IMAGE_DATA",
        "IMGPROXY_FALLBACK_IMAGE_URL", "IMGPROXY_WATERMARK_DATA",
        "IMGPROXY_WATERMARK_URL", 
        "IMGPROXY_STRIP_COLOR_PROFILE", "IMGPROXY_AUTO_ROTATE", "IMGPROXY_ENFORCE_THUMBNAIL",
        "IMGPROXY_DISABLE_SHRINK_ON_LOAD", 
        "IMGPROXY_ALWAYS_RASTERIZE_SVG", "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES",
        "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES", "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES", "IMGPROXY_ENABLE_CLIENT_HINTS",
        "IMGPROXY_PNG_UNLIMITED", "IMGPROXY_SVG_UNLIMITED", "IMGPROXY_TIFF_UNLIMITED", "IMGPROXY_ENV_LOCAL_FILE_PATH",
        "IMGPROXY_INFO_PRESETS", "IMGPROXY_INFO_ONLY_PRESETS", "IMGPROXY_AUTOQUALITY_METHOD", "IMGPROXY_AUTOQUALITY_TARGET",
    ]

    /// imgproxy's format names (`jpeg,png,gif`).
    private static func formats(_ value: String) throws(ConfigurationFileError) -> [ImageFormat] {
        var formats: [ImageFormat] = []
        for name in list(value) {
            guard let format = ImgproxyOptions.format(named: name) else {
                throw ConfigurationFileError(message: "\(name) is not a format read here (jpeg, png, webp, avif, gif, jxl, tiff, heic, bmp, ico)")
            }
            formats.append(format)
        }
        return formats
    }

    private static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Go's `strconv.ParseBool`.
    private static func boolean(_ value: String) throws(ConfigurationFileError) -> Bool {
        switch value {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw ConfigurationFileError(message: "expected true or false")
        }
    }

    private static func integer(_ value: String, in range: ClosedRange<Int>) throws(ConfigurationFileError) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw ConfigurationFileError(message: "expected a whole number from \(range.lowerBound)\(range.upperBound == .max ? " up" : " to \(range.upperBound)")")
        }
        return number
    }

    /// Megapixels (a decimal number) as pixels, as imgproxy reads resolutions.
    private static func megapixels(_ value: String) throws(ConfigurationFileError) -> Int {
        guard let number = Double(value), number >= 0, number < 1e12 else { throw ConfigurationFileError(message: "expected megapixels (50, 10.5)") }
        return Int(number * 1_000_000)
    }
}
