import Foundation

/// What ``ImagePipeline/encodedImage(for:)`` makes: an image request, and how its result is written
/// (a format asked for, or one chosen from an `Accept` header; the encoding options).
///
/// ```swift
/// var encoded = EncodedImageRequest(
///     ImageRequest(url: url, thumbnail: .init(width: 256, height: 256)), accept: "image/avif,image/webp")
/// encoded.encoding.quality = 70
/// let response = try await pipeline.encodedImage(for: encoded)  // AVIF bytes, an ETag, cache headers
/// ```
public struct EncodedImageRequest: Sendable {
    /// The source and what to make of it (thumbnail, recipe, options, cache key).
    public var image: ImageRequest
    /// The format asked for (`nil`: the first of ``negotiation``'s candidates that ``accept`` names,
    /// else ``fallback``).
    public var format: ImageFormat?
    /// The client's `Accept` header; `nil`: none.
    public var accept: String?
    /// Which formats ``accept`` may choose; `nil`: it chooses none. Default ``FormatNegotiation/standard``.
    public var negotiation: FormatNegotiation?
    /// The output when no format is asked for or accepted. Default ``OutputFormat/source``.
    public var fallback: OutputFormat
    /// How the image is written.
    public var encoding: EncodingOptions
    /// The options for an output in a given format, in place of ``encoding`` (a quality for each format,
    /// say, when the format is chosen by `Accept`). Part of the storage key.
    public var formatEncodings: [ImageFormat: EncodingOptions]
    /// Anything else that makes the bytes another variant (a cache-busting token): part of the
    /// storage key; `nil`: nothing.
    public var variant: String?

    /// - Parameters:
    ///   - image: The source and what to make of it.
    ///   - format: The format asked for; `nil`: chosen from `accept`, else ``OutputFormat/source``.
    ///   - accept: The client's `Accept` header.
    ///   - encoding: How the image is written.
    public init(
        _ image: ImageRequest, format: ImageFormat? = nil, accept: String? = nil,
        encoding: EncodingOptions = EncodingOptions()
    ) {
        self.image = image
        self.format = format
        self.accept = accept
        self.negotiation = .standard
        self.fallback = .source
        self.encoding = encoding
        self.formatEncodings = [:]
        self.variant = nil
    }

    /// The output the request resolves to before its source is decoded: ``negotiation``'s choice.
    public var output: OutputFormat {
        guard let negotiation else { return format.map { .format($0) } ?? fallback }
        return negotiation.output(asked: format, otherwise: fallback, accept: accept)
    }

    /// Whether the answer depends on `Accept`: a response says `Vary: Accept`.
    public var variesWithAccept: Bool {
        negotiation?.variesWithAccept(asked: format) ?? false
    }

    /// The options an output in `format` is written with: ``formatEncodings``' for it, else ``encoding``.
    /// - Parameter format: The output's format.
    public func encoding(for format: ImageFormat) -> EncodingOptions {
        formatEncodings[format] ?? encoding
    }

    /// Where the encoded image is stored (``EncodedImageStore``): the image's variant key
    /// (its normalised source and recipe), ``output``, ``formatEncodings``, ``variant`` and ``encoding``.
    public var storageKey: String {
        var output = output.keyToken
        if !formatEncodings.isEmpty {
            let encodings = formatEncodings.sorted { $0.key.rawValue < $1.key.rawValue }
            output += "|fe:" + encodings.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: ",")
        }
        if let variant { output += "|" + variant }
        return EncodedImageStore.key(for: image, output: output, encoding: encoding)
    }
}
