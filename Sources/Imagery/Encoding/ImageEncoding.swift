import Foundation

/// Turns an ``Image`` back into bytes of a given format. May block.
public protocol ImageEncoding: Sendable {
    /// Encodes `image` as `format` with `options`.
    /// - Throws: ``ImageEncodingError``.
    func encode(_ image: Image, as format: ImageFormat, options: EncodingOptions) throws -> Data

    /// Encodes `image` as `format` with `options`, and says at which quality (the one
    /// ``EncodingOptions/autoQuality`` chose). The default: ``encode(_:as:options:)`` at the quality asked.
    /// - Throws: ``ImageEncodingError``.
    func encoded(_ image: Image, as format: ImageFormat, options: EncodingOptions) throws -> EncodedImage

    /// About how many bytes ``encode(_:as:options:)`` holds while it runs, beyond `image` itself: its
    /// working buffers and its output, for a memory budget. The default: `image`'s size.
    func estimatedEncodeMemory(_ image: Image, as format: ImageFormat, options: EncodingOptions) -> Int
}

extension ImageEncoding {
    public func encoded(_ image: Image, as format: ImageFormat, options: EncodingOptions) throws -> EncodedImage {
        EncodedImage(data: try encode(image, as: format, options: options), quality: options.quality)
    }

    public func estimatedEncodeMemory(_ image: Image, as format: ImageFormat, options: EncodingOptions) -> Int {
        image.pixels.count
    }

    /// Encodes `image` as `format`.
    /// - Parameters:
    ///   - image: What to encode.
    ///   - format: The output format.
    ///   - quality: 1...100 for lossy formats; `nil` for the encoder's default.
    /// - Throws: ``ImageEncodingError``.
    public func encode(_ image: Image, as format: ImageFormat, quality: Int? = nil) throws -> Data {
        try encode(image, as: format, options: EncodingOptions(quality: quality))
    }
}

/// How an image is written, beyond its format.
public struct EncodingOptions: Sendable, Hashable, CustomStringConvertible {
    /// 1...100 for lossy formats; `nil`: the encoder's default for the format.
    public var quality: Int?
    /// Lossless compression where the format has it (WebP, AVIF, JPEG XL); PNG and GIF always are.
    public var lossless: Bool
    /// Progressive JPEG, interlaced PNG: a coarse image first on slow connections.
    public var progressive: Bool
    /// The most bytes the output may have: a lossy format is encoded again at lower qualities until it
    /// fits (the smallest result when none does); lossless formats are written as they are.
    public var maximumBytes: Int?
    /// The quality chosen per image, at most ``quality`` (its maximum when it gives none); `nil`: ``quality``.
    public var autoQuality: AutoQuality?
    /// What transparent pixels are laid onto in a format without alpha (JPEG); `nil`: black, as libvips
    /// flattens. imgproxy's URLs say white. A recipe's background flattens before this, in every format.
    public var flattensOnto: ImageRecipe.Color?

    public init(
        quality: Int? = nil, lossless: Bool = false, progressive: Bool = false, maximumBytes: Int? = nil,
        autoQuality: AutoQuality? = nil, flattensOnto: ImageRecipe.Color? = nil
    ) {
        self.quality = quality
        self.lossless = lossless
        self.progressive = progressive
        self.maximumBytes = maximumBytes
        self.autoQuality = autoQuality
        self.flattensOnto = flattensOnto
    }

    /// `q80`, then `+lossless`, `+progressive`, `+max:BYTES`, `+auto:…`, `+onto:RRGGBB` when set: for cache keys.
    public var description: String {
        "q\(quality ?? 0)" + (lossless ? "+lossless" : "") + (progressive ? "+progressive" : "")
            + (maximumBytes.map { "+max:\($0)" } ?? "") + (autoQuality.map { "+\($0)" } ?? "")
            + (flattensOnto.map { "+onto:\($0)" } ?? "")
    }
}

/// Why an image could not be encoded.
public enum ImageEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The encoder cannot write this format (libvips built without it, say).
    case unsupportedFormat(ImageFormat)
    /// The encoder failed, with its reason.
    case failed(String)

    public var description: String {
        switch self {
        case .unsupportedFormat(let format): "cannot encode \(format.rawValue) here"
        case .failed(let reason): "encoding failed: \(reason)"
        }
    }
}
