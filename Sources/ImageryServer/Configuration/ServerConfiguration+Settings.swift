import Configuration
import Foundation
import Imagery

extension ServerConfiguration {
    /// Every setting, part by part: the one list `imagery serve` reads (``ConfigurationLoader``), prints
    /// (`--print-config`) and the README's configuration table is made from (`imagery serve --print-settings`).
    public static let settings: [ConfigurationSetting] = {
        let parts: [[ConfigurationSetting]] = [
            listenerSettings, limitSettings, cachingSettings, originSettings, requestSettings, renderingSettings,
            s3Settings, clusterSettings, gallerySettings, fallbackSettings, imgproxySettings, thumborSettings,
        ]
        return parts.flatMap { $0 }
    }()

    /// The settings by key.
    public static let settingsByKey: [String: ConfigurationSetting] = Dictionary(
        uniqueKeysWithValues: settings.map { ($0.key, $0) })

    /// The parts, in the order the settings list them.
    public static var settingParts: [String] {
        var parts: [String] = []
        for setting in settings {
            let part = String(setting.key.prefix { $0 != "." })
            if parts.last != part { parts.append(part) }
        }
        return parts
    }

    static let listenerSettings: [ConfigurationSetting] = [
        .text(
            "listener.host", file: "host", option: "host", \.listener.host,
            "The address to listen on; default 127.0.0.1."),
        .integer(
            "listener.port", file: "port", option: "port", \.listener.port,
            "The port; default 8080 (0 picks a free one)."),
        .seconds(
            "listener.idleTimeoutSeconds", file: "idleTimeoutSeconds", option: "idle-timeout", \.listener.idleTimeout,
            "A connection that sends no complete request for this long is closed; default 30."
        ),
        .integer(
            "listener.maximumConnections", file: "maximumConnections", option: "max-connections",
            \.listener.maximumConnections,
            "The most connections open at once; default 10000."
        ),
        .integer(
            "listener.maximumHeaderBytes", file: "maximumHeaderBytes", \.listener.maximumHeaderBytes,
            "The most bytes of a request's headers; default 32768."
        ),
        .flag(
            "listener.answersHitsOnEventLoop", file: "answersHitsOnEventLoop", \.listener.answersHitsOnEventLoop,
            "Answer fresh hits on the connection's event loop, before the router; default true."
        ),
    ]

    static let limitSettings: [ConfigurationSetting] = [
        .bytes(
            "limits.memoryLimit", file: "memoryLimit", option: "memory-limit", \.limits.memoryLimit,
            "Memory for the caches and the work in flight together; default 128M a usable processor, at least 512M."
        ),
        .optionalBytes(
            "limits.maximumInflightMemory", file: "maximumInflightMemory", option: "max-inflight-memory",
            \.limits.maximumInflightMemory,
            "Of memoryLimit, the bytes downloads and decodes in flight may hold; default: half."
        ),
        .integer(
            "limits.admissionQueueLength", file: "admissionQueueLength", option: "admission-queue",
            \.limits.admissionQueueLength,
            "The most requests waiting for memory or a decode; default 32 a usable processor, at least 64."
        ),
        .optionalSeconds(
            "limits.admissionTimeoutSeconds", file: "admissionTimeoutSeconds", option: "admission-timeout",
            \.limits.admissionTimeout,
            "The longest a request waits for memory before a 503; default: what the request timeout allows."
        ),
        .seconds(
            "limits.requestTimeoutSeconds", file: "requestTimeoutSeconds", option: "request-timeout",
            \.limits.requestTimeout,
            "The longest an image may take to make before a 504; default 30."
        ),
        .integer(
            "limits.maximumSourceBytes", file: "maximumSourceBytes", \.limits.maximumSourceBytes,
            "The largest source accepted; default 50000000."
        ),
        .integer(
            "limits.maximumSourcePixels", file: "maximumSourcePixels", \.limits.maximumSourcePixels,
            "The most pixels a source may declare; default 100000000."
        ),
        .integer(
            "limits.maximumFrames", file: "maximumFrames", \.limits.maximumFrames,
            "The most frames of an animation processed; default 1000."
        ),
        .optionalInteger(
            "limits.maximumFramePixels", file: "maximumFramePixels", \.limits.maximumFramePixels,
            "The most pixels of each frame of an animation; default: none beyond maximumSourcePixels."
        ),
        .integer(
            "limits.maximumOutputSide", file: "maximumOutputSide", \.limits.maximumOutputSide,
            "The largest width or height; default 8192."),
    ]

