import CVips
import Foundation
import Imagery

/// `ImageProcessing` on libvips: an `ImageRecipe`'s operations on a decoded source, chained
/// lazily and rendered in one pass of pixels.
///
/// Geometry follows the recipe's `ImageRecipe/Layout`, worked out in the source's own pixels and
/// mapped onto the decoded image's scale, so a source decoded at 1/8 and one decoded at full size
/// give the same sizes and positions. Only trim and smart gravity look at the pixels (libvips'
/// `find_trim` and `smartcrop`).
public struct VipsImageProcessor: ImageProcessing {
    /// The largest output width or height; default 16 384.
    public var maximumSide: Int
    /// Watermark images by name (encoded: PNG with alpha, usually), for recipes'
    /// `ImageRecipe/watermark`; default none (a recipe naming another is an error).
    public var watermarks: [String: Data]

    /// - Parameters:
    ///   - maximumSide: The largest output width or height; default 16 384.
    ///   - watermarks: Watermark images by name; default none.
    public init(maximumSide: Int = 16_384, watermarks: [String: Data] = [:]) {
        self.maximumSide = maximumSide
        self.watermarks = watermarks
    }

    public func process(_ decoded: ThumbnailBase, recipe: ImageRecipe) throws -> Image {
        var source = decoded.image
        if let frame = recipe.frame {
            guard (0..<source.frameCount).contains(frame) else {
                throw ImageProcessingError.invalidValue(
                    "frame \(frame) is not in the image: it has \(source.frameCount) frame(s)")
            }
            source = source.frame(frame)
        }
        do {
            try Vips.start()
            return try source.pixels.withUnsafeBytes { buffer in
                var image = try Vips.wrap(source, buffer)
                let (keepsProfile, keepsDepth) = (recipe.keepsColorProfile, recipe.keepsHighBitDepth)
                if source.metadata.iccProfile != nil || source.pixelFormat.isHighBitDepth {
                    // to sRGB first, unless the recipe keeps the profile; to 8 bits unless it keeps 16
                    image = try Vips.normalize(image, keepingProfile: keepsProfile, keepingHighBitDepth: keepsDepth)
                }
                image = try apply(
                    recipe, to: image, sourceWidth: decoded.sourceWidth, sourceHeight: decoded.sourceHeight)
                image = try Vips.normalize(image, keepingProfile: keepsProfile, keepingHighBitDepth: keepsDepth)
                // rendered while `buffer` is valid
                var result = try Vips.makeImage(consuming: image, format: source.sourceFormat)
                result.metadata.copyright = recipe.keptMetadata == .none ? nil : source.metadata.copyright
                if recipe.keptMetadata == .all {
                    (result.metadata.exif, result.metadata.xmp, result.metadata.iptc) = (
                        source.metadata.exif, source.metadata.xmp, source.metadata.iptc
                    )
                }
                return result
            }
        } catch let error as VipsError {
            throw ImageProcessingError.failed(error.message)
        }
    }

    /// `recipe` applied to `input`, the oriented source (`sourceWidth` × `sourceHeight`) at `input`'s
    /// size; to each frame of an animation (``ImageRecipe/frame`` is the decoder's: `input` holds the
    /// frames it took). Consumes `input` (released on failure too).
    /// - Throws: ``ImageProcessingError`` when the recipe does not fit the image, ``VipsError`` when libvips fails.
    func apply(
        _ recipe: ImageRecipe, to input: UnsafeMutablePointer<VipsImage>, sourceWidth: Int, sourceHeight: Int
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var recipe = recipe
        recipe.frame = nil
        recipe.keepsHighBitDepth = false  // the depth is the image's (normalised before and after)
        recipe.keepsPartialDecodeBlocks = false  // the decoder's: the image's size says what it kept
        guard !recipe.isIdentity else { return input }
        var choices = PixelChoices()
        guard let animation = Vips.animation(of: input) else {
            return try apply(recipe, to: input, sourceWidth: sourceWidth, sourceHeight: sourceHeight, choices: &choices)
        }
        // Each frame through the same recipe, the pixel-dependent choices (trim, smart gravity) made
        // on the first and kept for the others (so the crop does not jump from frame to frame).
        let frames = Vips.frameCount(of: input)
        let (width, height) = (Int(vips_image_get_width(input)), Int(vips_image_get_height(input)) / frames)
        if recipe.isResizeOnly,
            let layout = try? recipe.layout(
                sourceWidth: sourceWidth, sourceHeight: sourceHeight, maximumSide: maximumSide),
            layout.coverCrop == nil, layout.canvas == nil, (layout.scaledWidth, layout.scaledHeight) == (width, height)
        {
            return input  // decoded at the size the recipe gives: nothing left to do to any frame
        }
        let strip = try Vips.apply(input) { imagery_vips_copy_memory($0, $1) }  // read once per frame, out of order
        defer { imagery_vips_unref(strip) }
        let (stripWidth, frameHeight) = (Int32(width), Int32(height))
        var processed: [UnsafeMutablePointer<VipsImage>] = []
        do {
            for index in 0..<frames {
                let frame = try Vips.apply(strip, releasingInput: false) {
                    imagery_vips_extract($0, $1, 0, Int32(index) * frameHeight, stripWidth, frameHeight)
                }
                processed.append(
                    try apply(
                        recipe, to: frame, sourceWidth: sourceWidth, sourceHeight: sourceHeight, choices: &choices))
            }
        } catch {
            processed.forEach { imagery_vips_unref($0) }
            throw error
        }
        return try Vips.stack(processed, animation: animation)
    }

