import Foundation

/// Turns encoded bytes into an ``Image``, made with an ``ImageRecipe``.
///
/// The pipeline calls it on its own decoding threads (never on the
/// cooperative pool), so implementations may block.
public protocol ImageDecoding: Sendable {
    /// Decodes `data` and applies `recipe` (an empty recipe: the full image). Decodes at the
    /// smallest size the recipe allows (``ImageRecipe/decodeShrink(sourceWidth:sourceHeight:)``)
    /// rather than full size and then shrinking.
    /// - Throws: ``ImageDecodingError``, or ``ImageProcessingError`` when the recipe does not fit the image.
    func decode(_ data: Data, recipe: ImageRecipe) throws -> Image
}

extension ImageDecoding {
    /// Decodes `data`, at `thumbnail`'s size when given (shrink-on-load), else full size.
    /// - Throws: ``ImageDecodingError``.
    public func decode(_ data: Data, thumbnail: ImageRequest.Thumbnail?) throws -> Image {
        try decode(data, recipe: ImageRecipe(resize: thumbnail))
    }
}

/// Why bytes could not become an image.
public enum ImageDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No bytes at all.
    case empty
    /// The bytes are not an image format the decoder reads (an HTML page, say).
    case unsupportedFormat
    /// The image declares more pixels than the decoder's limit; nothing was decoded.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// An animation whose frames together are over the decoder's budget (frames × pixels, or
    /// frames); none was decoded. One frame of it (``ImageRecipe/frame``) may still be taken.
    case tooManyFrames(frames: Int, width: Int, height: Int, pixelLimit: Int, frameLimit: Int)
    /// A thumbnail size is not positive or is too large.
    case invalidSize(width: Int, height: Int)
    /// The bytes claim a known format but are broken (truncated, corrupt).
    case corrupt(format: ImageFormat?, reason: String)
    /// Memory for decoding could not be allocated: nothing is known to be wrong with the bytes,
    /// and the same decode may succeed later, with less in flight.
    case outOfMemory(reason: String)
    /// The source is over a limit its request set (``ImageRecipe/SourceLimits``), tighter than the decoder's own.
    case overRequestLimit(String)

    public var description: String {
        switch self {
        case .empty: "the data is empty"
        case .unsupportedFormat:
            "the data is not an image in a supported format (JPEG, PNG, GIF, WebP, AVIF, HEIC, TIFF, BMP, ICO)"
        case .tooManyPixels(let width, let height, let limit):
            "the image is \(width)x\(height) pixels, over the limit of \(limit) pixels"
        case .tooManyFrames(let frames, let width, let height, let pixelLimit, let frameLimit):
            "the animation has \(frames) frames of \(width)x\(height) pixels, over the limit of \(frameLimit) frames "
                + "and \(pixelLimit) pixels for all frames together; one frame of it can be taken"
        case .invalidSize(let width, let height): "invalid target size \(width)x\(height)"
        case .corrupt(let format, let reason):
            "the \(format?.rawValue ?? "image") data is corrupt or truncated: \(reason)"
        case .outOfMemory(let reason): "there was not enough memory to decode the image: \(reason)"
        case .overRequestLimit(let reason): reason
        }
    }
}
