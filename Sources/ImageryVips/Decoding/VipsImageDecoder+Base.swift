import CJPEG
import CVips
import Foundation
import Imagery

/// JPEG recipes through a kept base: the source decoded at a DCT scale (1/2, 1/4 or 1/8,
/// ``decodeScale(sourceWidth:sourceHeight:for:)``), oriented and in sRGB, then processed
/// (``VipsImageProcessor``). A later recipe of the same source that decodes at the same scale is
/// made from the base: no entropy decoding of the whole file again, and the same pixels as a decode.
extension VipsImageDecoder: ThumbnailDeriving {
    public func decodeKeepingBase(_ data: Data, recipe: ImageRecipe) throws -> (image: Image, base: ThumbnailBase?) {
        try decodeKeepingBase(data, recipe: recipe, prefix: false)
    }

    /// ``decodeKeepingBase(_:recipe:)``; with `prefix`, `data` is the first part of a progressive JPEG
    /// cut where a scan ends, decoded as a preview (`imagery_jpeg_decode_prefix`).
    func decodeKeepingBase(_ data: Data, recipe: ImageRecipe, prefix: Bool) throws -> (
        image: Image, base: ThumbnailBase?
    ) {
        // Other formats have no cheap decode scale here: their base would be the full image.
        // Bases are oriented: a recipe that leaves the orientation as stored is decoded on its own.
        // A recipe that keeps every metadata block takes them from libvips' own decode.
        guard try started(data).format == .jpeg, recipe.resizes, !recipe.ignoresOrientation,
            recipe.keptMetadata != .all,
            !recipe.resizesInLinearLight
        else {
            return (try decode(data, recipe: recipe), nil)
        }
        if let resize = recipe.resize { try validate(resize) }
        let base: ThumbnailBase = try data.withUnsafeBytes { buffer in
            guard let bytes = buffer.baseAddress else { throw ImageDecodingError.empty }
            do {
                let header = try checkHeader(bytes, buffer.count, format: .jpeg)
                try check(recipe.sourceLimits, header, bytes: buffer.count)
                let (width, height, swapped, orientation) = (
                    header.width, header.height, header.swapped, header.orientation
                )
                let (sourceWidth, sourceHeight) = swapped ? (height, width) : (width, height)
                let scale = Self.decodeScale(sourceWidth: sourceWidth, sourceHeight: sourceHeight, for: recipe)
                let keepsProfile = recipe.keepsColorProfile
                let partial = recipe.keepsPartialDecodeBlocks
                var pixels =
                    try decodeScaledJPEG(
                        bytes, buffer.count, scale: scale, orientation: orientation, storedSize: (width, height),
                        keepingProfile: keepsProfile,
                        keepingPartialBlocks: partial, prefix: prefix
                    ) ?? decodeScaledJPEGWithVips(bytes, buffer.count, scale: scale, keepingProfile: keepsProfile)
                pixels.metadata.copyright = header.copyright
                return ThumbnailBase(
                    image: pixels, scale: scale, sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                    keepsPartialBlocks: partial
                )
            } catch let error as VipsError {
                throw error.decodingError(format: .jpeg)
            }
        }
        // A base in the source's own colour space serves only recipes that keep it: none is kept.
        return (try processor.process(base, recipe: recipe), recipe.keepsColorProfile ? nil : base)
    }

    /// The JPEG at 1/`scale` through `CJPEG` (unneeded progressive scans skipped), oriented and
    /// normalised; `nil` when that decoder does not handle this JPEG (CMYK, 12-bit, ...) or is off.
    /// - Parameter storedSize: The JPEG's size as stored (before orientation): libvips' scaled size is
    ///   that divided by `scale`, rounded down, where libjpeg rounds up; the partial last row and
    ///   column are dropped to give libvips' pixels exactly, unless `keepingPartialBlocks` (Pillow's).
    /// - Parameter prefix: The bytes are a progressive JPEG cut where a scan ends (a preview).
    private func decodeScaledJPEG(
        _ bytes: UnsafeRawPointer, _ count: Int, scale: Int, orientation: Int32, storedSize: (width: Int, height: Int),
        keepingProfile: Bool,
        keepingPartialBlocks: Bool = false, prefix: Bool = false
    ) throws -> Image? {
        guard skipsUnneededJPEGScans else { return nil }
        var decoded = imagery_jpeg_image()
        var message = [CChar](repeating: 0, count: 256)
        let status =
            prefix
            ? imagery_jpeg_decode_prefix(bytes, count, Int32(scale), maximumPixels, &decoded, &message, message.count)
            : imagery_jpeg_decode_scaled(
                bytes, count, Int32(scale), rejectsCorruptData ? 1 : 0, maximumPixels, &decoded, &message,
                message.count)
        switch Int(status) {
        case IMAGERY_JPEG_OK: break
        case IMAGERY_JPEG_UNSUPPORTED: return nil
        case IMAGERY_JPEG_NO_MEMORY: throw VipsError(message: "out of memory decoding the JPEG", outOfMemory: true)
        default:
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw VipsError(message: reason.isEmpty ? "the JPEG data is corrupt" : reason, outOfMemory: false)
        }
        defer { imagery_jpeg_free(&decoded) }  // after the pixels are rendered into their own buffer
        let length = Int(decoded.width) * Int(decoded.height) * Int(decoded.components)
        // The profile to sRGB here, on the decoder's own buffer with a kept transform; a profile that
        // cannot be used so stays attached for `normalize` (libvips) to deal with.
        var profile = decoded.icc_profile.map { UnsafeRawBufferPointer(start: $0, count: Int(decoded.icc_length)) }
        if let embedded = profile, !keepingProfile, decoded.components == 3,
            ColorTransform.convertToSRGB(
                decoded.pixels, count: Int(decoded.width) * Int(decoded.height), bands: 3, profile: embedded)
        {
            profile = nil
        }
        guard
            let wrapped = imagery_vips_wrap_pixels(
                decoded.pixels, length, decoded.width, decoded.height, decoded.components, 0)
        else {
            throw VipsError(message: Vips.takeError())
        }
        let interpretation = decoded.components == 1 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
        var image = try Vips.apply(wrapped) { imagery_vips_set_interpretation($0, $1, interpretation) }
        if let profile { imagery_vips_set_icc(image, profile.baseAddress, profile.count) }  // normalize converts by it
        let (width, height) = (max(1, storedSize.width / scale), max(1, storedSize.height / scale))
        if !keepingPartialBlocks, (width, height) != (Int(decoded.width), Int(decoded.height)),
            width <= Int(decoded.width), height <= Int(decoded.height)
        {
            image = try Vips.apply(image) { imagery_vips_extract($0, $1, 0, 0, Int32(width), Int32(height)) }
        }
        imagery_vips_set_orientation(image, orientation)
        image = try Vips.apply(image) { imagery_vips_autorot($0, $1) }
        image = try Vips.normalize(image, keepingProfile: keepingProfile)
        return try Vips.makeImage(consuming: image, format: .jpeg, computedHere: true)
    }

