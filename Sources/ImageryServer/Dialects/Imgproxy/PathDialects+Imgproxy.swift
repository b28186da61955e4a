import Foundation
import Imagery

extension PathDialects {
    /// An imgproxy URL's parameters, its signature checked: with imgproxy keys, its HMAC; without,
    /// any string (refused when native URLs are signed, so that it is no way around them).
    /// - Throws: 403 for a missing or wrong signature; 400 for what the URL asks that is wrong or not supported.
    func imgproxyParameters(_ path: Substring) throws -> ImageParameters {
        let (signature, signed) = try ImgproxyURL.signature(of: path)
        if let signer = imgproxy.signer {
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
        let url = try ImgproxyURL(path: path, syntax: imgproxy.syntax)
        if let allowed = imgproxy.allowedOptions, let refused = url.options.first(where: { !allowed.contains($0.name) })
        {
            throw ServerError.badParameter(
                "imgproxy option \(refused.name) is not allowed here (IMGPROXY_ALLOWED_PROCESSING_OPTIONS)")
        }
        let now = Int(configuration.time.date().timeIntervalSince1970)
        var options = try ImgproxyOptions(url.options, presets: imgproxy.presets, now: now)
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
        let source = imgproxy.sources.rewritten(url.source)
        guard imgproxy.sources.allows(source) else {
            throw ServerError(
                .forbidden, "forbidden_source",
                "this imgproxy source is not among the allowed sources (IMGPROXY_ALLOWED_SOURCES)")
        }
        return try options.parameters(
            source: source, maximumSide: configuration.limits.maximumOutputSide,
            negotiates: configuration.imgproxy.autoFormat,
            localFiles: configuration.origins.localFilesystemRoot != nil,
            watermark: watermarks[ImgproxyEnvironment.watermarkName].map {
                ($0, configuration.imgproxy.watermarkOpacity)
            },
            defaults: ImgproxyOptions.Defaults(configuration)
        )
    }

    /// `path` without imgproxy's path prefix (`IMGPROXY_PATH_PREFIX`); `nil` when it does not start with it.
    package func imgproxyPath(_ path: Substring) -> Substring? {
        let prefix = configuration.imgproxy.pathPrefix
        guard !prefix.isEmpty else { return path }
        guard path.hasPrefix(prefix), path.dropFirst(prefix.count).first == "/" else { return nil }
        return path.dropFirst(prefix.count)
    }

    /// The `Content-Disposition` of an imgproxy path's image (`filename`, `return_attachment`, else
    /// inline with the source's name); `nil` for a path in another syntax.
    func imgproxyDisposition(_ path: Substring) -> ContentDisposition? {
        guard syntax(of: path) == .imgproxy else { return nil }
        return imgproxyPath(path).flatMap { ImgproxyURL.disposition(of: $0, syntax: imgproxy.syntax) }
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
