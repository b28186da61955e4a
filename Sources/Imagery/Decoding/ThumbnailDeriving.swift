import Foundation

/// A decoder that can keep what it decoded on the way to a thumbnail (the source at
/// a cheap decode scale, before the final resize: a JPEG at 1/2, 1/4 or 1/8 by DCT
/// scaling, say) and make later thumbnails of the same source from it, without
/// decoding the bytes again. Responsive pages ask for one image at several sizes
/// (1x and 2x, a width per breakpoint); every size after the first then costs a
/// resize instead of an entropy decode of the whole file.
///
/// The pipeline keeps bases in memory per source (``ImagePipeline/Configuration/baseImageCacheCostLimit``).
public protocol ThumbnailDeriving: ImageDecoding {
    /// Decodes `data` made with `recipe`, and returns the base it was made from when one is
    /// worth keeping (`nil` for formats without a cheap decode scale).
    /// - Throws: As ``ImageDecoding/decode(_:recipe:)``.
    func decodeKeepingBase(_ data: Data, recipe: ImageRecipe) throws -> (image: Image, base: ThumbnailBase?)

    /// `recipe` applied to `base`, exactly what decoding it from the bytes would give (so the
    /// output never depends on which variant was asked for first); `nil` when `base` cannot give
    /// that (the bytes must be decoded again).
    /// - Throws: As ``ImageDecoding/decode(_:recipe:)``.
    func image(_ recipe: ImageRecipe, from base: ThumbnailBase) throws -> Image?
}

extension ThumbnailDeriving {
    /// ``decodeKeepingBase(_:recipe:)`` of a resize alone.
    public func decodeKeepingBase(_ data: Data, thumbnail: ImageRequest.Thumbnail) throws -> (
        image: Image, base: ThumbnailBase?
    ) {
        try decodeKeepingBase(data, recipe: ImageRecipe(resize: thumbnail))
    }

    /// ``image(_:from:)`` of a resize alone.
    public func thumbnail(_ thumbnail: ImageRequest.Thumbnail, from base: ThumbnailBase) throws -> Image? {
        try image(ImageRecipe(resize: thumbnail), from: base)
    }
}

/// A source decoded at a reduced scale, oriented and converted, before the recipe is applied
/// (``ImageProcessing``).
public struct ThumbnailBase: Sendable, CacheCostReporting {
    /// The decoded pixels.
    public let image: Image
    /// The decode scale: `image` is the source divided by this (1: full size; for a base that is not
    /// a DCT scale, the nearest whole factor: processing uses `image`'s size against the source's).
    public let scale: Int
    /// The source's size, oriented (as `image` is).
    public let sourceWidth: Int
    public let sourceHeight: Int
    /// Whether a DCT-scaled decode kept its partial last blocks (``ImageRecipe/keepsPartialDecodeBlocks``):
    /// a base serves only recipes that ask the same.
    public let keepsPartialBlocks: Bool

    public init(image: Image, scale: Int, sourceWidth: Int, sourceHeight: Int, keepsPartialBlocks: Bool = false) {
        self.image = image
        self.scale = scale
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.keepsPartialBlocks = keepsPartialBlocks
    }

    public var cacheCost: Int { image.cacheCost }
}
