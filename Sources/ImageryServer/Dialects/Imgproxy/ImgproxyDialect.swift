import Foundation

/// What the server knows of imgproxy's configuration: its signature keys and its presets, read once.
struct ImgproxyDialect: Sendable {
    let signer: ImgproxySigner?
    /// imgproxy presets, their options split.
    let presets: [String: [ImgproxyURL.Option]]

    /// - Throws: ``ConfigurationFileError`` for keys that are not hex pairs or a preset that is not options.
    init(_ configuration: ServerConfiguration) throws(ConfigurationFileError) {
        if configuration.imgproxyKeys.isEmpty {
            signer = nil
        } else {
            guard let signer = ImgproxySigner(
                keys: configuration.imgproxyKeys, salts: configuration.imgproxySalts, size: configuration.imgproxySignatureSize
            ) else {
                throw ConfigurationFileError(message: "imgproxy keys and salts must be hex, as many salts as keys")
            }
            self.signer = signer
        }
        var presets: [String: [ImgproxyURL.Option]] = [:]
        for (name, text) in configuration.imgproxyPresets {
            let segments = text.split(separator: "/")
            guard !name.isEmpty, !name.contains(":"), !segments.isEmpty, segments.allSatisfy({ $0.contains(":") }) else {
                throw ConfigurationFileError(message: "imgproxyPresets: \(name) must be options written as in a URL (rs:fill:300:300/q:80)")
            }
            presets[name] = segments.map { segment in
                let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
                return ImgproxyURL.Option(name: parts[0], arguments: Array(parts.dropFirst()))
            }
        }
        self.presets = presets
    }
}
