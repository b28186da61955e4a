import Configuration
import Foundation
import Imagery

/// The settings of imgproxy's and thumbor's URLs (their own configuration names map onto these:
/// ``ImgproxyEnvironment``, ``ThumborConfigurationFile``).
extension ServerConfiguration {
    static let imgproxySettings: [ConfigurationSetting] = [
        .flag(
            "imgproxy.enabled", file: "imgproxyURLs", \.imgproxy.enabled,
            "Whether imgproxy URLs are answered; default true."),
        .list(
            "imgproxy.keys", file: "imgproxyKeys", option: "imgproxy-key", secret: true, \.imgproxy.keys,
            "IMGPROXY_KEY: hex keys; imgproxy URLs must be signed; default none."
        ),
        .list(
            "imgproxy.salts", file: "imgproxySalts", option: "imgproxy-salt", secret: true, \.imgproxy.salts,
            "IMGPROXY_SALT: hex salts."),
        .integer(
            "imgproxy.signatureSize", file: "imgproxySignatureSize", \.imgproxy.signatureSize,
            "Signature bytes kept, 1 to 32; default 32."),
        .list(
            "imgproxy.trustedSignatures", file: "imgproxyTrustedSignatures", \.imgproxy.trustedSignatures,
            "Signatures accepted for any path; default none."
        ),
        .text(
            "imgproxy.pathPrefix", file: "imgproxyPathPrefix", \.imgproxy.pathPrefix,
            "imgproxy URLs start with it; default none."),
        ConfigurationSetting(
            "imgproxy.argumentsSeparator", .value, file: "imgproxyArgumentsSeparator",
            "What separates an option's name and arguments; default :."
        ) { configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            guard text.count == 1, let separator = text.first, separator != "/" else {
                throw ConfigurationFileError(message: "takes one character other than /, not '\(text)'")
            }
            configuration.imgproxy.argumentsSeparator = separator
        } write: {
            .string(String($0.imgproxy.argumentsSeparator))
        },
        .flag(
            "imgproxy.base64URLIncludesFilename", file: "imgproxyBase64URLIncludesFilename",
            \.imgproxy.base64URLIncludesFilename,
            "A base64 source split by / ends with a file name; default false."
        ),
        .text(
            "imgproxy.baseURL", file: "imgproxyBaseURL", \.imgproxy.baseURL,
            "Put before every source that does not start with it."),
        .list(
            "imgproxy.urlReplacements", file: "imgproxyURLReplacements", \.imgproxy.urlReplacements,
            "PATTERN=REPLACEMENT rules applied to sources, in order; default none."
        ),
        .list(
            "imgproxy.allowedSources", file: "imgproxyAllowedSources", \.imgproxy.allowedSources,
            "Source prefixes imgproxy URLs may name; default: any."
        ),
        .list(
            "imgproxy.allowedOptions", file: "imgproxyAllowedOptions", \.imgproxy.allowedOptions,
            "The option names imgproxy URLs may use; default: all."
        ),
        ConfigurationSetting(
            "imgproxy.watermarkOpacity", .value, file: "imgproxyWatermarkOpacity",
            "Multiplies the watermark's opacity; default 1."
        ) { configuration, content throws(ConfigurationFileError) in
            configuration.imgproxy.watermarkOpacity = try SettingText.number(SettingText.string(content))
        } write: {
            .string(String($0.imgproxy.watermarkOpacity))
        },
        ConfigurationSetting(
            "imgproxy.watermark", .value,
            "IMGPROXY_WATERMARK_PATH, _URL, _DATA: the image of imgproxy URLs' watermark option (a file, data: or http(s) URL)."
        ) { configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration.rendering.watermarkFiles[ImgproxyEnvironment.watermarkName] =
                text.isEmpty ? nil : imageLocation(text)
        } write: {
            .string($0.rendering.watermarkFiles[ImgproxyEnvironment.watermarkName].map(showLocation) ?? "")
        },
        .flag(
            "imgproxy.allowsSecurityOptions", file: "imgproxyAllowsSecurityOptions", \.imgproxy.allowsSecurityOptions,
            "URLs may set max_src_resolution and the like (never above this server's); default false."
        ),
        .flag(
            "imgproxy.preservesHDR", file: "imgproxyPreservesHDR", \.imgproxy.preservesHDR,
            "Keep 16-bit sources' 16 bits; default false."),
        .formats(
            "imgproxy.skipProcessingFormats", file: "imgproxySkipProcessingFormats", \.imgproxy.skipProcessingFormats,
            "Source formats answered as they are; default none."
        ),
        .flag(
            "imgproxy.stripsMetadata", file: "imgproxyStripsMetadata", \.imgproxy.stripsMetadata,
            "Drop EXIF, XMP and IPTC; default true."),
        .flag(
            "imgproxy.keepsCopyright", file: "imgproxyKeepsCopyright", \.imgproxy.keepsCopyright,
            "Keep the copyright notice; default true."),
        ConfigurationSetting(
            "imgproxy.preferredFormats", .list, file: "imgproxyPreferredFormats",
            "Formats kept from the source; default jpeg, png, gif."
        ) { configuration, content throws(ConfigurationFileError) in
            let formats = try ImgproxyOptions.formats(named: SettingText.strings(content))
            configuration.imgproxy.preferredFormats = formats.isEmpty ? imgproxyDefaultPreferredFormats : formats
        } write: {
            .stringArray($0.imgproxy.preferredFormats.map(\.rawValue))
        },
        .formats(
            "imgproxy.enforcedFormats", file: "imgproxyEnforcedFormats", \.imgproxy.enforcedFormats,
            "Formats that replace the one asked for when Accept takes them; default none."
        ),
        .flag(
            "imgproxy.stripsColorProfile", file: "imgproxyStripsColorProfile", \.imgproxy.stripsColorProfile,
            "Convert to sRGB and drop the profile; default true."
        ),
        .flag(
            "imgproxy.autoRotates", file: "imgproxyAutoRotates", \.imgproxy.autoRotates,
            "Apply EXIF orientation; default true."),
        .flag(
            "imgproxy.alwaysRasterizesSVG", file: "imgproxyAlwaysRasterizesSVG", \.imgproxy.alwaysRasterizesSVG,
            "Rasterise SVG sources; default false."
        ),
        .flag(
            "imgproxy.usesLinearColorspace", file: "imgproxyUsesLinearColorspace", \.imgproxy.usesLinearColorspace,
            "Resize in linear light; default false."
        ),
        .entries(
            "imgproxy.presets", file: "imgproxyPresets", \.imgproxy.presets, "Presets, NAME=OPTIONS; default none."),
        .flag(
            "imgproxy.autoFormat", file: "imgproxyAutoFormat", \.imgproxy.autoFormat,
            "URLs with no format get what Accept allows."),
        .formats(
            "imgproxy.autoFormats", \.imgproxy.autoFormats,
            "The formats autoFormat chooses from; default jxl, avif, webp."),
        .flag("imgproxy.usesETag", file: "imgproxyUsesETag", \.imgproxy.usesETag, "Send ETag; default true."),
        .flag(
            "imgproxy.usesLastModified", file: "imgproxyUsesLastModified", \.imgproxy.usesLastModified,
            "Send Last-Modified; default true."),
        .optionalText(
            "imgproxy.etagBuster", file: "imgproxyETagBuster", \.imgproxy.etagBuster,
            "A text in every ETag, to make clients fetch again; default none."),
        ConfigurationSetting(
            "imgproxy.lastModifiedBuster", .value, file: "imgproxyLastModifiedBuster",
            "An RFC 3339 time: older Last-Modified values are sent as it; default none."
        ) { configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            configuration.imgproxy.lastModifiedBuster = try text.isEmpty ? nil : ImgproxyEnvironment.time(text)
        } write: {
            .string($0.imgproxy.lastModifiedBuster.map { ISO8601DateFormatter().string(from: $0) } ?? "")
        },
        .flag(
            "imgproxy.setsCanonicalHeader", file: "imgproxySetsCanonicalHeader", \.imgproxy.setsCanonicalHeader,
            "Send Link: <SOURCE>; rel=\"canonical\"; default false."),
        .flag(
            "imgproxy.cacheControlPassthrough", file: "imgproxyCacheControlPassthrough",
            \.imgproxy.cacheControlPassthrough, "Cache-Control follows the source's; default false: max-age=TTL."),
        .integer(
            "imgproxy.ttl", file: "imgproxyTTL", \.imgproxy.ttl,
            "max-age without passthrough, seconds; default 31536000 (a year)."),
    ]

