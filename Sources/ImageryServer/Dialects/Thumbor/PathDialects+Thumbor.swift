import Foundation

extension PathDialects {
    /// A thumbor URL's parameters, its signature checked: with a thumbor security key, its HMAC;
    /// without one, `/unsafe/` (refused when native URLs are signed, so that it is no way around them).
    /// - Throws: 403 for a missing or wrong signature, 400 for what the URL asks that is wrong or
    ///   not supported, or in only-presets mode.
    /// - Returns: The parameters, with the filters skipped as thumbor skips them (``SkippedOption``).
    func thumborParameters(_ path: Substring) throws -> ImageParameters {
        let (signature, signed) = try ThumborURL.signature(of: path)
        switch signature {
        case .unsafe:
            guard configuration.thumbor.allowsUnsafeURLs ?? (thumborSigner == nil), !nativeSigned else {
                throw ServerError(
                    .forbidden, "bad_signature",
                    "unsafe thumbor URLs are off here: sign them with the thumbor security key")
            }
        case .hmac(let signature):
            guard let thumborSigner else {
                throw ServerError(
                    .forbidden, "bad_signature", "no thumbor security key is configured: thumbor URLs are /unsafe/ here"
                )
            }
            guard thumborSigner.isValid(signature, for: signed) else {
                throw ServerError(.forbidden, "bad_signature", "the thumbor URL's signature is wrong")
            }
        }
        guard !configuration.requests.onlyPresets else {
            throw ServerError.badParameter(
                "only presets are allowed here: use /image?url=...&preset=NAME, not thumbor URLs")
        }
        return try ThumborURL(path: path).parameters(
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
}

extension ThumborURL {
    /// Whether `path` is a thumbor `meta/` URL (its signature not checked yet).
    static func isMeta(_ path: Substring) -> Bool {
        mayBe(path) && ((try? ThumborURL(path: path))?.meta ?? false)
    }

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
