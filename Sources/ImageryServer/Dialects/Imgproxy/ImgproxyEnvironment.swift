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
                    try read(value, &configuration, environment)
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

    /// A variable's reader: its value, the configuration, and the whole environment (for variables that
    /// change how another is read: `PRESETS_SEPARATOR`).
    private typealias Reader = @Sendable (String, inout ServerConfiguration, [String: String]) throws -> Void

    /// The variables read, each with imgproxy's syntax.
    private static let readers: [String: Reader] = [
        "IMGPROXY_KEY": { value, configuration, _ in configuration.imgproxyKeys = list(value) },
        "IMGPROXY_SALT": { value, configuration, _ in configuration.imgproxySalts = list(value) },
        "IMGPROXY_SIGNATURE_SIZE": { value, configuration, _ in configuration.imgproxySignatureSize = try integer(value, in: 1...32) },
        "IMGPROXY_TRUSTED_SIGNATURES": { value, configuration, _ in configuration.imgproxyTrustedSignatures = list(value) },
        "IMGPROXY_PRESETS": { value, configuration, environment in
            let separator = environment["IMGPROXY_PRESETS_SEPARATOR"].flatMap { $0.isEmpty ? nil : $0 } ?? ","
            try addPresets(value.components(separatedBy: separator), to: &configuration)
        },
        "IMGPROXY_PRESETS_SEPARATOR": { _, _, _ in },  // read with IMGPROXY_PRESETS
        "IMGPROXY_PRESETS_PATH": { value, configuration, _ in
            guard let text = try? String(contentsOfFile: value, encoding: .utf8) else {
                throw ConfigurationFileError(message: "the file cannot be read")
            }
            try addPresets(text.components(separatedBy: "\n"), to: &configuration)
        },
        "IMGPROXY_BIND": { value, configuration, _ in
            guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]), (0...65_535).contains(port) else {
                throw ConfigurationFileError(message: "expected HOST:PORT or :PORT")
            }
            let host = String(value[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            configuration.host = host.isEmpty ? "0.0.0.0" : host  // imgproxy's ":8080" listens on every interface
            configuration.port = port
        },
        "IMGPROXY_TIMEOUT": { value, configuration, _ in configuration.requestTimeout = .seconds(try integer(value, in: 1...86_400)) },
        "IMGPROXY_DOWNLOAD_TIMEOUT": { value, configuration, _ in configuration.originTimeout = .seconds(try integer(value, in: 1...86_400)) },
        "IMGPROXY_KEEP_ALIVE_TIMEOUT": { value, configuration, _ in configuration.idleTimeout = .seconds(try integer(value, in: 1...86_400)) },
        "IMGPROXY_MAX_CLIENTS": { value, configuration, _ in
            let clients = try integer(value, in: 0...Int.max)
            if clients > 0 { configuration.maximumConnections = clients }  // 0: imgproxy's "no limit"; this server keeps its own
        },
        "IMGPROXY_STRIP_COLOR_PROFILE": { value, configuration, _ in configuration.imgproxyStripsColorProfile = try boolean(value) },
        "IMGPROXY_AUTO_ROTATE": { value, configuration, _ in configuration.imgproxyAutoRotates = try boolean(value) },
        "IMGPROXY_ALWAYS_RASTERIZE_SVG": { value, configuration, _ in configuration.imgproxyAlwaysRasterizesSVG = try boolean(value) },
        "IMGPROXY_USE_LINEAR_COLORSPACE": { value, configuration, _ in configuration.imgproxyUsesLinearColorspace = try boolean(value) },
        "IMGPROXY_ENFORCE_JXL": { value, configuration, _ in try enforce(.jxl, value, &configuration) },
        "IMGPROXY_ENFORCE_AVIF": { value, configuration, _ in try enforce(.avif, value, &configuration) },
        "IMGPROXY_ENFORCE_WEBP": { value, configuration, _ in try enforce(.webp, value, &configuration) },
        "IMGPROXY_ONLY_PRESETS": { value, configuration, _ in configuration.onlyPresets = try boolean(value) },
        "IMGPROXY_QUALITY": { value, configuration, _ in
            let quality = try integer(value, in: 1...100)
            for format in ServerConfiguration.lossyFormats { configuration.formatQualities[format] = quality }
        },
        "IMGPROXY_FORMAT_QUALITY": { value, configuration, _ in
            configuration.formatQualities.merge(try formatQualities(value)) { $1 }
        },
        // Autoquality (imgproxy Pro's; here with SSIMULACRA2 as the measure): on for every request that
        // asks for no quality unless the method is `none`; its target, bounds and limit for those and
        // for the `autoquality` option's empty arguments.
        "IMGPROXY_AUTOQUALITY_METHOD": { value, configuration, environment in
            switch value {
            case "none": configuration.autoQuality.isDefault = false
            case "ssimulacra2", "size": configuration.autoQuality.isDefault = true
            case "dssim", "ml":
                throw ConfigurationFileError(message: "imgproxy Pro's DSSIM and ML are not measured here: use ssimulacra2 (IMGPROXY_AUTOQUALITY_TARGET a score from 0 to 100; 70 by default, about what JPEG quality 80 gives) or size")
            default: throw ConfigurationFileError(message: "expected none, size or ssimulacra2")
            }
            if value == "size", environment["IMGPROXY_AUTOQUALITY_TARGET"]?.trimmingCharacters(in: .whitespaces).isEmpty ?? true {
                throw ConfigurationFileError(message: "the size method needs IMGPROXY_AUTOQUALITY_TARGET: the bytes an output may have")
            }
        },
        "IMGPROXY_AUTOQUALITY_TARGET": { value, configuration, environment in
            if environment["IMGPROXY_AUTOQUALITY_METHOD"]?.trimmingCharacters(in: .whitespaces) == "size" {
                configuration.autoQuality.target = .bytes(try integer(value, in: 1...Int(Int32.max)))
            } else {
                guard let score = Double(value), (0...100).contains(score) else {
                    throw ConfigurationFileError(message: "expected a SSIMULACRA2 score from 0 to 100 (70: about JPEG quality 80's), or bytes with the size method")
                }
                configuration.autoQuality.target = .ssimulacra2(score)
            }
        },
        "IMGPROXY_AUTOQUALITY_MIN": { value, configuration, _ in configuration.autoQuality.minimum = try integer(value, in: 1...100) },
        "IMGPROXY_AUTOQUALITY_MAX": { value, configuration, _ in configuration.autoQuality.maximum = try integer(value, in: 1...100) },
        "IMGPROXY_AUTOQUALITY_FORMAT_MIN": { value, configuration, _ in configuration.autoQuality.formatMinimums = try formatQualities(value) },
        "IMGPROXY_AUTOQUALITY_FORMAT_MAX": { value, configuration, _ in configuration.autoQuality.formatMaximums = try formatQualities(value) },
        "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": { value, configuration, _ in
            guard let tolerance = Double(value), tolerance >= 0, tolerance.isFinite else { throw ConfigurationFileError(message: "expected a number, 0 or more") }
            configuration.autoQuality.tolerance = tolerance
        },
        // 0 is imgproxy's "no limit": this server keeps its own (the metric's memory grows with the pixels).
        "IMGPROXY_AUTOQUALITY_MAX_RESOLUTION": { value, configuration, _ in
            let pixels = try megapixels(value)
            if pixels > 0 { configuration.autoQuality.maximumPixels = pixels }
        },
        "IMGPROXY_AUTO_WEBP": { value, configuration, environment in try autoFormats(environment, &configuration) },
        "IMGPROXY_AUTO_AVIF": { value, configuration, environment in try autoFormats(environment, &configuration) },
        "IMGPROXY_AUTO_JXL": { value, configuration, environment in try autoFormats(environment, &configuration) },
        "IMGPROXY_MAX_SRC_RESOLUTION": { value, configuration, _ in configuration.maximumSourcePixels = try megapixels(value) },
        "IMGPROXY_MAX_SRC_FILE_SIZE": { value, configuration, _ in
            let bytes = try integer(value, in: 0...Int.max)
            if bytes > 0 { configuration.maximumSourceBytes = bytes }  // 0: no limit in imgproxy; this server keeps its own
        },
        "IMGPROXY_MAX_ANIMATION_FRAMES": { value, configuration, _ in configuration.maximumFrames = try integer(value, in: 1...Int.max) },
        "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": { value, configuration, _ in
            let pixels = try megapixels(value)
            configuration.maximumFramePixels = pixels > 0 ? pixels : nil
        },
        "IMGPROXY_MAX_RESULT_DIMENSION": { value, configuration, _ in
            let side = try integer(value, in: 0...Int.max)
            if side > 0 { configuration.maximumOutputSide = min(configuration.maximumOutputSide, side) }
        },
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": { value, configuration, _ in configuration.imgproxyAllowsSecurityOptions = try boolean(value) },
        "IMGPROXY_PRESERVE_HDR": { value, configuration, _ in configuration.imgproxyPreservesHDR = try boolean(value) },
        "IMGPROXY_STRIP_METADATA": { value, configuration, _ in configuration.imgproxyStripsMetadata = try boolean(value) },
        "IMGPROXY_KEEP_COPYRIGHT": { value, configuration, _ in configuration.imgproxyKeepsCopyright = try boolean(value) },
        "IMGPROXY_SKIP_PROCESSING_FORMATS": { value, configuration, _ in configuration.imgproxySkipProcessingFormats = try formats(value) },
        "IMGPROXY_PREFERRED_FORMATS": { value, configuration, _ in
            let formats = try formats(value)
            guard !formats.isEmpty else { throw ConfigurationFileError(message: "expected at least one format") }
            configuration.imgproxyPreferredFormats = formats
        },
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": { value, configuration, _ in configuration.localFilesystemRoot = URL(fileURLWithPath: value) },
        "IMGPROXY_PATH_PREFIX": { value, configuration, _ in configuration.imgproxyPathPrefix = value },
        "IMGPROXY_ARGUMENTS_SEPARATOR": { value, configuration, _ in
            guard value.count == 1, let separator = value.first, separator != "/" else {
                throw ConfigurationFileError(message: "expected one character other than /")
            }
            configuration.imgproxyArgumentsSeparator = separator
        },
        "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": { value, configuration, _ in configuration.imgproxyBase64URLIncludesFilename = try boolean(value) },
        "IMGPROXY_BASE_URL": { value, configuration, _ in configuration.imgproxyBaseURL = value },
        "IMGPROXY_URL_REPLACEMENTS": { value, configuration, _ in
            let rules = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard rules.allSatisfy({ $0.contains("=") }) else { throw ConfigurationFileError(message: "expected PATTERN=REPLACEMENT rules separated by ;") }
            configuration.imgproxyURLReplacements = rules
        },
        "IMGPROXY_ALLOWED_SOURCES": { value, configuration, _ in configuration.imgproxyAllowedSources = list(value) },
        "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": { value, configuration, _ in configuration.imgproxyAllowedOptions = list(value) },
        "IMGPROXY_WATERMARK_PATH": { value, configuration, _ in configuration.watermarkFiles[watermarkName] = URL(fileURLWithPath: value) },
        "IMGPROXY_WATERMARK_OPACITY": { value, configuration, _ in
            guard let opacity = Double(value), opacity > 0, opacity <= 1 else { throw ConfigurationFileError(message: "expected a number above 0, at most 1") }
            configuration.imgproxyWatermarkOpacity = opacity
        },
        "IMGPROXY_FALLBACK_IMAGE_PATH": { value, configuration, _ in configuration.fallbackImageFile = URL(fileURLWithPath: value) },
        "IMGPROXY_FALLBACK_IMAGE_DATA": { value, configuration, _ in configuration.fallbackImageFile = try ServerConfiguration.inlineImage(base64: value) },
        "IMGPROXY_FALLBACK_IMAGE_URL": { value, configuration, _ in configuration.fallbackImageFile = try remoteImage(value) },
        "IMGPROXY_WATERMARK_URL": { value, configuration, _ in configuration.watermarkFiles[watermarkName] = try remoteImage(value) },
        "IMGPROXY_WATERMARK_DATA": { value, configuration, _ in
            configuration.watermarkFiles[watermarkName] = try ServerConfiguration.inlineImage(base64: value)
        },
        "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": { value, configuration, _ in
            let status = try integer(value, in: 0...599)
            guard status == 0 || status >= 100 else { throw ConfigurationFileError(message: "expected 0 (the error's status) or 100 to 599") }
            configuration.fallbackImageStatus = status
        },
        "IMGPROXY_FALLBACK_IMAGE_TTL": { value, configuration, _ in
            let seconds = try integer(value, in: 0...Int.max)
            if seconds > 0 { configuration.fallbackImageMaxAge = seconds }  // 0: imgproxy's default; this server keeps its short one
        },
        "IMGPROXY_TTL": { value, configuration, _ in configuration.responseMaxAge = try integer(value, in: 0...Int.max) },
    ]

    /// imgproxy's variables that change nothing here: errors are always JSON with a message and never
    /// leak internals (`DEVELOPMENT_ERRORS_MODE`). Logging and concurrency settings are not among them:
    /// they have this server's own options, and are reported as not applied.
    private static let ignored: Set<String> = ["IMGPROXY_DEVELOPMENT_ERRORS_MODE"]

    /// imgproxy's switches this server has one setting of (`true`: what it always does), with that setting.
    private static let fixed: [String: Bool] = [
        "IMGPROXY_SANITIZE_SVG": true, "IMGPROXY_USE_ETAG": true, "IMGPROXY_USE_LAST_MODIFIED": true,
    ]

    /// imgproxy's other variables (open-source and Pro), named so that a deployment's setting this
    /// server does not honour is reported as unsupported rather than unknown.
    private static let imgproxyNames: Set<String> = [
        "IMGPROXY_ABS_ALLOWED_BUCKETS", "IMGPROXY_ABS_DENIED_BUCKETS", "IMGPROXY_ABS_ENDPOINT", "IMGPROXY_ABS_KEY",
        "IMGPROXY_ABS_NAME", "IMGPROXY_AIRBRAKE_ENVIRONMENT", "IMGPROXY_AIRBRAKE_PROJECT_ID", "IMGPROXY_AIRBRAKE_PROJECT_KEY",
        "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES", "IMGPROXY_ALLOW_ORIGIN",
        "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES", "IMGPROXY_AUTOQUALITY_AVIF_NET", "IMGPROXY_AUTOQUALITY_JPEG_NET",
        "IMGPROXY_AUTOQUALITY_WEBP_NET", "IMGPROXY_AVIF_SPEED", "IMGPROXY_BUGSNAG_KEY", "IMGPROXY_BUGSNAG_STAGE",
        "IMGPROXY_CACHE_CONTROL_PASSTHROUGH", "IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT", "IMGPROXY_CLOUD_WATCH_NAMESPACE",
        "IMGPROXY_CLOUD_WATCH_REGION", "IMGPROXY_CLOUD_WATCH_SERVICE_NAME", "IMGPROXY_COOKIE_BASE_URL",
        "IMGPROXY_COOKIE_PASSTHROUGH", "IMGPROXY_COOKIE_PASSTHROUGH_ALL", "IMGPROXY_DATADOG_ENABLE",
        "IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS", "IMGPROXY_DATADOG_PROPAGATE_EXTERNAL", "IMGPROXY_DISABLE_SHRINK_ON_LOAD",
        "IMGPROXY_ENABLE_CLIENT_HINTS", "IMGPROXY_ENABLE_DEBUG_HEADERS", "IMGPROXY_ENFORCE_THUMBNAIL",
        "IMGPROXY_ENV_AWS_SECRET_ID", "IMGPROXY_ENV_AWS_SECRET_REGION", "IMGPROXY_ENV_AWS_SECRET_VERSION_ID",
        "IMGPROXY_ENV_AWS_SECRET_VERSION_STAGE", "IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH", "IMGPROXY_ENV_AWS_SSM_PARAMETERS_REGION",
        "IMGPROXY_ENV_GCP_KEY", "IMGPROXY_ENV_GCP_SECRET_ID", "IMGPROXY_ENV_GCP_SECRET_PROJECT_ID",
        "IMGPROXY_ENV_GCP_SECRET_VERSION_ID", "IMGPROXY_ENV_LOCAL_FILE_PATH", "IMGPROXY_ETAG_BUSTER",
        "IMGPROXY_FAIL_ON_DEPRECATION",
        "IMGPROXY_FREE_MEMORY_INTERVAL", "IMGPROXY_GCS_ALLOWED_BUCKETS", "IMGPROXY_GCS_DENIED_BUCKETS", "IMGPROXY_GCS_ENDPOINT",
        "IMGPROXY_GCS_KEY", "IMGPROXY_GRACEFUL_STOP_TIMEOUT", "IMGPROXY_HEALTH_CHECK_PATH", "IMGPROXY_HONEYBADGER_ENV",
        "IMGPROXY_HONEYBADGER_KEY", "IMGPROXY_IGNORE_SSL_VERIFICATION", "IMGPROXY_INFO_ONLY_PRESETS", "IMGPROXY_INFO_PRESETS",
        "IMGPROXY_JPEG_PROGRESSIVE", "IMGPROXY_JXL_EFFORT", "IMGPROXY_LAST_MODIFIED_BUSTER", "IMGPROXY_LOG_FORMAT",
        "IMGPROXY_LOG_LEVEL", "IMGPROXY_LOG_MEM_STATS", "IMGPROXY_MAX_REDIRECTS", "IMGPROXY_NETWORK",
        "IMGPROXY_NEW_RELIC_APP_NAME", "IMGPROXY_NEW_RELIC_KEY", "IMGPROXY_NEW_RELIC_LABELS",
        "IMGPROXY_NEW_RELIC_PROPAGATE_EXTERNAL", "IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT", "IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY",
        "IMGPROXY_OPEN_TELEMETRY_ENABLE", "IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS", "IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS",
        "IMGPROXY_OPEN_TELEMETRY_LOGGER_NAME", "IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL",
        "IMGPROXY_OPEN_TELEMETRY_SERVER_CERT", "IMGPROXY_OPEN_TELEMETRY_TRACE_ID_GENERATOR", "IMGPROXY_PNG_INTERLACED",
        "IMGPROXY_PNG_QUANTIZATION_COLORS", "IMGPROXY_PNG_QUANTIZE", "IMGPROXY_PNG_UNLIMITED", "IMGPROXY_PPROF_BIND",
        "IMGPROXY_PROMETHEUS_BIND", "IMGPROXY_PROMETHEUS_NAMESPACE", "IMGPROXY_READ_REQUEST_TIMEOUT",
        "IMGPROXY_REPORT_DOWNLOADING_ERRORS", "IMGPROXY_REPORT_IO_ERRORS", "IMGPROXY_REQUESTS_QUEUE_SIZE",
        "IMGPROXY_S3_ACCESS_POINTS", "IMGPROXY_S3_ALLOWED_BUCKETS", "IMGPROXY_S3_ASSUME_ROLE_ARN",
        "IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID", "IMGPROXY_S3_DENIED_BUCKETS", "IMGPROXY_S3_ENDPOINT",
        "IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE", "IMGPROXY_S3_REGION", "IMGPROXY_S3_USE_DECRYPTION_CLIENT",
        "IMGPROXY_SECRET", "IMGPROXY_SENTRY_DSN", "IMGPROXY_SENTRY_ENVIRONMENT", "IMGPROXY_SENTRY_RELEASE",
        "IMGPROXY_SET_CANONICAL_HEADER", "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR", "IMGPROXY_SO_REUSEPORT", "IMGPROXY_SVG_UNLIMITED",
        "IMGPROXY_SWIFT_ALLOWED_BUCKETS", "IMGPROXY_SWIFT_API_KEY", "IMGPROXY_SWIFT_AUTH_URL", "IMGPROXY_SWIFT_AUTH_VERSION",
        "IMGPROXY_SWIFT_CONNECT_TIMEOUT_SECONDS", "IMGPROXY_SWIFT_DENIED_BUCKETS", "IMGPROXY_SWIFT_DOMAIN",
        "IMGPROXY_SWIFT_TENANT", "IMGPROXY_SWIFT_TIMEOUT_SECONDS", "IMGPROXY_SWIFT_USERNAME", "IMGPROXY_SYSLOG_ADDRESS",
        "IMGPROXY_SYSLOG_ENABLE", "IMGPROXY_SYSLOG_LEVEL", "IMGPROXY_SYSLOG_NETWORK", "IMGPROXY_SYSLOG_TAG",
        "IMGPROXY_TIFF_UNLIMITED", "IMGPROXY_USER_AGENT", "IMGPROXY_USE_ABS", "IMGPROXY_USE_GCS",
        "IMGPROXY_USE_LINEAR_COLORSPACE", "IMGPROXY_USE_S3", "IMGPROXY_USE_SWIFT",
        "IMGPROXY_VIPS_CACHE_TRACE", "IMGPROXY_VIPS_LEAK_CHECK",
        "IMGPROXY_WEBP_EFFORT", "IMGPROXY_WEBP_PRESET", "IMGPROXY_WORKERS", "IMGPROXY_WRITE_RESPONSE_TIMEOUT",
    ]

    /// Presets as `NAME=OPTIONS` entries (blank ones and `#` comments skipped).
    private static func addPresets(_ entries: [String], to configuration: inout ServerConfiguration) throws(ConfigurationFileError) {
        for entry in entries.map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty && !entry.hasPrefix("#") {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ConfigurationFileError(message: "a preset is NAME=OPTIONS (thumb=rs:fill:300:300/q:80), not \(entry)")
            }
            configuration.imgproxyPresets[String(parts[0]).trimmingCharacters(in: .whitespaces)] = String(parts[1]).trimmingCharacters(in: .whitespaces)
        }
    }

    /// `ENFORCE_*`: `format` replaces the URL's when `Accept` takes it (in imgproxy's order: JPEG XL, AVIF, WebP).
    private static func enforce(_ format: ImageFormat, _ value: String, _ configuration: inout ServerConfiguration) throws(ConfigurationFileError) {
        configuration.imgproxyEnforcedFormats.removeAll { $0 == format }
        guard try boolean(value) else { return }
        configuration.imgproxyEnforcedFormats.append(format)
        configuration.imgproxyEnforcedFormats.sort { [ImageFormat.jxl, .avif, .webp].firstIndex(of: $0)! < [ImageFormat.jxl, .avif, .webp].firstIndex(of: $1)! }
    }

    /// An http(s) URL of an image downloaded at start (``ServerConfiguration/downloadingRemoteImages()``).
    private static func remoteImage(_ value: String) throws(ConfigurationFileError) -> URL {
        guard let url = URL(string: value), ServerConfiguration.isRemote(url), url.host != nil else {
            throw ConfigurationFileError(message: "expected an http or https URL")
        }
        return url
    }

    /// imgproxy's format names (`jpeg,png,gif`).
    private static func formats(_ value: String) throws(ConfigurationFileError) -> [ImageFormat] {
        try ImgproxyOptions.formats(named: list(value))
    }

    /// `AUTO_JXL`, `AUTO_AVIF`, `AUTO_WEBP`: the formats `Accept` may choose, in imgproxy's order.
    private static func autoFormats(_ environment: [String: String], _ configuration: inout ServerConfiguration) throws(ConfigurationFileError) {
        var formats: [ImageFormat] = []
        for (name, format) in [("JXL", ImageFormat.jxl), ("AVIF", .avif), ("WEBP", .webp)] {
            let value = environment["IMGPROXY_AUTO_" + name]?.trimmingCharacters(in: .whitespaces) ?? ""
            if !value.isEmpty, try boolean(value) { formats.append(format) }
        }
        configuration.imgproxyAutoFormats = formats
        configuration.imgproxyAutoFormat = !formats.isEmpty
    }

    /// `FORMAT=QUALITY` pairs (`webp=79,avif=63`).
    private static func formatQualities(_ value: String) throws(ConfigurationFileError) -> [ImageFormat: Int] {
        var qualities: [ImageFormat: Int] = [:]
        for entry in list(value) {
            let parts = entry.split(separator: "=")
            guard parts.count == 2, let format = ImageFormat(fileExtension: String(parts[0]).trimmingCharacters(in: .whitespaces)) else {
                throw ConfigurationFileError(message: "format qualities are FORMAT=QUALITY pairs (webp=79,avif=63), not \(entry)")
            }
            qualities[format] = try integer(String(parts[1]).trimmingCharacters(in: .whitespaces), in: 1...100)
        }
        return qualities
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