    /// The JPEG at 1/`scale` through libvips (every scan decoded), oriented and normalised.
    private func decodeScaledJPEGWithVips(_ bytes: UnsafeRawPointer, _ count: Int, scale: Int, keepingProfile: Bool)
        throws -> Image
    {
        guard let opened = imagery_vips_open_jpeg_shrunk(bytes, count, Int32(scale), rejectsCorruptData ? 1 : 0) else {
            throw VipsError(message: Vips.takeError())
        }
        var image = try Vips.apply(opened) { imagery_vips_autorot($0, $1) }
        image = try Vips.normalize(image, keepingProfile: keepingProfile)
        return try Vips.makeImage(consuming: image, format: .jpeg)  // decodes now, inside the bytes' lifetime
    }

    public func image(_ recipe: ImageRecipe, from base: ThumbnailBase) throws -> Image? {
        if let resize = recipe.resize { try validate(resize) }
        guard !recipe.keepsColorProfile, base.image.metadata.iccProfile == nil else { return nil }  // bases are sRGB
        guard !recipe.ignoresOrientation else { return nil }  // and oriented
        guard recipe.keptMetadata != .all else { return nil }  // and hold the copyright only
        guard !recipe.resizesInLinearLight else { return nil }  // and were shrunk in gamma space
        guard recipe.sourceLimits == nil else { return nil }  // a limited recipe decodes anew, checking the source
        // and its blocks as the decode would
        guard recipe.keepsPartialDecodeBlocks == base.keepsPartialBlocks else { return nil }
        // Only a base at the very scale a decode for this recipe would use: then the result is the
        // one a decode gives, byte for byte, whichever variant came first (a finer base would give
        // slightly different pixels, so a response's bytes would depend on the order of requests).
        guard
            Self.decodeScale(sourceWidth: base.sourceWidth, sourceHeight: base.sourceHeight, for: recipe) == base.scale
        else {
            return nil
        }
        return try processor.process(base, recipe: recipe)
    }

    /// `base` resized to `thumbnail` as a decode would resize it, whatever the base's scale (a
    /// full-size base gives the reference a DCT-scaled decode is measured against).
    /// - Throws: `ImageDecodingError`, `ImageProcessingError`.
    public func resize(_ base: ThumbnailBase, to thumbnail: ImageRequest.Thumbnail) throws -> Image {
        try validate(thumbnail)
        return try processor.process(base, recipe: ImageRecipe(resize: thumbnail))
    }

    /// The JPEG decode scale for a recipe: the coarsest of 1/2, 1/4, 1/8 that still gives at
    /// least the pixels the output needs (`ImageRecipe/decodeShrink(sourceWidth:sourceHeight:)`:
    /// for a resize alone, as libjpeg-based thumbnailers and Pillow's `draft` do).
    /// libvips' own thumbnail leaves another factor of two to the final resize; measured on the
    /// corpus, decoding at a quarter of the pixels cost a third of the time for a difference in
    /// the result under 2 levels in 255 on average (ThumbnailBaseTests).
    public static func decodeScale(sourceWidth: Int, sourceHeight: Int, for recipe: ImageRecipe) -> Int {
        let shrink = recipe.decodeShrink(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        return shrink >= 8 ? 8 : shrink >= 4 ? 4 : shrink >= 2 ? 2 : 1
    }

    /// ``decodeScale(sourceWidth:sourceHeight:for:)`` of a resize alone.
    public static func decodeScale(sourceWidth: Int, sourceHeight: Int, for thumbnail: ImageRequest.Thumbnail) -> Int {
        decodeScale(sourceWidth: sourceWidth, sourceHeight: sourceHeight, for: ImageRecipe(resize: thumbnail))
    }
}
