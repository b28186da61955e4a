import Foundation

extension PathDialects {
    /// An imgproxy URL's parameters, its signature checked: with imgproxy keys, its HMAC; without,
    /// any string (refused when native URLs are signed, so that it is no way around them).
    /// - Throws: 403 for a missing or wrong signature; 400 for what the URL asks that is wrong or not supported.
    func imgproxyParameters(_ path: Substring) throws -> ImageParameters {
        let (signature, signed) = try ImgproxyURL.signature(of: path)
        if let signer = imgproxy.signer {
            guard configuration.imgproxyTrustedSignatures.contains(String(signature)) || signer.isValid(signature, for: signed) else {
                throw ServerError(.forbidden, "bad_signature", "the imgproxy URL's signature is missing or wrong")
            }
        } else {
            guard !nativeSigned else {
                throw ServerError(.forbidden, "bad_signature", "unsigned imgproxy URLs are off here: sign them with an imgproxy key and salt")
            }
            guard !signature.contains(":") else {
                throw ServerError(.forbidden, "bad_signature", "an imgproxy URL starts with its signature (any string without : when unsigned)")
            }
        }
        let url = try ImgproxyURL(path: path, onlyPresets: configuration.onlyPresets)
        var options = try ImgproxyOptions(url.options, presets: imgproxy.presets)
        if let fileExtension = url.fileExtension {
            options.format = try ImgproxyOptions.Reader(option: .init(name: "extension", arguments: [Substring(fileExtension)])).format(0)
        }
        return try options.parameters(
            source: url.source, maximumSide: configuration.maximumOutputSide, negotiates: configuration.imgproxyAutoFormat,
            localFiles: configuration.localFilesystemRoot != nil
        )
    }
}
