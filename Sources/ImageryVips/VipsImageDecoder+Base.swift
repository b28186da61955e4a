import CVips
import Foundation
import Imagery

/// JPEG thumbnails through a kept base: the source decoded at the DCT scale libvips'
/// shrink-on-load would pick (1/2, 1/4 or 1/8), oriented and in sRGB, then resized.
/// A later thumbnail of the same source that needs no finer scale is resized from
/// the base: no entropy decoding of the whole file again.
extension VipsImageDecoder: ThumbnailDeriving {
    public func decodeKeepingBase(_ data: Data, thumbnail: ImageRequest.Thumbnail) throws -> (image: Image, base: ThumbnailBase?) {
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
                try checkHeader(bytes, buffer.count, format: .jpeg)
                guard let header = imagery_vips_open_buffer(bytes, buffer.count, 0) else { throw VipsError(message: Vips.takeError()) }
                let swapped = vips_image_get_orientation_swap(header) != 0
                let (width, height) = (Int(vips_image_get_width(header)), Int(vips_image_get_height(header)))
                imagery_vips_unref(header)
                let (sourceWidth, sourceHeight) = swapped ? (height, width) : (width, height)
                let scale = Self.decodeScale(sourceWidth: sourceWidth, sourceHeight: sourceHeight, for: thumbnail)
                guard let opened = imagery_vips_open_jpeg_shrunk(bytes, buffer.count, Int32(scale), rejectsCorruptData ? 1 : 0) else {
                    throw VipsError(message: Vips.takeError())
                }
                var image = try Vips.apply(opened) { imagery_vips_autorot($0, $1) }
                image = try normalize(image)
                let pixels = try makeImage(consuming: image, format: .jpeg)  // decodes now, inside the bytes' lifetime
                return ThumbnailBase(image: pixels, scale: scale, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            } catch let error as VipsError {
                throw ImageDecodingError.corrupt(format: .jpeg, reason: error.message)
            }
        }
        guard let image = try self.thumbnail(thumbnail, from: base) else {
            throw ImageDecodingError.corrupt(format: .jpeg, reason: "the decoded base is smaller than the thumbnail needs")
        }
        return (image, base)
    }

    public func thumbnail(_ thumbnail: ImageRequest.Thumbnail, from base: ThumbnailBase) throws -> Image? {
        try validate(thumbnail)
        guard Self.decodeScale(sourceWidth: base.sourceWidth, sourceHeight: base.sourceHeight, for: thumbnail) >= base.scale else {
            return nil  // this size needs a finer decode scale than the base has
        }
        let source = base.image
        do {
            try Vips.start()
            return try source.pixels.withUnsafeBytes { buffer in
                guard let wrapped = imagery_vips_wrap_pixels(
                    buffer.baseAddress, buffer.count, Int32(source.width), Int32(source.height), Int32(source.pixelFormat.bytesPerPixel)
                ) else { throw VipsError(message: Vips.takeError()) }
                let interpretation = source.pixelFormat.bytesPerPixel <= 2 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
                var image = try Vips.apply(wrapped) { imagery_vips_set_interpretation($0, $1, interpretation) }
                let (size, crop) = Self.sizeAndCrop(thumbnail.fit)
                image = try Vips.apply(image) {
                    imagery_vips_thumbnail_image($0, $1, Int32(thumbnail.width), Int32(thumbnail.height), size, crop)
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

    /// The JPEG decode scale libvips' thumbnail picks for this box: the shrink the box needs,
    /// leaving at least a factor of two to the final resize for quality (8 from 16x, 4 from 8x, 2 from 4x).
    static func decodeScale(sourceWidth: Int, sourceHeight: Int, for thumbnail: ImageRequest.Thumbnail) -> Int {
        let horizontal = Double(sourceWidth) / Double(thumbnail.width)
        let vertical = Double(sourceHeight) / Double(thumbnail.height)
        let shrink = switch thumbnail.fit {
        case .cover, .fill: min(horizontal, vertical)
        case .contain, .inside: max(horizontal, vertical)
        }
        return shrink >= 16 ? 8 : shrink >= 8 ? 4 : shrink >= 4 ? 2 : 1
    }
}
