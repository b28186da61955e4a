import Foundation
import Imagery

extension ImgproxyDialect {
    /// An imgproxy path (after `IMGPROXY_PATH_PREFIX`), read once: its signature checked (with imgproxy
    /// keys, its HMAC; without, any string, refused when native URLs are signed so that it is no way
    /// around them), its options, `expires` and the `Content-Disposition` it asks for; `nil` when the
    /// path does not start with the prefix or has no imgproxy option or source.
    /// - Throws: 403 for a missing or wrong signature; 400 for what the URL asks that is wrong or not
    ///   supported; 404 for an expired URL or a source that is not allowed (imgproxy's statuses: ``answers``).
    func read(_ request: DialectRequest) throws -> DialectReading? {
        guard let path = path(request.path), ImgproxyURL.mayBe(path, syntax: syntax) else { return nil }
        do {
            try checkSignature(of: path)
            let url = try ImgproxyURL(path: path, syntax: syntax)
            let (parameters, expires) = try parameters(of: url)
            var terms = ResponseTerms(expiresAt: expires, disposition: url.disposition, peer: answers)
            if configuration.imgproxy.setsCanonicalHeader, ["http", "https"].contains(parameters.url.scheme ?? "") {
                terms.canonical = parameters.url.absoluteString
            }
            return DialectReading(kind: .image(parameters), terms: terms)
        } catch let error as ServerError {
            throw answers.failure(error)
        }
    }

    /// Refuses a path whose signature this server does not take.
    private func checkSignature(of path: Substring) throws {
        let (signature, signed) = try ImgproxyURL.signature(of: path)
        if let signer {
            guard
                configuration.imgproxy.trustedSignatures.contains(String(signature))
                    || signer.isValid(signature, for: signed)
            else {
                throw ServerError(.forbidden, "bad_signature", "the imgproxy URL's signature is missing or wrong")
            }
        } else {
            guard !nativeSigned else {
                throw ServerError(
                    .forbidden, "bad_signature",
                    "unsigned imgproxy URLs are off here: sign them with an imgproxy key and salt")
            }
            guard !signature.contains(":") else {
                throw ServerError(
                    .forbidden, "bad_signature",
                    "an imgproxy URL starts with its signature (any string without : when unsigned)")
            }
        }
    }

    /// `url`'s parameters as this server's imgproxy settings read them, and its `expires` (`nil`: none).
    private func parameters(of url: ImgproxyURL) throws -> (ImageParameters, expires: Int?) {
        if let allowed = allowedOptions, let refused = url.options.first(where: { !allowed.contains($0.name) }) {
            throw ServerError.badParameter(
                "imgproxy option \(refused.name) is not allowed here (IMGPROXY_ALLOWED_PROCESSING_OPTIONS)")
        }
        let now = Int(configuration.time.date().timeIntervalSince1970)
        var options = try ImgproxyOptions(url.options, presets: presets, now: now)
        if options.setsSourceLimits {
            guard configuration.imgproxy.allowsSecurityOptions else {
                throw ServerError(
                    .forbidden, "forbidden_option",
                    "imgproxy's security options (max_src_*, max_animation_*) are off here (IMGPROXY_ALLOW_SECURITY_OPTIONS)"
                )
            }
            options.sourceLimits = options.sourceLimits.tightening(configuration)
        }
        if let fileExtension = url.fileExtension, !options.raw {  // raw: the source as it is, whatever the extension
            options.format = try ImgproxyOptions.Reader(
                option: .init(name: "extension", arguments: [Substring(fileExtension)])
            ).format(0)
        }
        let source = sources.rewritten(url.source)
        guard sources.allows(source) else {
            throw ServerError(
                .forbidden, "forbidden_source",
                "this imgproxy source is not among the allowed sources (IMGPROXY_ALLOWED_SOURCES)")
        }
        let parameters = try options.parameters(
            source: source, maximumSide: configuration.limits.maximumOutputSide,
            negotiates: configuration.imgproxy.autoFormat,
            localFiles: configuration.origins.localFilesystemRoot != nil,
            watermark: watermarks[ImgproxyEnvironment.watermarkName].map {
                ($0, configuration.imgproxy.watermarkOpacity)
            },
            defaults: ImgproxyOptions.Defaults(configuration)
        )
        return (parameters, options.expires)
    }

    /// `path` without imgproxy's path prefix (`IMGPROXY_PATH_PREFIX`); `nil` when it does not start with it.
    func path(_ path: Substring) -> Substring? {
        let prefix = configuration.imgproxy.pathPrefix
        guard !prefix.isEmpty else { return path }
        guard path.hasPrefix(prefix), path.dropFirst(prefix.count).first == "/" else { return nil }
        return path.dropFirst(prefix.count)
    }
}

extension ImageRecipe.SourceLimits {
    /// Only the limits tighter than `configuration`'s own (a URL may not loosen the server's).
    func tightening(_ configuration: ServerConfiguration) -> Self {
        func tighter(_ value: Int?, _ own: Int?) -> Int? {
            value.flatMap { value in own.map { value < $0 } ?? true ? value : nil }
        }
        return Self(
            pixels: tighter(pixels, configuration.limits.maximumSourcePixels),
            framePixels: tighter(framePixels, configuration.limits.maximumFramePixels),
            frames: tighter(frames, configuration.limits.maximumFrames),
            bytes: tighter(bytes, configuration.limits.maximumSourceBytes)
        )
    }
}
