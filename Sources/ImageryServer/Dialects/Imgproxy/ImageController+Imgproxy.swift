import Foundation
import Hummingbird
import NIOCore

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

extension ImageController {
    /// An imgproxy URL's response: its expiry checked first (a URL answered before may have expired
    /// since), then the common path, its `Cache-Control` no longer than the URL lives.
    func respondToImgproxy(_ request: Request, path: Substring, on channel: any Channel) async -> Response {
        var maxAge: Int?
        if let expiry = ImgproxyURL.expiry(of: path), expiry > 0 {
            let left = expiry - Int(Date().timeIntervalSince1970)
            guard left > 0 else { return ServerError(.notFound, "expired", "this imgproxy URL expired").response() }
            maxAge = min(left, service.configuration.responseMaxAge)
        }
        return await respond(to: request, on: channel, requestKey: "#imgproxy " + path, maxAge: maxAge) { try imgproxyParameters(path) }
    }

    /// An imgproxy URL's parameters, its signature checked: with imgproxy keys, its HMAC; without,
    /// any string (refused when native URLs are signed, so that it is no way around them).
    /// - Throws: 403 for a missing or wrong signature; 400 for what the URL asks that is wrong or not supported.
    func imgproxyParameters(_ path: Substring) throws -> ImageParameters {
        let configuration = service.configuration
        let url = try ImgproxyURL(path: path, onlyPresets: configuration.onlyPresets)
        if let signer = imgproxy.signer {
            guard signer.isValid(url.signature, for: url.signed) else {
                throw ServerError(.forbidden, "bad_signature", "the imgproxy URL's signature is missing or wrong")
            }
        } else {
            guard signer == nil else {
                throw ServerError(.forbidden, "bad_signature", "unsigned imgproxy URLs are off here: sign them with an imgproxy key and salt")
            }
            guard !url.signature.contains(":") else {
                throw ServerError(.forbidden, "bad_signature", "an imgproxy URL starts with its signature (any string without : when unsigned)")
            }
        }
        var options = try ImgproxyOptions(url.options, presets: imgproxy.presets)
        if let fileExtension = url.fileExtension {
            options.format = try ImgproxyOptions.Reader(option: .init(name: "extension", arguments: [Substring(fileExtension)])).format(0)
        }
        return try options.parameters(source: url.source, maximumSide: configuration.maximumOutputSide, negotiates: configuration.imgproxyAutoFormat)
    }
}
