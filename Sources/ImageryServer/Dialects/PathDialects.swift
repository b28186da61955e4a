import Foundation

/// The URL syntaxes written as paths, thumbor's and imgproxy's: which one a path is in, and the
/// ``ImageParameters`` it asks for, its signature checked. What each syntax's configuration needs
/// (keys, presets) is read once. The server's `**` route and the `paths` fuzz target both go through it.
package struct PathDialects: Sendable {
    package enum Syntax: Sendable {
        case thumbor
        case imgproxy
    }

    let configuration: ServerConfiguration
    /// Whether native queries are signed: unsigned forms of the other syntaxes are refused then.
    let nativeSigned: Bool
    let thumborSigner: ThumborSigner?
    let imgproxy: ImgproxyDialect
    /// The configured watermarks' recipe names by name (thumbor's `watermark()` names one).
    let watermarks: [String: String]

    /// - Throws: ``ConfigurationFileError`` for imgproxy keys or presets that are not valid.
    package init(configuration: ServerConfiguration, watermarks: [String: String] = [:]) throws(ConfigurationFileError)
    {
        self.configuration = configuration
        nativeSigned = configuration.requests.signingKey != nil
        thumborSigner = configuration.thumbor.securityKey.map(ThumborSigner.init(key:))
        imgproxy = try ImgproxyDialect(configuration)
        self.watermarks = watermarks
    }

    /// The syntax `path` is written in (imgproxy's options are told apart by their `name:args`
    /// segments, so it is tried first), or `nil`: no syntax that is on here (404).
    package func syntax(of path: Substring) -> Syntax? {
        if configuration.imgproxy.enabled, let path = imgproxyPath(path),
            ImgproxyURL.mayBe(path, syntax: imgproxy.syntax)
        {
            return .imgproxy
        }
        if configuration.thumbor.enabled, ThumborURL.mayBe(path) { return .thumbor }
        return nil
    }

    /// `path`'s parameters in `syntax`.
    /// - Throws: 403 for a missing or wrong signature; 400 for what the URL asks that is wrong or not
    ///   supported; 404 for an expired imgproxy URL.
    package func parameters(_ path: Substring, in syntax: Syntax) throws -> ImageParameters {
        switch syntax {
        case .thumbor: try thumborParameters(path)
        case .imgproxy: try imgproxyParameters(imgproxyPath(path) ?? path)
        }
    }
}

extension PathDialects {
    /// `path` with its first segment replaced by the signature this configuration checks for
    /// `syntax`; `nil` when that syntax has no key here. For tests, fuzzing and tools that sign URLs.
    package func signing(_ path: Substring, in syntax: Syntax) -> String? {
        let trimmed = path.drop { $0 == "/" }
        guard let slash = trimmed.firstIndex(of: "/") else { return nil }
        switch syntax {
        case .thumbor:
            let signed = trimmed[trimmed.index(after: slash)...]
            return thumborSigner.map { "/" + $0.signature(of: signed) + "/" + signed }
        case .imgproxy:
            // imgproxy signs the path as it normalises it (`%3A`, `scheme:/`): the path is sent as it is.
            let signed = trimmed[slash...]
            return imgproxy.signer.map { "/" + $0.signature(of: ImgproxyURL.normalized(signed)) + signed }
        }
    }
}