    static let cachingSettings: [ConfigurationSetting] = [
        .path(
            "caching.directory", file: "cacheDirectory", option: "cache-dir", \.caching.directory,
            "The disk cache's directory; default .imagery-cache; empty: no disk cache (--no-disk-cache)."
        ),
        .bytes(
            "caching.diskLimit", file: "diskLimit", option: "disk-limit", \.caching.diskLimit,
            "Bytes of the disk cache; default 2G."),
        .integer(
            "caching.responseMaxAge", file: "responseMaxAge", option: "max-age", \.caching.responseMaxAge,
            "The longest Cache-Control max-age of image responses, in seconds; default 86400."
        ),
        .integer(
            "caching.minimumFreshness", file: "minimumFreshness", option: "minimum-freshness",
            \.caching.minimumFreshness,
            "Seconds of freshness given to sources that state no expiry; default 3600."
        ),
    ]

    static let originSettings: [ConfigurationSetting] = [
        .list(
            "origins.allowedHosts", file: "allowedHosts", option: "allow-host", \.origins.allowedHosts,
            "Only these source hosts are fetched (*.example.com for subdomains); default: any public host."
        ),
        .list(
            "origins.privateNetworkHosts", file: "privateNetworkHosts", option: "allow-private-host",
            \.origins.privateNetworkHosts,
            "Hosts fetched even on loopback or private addresses; default none."
        ),
        .seconds(
            "origins.timeoutSeconds", file: "originTimeoutSeconds", \.origins.timeout,
            "The most time an origin fetch may take; default 10."
        ),
        .integer(
            "origins.maximumAttempts", file: "originAttempts", \.origins.maximumAttempts,
            "Attempts per origin fetch for transient failures (503, a reset connection); default 2; 1: no retries."
        ),
        .integer(
            "origins.maximumConcurrentFetches", file: "maximumConcurrentFetches", \.origins.maximumConcurrentFetches,
            "The most origin fetches at once; default 8 a usable processor, at least 16."
        ),
        .path(
            "origins.localFilesystemRoot", file: "localFilesystemRoot", \.origins.localFilesystemRoot,
            "imgproxy URLs may name local:///PATH sources under this directory; default none."
        ),
    ]

    static let requestSettings: [ConfigurationSetting] = [
        .optionalText(
            "requests.signingKey", file: "signingKey", option: "signing-key", secret: true, \.requests.signingKey,
            "Every /image query must be signed with this key (HMAC-SHA256); default none."
        ),
        .entries(
            "requests.presets", file: "presets", option: "preset", \.requests.presets,
            "Named sets of /image parameters, NAME=QUERY; default none."
        ),
        .flag(
            "requests.onlyPresets", file: "onlyPresets", option: "only-presets", \.requests.onlyPresets,
            "/image takes presets only; default false."),
    ]

