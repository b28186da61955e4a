import Foundation

/// imgproxy's URLs (``read(_:)``), and what the server knows of imgproxy's configuration, read once:
/// its signature keys, its presets, how its URLs are written and what its sources become and may be.
struct ImgproxyDialect: Dialect {
    let configuration: ServerConfiguration
    /// Whether native queries are signed: unsigned imgproxy URLs are refused then.
    let nativeSigned: Bool
    /// The configured watermarks' recipe names by name (imgproxy's is ``ImgproxyEnvironment/watermarkName``).
    let watermarks: [String: String]
    let signer: ImgproxySigner?
    /// imgproxy presets, their options split.
    let presets: [String: [ImgproxyURL.Option]]
    /// How URLs are split (separator, only presets, file names after base64 sources).
    let syntax: ImgproxyURL.Syntax
    /// Replacements, base URL, allowed sources.
    let sources: ImgproxySourceRules
    /// The option names URLs may use (`nil`: all).
    let allowedOptions: Set<Substring>?
    /// How imgproxy answers where this server's own rules differ (``imgproxyAnswers(_:)``).
    let answers: PeerAnswers

    /// - Parameters:
    ///   - configuration: The server's configuration.
    ///   - watermarks: The configured watermarks' recipe names by name.
    /// - Throws: ``ConfigurationFileError`` for keys that are not hex pairs or a preset that is not options.
    init(_ configuration: ServerConfiguration, watermarks: [String: String] = [:]) throws(ConfigurationFileError) {
        self.configuration = configuration
        nativeSigned = configuration.requests.signingKey != nil
        self.watermarks = watermarks
        if configuration.imgproxy.keys.isEmpty {
            signer = nil
        } else {
            guard
                let signer = ImgproxySigner(
                    keys: configuration.imgproxy.keys, salts: configuration.imgproxy.salts,
                    size: configuration.imgproxy.signatureSize
                )
            else {
                throw ConfigurationFileError(message: "imgproxy keys and salts must be hex, as many salts as keys")
            }
            self.signer = signer
        }
        let separator = configuration.imgproxy.argumentsSeparator
        syntax = ImgproxyURL.Syntax(
            separator: separator, onlyPresets: configuration.requests.onlyPresets,
            base64IncludesFilename: configuration.imgproxy.base64URLIncludesFilename
        )
        var presets: [String: [ImgproxyURL.Option]] = [:]
        for (name, text) in configuration.imgproxy.presets {
            let segments = text.split(separator: "/")
            guard !name.isEmpty, !name.contains(separator), !segments.isEmpty,
                segments.allSatisfy({ $0.contains(separator) })
            else {
                throw ConfigurationFileError(
                    message: "imgproxyPresets: \(name) must be options written as in a URL (rs:fill:300:300/q:80)")
            }
            presets[name] = segments.map { segment in
                let parts = segment.split(separator: separator, omittingEmptySubsequences: false)
                return ImgproxyURL.Option(name: parts[0], arguments: Array(parts.dropFirst()))
            }
        }
        self.presets = presets
        var sources = ImgproxySourceRules()
        sources.baseURL = configuration.imgproxy.baseURL
        sources.allowed = configuration.imgproxy.allowedSources.map(ImgproxySourceRules.Pattern.init)
        sources.replacements = try configuration.imgproxy.urlReplacements.map { rule throws(ConfigurationFileError) in
            guard let equals = rule.firstIndex(of: "=") else {
                throw ConfigurationFileError(message: "imgproxyURLReplacements: \(rule) is not PATTERN=REPLACEMENT")
            }
            return .init(
                pattern: .init(String(rule[..<equals])), replacement: String(rule[rule.index(after: equals)...]))
        }
        self.sources = sources
        allowedOptions =
            configuration.imgproxy.allowedOptions.isEmpty
            ? nil : Set(configuration.imgproxy.allowedOptions.map { Substring($0) })
        answers = Self.imgproxyAnswers(configuration.imgproxy)
    }

    /// imgproxy's answers where they differ from this server's: a source refused (allow-list, private
    /// address) is 404, a source too large (bytes or pixels), not an image or not readable here and an
    /// output format that cannot be written are 422; its validator switches and busters; `max-age=TTL`
    /// whatever the source says unless its Cache-Control is passed through.
    static func imgproxyAnswers(_ settings: ServerConfiguration.Imgproxy) -> PeerAnswers {
        PeerAnswers(
            name: "imgproxy",
            statuses: [
                "forbidden_source": .notFound, "source_too_large": .unprocessableContent,
                "unsupported_format": .unprocessableContent, "unsupported_source": .unprocessableContent,
            ],
            sendsETag: settings.usesETag, sendsLastModified: settings.usesLastModified,
            etagBuster: settings.etagBuster, lastModifiedBuster: settings.lastModifiedBuster,
            fixedMaximumAge: settings.cacheControlPassthrough ? nil : settings.ttl, maxAgeFirst: true
        )
    }
}
