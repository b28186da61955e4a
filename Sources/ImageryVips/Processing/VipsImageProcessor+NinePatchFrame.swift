import CVips
import Foundation
import Imagery

/// thumbor's `frame()` (``ImageRecipe/Adjustment/frame(_:)``): the image in a stretched nine-patch frame.
extension VipsImageProcessor {
    /// `image` in a nine-patch frame, as thumbor's `frame()` draws it: the image on an opaque white
    /// canvas grown by the frame's padding (its bottom row and right column of black marks), then each
    /// cell of the frame (cut by the black marks of its top row and left column) stretched to its
    /// place and laid over it. Consumes `image`.
    func framed(_ image: UnsafeMutablePointer<VipsImage>, _ frame: ImageRecipe.LinkedImage) throws
        -> UnsafeMutablePointer<VipsImage>
    {
        var canvas: UnsafeMutablePointer<VipsImage> = image
        let patch: NinePatch
        let frameImage: UnsafeMutablePointer<VipsImage>
        do {
            guard case .encoded(let encoded) = frame else {
                throw ImageProcessingError.invalidValue("the frame image at \(frame) was not loaded")
            }
            guard let opened = try opened(.linked(.encoded(encoded))) else {
                throw ImageProcessingError.invalidValue("a frame is an image")
            }
            var rgba = try eightBitColour(opened)
            if !Vips.hasAlpha(rgba) { rgba = try Vips.apply(rgba) { imagery_vips_add_alpha($0, $1) } }
            let pixels = try Vips.makeImage(consuming: rgba, format: .png)
            guard pixels.width >= 3, pixels.height >= 3 else {
                throw ImageProcessingError.invalidValue("a nine-patch frame is at least 3 × 3 pixels")
            }
            patch = NinePatch(pixels)
            guard
                let wrapped = pixels.pixels.withUnsafeBytes({
                    imagery_vips_from_pixels($0.baseAddress, $0.count, Int32(pixels.width), Int32(pixels.height), 4, 0)
                })
            else { throw VipsError(message: Vips.takeError()) }
            frameImage = try Vips.apply(wrapped) { imagery_vips_set_interpretation($0, $1, VIPS_INTERPRETATION_sRGB) }
        } catch {
            imagery_vips_unref(canvas)
            throw error
        }
        defer { imagery_vips_unref(frameImage) }
        // The image over opaque white, grown by the padding.
        canvas = try eightBitColour(canvas)
        if Vips.hasAlpha(canvas) {
            canvas = try Vips.apply(canvas) { imagery_vips_flatten_onto($0, $1, [255, 255, 255], 3) }
        }
        canvas = try Vips.apply(canvas) { imagery_vips_add_alpha($0, $1) }
        let (width, height) = (Int(vips_image_get_width(canvas)), Int(vips_image_get_height(canvas)))
        let padding = patch.padding
        let (outerWidth, outerHeight) = (width + padding.left + padding.right, height + padding.top + padding.bottom)
        if (outerWidth, outerHeight) != (width, height) {
            canvas = try Vips.apply(canvas) {
                imagery_vips_embed(
                    $0, $1, Int32(padding.left), Int32(padding.top), Int32(outerWidth), Int32(outerHeight),
                    [255, 255, 255, 255], 4)
            }
        }
        // The cells, stretched.
        var cells: [UnsafeMutablePointer<VipsImage>?] = []
        var origins: [(x: Int32, y: Int32)] = []
        defer { cells.forEach { imagery_vips_unref($0) } }
        do {
            for cell in patch.cells(targetWidth: outerWidth, targetHeight: outerHeight)
            where cell.target.width > 0 && cell.target.height > 0 {
                var piece = try Vips.apply(frameImage, releasingInput: false) {
                    imagery_vips_extract(
                        $0, $1, Int32(cell.source.x), Int32(cell.source.y), Int32(cell.source.width),
                        Int32(cell.source.height))
                }
                if (cell.source.width, cell.source.height) != (cell.target.width, cell.target.height) {
                    piece = try Vips.resized(piece, width: cell.target.width, height: cell.target.height)
                }
                cells.append(piece)
                origins.append((Int32(cell.target.x), Int32(cell.target.y)))
            }
        } catch {
            imagery_vips_unref(canvas)
            throw error
        }
        guard !cells.isEmpty else { return canvas }
        let xs: [Int32] = origins.map(\.x)
        let ys: [Int32] = origins.map(\.y)
        return try composited(canvas, &cells, x: xs, y: ys, mode: VIPS_BLEND_MODE_OVER)
    }

    /// `overlays` composited over `base` in one operation (the fewer libvips operations a request
    /// runs, the less it costs: each is built anew), the result with `base`'s bands, 8 bits. Consumes `base`.
    private func composited(
        _ base: UnsafeMutablePointer<VipsImage>, _ overlays: inout [UnsafeMutablePointer<VipsImage>?], x: [Int32],
        y: [Int32], mode: VipsBlendMode
    ) throws -> UnsafeMutablePointer<VipsImage> {
        let bands = vips_image_get_bands(base)
        let count = Int32(overlays.count)
        var result = try Vips.apply(base) { input, output in
            imagery_vips_composite_at(input, &overlays, count, x, y, mode, output)
        }
        if vips_image_get_bands(result) > bands {
            result = try Vips.apply(result) { imagery_vips_extract_bands($0, $1, 0, bands) }
        }
        return try Vips.apply(result) { imagery_vips_cast_uchar($0, $1) }
    }
}
