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
    package static func apply(_ environment: [String: String], to configuration: inout ServerConfiguration)
        throws(ConfigurationFileError) -> Report
    {
        var report = Report()
        // In name order, but the general quality before the per-format ones it stands behind.
        let ordered = environment.sorted {
            ($0.key == "IMGPROXY_QUALITY" ? "" : $0.key) < ($1.key == "IMGPROXY_QUALITY" ? "" : $1.key)
        }
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
            configuration.imgproxy.keys.count != configuration.imgproxy.salts.count
        {
            throw ConfigurationFileError(message: "IMGPROXY_KEY and IMGPROXY_SALT must list as many hex keys as salts")
        }
        return report
    }

    /// The name imgproxy's watermark image has among the server's watermarks (``ServerConfiguration/Rendering/watermarkFiles``).
    package static let watermarkName = "imgproxy"

    /// A variable's reader: its value, the configuration, and the whole environment (for variables that
    /// change how another is read: `PRESETS_SEPARATOR`).
    private typealias Reader = @Sendable (String, inout ServerConfiguration, [String: String]) throws -> Void

    /// The variables read, each with imgproxy's syntax.
    private static let readers: [String: Reader] = [
        "IMGPROXY_KEY": { value, configuration, _ in configuration.imgproxy.keys = list(value) },
        "IMGPROXY_SALT": { value, configuration, _ in configuration.imgproxy.salts = list(value) },
        "IMGPROXY_SIGNATURE_SIZE": { value, configuration, _ in
            configuration.imgproxy.signatureSize = try integer(value, in: 1...32)
        },
        "IMGPROXY_TRUSTED_SIGNATURES": { value, configuration, _ in
            configuration.imgproxy.trustedSignatures = list(value)
        },
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
            guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]),
                (0...65_535).contains(port)
            else {
                throw ConfigurationFileError(message: "expected HOST:PORT or :PORT")
            }
            let host = String(value[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            // imgproxy's ":8080" listens on every interface
            configuration.listener.host = host.isEmpty ? "0.0.0.0" : host
            configuration.listener.port = port
        },
        "IMGPROXY_TIMEOUT": { value, configuration, _ in
            configuration.limits.requestTimeout = .seconds(try integer(value, in: 1...86_400))
        },
        "IMGPROXY_DOWNLOAD_TIMEOUT": { value, configuration, _ in
            configuration.origins.timeout = .seconds(try integer(value, in: 1...86_400))
        },
        "IMGPROXY_KEEP_ALIVE_TIMEOUT": { value, configuration, _ in
            configuration.listener.idleTimeout = .seconds(try integer(value, in: 1...86_400))
        },
        "IMGPROXY_MAX_CLIENTS": { value, configuration, _ in
            let clients = try integer(value, in: 0...Int.max)
            // 0: imgproxy's "no limit"; this server keeps its own
            if clients > 0 { configuration.listener.maximumConnections = clients }
        },
        "IMGPROXY_STRIP_COLOR_PROFILE": { value, configuration, _ in
            configuration.imgproxy.stripsColorProfile = try boolean(value)
        },
        "IMGPROXY_AUTO_ROTATE": { value, configuration, _ in configuration.imgproxy.autoRotates = try boolean(value) },
        "IMGPROXY_ALWAYS_RASTERIZE_SVG": { value, configuration, _ in
            configuration.imgproxy.alwaysRasterizesSVG = try boolean(value)
        },
        "IMGPROXY_USE_LINEAR_COLORSPACE": { value, configuration, _ in
            configuration.imgproxy.usesLinearColorspace = try boolean(value)
        },
        "IMGPROXY_ENFORCE_JXL": { value, configuration, _ in try enforce(.jxl, value, &configuration) },
        "IMGPROXY_ENFORCE_AVIF": { value, configuration, _ in try enforce(.avif, value, &configuration) },
        "IMGPROXY_ENFORCE_WEBP": { value, configuration, _ in try enforce(.webp, value, &configuration) },
        "IMGPROXY_ONLY_PRESETS": { value, configuration, _ in configuration.requests.onlyPresets = try boolean(value) },
        "IMGPROXY_QUALITY": { value, configuration, _ in
            let quality = try integer(value, in: 1...100)
            for format in ServerConfiguration.lossyFormats { configuration.rendering.formatQualities[format] = quality }
        },
        "IMGPROXY_FORMAT_QUALITY": { value, configuration, _ in
            configuration.rendering.formatQualities.merge(try formatQualities(value)) { $1 }
        },
        // Autoquality (imgproxy Pro's; here with SSIMULACRA2 as the measure): on for every request that
        // asks for no quality unless the method is `none`; its target, bounds and limit for those and
        // for the `autoquality` option's empty arguments.
        "IMGPROXY_AUTOQUALITY_METHOD": { value, configuration, environment in
            switch value {
            case "none": configuration.rendering.autoQuality.isDefault = false
            case "ssimulacra2", "size": configuration.rendering.autoQuality.isDefault = true
            case "dssim", "ml":
                throw ConfigurationFileError(
                    message:
                        "imgproxy Pro's DSSIM and ML are not measured here: use ssimulacra2 (IMGPROXY_AUTOQUALITY_TARGET a score from 0 to 100; 70 by default, about what JPEG quality 80 gives) or size"
                )
            default: throw ConfigurationFileError(message: "expected none, size or ssimulacra2")
            }
            if value == "size",
                environment["IMGPROXY_AUTOQUALITY_TARGET"]?.trimmingCharacters(in: .whitespaces).isEmpty ?? true
            {
                throw ConfigurationFileError(
                    message: "the size method needs IMGPROXY_AUTOQUALITY_TARGET: the bytes an output may have")
            }
        },
        "IMGPROXY_AUTOQUALITY_TARGET": { value, configuration, environment in
            if environment["IMGPROXY_AUTOQUALITY_METHOD"]?.trimmingCharacters(in: .whitespaces) == "size" {
                configuration.rendering.autoQuality.target = .bytes(try integer(value, in: 1...Int(Int32.max)))
            } else {
                guard let score = Double(value), (0...100).contains(score) else {
                    throw ConfigurationFileError(
                        message:
                            "expected a SSIMULACRA2 score from 0 to 100 (70: about JPEG quality 80's), or bytes with the size method"
                    )
                }
                configuration.rendering.autoQuality.target = .ssimulacra2(score)
            }
        },
        "IMGPROXY_AUTOQUALITY_MIN": { value, configuration, _ in
            configuration.rendering.autoQuality.minimum = try integer(value, in: 1...100)
        },
        "IMGPROXY_AUTOQUALITY_MAX": { value, configuration, _ in
            configuration.rendering.autoQuality.maximum = try integer(value, in: 1...100)
        },
        "IMGPROXY_AUTOQUALITY_FORMAT_MIN": { value, configuration, _ in
            configuration.rendering.autoQuality.formatMinimums = try formatQualities(value)
        },
        "IMGPROXY_AUTOQUALITY_FORMAT_MAX": { value, configuration, _ in
            configuration.rendering.autoQuality.formatMaximums = try formatQualities(value)
        },
        "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": { value, configuration, _ in
            guard let tolerance = Double(value), tolerance >= 0, tolerance.isFinite else {
                throw ConfigurationFileError(message: "expected a number, 0 or more")
            }
            configuration.rendering.autoQuality.tolerance = tolerance
        },
        // 0 is imgproxy's "no limit": this server keeps its own (the metric's memory grows with the pixels).
        "IMGPROXY_AUTOQUALITY_MAX_RESOLUTION": { value, configuration, _ in
            let pixels = try megapixels(value)
            if pixels > 0 { configuration.rendering.autoQuality.maximumPixels = pixels }
        },
        "IMGPROXY_AUTO_WEBP": { value, configuration, environment in try autoFormats(environment, &configuration) },
        "IMGPROXY_AUTO_AVIF": { value, configuration, environment in try autoFormats(environment, &configuration) },
        "IMGPROXY_AUTO_JXL": { value, configuration, environment in try autoFormats(environment, &configuration) },
        "IMGPROXY_MAX_SRC_RESOLUTION": { value, configuration, _ in
            configuration.limits.maximumSourcePixels = try megapixels(value)
        },
        "IMGPROXY_MAX_SRC_FILE_SIZE": { value, configuration, _ in
            let bytes = try integer(value, in: 0...Int.max)
            // 0: no limit in imgproxy; this server keeps its own
            if bytes > 0 { configuration.limits.maximumSourceBytes = bytes }
        },
        "IMGPROXY_MAX_ANIMATION_FRAMES": { value, configuration, _ in
            configuration.limits.maximumFrames = try integer(value, in: 1...Int.max)
        },
        "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": { value, configuration, _ in
            let pixels = try megapixels(value)
            configuration.limits.maximumFramePixels = pixels > 0 ? pixels : nil
        },
        "IMGPROXY_MAX_RESULT_DIMENSION": { value, configuration, _ in
            let side = try integer(value, in: 0...Int.max)
            if side > 0 { configuration.limits.maximumOutputSide = min(configuration.limits.maximumOutputSide, side) }
        },
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": { value, configuration, _ in
            configuration.imgproxy.allowsSecurityOptions = try boolean(value)
        },
        "IMGPROXY_PRESERVE_HDR": { value, configuration, _ in configuration.imgproxy.preservesHDR = try boolean(value)
        },
        "IMGPROXY_STRIP_METADATA": { value, configuration, _ in
            configuration.imgproxy.stripsMetadata = try boolean(value)
        },
        "IMGPROXY_KEEP_COPYRIGHT": { value, configuration, _ in
            configuration.imgproxy.keepsCopyright = try boolean(value)
        },
        "IMGPROXY_SKIP_PROCESSING_FORMATS": { value, configuration, _ in
            configuration.imgproxy.skipProcessingFormats = try formats(value)
        },
        "IMGPROXY_PREFERRED_FORMATS": { value, configuration, _ in
            let formats = try formats(value)
            guard !formats.isEmpty else { throw ConfigurationFileError(message: "expected at least one format") }
            configuration.imgproxy.preferredFormats = formats
        },
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": { value, configuration, _ in
            configuration.origins.localFilesystemRoot = URL(fileURLWithPath: value)
        },
        "IMGPROXY_PATH_PREFIX": { value, configuration, _ in configuration.imgproxy.pathPrefix = value },
        "IMGPROXY_ARGUMENTS_SEPARATOR": { value, configuration, _ in
            guard value.count == 1, let separator = value.first, separator != "/" else {
                throw ConfigurationFileError(message: "expected one character other than /")
            }
            configuration.imgproxy.argumentsSeparator = separator
        },
        "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": { value, configuration, _ in
            configuration.imgproxy.base64URLIncludesFilename = try boolean(value)
        },
        "IMGPROXY_BASE_URL": { value, configuration, _ in configuration.imgproxy.baseURL = value },
        "IMGPROXY_URL_REPLACEMENTS": { value, configuration, _ in
            let rules = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard rules.allSatisfy({ $0.contains("=") }) else {
                throw ConfigurationFileError(message: "expected PATTERN=REPLACEMENT rules separated by ;")
            }
            configuration.imgproxy.urlReplacements = rules
        },
        "IMGPROXY_ALLOWED_SOURCES": { value, configuration, _ in configuration.imgproxy.allowedSources = list(value) },
        "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": { value, configuration, _ in
            configuration.imgproxy.allowedOptions = list(value)
        },
        "IMGPROXY_WATERMARK_PATH": { value, configuration, _ in
            configuration.rendering.watermarkFiles[watermarkName] = URL(fileURLWithPath: value)
        },
        "IMGPROXY_WATERMARK_OPACITY": { value, configuration, _ in
            guard let opacity = Double(value), opacity > 0, opacity <= 1 else {
                throw ConfigurationFileError(message: "expected a number above 0, at most 1")
            }
            configuration.imgproxy.watermarkOpacity = opacity
        },
        "IMGPROXY_FALLBACK_IMAGE_PATH": { value, configuration, _ in
            configuration.fallback.image = URL(fileURLWithPath: value)
        },
        "IMGPROXY_FALLBACK_IMAGE_DATA": { value, configuration, _ in
            configuration.fallback.image = try ServerConfiguration.inlineImage(base64: value)
        },
        "IMGPROXY_FALLBACK_IMAGE_URL": { value, configuration, _ in
            configuration.fallback.image = try remoteImage(value)
        },
        "IMGPROXY_WATERMARK_URL": { value, configuration, _ in
            configuration.rendering.watermarkFiles[watermarkName] = try remoteImage(value)
        },
        "IMGPROXY_WATERMARK_DATA": { value, configuration, _ in
            configuration.rendering.watermarkFiles[watermarkName] = try ServerConfiguration.inlineImage(base64: value)
        },
        "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": { value, configuration, _ in
            let status = try integer(value, in: 0...599)
            guard status == 0 || status >= 100 else {
                throw ConfigurationFileError(message: "expected 0 (the error's status) or 100 to 599")
            }
            configuration.fallback.status = status
        },
        "IMGPROXY_FALLBACK_IMAGE_TTL": { value, configuration, _ in
            let seconds = try integer(value, in: 0...Int.max)
            // 0: imgproxy's default; this server keeps its short one
            if seconds > 0 { configuration.fallback.maxAge = seconds }
        },
        "IMGPROXY_TTL": { value, configuration, _ in
            configuration.caching.responseMaxAge = try integer(value, in: 0...Int.max)
        },
    ]

    /// Presets as `NAME=OPTIONS` entries (blank ones and `#` comments skipped).
    private static func addPresets(_ entries: [String], to configuration: inout ServerConfiguration)
        throws(ConfigurationFileError)
    {
        for entry in entries.map({ $0.trimmingCharacters(in: .whitespaces) })
        where !entry.isEmpty && !entry.hasPrefix("#") {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ConfigurationFileError(
                    message: "a preset is NAME=OPTIONS (thumb=rs:fill:300:300/q:80), not \(entry)")
            }
            configuration.imgproxy.presets[String(parts[0]).trimmingCharacters(in: .whitespaces)] = String(parts[1])
                .trimmingCharacters(in: .whitespaces)
        }
    }

    /// `ENFORCE_*`: `format` replaces the URL's when `Accept` takes it (in imgproxy's order: JPEG XL, AVIF, WebP).
    private static func enforce(_ format: ImageFormat, _ value: String, _ configuration: inout ServerConfiguration)
        throws(ConfigurationFileError)
    {
        configuration.imgproxy.enforcedFormats.removeAll { $0 == format }
        guard try boolean(value) else { return }
        configuration.imgproxy.enforcedFormats.append(format)
        configuration.imgproxy.enforcedFormats.sort {
            [ImageFormat.jxl, .avif, .webp].firstIndex(of: $0)! < [ImageFormat.jxl, .avif, .webp].firstIndex(of: $1)!
        }
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
    private static func autoFormats(_ environment: [String: String], _ configuration: inout ServerConfiguration)
        throws(ConfigurationFileError)
    {
        var formats: [ImageFormat] = []
        for (name, format) in [("JXL", ImageFormat.jxl), ("AVIF", .avif), ("WEBP", .webp)] {
            let value = environment["IMGPROXY_AUTO_" + name]?.trimmingCharacters(in: .whitespaces) ?? ""
            if !value.isEmpty, try boolean(value) { formats.append(format) }
        }
        configuration.imgproxy.autoFormats = formats
        configuration.imgproxy.autoFormat = !formats.isEmpty
    }

    /// `FORMAT=QUALITY` pairs (`webp=79,avif=63`).
    private static func formatQualities(_ value: String) throws(ConfigurationFileError) -> [ImageFormat: Int] {
        var qualities: [ImageFormat: Int] = [:]
        for entry in list(value) {
            let parts = entry.split(separator: "=")
            guard parts.count == 2,
                let format = ImageFormat(fileExtension: String(parts[0]).trimmingCharacters(in: .whitespaces))
            else {
                throw ConfigurationFileError(
                    message: "format qualities are FORMAT=QUALITY pairs (webp=79,avif=63), not \(entry)")
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
            throw ConfigurationFileError(
                message:
                    "expected a whole number from \(range.lowerBound)\(range.upperBound == .max ? " up" : " to \(range.upperBound)")"
            )
        }
        return number
    }

    /// Megapixels (a decimal number) as pixels, as imgproxy reads resolutions.
    private static func megapixels(_ value: String) throws(ConfigurationFileError) -> Int {
        guard let number = Double(value), number >= 0, number < 1e12 else {
            throw ConfigurationFileError(message: "expected megapixels (50, 10.5)")
        }
        return Int(number * 1_000_000)
    }
}
