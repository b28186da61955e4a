import CVips
import Foundation
import Imagery

/// What fills a box around the image (``ImageRecipe/BoxFill``): a colour, the image's median colour
/// or a blurred copy of itself; and the blur the recipe's own ``ImageRecipe/blur`` uses too.
extension VipsImageProcessor {
    /// `image` at (x, y) of a larger canvas of `color` (`nil`: zeros, transparent where there is alpha).
    func embed(
        _ image: UnsafeMutablePointer<VipsImage>, x: Int, y: Int, width: Int, height: Int, in color: ImageRecipe.Color?
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var image = image
        var values: [Double]
        if let color {
            (image, values) = try Vips.preparing(image, for: color)
        } else {
            values = Array(repeating: 0, count: Int(vips_image_get_bands(image)))
        }
        return try Vips.apply(image) {
            imagery_vips_embed($0, $1, Int32(x), Int32(y), Int32(width), Int32(height), values, Int32(values.count))
        }
    }

    /// The median of each of `image`'s colour bands, as an opaque colour (grey for one band).
    func medianColor(of image: UnsafeMutablePointer<VipsImage>) throws -> ImageRecipe.Color {
        let colourBands = Int(vips_image_get_bands(image)) - (Vips.hasAlpha(image) ? 1 : 0)
        var medians: [UInt8] = []
        for band in 0..<max(1, min(3, colourBands)) {
            let channel = try Vips.apply(image, releasingInput: false) {
                imagery_vips_extract_bands($0, $1, Int32(band), 1)
            }
            defer { imagery_vips_unref(channel) }
            var threshold: Int32 = 0
            guard imagery_vips_percent(channel, 50, &threshold) == 0 else { throw VipsError(message: Vips.takeError()) }
            medians.append(UInt8(clamping: Vips.isHighBitDepth(image) ? (Int(threshold) + 128) / 257 : Int(threshold)))
        }
        if medians.count == 1 { medians += [medians[0], medians[0]] }
        return ImageRecipe.Color(red: medians[0], green: medians[1], blue: medians[2])
    }

    /// `image` laid at `canvas`' origin over a copy of itself blurred and stretched to the canvas
    /// (thumbor's `fill(blur)`: sigma 50 at the image's size, then resized).
    func onBlurredCopy(_ image: UnsafeMutablePointer<VipsImage>, _ canvas: ImageRecipe.Rect) throws
        -> UnsafeMutablePointer<VipsImage>
    {
        let base: UnsafeMutablePointer<VipsImage>
        do {
            var copy = try Vips.apply(image, releasingInput: false) { imagery_vips_copy_memory($0, $1) }
            copy = try blurred(copy, sigma: 50)
            base = try Vips.resized(copy, width: canvas.width, height: canvas.height)
        } catch {
            imagery_vips_unref(image)
            throw error
        }
        defer { imagery_vips_unref(image) }
        return try Vips.apply(base) { imagery_vips_composite_over($0, image, $1, Int32(canvas.x), Int32(canvas.y)) }
    }

    /// A Gaussian blur; with alpha, of premultiplied pixels (no dark fringes where transparent pixels meet opaque ones).
    func blurred(_ image: UnsafeMutablePointer<VipsImage>, sigma: Double) throws -> UnsafeMutablePointer<VipsImage> {
        guard Vips.hasAlpha(image) else { return try Vips.apply(image) { imagery_vips_gaussblur($0, $1, sigma) } }
        var image = try Vips.apply(image) { imagery_vips_premultiply($0, $1) }
        image = try Vips.apply(image) { imagery_vips_gaussblur($0, $1, sigma) }
        return try Vips.apply(image) { imagery_vips_unpremultiply($0, $1) }
    }
}
