import Configuration
import Foundation

extension ImgproxyEnvironment {
    /// imgproxy's variables of `environment` as a configuration layer: each read with imgproxy's syntax
    /// and meaning (``apply(_:to:)``, onto the defaults), and offered under the keys it sets
    /// (`IMGPROXY_KEY` as `imgproxy.keys`), so that Imagery's own settings and the command line still win.
    /// - Throws: ``ConfigurationFileError`` naming the variable whose value is not valid.
    package static func layer(_ environment: [String: String]) throws(ConfigurationFileError) -> (
        layer: ConfigurationLayer, report: Report
    ) {
        var configuration = ServerConfiguration()
        let report = try apply(environment, to: &configuration)
        var values: [String: ConfigContent] = [:]
        var origins: [String: String] = [:]
        for (variable, keys) in keysByVariable.sorted(by: { $0.key < $1.key }) {
            guard let value = environment[variable], !value.trimmingCharacters(in: .whitespaces).isEmpty else {
                continue
            }
            for key in keys {
                guard let setting = ServerConfiguration.settingsByKey[key] else { continue }
                values[key] = setting.write(configuration)
                origins[key] = origins[key].map { "\($0), \(variable)" } ?? variable
            }
        }
        return (.values(name: "imgproxy's variables", values, origins: origins), report)
    }

    /// The keys each variable sets.
    static let keysByVariable: [String: [String]] = [
        "IMGPROXY_KEY": ["imgproxy.keys"], "IMGPROXY_SALT": ["imgproxy.salts"],
        "IMGPROXY_SIGNATURE_SIZE": ["imgproxy.signatureSize"],
        "IMGPROXY_TRUSTED_SIGNATURES": ["imgproxy.trustedSignatures"], "IMGPROXY_PRESETS": ["imgproxy.presets"],
        "IMGPROXY_PRESETS_PATH": ["imgproxy.presets"], "IMGPROXY_BIND": ["listener.host", "listener.port"],
        "IMGPROXY_TIMEOUT": ["limits.requestTimeoutSeconds"], "IMGPROXY_DOWNLOAD_TIMEOUT": ["origins.timeoutSeconds"],
        "IMGPROXY_KEEP_ALIVE_TIMEOUT": ["listener.idleTimeoutSeconds"],
        "IMGPROXY_MAX_CLIENTS": ["listener.maximumConnections"],
        "IMGPROXY_STRIP_COLOR_PROFILE": ["imgproxy.stripsColorProfile"],
        "IMGPROXY_AUTO_ROTATE": ["imgproxy.autoRotates"],
        "IMGPROXY_ALWAYS_RASTERIZE_SVG": ["imgproxy.alwaysRasterizesSVG"],
        "IMGPROXY_USE_LINEAR_COLORSPACE": ["imgproxy.usesLinearColorspace"],
        "IMGPROXY_ENFORCE_JXL": ["imgproxy.enforcedFormats"], "IMGPROXY_ENFORCE_AVIF": ["imgproxy.enforcedFormats"],
        "IMGPROXY_ENFORCE_WEBP": ["imgproxy.enforcedFormats"], "IMGPROXY_ONLY_PRESETS": ["requests.onlyPresets"],
        "IMGPROXY_QUALITY": ["rendering.formatQualities"], "IMGPROXY_FORMAT_QUALITY": ["rendering.formatQualities"],
        "IMGPROXY_AUTOQUALITY_METHOD": ["rendering.autoQuality.default"],
        "IMGPROXY_AUTOQUALITY_TARGET": ["rendering.autoQuality.target"],
        "IMGPROXY_AUTOQUALITY_MIN": ["rendering.autoQuality.minimum"],
        "IMGPROXY_AUTOQUALITY_MAX": ["rendering.autoQuality.maximum"],
        "IMGPROXY_AUTOQUALITY_FORMAT_MIN": ["rendering.autoQuality.formatMinimums"],
        "IMGPROXY_AUTOQUALITY_FORMAT_MAX": ["rendering.autoQuality.formatMaximums"],
        "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": ["rendering.autoQuality.tolerance"],
        "IMGPROXY_AUTOQUALITY_MAX_RESOLUTION": ["rendering.autoQuality.maximumPixels"],
        "IMGPROXY_AUTO_WEBP": ["imgproxy.autoFormat", "imgproxy.autoFormats"],
        "IMGPROXY_AUTO_AVIF": ["imgproxy.autoFormat", "imgproxy.autoFormats"],
        "IMGPROXY_AUTO_JXL": ["imgproxy.autoFormat", "imgproxy.autoFormats"],
        "IMGPROXY_MAX_SRC_RESOLUTION": ["limits.maximumSourcePixels"],
        "IMGPROXY_MAX_SRC_FILE_SIZE": ["limits.maximumSourceBytes"],
        "IMGPROXY_MAX_ANIMATION_FRAMES": ["limits.maximumFrames"],
        "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": ["limits.maximumFramePixels"],
        "IMGPROXY_MAX_RESULT_DIMENSION": ["limits.maximumOutputSide"],
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": ["imgproxy.allowsSecurityOptions"],
        "IMGPROXY_PRESERVE_HDR": ["imgproxy.preservesHDR"],
        "IMGPROXY_STRIP_METADATA": ["imgproxy.stripsMetadata"], "IMGPROXY_KEEP_COPYRIGHT": ["imgproxy.keepsCopyright"],
        "IMGPROXY_SKIP_PROCESSING_FORMATS": ["imgproxy.skipProcessingFormats"],
        "IMGPROXY_PREFERRED_FORMATS": ["imgproxy.preferredFormats"],
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": ["origins.localFilesystemRoot"],
        "IMGPROXY_PATH_PREFIX": ["imgproxy.pathPrefix"],
        "IMGPROXY_ARGUMENTS_SEPARATOR": ["imgproxy.argumentsSeparator"],
        "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": ["imgproxy.base64URLIncludesFilename"],
        "IMGPROXY_BASE_URL": ["imgproxy.baseURL"],
        "IMGPROXY_URL_REPLACEMENTS": ["imgproxy.urlReplacements"],
        "IMGPROXY_ALLOWED_SOURCES": ["imgproxy.allowedSources"],
        "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": ["imgproxy.allowedOptions"],
        "IMGPROXY_WATERMARK_PATH": ["imgproxy.watermark"],
        "IMGPROXY_WATERMARK_URL": ["imgproxy.watermark"], "IMGPROXY_WATERMARK_DATA": ["imgproxy.watermark"],
        "IMGPROXY_WATERMARK_OPACITY": ["imgproxy.watermarkOpacity"], "IMGPROXY_FALLBACK_IMAGE_PATH": ["fallback.image"],
        "IMGPROXY_FALLBACK_IMAGE_DATA": ["fallback.image"], "IMGPROXY_FALLBACK_IMAGE_URL": ["fallback.image"],
        "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": ["fallback.status"], "IMGPROXY_FALLBACK_IMAGE_TTL": ["fallback.maxAge"],
        "IMGPROXY_TTL": ["caching.responseMaxAge"],
    ]
}
