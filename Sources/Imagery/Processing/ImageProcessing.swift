import Foundation

/// Applies an ``ImageRecipe`` to a decoded source: the processing stage between decoding and encoding.
///
/// It works on a source decoded at a reduced scale (``ThumbnailBase``: the decoder shrinks on
/// load as far as ``ImageRecipe/decodeShrink(sourceWidth:sourceHeight:)`` allows) and lays the
/// recipe out in the source's own pixels (``ImageRecipe/layout(sourceWidth:sourceHeight:trimmed:maximumSide:)``),
/// so the result does not depend on the scale it was decoded at beyond resampling. Decoders that
/// shrink on load call their processor themselves, so that one pass of pixels does both.
public protocol ImageProcessing: Sendable {
    /// `recipe` applied to `decoded`.
    /// - Throws: ``ImageProcessingError``.
    func process(_ decoded: ThumbnailBase, recipe: ImageRecipe) throws -> Image
}

/// Why a recipe could not be applied.
public enum ImageProcessingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A crop rectangle starts outside the image (`width` × `height`, after trimming).
    case cropOutsideImage(ImageRecipe.Rect, width: Int, height: Int)
    /// The operations leave no pixel.
    case emptyResult
    /// The output would be larger than the limit on either side.
    case outputTooLarge(width: Int, height: Int, limit: Int)
    /// A recipe's value is out of its range (the parsers check first; this is the backend's word).
    case invalidValue(String)
    /// The backend failed, with its reason.
    case failed(String)

    public var description: String {
        switch self {
        case .cropOutsideImage(let rect, let width, let height):
            "the crop \(rect) starts outside the \(width)x\(height) image"
        case .emptyResult: "the operations leave an empty image"
        case .outputTooLarge(let width, let height, let limit):
            "the output would be \(width)x\(height) pixels, over the limit of \(limit) on a side"
        case .invalidValue(let reason): reason
        case .failed(let reason): "processing failed: \(reason)"
        }
    }
}
