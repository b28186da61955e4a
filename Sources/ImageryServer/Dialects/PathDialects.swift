import Foundation

/// The URL syntaxes written as paths, imgproxy's and thumbor's, as one ``Dialect``: the first that
/// is on here and whose shape the path has reads it (imgproxy's options are told apart by their
/// `name:args` segments, so it is tried first). The server's `**` route and the `paths` fuzz target
/// both go through it.
package struct PathDialects: Dialect {
    package enum Syntax: Sendable {
        case thumbor
        case imgproxy
    }

    /// imgproxy's, where it is on.
    let imgproxy: ImgproxyDialect?
    /// thumbor's, where it is on.
    let thumbor: ThumborDialect?

    /// - Parameters:
    ///   - configuration: The server's configuration (which syntaxes are on, their keys and presets).
    ///   - watermarks: The configured watermarks' recipe names by name (thumbor's `watermark()` names one).
    /// - Throws: ``ConfigurationFileError`` for imgproxy keys or presets that are not valid.
    package init(configuration: ServerConfiguration, watermarks: [String: String] = [:]) throws(ConfigurationFileError)
    {
        imgproxy =
            configuration.imgproxy.enabled ? try ImgproxyDialect(configuration, watermarks: watermarks) : nil
        thumbor =
            configuration.thumbor.enabled ? ThumborDialect(configuration: configuration, watermarks: watermarks) : nil
    }

    /// What the path asks for in the first syntax that reads it; `nil`: none does (404).
    func read(_ request: DialectRequest) throws -> DialectReading? {
        if let reading = try imgproxy?.read(request) { return reading }
        return try thumbor?.read(request)
    }

    /// The syntax `path` is written in, or `nil`: no syntax that is on here (404).
    package func syntax(of path: Substring) -> Syntax? {
        if let imgproxy, let path = imgproxy.path(path), ImgproxyURL.mayBe(path, syntax: imgproxy.syntax) {
            return .imgproxy
        }
        return thumbor != nil && ThumborURL.mayBe(path) ? .thumbor : nil
    }

    /// `path`'s parameters in `syntax` (of the image, or of a thumbor `meta/` URL's image).
    /// - Throws: 403 for a missing or wrong signature; 400 for what the URL asks that is wrong or not
    ///   supported, or for a path not in `syntax`; 404 for an expired imgproxy URL.
    package func parameters(_ path: Substring, in syntax: Syntax) throws -> ImageParameters {
        let request = DialectRequest(path: path)
        let dialect: (any Dialect)? =
            switch syntax {
            case .thumbor: thumbor
            case .imgproxy: imgproxy
            }
        switch try dialect?.read(request)?.kind {
        case .image(let parameters): return parameters
        case .meta(let meta): return meta.parameters
        case .info, nil: throw ServerError.badParameter("\(path) is not a URL of this syntax here")
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
            return thumbor?.signer.map { "/" + $0.signature(of: signed) + "/" + signed }
        case .imgproxy:
            // imgproxy signs the path as it normalises it (`%3A`, `scheme:/`): the path is sent as it is.
            let signed = trimmed[slash...]
            return imgproxy?.signer.map { "/" + $0.signature(of: ImgproxyURL.normalized(signed)) + signed }
        }
    }
}