    static let thumborSettings: [ConfigurationSetting] = [
        .flag(
            "thumbor.enabled", file: "thumborURLs", \.thumbor.enabled,
            "Whether thumbor URLs are answered; default true."),
        .optionalText(
            "thumbor.securityKey", file: "thumborSecurityKey", option: "thumbor-key", secret: true,
            \.thumbor.securityKey,
            "SECURITY_KEY: thumbor URLs must be signed with it; default none."
        ),
        .optionalFlag(
            "thumbor.allowsUnsafeURLs", \.thumbor.allowsUnsafeURLs,
            "ALLOW_UNSAFE_URL: /unsafe/ URLs answered; default: when no security key is set."
        ),
        .flag(
            "thumbor.refusesUnknownFilters", file: "thumborRefusesUnknownFilters", \.thumbor.refusesUnknownFilters,
            "A filter with no equivalent here is a 400; default false (skipped, and said)."
        ),
        .flag(
            "thumbor.refusesBadFilterArguments", file: "thumborRefusesBadFilterArguments",
            \.thumbor.refusesBadFilterArguments,
            "A filter whose arguments thumbor's grammar rejects is a 400; default false (skipped, and said)."
        ),
        .flag("thumbor.autoWebP", file: "thumborAutoWebP", \.thumbor.autoWebP, "AUTO_WEBP; default false."),
        .flag(
            "thumbor.autoPNGToJPEG", file: "thumborAutoPNGToJPEG", \.thumbor.autoPNGToJPEG,
            "AUTO_PNG_TO_JPG; default false."),
        ConfigurationSetting(
            "thumbor.filters", .list, "FILTERS: the filters thumbor URLs may use, by name; default thumbor 7.8's list."
        ) { configuration, content throws(ConfigurationFileError) in
            configuration.thumbor.filters = Set(try SettingText.strings(content))
        } write: {
            .stringArray($0.thumbor.filters.sorted())
        },
        .flag(
            "thumbor.respectsOrientation", \.thumbor.respectsOrientation,
            "RESPECT_ORIENTATION; default true (thumbor's own is false: a thumbor.conf without it turns it off)."
        ),
        .integer(
            "thumbor.maximumWidth", \.thumbor.maximumWidth, "MAX_WIDTH: a wider request is made this wide; 0: none."),
        .integer("thumbor.maximumHeight", \.thumbor.maximumHeight, "MAX_HEIGHT; 0: none."),
        .optionalText(
            "thumbor.metaCallback", \.thumbor.metaCallback,
            "META_CALLBACK_NAME: meta/ answers are JavaScript calling it."),
    ]
}