    static let renderingSettings: [ConfigurationSetting] = [
        ConfigurationSetting(
            "rendering.formatQualities", .list, file: "formatQualities",
            "The quality of each lossy format without q, FORMAT=QUALITY; default jpeg=80, webp=81, avif=67, jxl=81."
        ) { configuration, content throws(ConfigurationFileError) in
            for (name, value) in try SettingText.entries(SettingText.strings(content)) {
                guard let format = ImageFormat(fileExtension: name), lossyFormats.contains(format) else {
                    throw ConfigurationFileError(message: "\(name) is not one of jpeg, webp, avif, jxl, heic")
                }
                configuration.rendering.formatQualities[format] = try SettingText.integer(value)
            }
        } write: { configuration in
            .stringArray(
                configuration.rendering.formatQualities.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                    "\($0.key.rawValue)=\($0.value)"
                })
        },
        .flag(
            "rendering.autoQuality.default", file: "autoQuality.default", \.rendering.autoQuality.isDefault,
            "Requests that ask for no quality get a quality search; default false."
        ),
        ConfigurationSetting(
            "rendering.autoQuality.target", .value, file: "autoQuality.target",
            "The search's target: a SSIMULACRA2 score (70), or a size (20000 bytes); default 70."
        ) { configuration, content throws(ConfigurationFileError) in
            let text = try SettingText.string(content)
            if text.hasSuffix("bytes") {
                configuration.rendering.autoQuality.target = .bytes(
                    try SettingText.integer(String(text.dropLast(5)).trimmingCharacters(in: .whitespaces)))
            } else {
                guard let score = Double(text) else {
                    throw ConfigurationFileError(message: "takes a SSIMULACRA2 score or N bytes, not '\(text)'")
                }
                configuration.rendering.autoQuality.target = .ssimulacra2(score)
            }
        } write: { configuration in
            switch configuration.rendering.autoQuality.target {
            case .ssimulacra2(let score): .string(score == score.rounded() ? String(Int(score)) : String(score))
            case .bytes(let bytes): .string("\(bytes) bytes")
            }
        },
        .optionalInteger(
            "rendering.autoQuality.minimum", file: "autoQuality.minimum", \.rendering.autoQuality.minimum,
            "The least quality searched."),
        .optionalInteger(
            "rendering.autoQuality.maximum", file: "autoQuality.maximum", \.rendering.autoQuality.maximum,
            "The most quality searched."),
        formatBounds(
            "rendering.autoQuality.formatMinimums", \.rendering.autoQuality.formatMinimums,
            "The least quality searched, by format."),
        formatBounds(
            "rendering.autoQuality.formatMaximums", \.rendering.autoQuality.formatMaximums,
            "The most quality searched, by format."),
        ConfigurationSetting(
            "rendering.autoQuality.tolerance", .value, file: "autoQuality.tolerance",
            "How far below the target a score may land; default 0.5."
        ) { configuration, content throws(ConfigurationFileError) in
            configuration.rendering.autoQuality.tolerance = try SettingText.number(SettingText.string(content))
        } write: {
            .string(String($0.rendering.autoQuality.tolerance))
        },
        .integer(
            "rendering.autoQuality.maximumPixels", file: "autoQuality.maximumPixels",
            \.rendering.autoQuality.maximumPixels,
            "The largest output searched; larger ones get the format's quality."
        ),
        ConfigurationSetting(
            "rendering.watermarkFiles", .list, file: "watermarkFiles", option: "watermark",
            "Watermark images, NAME=FILE (a data: or http(s) URL too); /image?watermark=NAME lays one over; default none."
        ) { configuration, content throws(ConfigurationFileError) in
            let imgproxy = configuration.rendering.watermarkFiles[ImgproxyEnvironment.watermarkName]
            configuration.rendering.watermarkFiles = try SettingText.entries(SettingText.strings(content)).mapValues(
                imageLocation)
            if let imgproxy, configuration.rendering.watermarkFiles[ImgproxyEnvironment.watermarkName] == nil {
                configuration.rendering.watermarkFiles[ImgproxyEnvironment.watermarkName] = imgproxy
            }
        } write: { configuration in
            // imgproxy's own watermark is imgproxy.watermark.
            let named = configuration.rendering.watermarkFiles.filter { $0.key != ImgproxyEnvironment.watermarkName }
            return .stringArray(named.sorted { $0.key < $1.key }.map { "\($0.key)=\(showLocation($0.value))" })
        },
    ]

    static func formatBounds(_ key: String, _ path: ConfigurationSetting.Path<[ImageFormat: Int]>, _ summary: String)
        -> ConfigurationSetting
    {
        ConfigurationSetting(key, .list, summary) { configuration, content throws(ConfigurationFileError) in
            var bounds: [ImageFormat: Int] = [:]
            for (name, value) in try SettingText.entries(SettingText.strings(content)) {
                guard let format = ImageFormat(fileExtension: name) else {
                    throw ConfigurationFileError(message: "\(name) is not a format")
                }
                bounds[format] = try SettingText.integer(value)
            }
            configuration[keyPath: path] = bounds
        } write: { configuration in
            .stringArray(
                configuration[keyPath: path].sorted { $0.key.rawValue < $1.key.rawValue }.map {
                    "\($0.key.rawValue)=\($0.value)"
                })
        }
    }

    /// A configured image's location as text: a file's path, else the URL.
    static func showLocation(_ url: URL) -> String { url.isFileURL ? url.path : url.absoluteString }
}
