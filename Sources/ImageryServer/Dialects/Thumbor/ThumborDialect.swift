import Foundation

/// thumbor's URLs: a path's parameters, its signature checked (with a thumbor security key, its
/// HMAC; without one, `/unsafe/`, refused when native URLs are signed so that it is no way around
/// them), an image or `meta/`, `max_age(N)` as the response's max-age.
struct ThumborDialect: Dialect {
    let configuration: ServerConfiguration
    let signer: ThumborSigner?
    /// Whether native queries are signed: unsigned thumbor URLs are refused then.
    let nativeSigned: Bool
    /// The configured watermarks' recipe names by name (`watermark()` names one).
    let watermarks: [String: String]

    init(configuration: ServerConfiguration, watermarks: [String: String] = [:]) {
        self.configuration = configuration
        signer = configuration.thumbor.securityKey.map(ThumborSigner.init(key:))
        nativeSigned = configuration.requests.signingKey != nil
        self.watermarks = watermarks
    }

    /// A thumbor path, read once; `nil` when its first segment is neither `unsafe` nor shaped as a signature.
    /// - Throws: 403 for a missing or wrong signature, 400 for what the URL asks that is wrong or
    ///   not supported, or in only-presets mode.
    /// - Returns: The parameters, with the filters skipped as thumbor skips them (``SkippedOption``).
    func read(_ request: DialectRequest) throws -> DialectReading? {
        guard ThumborURL.mayBe(request.path) else { return nil }
        try checkSignature(of: request.path)
        guard !configuration.requests.onlyPresets else {
            throw ServerError.badParameter(
                "only presets are allowed here: use /image?url=...&preset=NAME, not thumbor URLs")
        }
        let url = try ThumborURL(path: request.path)
        let parameters = try parameters(of: url)
        guard url.meta else {
            return DialectReading(kind: .image(parameters), terms: .init(maximumAge: url.maximumAge))
        }
        let callback = try Self.callback(configuration.thumbor.metaCallback ?? request.parameters["callback"])
        return DialectReading(kind: .meta(ThumborMetaRequest(url: url, parameters: parameters, callback: callback)))
    }

    /// Refuses a path whose signature this server does not take.
    private func checkSignature(of path: Substring) throws {
        let (signature, signed) = try ThumborURL.signature(of: path)
        switch signature {
        case .unsafe:
            guard configuration.thumbor.allowsUnsafeURLs ?? (signer == nil), !nativeSigned else {
                throw ServerError(
                    .forbidden, "bad_signature",
                    "unsafe thumbor URLs are off here: sign them with the thumbor security key")
            }
        case .hmac(let signature):
            guard let signer else {
                throw ServerError(
                    .forbidden, "bad_signature", "no thumbor security key is configured: thumbor URLs are /unsafe/ here"
                )
            }
            guard signer.isValid(signature, for: signed) else {
                throw ServerError(.forbidden, "bad_signature", "the thumbor URL's signature is wrong")
            }
        }
    }

    /// `url`'s parameters as this server's thumbor settings read them.
    private func parameters(of url: ThumborURL) throws -> ImageParameters {
        try url.parameters(
            maximumSide: configuration.limits.maximumOutputSide,
            refusesUnknownFilters: configuration.thumbor.refusesUnknownFilters,
            negotiates: configuration.thumbor.autoWebP, watermarks: watermarks,
            autoPNGToJPEG: configuration.thumbor.autoPNGToJPEG,
            loadedFilters: configuration.thumbor.filters,
            respectsOrientation: configuration.thumbor.respectsOrientation,
            maximumWidth: configuration.thumbor.maximumWidth, maximumHeight: configuration.thumbor.maximumHeight,
            refusesBadFilterArguments: configuration.thumbor.refusesBadFilterArguments
        )
    }

    /// `meta/`'s `callback`: a JavaScript name (letters, digits, `_`, `.`, `$`), at most 100 characters.
    private static func callback(_ name: String?) throws -> String? {
        if let name,
            name.isEmpty || name.count > 100 || !name.allSatisfy({ $0.isLetter || $0.isNumber || "_.$".contains($0) })
        {
            throw ServerError.badParameter(
                "callback must be a JavaScript name (letters, digits, _ . $), at most 100 characters")
        }
        return name
    }
}

extension ThumborURL {
    /// Whether `path` may be a thumbor URL: its first segment is `unsafe` or has the shape of a
    /// signature (28 characters of base64url ending in `=`). Others are not looked at (404).
    static func mayBe(_ path: Substring) -> Bool {
        let first = path.drop { $0 == "/" }.prefix { $0 != "/" }
        if first == "unsafe" { return true }
        return first.count == 28 && first.last == "="
            && first.utf8.allSatisfy {
                $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "=") || (48...57).contains($0)
                    || (65...90).contains($0) || (97...122).contains($0)
            }
    }
}
