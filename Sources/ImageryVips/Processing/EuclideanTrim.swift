import CVips
import Foundation
import Imagery

/// thumbor's trim (``ImageRecipe/Trim/Measure/euclidean``): the box outside which every pixel is within
/// `tolerance` of the reference corner's, by the Euclidean distance over all 8-bit channels (alpha
/// included), each row scanned as thumbor's engine scans it.
enum EuclideanTrim {
    /// The box, inclusive, in pixels: `left > right` or `top > bottom` when every pixel is border.
    /// - Parameters:
    ///   - pixels: `width` × `height` pixels of `bands` bytes each, rows packed.
    ///   - fromBottomRight: The reference is the bottom-right pixel (else the top-left one).
    static func box(
        _ pixels: UnsafeRawBufferPointer, width: Int, height: Int, bands: Int, fromBottomRight: Bool,
        tolerance: Double
    ) -> (left: Int, top: Int, right: Int, bottom: Int) {
        let bytes = pixels.bindMemory(to: UInt8.self)
        let reference = fromBottomRight ? ((height - 1) * width + width - 1) * bands : 0
        let limit = tolerance * tolerance  // compared squared: the same order as the distances
        func differs(_ x: Int, _ y: Int) -> Bool {
            let start = (y * width + x) * bands
            var sum = 0
            for band in 0..<bands {
                let difference = Int(bytes[start + band]) - Int(bytes[reference + band])
                sum += difference * difference
            }
            return Double(sum) > limit
        }
        var (left, top, right, bottom) = (width, height, 0, 0)
        for y in 0..<height {
            // From the left to the first pixel that differs (the row's last x when none does).
            var x = 0
            while x < width {
                if differs(x, y) {
                    left = min(left, x)
                    top = min(top, y)
                    bottom = y
                    break
                }
                x += 1
            }
            // From the right down to past the larger of that x and the right edge so far.
            var xi = width - 1
            while xi > max(x, right) {
                if differs(xi, y) {
                    right = max(right, xi)
                    break
                }
                xi -= 1
            }
        }
        return (left, top, right, bottom)
    }
}

extension VipsImageProcessor {
    /// ``EuclideanTrim``'s rectangle of `image` (as 8-bit sRGB, with its alpha); `nil` when nothing would be left
    /// (thumbor then ignores the trim).
    func euclideanTrimmedRect(of image: UnsafeMutablePointer<VipsImage>, _ trim: ImageRecipe.Trim) throws
        -> ImageRecipe.Rect?
    {
        var prepared = try Vips.apply(image, releasingInput: false) {
            imagery_vips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB)
        }
        prepared = try Vips.apply(prepared) { imagery_vips_cast_uchar($0, $1) }
        defer { imagery_vips_unref(prepared) }
        var length = 0
        guard let pixels = imagery_vips_render_here(prepared, &length) else {
            throw VipsError(message: Vips.takeError())
        }
        defer { imagery_vips_free(pixels) }
        let (width, height) = (Int(vips_image_get_width(prepared)), Int(vips_image_get_height(prepared)))
        let box = EuclideanTrim.box(
            UnsafeRawBufferPointer(start: pixels, count: length), width: width, height: height,
            bands: Int(vips_image_get_bands(prepared)), fromBottomRight: trim.fromBottomRight,
            tolerance: trim.threshold)
        guard box.right >= box.left, box.bottom >= box.top else { return nil }
        return ImageRecipe.Rect(
            x: box.left, y: box.top, width: box.right - box.left + 1, height: box.bottom - box.top + 1)
    }
}