    /// What a recipe decided by looking at the pixels of an animation's first frame, for the others.
    struct PixelChoices {
        /// The trimmed rectangle in source pixels (`.some(nil)`: nothing to trim); `nil`: not decided yet.
        var trimmed: ImageRecipe.Rect??
        /// Where smart gravity placed the crop of a region, and the cover crop, in the image it cropped.
        var smartRegion: (x: Int, y: Int)?
        var smartCover: (x: Int, y: Int)?
    }

    /// `recipe` applied to one frame: ``apply(_:to:sourceWidth:sourceHeight:)``, reusing and recording `choices`.
    private func apply(
        _ recipe: ImageRecipe, to input: UnsafeMutablePointer<VipsImage>, sourceWidth: Int, sourceHeight: Int,
        choices: inout PixelChoices
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var image = input
        // Source pixels to the decoded image's pixels, per side.
        let scaleX = Double(vips_image_get_width(image)) / Double(sourceWidth)
        let scaleY = Double(vips_image_get_height(image)) / Double(sourceHeight)
        func mapped(_ rect: ImageRecipe.Rect) -> ImageRecipe.Rect {
            let (width, height) = (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
            let x = min(width - 1, Int(Double(rect.x) * scaleX))
            let y = min(height - 1, Int(Double(rect.y) * scaleY))
            return ImageRecipe.Rect(
                x: x, y: y,
                width: max(1, min(width - x, Int((Double(rect.width) * scaleX).rounded()))),
                height: max(1, min(height - y, Int((Double(rect.height) * scaleY).rounded())))
            )
        }

        // What may fail before any operation is chained (after that, each operation consumes its input).
        let trimmed: ImageRecipe.Rect?
        let layout: ImageRecipe.Layout
        do {
            if let sigma = recipe.blur, !(0.3...100).contains(sigma) {
                throw ImageProcessingError.invalidValue("blur must be from 0.3 to 100")
            }
            if let sigma = recipe.sharpen, !(0.3...10).contains(sigma) {
                throw ImageProcessingError.invalidValue("sharpen must be from 0.3 to 10")
            }
            if let problem = recipe.watermark.flatMap(problem(of:)) { throw ImageProcessingError.invalidValue(problem) }
            if let decided = choices.trimmed {
                trimmed = decided
            } else {
                trimmed = try recipe.trim.flatMap { try trimmedRect(of: image, $0) }.map { rect in
                    ImageRecipe.Rect(  // back to source pixels (a trimmed source is decoded at full size: the same)
                        x: Int(Double(rect.x) / scaleX), y: Int(Double(rect.y) / scaleY),
                        width: Int((Double(rect.width) / scaleX).rounded()),
                        height: Int((Double(rect.height) / scaleY).rounded())
                    )
                }
                choices.trimmed = .some(trimmed)
            }
            layout = try recipe.layout(
                sourceWidth: sourceWidth, sourceHeight: sourceHeight, trimmed: trimmed, maximumSide: maximumSide)
        } catch {
            imagery_vips_unref(image)
            throw error
        }

        // Trim and crop.
        let whole = ImageRecipe.Rect(x: 0, y: 0, width: sourceWidth, height: sourceHeight)
        if let strategy = layout.smartRegion {
            if let trimmed { image = try extract(image, mapped(trimmed)) }
            let size = mapped(layout.region)
            image = try smartCropped(
                image, width: size.width, height: size.height, strategy, decided: &choices.smartRegion)
        } else if layout.region != whole {
            image = try extract(image, mapped(layout.region))
        }

        // Rotation and mirrors.
        switch recipe.rotation {
        case .none: break
        case .quarter: image = try Vips.apply(image) { imagery_vips_rot($0, $1, VIPS_ANGLE_D90) }
        case .half: image = try Vips.apply(image) { imagery_vips_rot($0, $1, VIPS_ANGLE_D180) }
        case .threeQuarters: image = try Vips.apply(image) { imagery_vips_rot($0, $1, VIPS_ANGLE_D270) }
        }
        if recipe.flip { image = try Vips.apply(image) { imagery_vips_flip($0, $1, VIPS_DIRECTION_VERTICAL) } }
        if recipe.flop { image = try Vips.apply(image) { imagery_vips_flip($0, $1, VIPS_DIRECTION_HORIZONTAL) } }

        // Resize, then the cover crop, then the box of contain or extend.
        if (Int(vips_image_get_width(image)), Int(vips_image_get_height(image))) != (
            layout.scaledWidth, layout.scaledHeight
        ) {
            image = try Vips.resized(
                image, width: layout.scaledWidth, height: layout.scaledHeight, linear: recipe.resizesInLinearLight)
        }
        if let crop = layout.coverCrop {
            if let strategy = layout.smartCover {
                image = try smartCropped(
                    image, width: crop.width, height: crop.height, strategy, decided: &choices.smartCover)
            } else if (crop.width, crop.height) != (layout.scaledWidth, layout.scaledHeight) {
                image = try extract(image, crop)
            }
        }
        if let size = recipe.pixelate {
            let side = min(size, max(Int(vips_image_get_width(image)), Int(vips_image_get_height(image))))
            if side > 1 { image = try Vips.apply(image) { imagery_vips_pixelate($0, $1, Int32(side)) } }
        }
        if let canvas = layout.canvas,
            (canvas.width, canvas.height) != (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
        {
            switch recipe.boxFill {
            case .background:
                image = try embed(
                    image, x: canvas.x, y: canvas.y, width: canvas.width, height: canvas.height, in: recipe.background)
            case .median:
                // Read twice (the median, then the embed): in memory first, as a sequentially read
                // source (a PNG) cannot be read again from its start.
                image = try Vips.apply(image) { imagery_vips_copy_memory($0, $1) }
                let color: ImageRecipe.Color
                do { color = try medianColor(of: image) } catch {
                    imagery_vips_unref(image)
                    throw error
                }
                image = try embed(
                    image, x: canvas.x, y: canvas.y, width: canvas.width, height: canvas.height, in: color)
            case .blur:
                image = try onBlurredCopy(image, canvas)
            }
        }
        if let padding = layout.padding {
            let (width, height) = (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
            image = try embed(
                image, x: padding.left, y: padding.top,
                width: width + padding.left + padding.right, height: height + padding.top + padding.bottom,
                in: recipe.background
            )
        }

        // Pixels.
        if let sigma = recipe.blur { image = try blurred(image, sigma: sigma) }
        if let sigma = recipe.sharpen { image = try Vips.apply(image) { imagery_vips_sharpen($0, $1, sigma) } }
        if recipe.grayscale {
            let grey = Vips.greyInterpretation(for: image)
            image = try Vips.apply(image) { imagery_vips_colourspace($0, $1, grey) }
        }
        if !recipe.adjustments.isEmpty { image = try adjusted(image, recipe.adjustments) }
        if let background = recipe.background, background.alpha == 255, Vips.hasAlpha(image) {
            (image, _) = try Vips.preparing(image, for: background)
            let values = Vips.values(of: background, bands: Int(vips_image_get_bands(image)) - 1, for: image)
            image = try Vips.apply(image) { imagery_vips_flatten_onto($0, $1, values, Int32(values.count)) }
        }
        if let watermark = recipe.watermark { image = try watermarked(image, watermark, dpr: layout.dprScale) }
        return image
    }
}
