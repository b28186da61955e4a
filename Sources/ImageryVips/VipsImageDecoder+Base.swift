import CJPEG
import CVips
import Foundation
import Imagery

/// JPEG thumbnails through a kept base: the source decoded at a DCT scale (1/2, 1/4
/// or 1/8, ``decodeScale(sourceWidth:sourceHeight:for:)``), oriented and in sRGB, then resized.
/// A later thumbnail of the same source that decodes at the same scale is resized from
/// the base: no entropy decoding of the whole file again, and the same pixels as a decode.
extension VipsImageDecoder: ThumbnailDeriving {
    public func decodeKeepingBase(_ data: Data, thumbnail: ImageRequest.Thumbnail) throws -> (image: Image, base: ThumbnailBase?) {
        guard !data.isEmpty else { throw ImageDecodingError.empty }
        // Other formats have no cheap decode scale here: their base would be the full image.
        guard ImageFormat(sniffing: data) == .jpeg else { return (try decode(data, thumbnail: thumbnail), nil) }
        try validate(thumbnail)
        do {
            try Vips.start()
        } catch {
            throw ImageDecodingError.corrupt(format: .jpeg, reason: "\(error)")
        }
        let base: ThumbnailBase = try data.withUnsafeBytes { buffer in
            guard let bytes = buffer.baseAddress else { throw ImageDecodingError.empty }
            do {
                let header = try checkHeader(bytes, buffer.count, format: .jpeg)
                let (width, height, swapped, orientation) = (header.width, header.height, header.swapped, header.orientation)
                let (sourceWidth, sourceHeight) = swapped ? (height, width) : (width, height)
                let scale = Self.decodeScale(sourceWidth: sourceWidth, sourceHeight: sourceHeight, for: thumbnail)
                let pixels = try decodeScaledJPEG(bytes, buffer.count, scale: scale, orientation: orientation, storedSize: (width, height))
                    ?? decodeScaledJPEGWithVips(bytes, buffer.count, scale: scale)
                return ThumbnailBase(image: pixels, scale: scale, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            } catch let error as VipsError {
                throw ImageDecodingError.corrupt(format: .jpeg, reason: error.message)
            }
        }
        return (try resize(base, to: thumbnail), base)
    }

    /// The JPEG at 1/`scale` through `CJPEG` (unneeded progressive scans skipped), oriented and
    /// normalised; `nil` when that decoder does not handle this JPEG (CMYK, 12-bit, ...) or is off.
    /// - Parameter storedSize: The JPEG's size as stored (before orientation): libvips' scaled size is
    ///   that divided by `scale`, rounded down, where libjpeg rounds up; the partial last row and
    ///   column are dropped to give libvips' pixels exactly.
    private func decodeScaledJPEG(
        _ bytes: UnsafeRawPointer, _ count: Int, scale: Int, orientation: Int32, storedSize: (width: Int, height: Int)
    ) throws -> Image? {
        guard skipsUnneededJPEGScans else { return nil }
        var decoded = imagery_jpeg_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = imagery_jpeg_decode_scaled(
            bytes, count, Int32(scale), rejectsCorruptData ? 1 : 0, maximumPixels, &decoded, &message, message.count
        )
        switch Int(status) {
        case IMAGERY_JPEG_OK: break
        case IMAGERY_JPEG_UNSUPPORTED: return nil
        default:
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw VipsError(message: reason.isEmpty ? "the JPEG data is corrupt" : reason)
        }
        defer { imagery_jpeg_free(&decoded) }  // after the pixels are rendered into their own buffer
        let length = Int(decoded.width) * Int(decoded.height) * Int(decoded.components)
        guard let wrapped = imagery_vips_wrap_pixels(decoded.pixels, length, decoded.width, decoded.height, decoded.components) else {
            throw VipsError(message: Vips.takeError())
        }
        let interpretation = decoded.components == 1 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
        var image = try Vips.apply(wrapped) { imagery_vips_set_interpretation($0, $1, interpretation) }
        let (width, height) = (max(1, storedSize.width / scale), max(1, storedSize.height / scale))
        if (width, height) != (Int(decoded.width), Int(decoded.height)), width <= Int(decoded.width), height <= Int(decoded.height) {
            image = try Vips.apply(image) { imagery_vips_extract($0, $1, 0, 0, Int32(width), Int32(height)) }
        }
        imagery_vips_set_orientation(image, orientation)
        image = try Vips.apply(image) { imagery_vips_autorot($0, $1) }
        image = try normalize(image)
        return try makeImage(consuming: image, format: .jpeg)
    }

    /// The JPEG at 1/`scale` through libvips (every scan decoded), oriented and normalised.
    private func decodeScaledJPEGWithVips(_ bytes: UnsafeRawPointer, _ count: Int, scale: Int) throws -> Image {
        guard let opened = imagery_vips_open_jpeg_shrunk(bytes, count, Int32(scale), rejectsCorruptData ? 1 : 0) else {
            throw VipsError(message: Vips.takeError())
        }
        var image = try Vips.apply(opened) { imagery_vips_autorot($0, $1) }
        image = try normalize(image)
        return try makeImage(consuming: image, format: .jpeg)  // decodes now, inside the bytes' lifetime
    }

    public func thumbnail(_ thumbnail: ImageRequest.Thumbnail, from base: ThumbnailBase) throws -> Image? {
        try validate(thumbnail)
        // Only a base at the very scale a decode for this size would use: then the result is the
        // one a decode gives, byte for byte, whichever size came first (a finer base would give
        // slightly different pixels, so a response's bytes would depend on the order of requests).
        guard Self.decodeScale(sourceWidth: base.sourceWidth, sourceHeight: base.sourceHeight, for: thumbnail) == base.scale else {
            return nil
        }
        return try resize(base, to: thumbnail)
    }

    /// `base` resized to `thumbnail` as a decode would resize it, whatever the base's scale (a
    /// full-size base gives the reference a DCT-scaled decode is measured against).
    /// - Throws: ``ImageDecodingError``.
    public func resize(_ base: ThumbnailBase, to thumbnail: ImageRequest.Thumbnail) throws -> Image {
        try validate(thumbnail)
        let source = base.image
        do {
            try Vips.start()
            return try source.pixels.withUnsafeBytes { buffer in
                guard let wrapped = imagery_vips_wrap_pixels(
                    buffer.baseAddress, buffer.count, Int32(source.width), Int32(source.height), Int32(source.pixelFormat.bytesPerPixel)
                ) else { throw VipsError(message: Vips.takeError()) }
                let interpretation = source.pixelFormat.bytesPerPixel <= 2 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
                var image = try Vips.apply(wrapped) { imagery_vips_set_interpretation($0, $1, interpretation) }
                // Sizes come from the source's dimensions, not the base's (rounded up by DCT scaling),
                // so every decode scale gives the size a full-size decode would.
                let (width, height) = Self.scaledSize(base, to: thumbnail)
                image = try Vips.apply(image) {
                    imagery_vips_thumbnail_image($0, $1, Int32(width), Int32(height), VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
                }
                if thumbnail.fit == .cover {  // the centre of the covering size
                    let (left, top) = ((width - thumbnail.width) / 2, (height - thumbnail.height) / 2)
                    image = try Vips.apply(image) {
                        imagery_vips_extract($0, $1, Int32(left), Int32(top), Int32(thumbnail.width), Int32(thumbnail.height))
                    }
                }
                if thumbnail.fit == .contain {
                    image = try Vips.apply(image) { imagery_vips_center_on_canvas($0, $1, Int32(thumbnail.width), Int32(thumbnail.height)) }
                }
                image = try normalize(image)
                return try makeImage(consuming: image, format: source.sourceFormat)  // rendered while `buffer` is valid
            }
        } catch let error as VipsError {
            throw ImageDecodingError.corrupt(format: source.sourceFormat, reason: error.message)
        }
    }

    /// The size to resize the base to, from the source's dimensions: covering the box (`cover`,
    /// then cropped to it), the box (`fill`), or fitting in it (`contain`, `inside`, never enlarged).
    static func scaledSize(_ base: ThumbnailBase, to thumbnail: ImageRequest.Thumbnail) -> (width: Int, height: Int) {
        let horizontal = Double(thumbnail.width) / Double(base.sourceWidth)
        let vertical = Double(thumbnail.height) / Double(base.sourceHeight)
        let scale: Double
        switch thumbnail.fit {
        case .fill: return (thumbnail.width, thumbnail.height)
        case .cover: scale = max(horizontal, vertical)
        case .contain: scale = min(horizontal, vertical)
        case .inside: scale = min(horizontal, vertical, 1)
        }
        let width = max(1, Int((Double(base.sourceWidth) * scale).rounded()))
        let height = max(1, Int((Double(base.sourceHeight) * scale).rounded()))
        switch thumbnail.fit {
        case .cover: return (max(width, thumbnail.width), max(height, thumbnail.height))
        default: return (min(width, thumbnail.width), min(height, thumbnail.height))
        }
    }

    /// The JPEG decode scale for this box: the coarsest of 1/2, 1/4, 1/8 that still gives at
    /// least the pixels the box needs (as libjpeg-based thumbnailers and Pillow's `draft` do).
    /// libvips' own thumbnail leaves another factor of two to the final resize; measured on the
    /// corpus, decoding at a quarter of the pixels cost a third of the time for a difference in
    /// the result under 2 levels in 255 on average (ThumbnailBaseTests).
    public static func decodeScale(sourceWidth: Int, sourceHeight: Int, for thumbnail: ImageRequest.Thumbnail) -> Int {
        let horizontal = Double(sourceWidth) / Double(thumbnail.width)
        let vertical = Double(sourceHeight) / Double(thumbnail.height)
        let shrink = switch thumbnail.fit {
        case .cover, .fill: min(horizontal, vertical)
        case .contain, .inside: max(horizontal, vertical)
        }
        return shrink >= 8 ? 8 : shrink >= 4 ? 4 : shrink >= 2 ? 2 : 1
    }
}
