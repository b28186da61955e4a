import Foundation
import Imagery

extension ImgproxyEnvironment {
    /// The variables read, by name.
    static let variables: [String: Variable] = [
        "IMGPROXY_KEY": Variable(["imgproxy.keys"]) { value, configuration, _ in
            configuration.imgproxy.keys = list(value)
        },
        "IMGPROXY_SALT": Variable(["imgproxy.salts"]) { value, configuration, _ in
            configuration.imgproxy.salts = list(value)
        },
        "IMGPROXY_SIGNATURE_SIZE": Variable(["imgproxy.signatureSize"]) { value, configuration, _ in
            configuration.imgproxy.signatureSize = try integer(value, in: 1...32)
        },
        "IMGPROXY_TRUSTED_SIGNATURES": Variable(["imgproxy.trustedSignatures"]) { value, configuration, _ in
            configuration.imgproxy.trustedSignatures = list(value)
        },
        "IMGPROXY_PRESETS": Variable(["imgproxy.presets"]) { value, configuration, environment in
            let separator = environment["IMGPROXY_PRESETS_SEPARATOR"].flatMap { $0.isEmpty ? nil : $0 } ?? ","
            try addPresets(value.components(separatedBy: separator), to: &configuration)
        },
        "IMGPROXY_PRESETS_SEPARATOR": Variable([]) { _, _, _ in },  // read with IMGPROXY_PRESETS
        "IMGPROXY_PRESETS_PATH": Variable(["imgproxy.presets"]) { value, configuration, _ in
            guard let text = try? String(contentsOfFile: value, encoding: .utf8) else {
                throw ConfigurationFileError(message: "the file cannot be read")
            }
            try addPresets(text.components(separatedBy: "\n"), to: &configuration)
        },
        "IMGPROXY_BIND": Variable(["listener.host", "listener.port"]) { value, configuration, _ in
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
        "IMGPROXY_TIMEOUT": Variable(["limits.requestTimeoutSeconds"]) { value, configuration, _ in
            configuration.limits.requestTimeout = .seconds(try integer(value, in: 1...86_400))
        },
        "IMGPROXY_DOWNLOAD_TIMEOUT": Variable(["origins.timeoutSeconds"]) { value, configuration, _ in
            configuration.origins.timeout = .seconds(try integer(value, in: 1...86_400))
        },
        "IMGPROXY_KEEP_ALIVE_TIMEOUT": Variable(["listener.idleTimeoutSeconds"]) { value, configuration, _ in
            configuration.listener.idleTimeout = .seconds(try integer(value, in: 1...86_400))
        },
        "IMGPROXY_MAX_CLIENTS": Variable(["listener.maximumConnections"]) { value, configuration, _ in
            let clients = try integer(value, in: 0...Int.max)
            // 0: imgproxy's "no limit"; this server keeps its own
            if clients > 0 { configuration.listener.maximumConnections = clients }
        },
        "IMGPROXY_STRIP_COLOR_PROFILE": .flag("imgproxy.stripsColorProfile", \.imgproxy.stripsColorProfile),
        "IMGPROXY_AUTO_ROTATE": .flag("imgproxy.autoRotates", \.imgproxy.autoRotates),
        "IMGPROXY_ALWAYS_RASTERIZE_SVG": .flag("imgproxy.alwaysRasterizesSVG", \.imgproxy.alwaysRasterizesSVG),
        "IMGPROXY_USE_LINEAR_COLORSPACE": .flag("imgproxy.usesLinearColorspace", \.imgproxy.usesLinearColorspace),
        "IMGPROXY_ENFORCE_JXL": Variable(["imgproxy.enforcedFormats"]) { value, configuration, _ in
            try enforce(.jxl, value, &configuration)
        },
        "IMGPROXY_ENFORCE_AVIF": Variable(["imgproxy.enforcedFormats"]) { value, configuration, _ in
            try enforce(.avif, value, &configuration)
        },
        "IMGPROXY_ENFORCE_WEBP": Variable(["imgproxy.enforcedFormats"]) { value, configuration, _ in
            try enforce(.webp, value, &configuration)
        },
        "IMGPROXY_ONLY_PRESETS": .flag("requests.onlyPresets", \.requests.onlyPresets),
        "IMGPROXY_QUALITY": Variable(["rendering.formatQualities"]) { value, configuration, _ in
            let quality = try integer(value, in: 1...100)
            for format in ServerConfiguration.lossyFormats { configuration.rendering.formatQualities[format] = quality }
        },
        "IMGPROXY_FORMAT_QUALITY": Variable(["rendering.formatQualities"]) { value, configuration, _ in
            configuration.rendering.formatQualities.merge(try formatQualities(value)) { $1 }
        },
        // Autoquality (imgproxy Pro's; here with SSIMULACRA2 as the measure): on for every request that
        // asks for no quality unless the method is `none`; its target, bounds and limit for those and
        // for the `autoquality` option's empty arguments.
        "IMGPROXY_AUTOQUALITY_METHOD": Variable(["rendering.autoQuality.default"]) {
            value, configuration, environment in
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
        "IMGPROXY_AUTOQUALITY_TARGET": Variable(["rendering.autoQuality.target"]) { value, configuration, environment in
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
        "IMGPROXY_AUTOQUALITY_MIN": Variable(["rendering.autoQuality.minimum"]) { value, configuration, _ in
            configuration.rendering.autoQuality.minimum = try integer(value, in: 1...100)
        },
        "IMGPROXY_AUTOQUALITY_MAX": Variable(["rendering.autoQuality.maximum"]) { value, configuration, _ in
            configuration.rendering.autoQuality.maximum = try integer(value, in: 1...100)
        },
        "IMGPROXY_AUTOQUALITY_FORMAT_MIN": Variable(["rendering.autoQuality.formatMinimums"]) {
            value, configuration, _ in
            configuration.rendering.autoQuality.formatMinimums = try formatQualities(value)
        },
        "IMGPROXY_AUTOQUALITY_FORMAT_MAX": Variable(["rendering.autoQuality.formatMaximums"]) {
            value, configuration, _ in
            configuration.rendering.autoQuality.formatMaximums = try formatQualities(value)
        },
        "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": Variable(["rendering.autoQuality.tolerance"]) { value, configuration, _ in
            guard let tolerance = Double(value), tolerance >= 0, tolerance.isFinite else {
                throw ConfigurationFileError(message: "expected a number, 0 or more")
            }
            configuration.rendering.autoQuality.tolerance = tolerance
        },
        // 0 is imgproxy's "no limit": this server keeps its own (the metric's memory grows with the pixels).
        "IMGPROXY_AUTOQUALITY_MAX_RESOLUTION": Variable(["rendering.autoQuality.maximumPixels"]) {
            value, configuration, _ in
            let pixels = try megapixels(value)
            if pixels > 0 { configuration.rendering.autoQuality.maximumPixels = pixels }
        },
        "IMGPROXY_AUTO_WEBP": Variable(["imgproxy.autoFormat", "imgproxy.autoFormats"]) {
            value, configuration, environment in try autoFormats(environment, &configuration)
        },
        "IMGPROXY_AUTO_AVIF": Variable(["imgproxy.autoFormat", "imgproxy.autoFormats"]) {
            value, configuration, environment in try autoFormats(environment, &configuration)
        },
        "IMGPROXY_AUTO_JXL": Variable(["imgproxy.autoFormat", "imgproxy.autoFormats"]) {
            value, configuration, environment in try autoFormats(environment, &configuration)
        },
        "IMGPROXY_MAX_SRC_RESOLUTION": Variable(["limits.maximumSourcePixels"]) { value, configuration, _ in
            configuration.limits.maximumSourcePixels = try megapixels(value)
        },
        "IMGPROXY_MAX_SRC_FILE_SIZE": Variable(["limits.maximumSourceBytes"]) { value, configuration, _ in
            let bytes = try integer(value, in: 0...Int.max)
            // 0: no limit in imgproxy; this server keeps its own
            if bytes > 0 { configuration.limits.maximumSourceBytes = bytes }
        },
        "IMGPROXY_MAX_ANIMATION_FRAMES": Variable(["limits.maximumFrames"]) { value, configuration, _ in
            configuration.limits.maximumFrames = try integer(value, in: 1...Int.max)
        },
        "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": Variable(["limits.maximumFramePixels"]) { value, configuration, _ in
            let pixels = try megapixels(value)
            configuration.limits.maximumFramePixels = pixels > 0 ? pixels : nil
        },
        "IMGPROXY_MAX_RESULT_DIMENSION": Variable(["limits.maximumOutputSide"]) { value, configuration, _ in
            let side = try integer(value, in: 0...Int.max)
            if side > 0 { configuration.limits.maximumOutputSide = min(configuration.limits.maximumOutputSide, side) }
        },
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": .flag("imgproxy.allowsSecurityOptions", \.imgproxy.allowsSecurityOptions),
        "IMGPROXY_PRESERVE_HDR": .flag("imgproxy.preservesHDR", \.imgproxy.preservesHDR),
        "IMGPROXY_STRIP_METADATA": .flag("imgproxy.stripsMetadata", \.imgproxy.stripsMetadata),
        "IMGPROXY_KEEP_COPYRIGHT": .flag("imgproxy.keepsCopyright", \.imgproxy.keepsCopyright),
        "IMGPROXY_SKIP_PROCESSING_FORMATS": Variable(["imgproxy.skipProcessingFormats"]) { value, configuration, _ in
            configuration.imgproxy.skipProcessingFormats = try formats(value)
        },
        "IMGPROXY_PREFERRED_FORMATS": Variable(["imgproxy.preferredFormats"]) { value, configuration, _ in
            let formats = try formats(value)
            guard !formats.isEmpty else { throw ConfigurationFileError(message: "expected at least one format") }
            configuration.imgproxy.preferredFormats = formats
        },
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": Variable(["origins.localFilesystemRoot"]) { value, configuration, _ in
            configuration.origins.localFilesystemRoot = URL(fileURLWithPath: value)
        },
        "IMGPROXY_PATH_PREFIX": Variable(["imgproxy.pathPrefix"]) { value, configuration, _ in
            configuration.imgproxy.pathPrefix = value
        },
        "IMGPROXY_ARGUMENTS_SEPARATOR": Variable(["imgproxy.argumentsSeparator"]) { value, configuration, _ in
            guard value.count == 1, let separator = value.first, separator != "/" else {
                throw ConfigurationFileError(message: "expected one character other than /")
            }
            configuration.imgproxy.argumentsSeparator = separator
        },
        "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": Variable(["imgproxy.base64URLIncludesFilename"]) {
            value, configuration, _ in
            configuration.imgproxy.base64URLIncludesFilename = try boolean(value)
        },
        "IMGPROXY_BASE_URL": Variable(["imgproxy.baseURL"]) { value, configuration, _ in
            configuration.imgproxy.baseURL = value
        },
        "IMGPROXY_URL_REPLACEMENTS": Variable(["imgproxy.urlReplacements"]) { value, configuration, _ in
            let rules = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard rules.allSatisfy({ $0.contains("=") }) else {
                throw ConfigurationFileError(message: "expected PATTERN=REPLACEMENT rules separated by ;")
            }
            configuration.imgproxy.urlReplacements = rules
        },
        "IMGPROXY_ALLOWED_SOURCES": Variable(["imgproxy.allowedSources"]) { value, configuration, _ in
            configuration.imgproxy.allowedSources = list(value)
        },
        "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": Variable(["imgproxy.allowedOptions"]) { value, configuration, _ in
            configuration.imgproxy.allowedOptions = list(value)
        },
        "IMGPROXY_WATERMARK_PATH": Variable(["imgproxy.watermark"]) { value, configuration, _ in
            configuration.rendering.watermarkFiles[watermarkName] = URL(fileURLWithPath: value)
        },
        "IMGPROXY_WATERMARK_OPACITY": Variable(["imgproxy.watermarkOpacity"]) { value, configuration, _ in
            guard let opacity = Double(value), opacity > 0, opacity <= 1 else {
                throw ConfigurationFileError(message: "expected a number above 0, at most 1")
            }
            configuration.imgproxy.watermarkOpacity = opacity
        },
        "IMGPROXY_FALLBACK_IMAGE_PATH": Variable(["fallback.image"]) { value, configuration, _ in
            configuration.fallback.image = URL(fileURLWithPath: value)
        },
        "IMGPROXY_FALLBACK_IMAGE_DATA": Variable(["fallback.image"]) { value, configuration, _ in
            configuration.fallback.image = try ServerConfiguration.inlineImage(base64: value)
        },
        "IMGPROXY_FALLBACK_IMAGE_URL": Variable(["fallback.image"]) { value, configuration, _ in
            configuration.fallback.image = try remoteImage(value)
        },
        "IMGPROXY_WATERMARK_URL": Variable(["imgproxy.watermark"]) { value, configuration, _ in
            configuration.rendering.watermarkFiles[watermarkName] = try remoteImage(value)
        },
        "IMGPROXY_WATERMARK_DATA": Variable(["imgproxy.watermark"]) { value, configuration, _ in
            configuration.rendering.watermarkFiles[watermarkName] = try ServerConfiguration.inlineImage(base64: value)
        },
        "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": Variable(["fallback.status"]) { value, configuration, _ in
            let status = try integer(value, in: 0...599)
            guard status == 0 || status >= 100 else {
                throw ConfigurationFileError(message: "expected 0 (the error's status) or 100 to 599")
            }
            configuration.fallback.status = status
        },
        "IMGPROXY_FALLBACK_IMAGE_TTL": Variable(["fallback.maxAge"]) { value, configuration, _ in
            let seconds = try integer(value, in: 0...Int.max)
            // 0: imgproxy's default; this server keeps its short one
            if seconds > 0 { configuration.fallback.maxAge = seconds }
        },
        // The max-age of imgproxy URLs' answers (fixed, without passthrough), and the cap of every other.
        "IMGPROXY_TTL": Variable(["imgproxy.ttl", "caching.responseMaxAge"]) { value, configuration, _ in
            let ttl = try integer(value, in: 0...Int.max)
            configuration.imgproxy.ttl = ttl
            configuration.caching.responseMaxAge = ttl
        },
        "IMGPROXY_USE_ETAG": .flag("imgproxy.usesETag", \.imgproxy.usesETag),
        "IMGPROXY_USE_LAST_MODIFIED": .flag("imgproxy.usesLastModified", \.imgproxy.usesLastModified),
        "IMGPROXY_SET_CANONICAL_HEADER": .flag("imgproxy.setsCanonicalHeader", \.imgproxy.setsCanonicalHeader),
        "IMGPROXY_CACHE_CONTROL_PASSTHROUGH": .flag(
            "imgproxy.cacheControlPassthrough", \.imgproxy.cacheControlPassthrough),
        "IMGPROXY_ETAG_BUSTER": Variable(["imgproxy.etagBuster"]) { value, configuration, _ in
            configuration.imgproxy.etagBuster = value.isEmpty ? nil : value
        },
        "IMGPROXY_LAST_MODIFIED_BUSTER": Variable(["imgproxy.lastModifiedBuster"]) { value, configuration, _ in
            configuration.imgproxy.lastModifiedBuster = value.isEmpty ? nil : try time(value)
        },
    ]
}
