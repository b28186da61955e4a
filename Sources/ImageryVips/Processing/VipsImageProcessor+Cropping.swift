import CVips
import Foundation
import Imagery

/// The parts of an image a recipe keeps: its trimmed rectangle, a smart crop, a plain crop.
extension VipsImageProcessor {
    /// The most interesting `width` × `height` part of `image` by `strategy`, or the part at `decided`
    /// (an earlier frame's choice), recording where it was. Consumes `image`.
    func smartCropped(
        _ image: UnsafeMutablePointer<VipsImage>, width: Int, height: Int,
        _ strategy: ImageRecipe.Gravity.SmartStrategy,
        decided: inout (x: Int, y: Int)?
    ) throws -> UnsafeMutablePointer<VipsImage> {
        if let decided {
            return try extract(image, ImageRecipe.Rect(x: decided.x, y: decided.y, width: width, height: height))
        }
        let cropped = try Vips.apply(image) {
            imagery_vips_smartcrop($0, $1, Int32(width), Int32(height), strategy.interesting)
        }
        var (x, y): (Int32, Int32) = (0, 0)
        imagery_vips_origin(cropped, &x, &y)
        decided = (Int(x), Int(y))
        return cropped
    }

    func extract(_ image: UnsafeMutablePointer<VipsImage>, _ rect: ImageRecipe.Rect) throws -> UnsafeMutablePointer<
        VipsImage
    > {
        try Vips.apply(image) {
            imagery_vips_extract($0, $1, Int32(rect.x), Int32(rect.y), Int32(rect.width), Int32(rect.height))
        }
    }

    /// The part of `image` that is not a border of `trim`'s colour (the top-left or bottom-right pixel's by default),
    /// in `image`'s pixels; `nil` when the whole image is that colour (nothing is trimmed then).
    func trimmedRect(of image: UnsafeMutablePointer<VipsImage>, _ trim: ImageRecipe.Trim) throws -> ImageRecipe.Rect? {
        if trim.measure == .euclidean { return try euclideanTrimmedRect(of: image, trim) }
        let bands = Int(vips_image_get_bands(image))
        var background: [Double]
        if let color = trim.color {
            background = Vips.values(of: color, bands: bands, for: image)
        } else {
            background = Array(repeating: 0, count: max(4, bands))
            let (x, y) =
                trim.fromBottomRight ? (vips_image_get_width(image) - 1, vips_image_get_height(image) - 1) : (0, 0)
            guard imagery_vips_getpoint(image, x, y, &background, Int32(background.count)) >= 0 else {
                throw VipsError(message: Vips.takeError())
            }
            background = Array(background.prefix(bands))
        }
        // With alpha, libvips flattens onto the background first: compare colours only.
        if Vips.hasAlpha(image) { background = Array(background.prefix(bands - 1)) }
        var (left, top, width, height): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        let threshold = Vips.isHighBitDepth(image) ? trim.threshold * 257 : trim.threshold  // in the samples' own scale
        guard
            imagery_vips_find_trim(image, &left, &top, &width, &height, threshold, background, Int32(background.count))
                == 0
        else {
            throw VipsError(message: Vips.takeError())
        }
        guard width > 0, height > 0 else { return nil }
        var rect = ImageRecipe.Rect(x: Int(left), y: Int(top), width: Int(width), height: Int(height))
        let (imageWidth, imageHeight) = (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
        if trim.equalHorizontal {  // both borders the smaller one
            let border = min(rect.x, imageWidth - rect.x - rect.width)
            (rect.x, rect.width) = (border, imageWidth - 2 * border)
        }
        if trim.equalVertical {
            let border = min(rect.y, imageHeight - rect.y - rect.height)
            (rect.y, rect.height) = (border, imageHeight - 2 * border)
        }
        return rect
    }
}

extension ImageRecipe.Gravity.SmartStrategy {
    var interesting: VipsInteresting {
        switch self {
        case .attention: VIPS_INTERESTING_ATTENTION
        case .entropy: VIPS_INTERESTING_ENTROPY
        }
    }
}
