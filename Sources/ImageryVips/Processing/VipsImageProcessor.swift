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
                throw ImageProcessingError.invalidValue("frame \(frame) is not in the image: it has \(source.frameCount) frame(s)")
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
                image = try apply(recipe, to: image, sourceWidth: decoded.sourceWidth, sourceHeight: decoded.sourceHeight)
                image = try Vips.normalize(image, keepingProfile: keepsProfile, keepingHighBitDepth: keepsDepth)
                var result = try Vips.makeImage(consuming: image, format: source.sourceFormat)  // rendered while `buffer` is valid
                result.metadata.copyright = recipe.keptMetadata == .none ? nil : source.metadata.copyright
                if recipe.keptMetadata == .all {
                    (result.metadata.exif, result.metadata.xmp, result.metadata.iptc) = (source.metadata.exif, source.metadata.xmp, source.metadata.iptc)
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
        if recipe.isResizeOnly, let layout = try? recipe.layout(sourceWidth: sourceWidth, sourceHeight: sourceHeight, maximumSide: maximumSide),
           layout.coverCrop == nil, layout.canvas == nil, (layout.scaledWidth, layout.scaledHeight) == (width, height) {
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
                processed.append(try apply(recipe, to: frame, sourceWidth: sourceWidth, sourceHeight: sourceHeight, choices: &choices))
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
        _ recipe: ImageRecipe, to input: UnsafeMutablePointer<VipsImage>, sourceWidth: Int, sourceHeight: Int, choices: inout PixelChoices
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
                        width: Int((Double(rect.width) / scaleX).rounded()), height: Int((Double(rect.height) / scaleY).rounded())
                    )
                }
                choices.trimmed = .some(trimmed)
            }
            layout = try recipe.layout(sourceWidth: sourceWidth, sourceHeight: sourceHeight, trimmed: trimmed, maximumSide: maximumSide)
        } catch {
            imagery_vips_unref(image)
            throw error
        }

        // Trim and crop.
        let whole = ImageRecipe.Rect(x: 0, y: 0, width: sourceWidth, height: sourceHeight)
        if let strategy = layout.smartRegion {
            if let trimmed { image = try extract(image, mapped(trimmed)) }
            let size = mapped(layout.region)
            image = try smartCropped(image, width: size.width, height: size.height, strategy, decided: &choices.smartRegion)
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
        if (Int(vips_image_get_width(image)), Int(vips_image_get_height(image))) != (layout.scaledWidth, layout.scaledHeight) {
            image = try Vips.resized(image, width: layout.scaledWidth, height: layout.scaledHeight, linear: recipe.resizesInLinearLight)
        }
        if let crop = layout.coverCrop {
            if let strategy = layout.smartCover {
                image = try smartCropped(image, width: crop.width, height: crop.height, strategy, decided: &choices.smartCover)
            } else if (crop.width, crop.height) != (layout.scaledWidth, layout.scaledHeight) {
                image = try extract(image, crop)
            }
        }
        if let size = recipe.pixelate {
            let side = min(size, max(Int(vips_image_get_width(image)), Int(vips_image_get_height(image))))
            if side > 1 { image = try Vips.apply(image) { imagery_vips_pixelate($0, $1, Int32(side)) } }
        }
        if let canvas = layout.canvas, (canvas.width, canvas.height) != (Int(vips_image_get_width(image)), Int(vips_image_get_height(image))) {
            switch recipe.boxFill {
            case .background:
                image = try embed(image, x: canvas.x, y: canvas.y, width: canvas.width, height: canvas.height, in: recipe.background)
            case .median:
                let color: ImageRecipe.Color
                do { color = try medianColor(of: image) } catch { imagery_vips_unref(image); throw error }
                image = try embed(image, x: canvas.x, y: canvas.y, width: canvas.width, height: canvas.height, in: color)
            case .blur:
                image = try onBlurredCopy(image, canvas)
            }
        }
        if let padding = layout.padding {
            let (width, height) = (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
            image = try embed(
                image, x: padding.left, y: padding.top,
                width: width + padding.left + padding.right, height: height + padding.top + padding.bottom, in: recipe.background
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

    /// Why `watermark` cannot be laid over an image here, or `nil` when it can.
    func problem(of watermark: ImageRecipe.Watermark) -> String? {
        switch watermark.mark {
        case .image(let name):
            guard watermarks[name] != nil else { return "there is no watermark \(name)" }
        case .text(let text):
            if let problem = text.problem { return problem }
        case .linked(.source(let url)):
            return "the watermark image at \(url.absoluteString) was not loaded"
        case .linked(.encoded):
            break
        }
        guard (0...1).contains(watermark.opacity), watermark.scale.map({ $0 > 0 && $0 <= 1 }) ?? true else {
            return "a watermark's opacity is from 0 to 1 and its scale above 0 and at most 1"
        }
        return nil
    }

    /// The watermark image of `mark` (a configured one, or one loaded for the request), opened;
    /// `nil` for text.
    func opened(_ mark: ImageRecipe.Watermark.Mark) throws -> UnsafeMutablePointer<VipsImage>? {
        let data: Data
        switch mark {
        case .image(let name):
            guard let configured = watermarks[name] else { throw ImageProcessingError.invalidValue("there is no watermark \(name)") }
            data = configured
        case .linked(.encoded(let image)):
            data = image.data
        case .linked(.source(let url)):
            throw ImageProcessingError.invalidValue("the watermark image at \(url.absoluteString) was not loaded")
        case .text:
            return nil
        }
        guard let opened = data.withUnsafeBytes({ imagery_vips_load_trusted($0.baseAddress, $0.count) }) else {
            throw VipsError(message: Vips.takeError())
        }
        return try Vips.normalize(opened)
    }

    /// `watermark` laid over `image`: drawn or decoded, sized, made translucent, placed, composited.
    /// Consumes `image` (released on failure too).
    func watermarked(
        _ image: UnsafeMutablePointer<VipsImage>, _ watermark: ImageRecipe.Watermark, dpr: Double
    ) throws -> UnsafeMutablePointer<VipsImage> {
        if case .pasted(let paste) = watermark.placement { return try pasted(image, watermark.mark, paste) }
        let (outputWidth, outputHeight) = (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
        let mark: UnsafeMutablePointer<VipsImage>
        do {
            mark = try prepared(
                watermark, outputWidth: outputWidth, outputHeight: outputHeight, colour: vips_image_get_bands(image) > 2,
                deep: Vips.isHighBitDepth(image)
            )
        } catch {
            imagery_vips_unref(image)
            throw error
        }
        defer { imagery_vips_unref(mark) }
        var base = image
        let opaqueBase = !Vips.hasAlpha(base)
        if vips_image_get_bands(mark) > 2, vips_image_get_bands(base) <= 2 {  // a colour mark on a grey image
            let colour = Vips.colourInterpretation(for: base)
            base = try Vips.apply(base) { imagery_vips_colourspace($0, $1, colour) }
        }
        let (markWidth, markHeight) = (Int(vips_image_get_width(mark)), Int(vips_image_get_height(mark)))
        let overlay: UnsafeMutablePointer<VipsImage>
        let origin: (x: Int, y: Int)
        switch watermark.placement {
        case .edges:
            (overlay, origin) = (mark, watermark.origin(width: markWidth, height: markHeight, outputWidth: outputWidth, outputHeight: outputHeight))
        case .offset(let gravity):
            (overlay, origin) = (mark, gravity.position(in: outputWidth, outputHeight, of: markWidth, markHeight, dpr: dpr, overflow: true))
        case .tiled(let spacingX, let spacingY):
            do {
                overlay = try tiled(mark, spacing: (spacingX, spacingY), dpr: dpr, outputWidth: outputWidth, outputHeight: outputHeight)
            } catch {
                imagery_vips_unref(base)
                throw error
            }
            origin = (0, 0)
        case .pasted:
            preconditionFailure("pasted watermarks are laid by pasted(_:_:_:)")
        }
        defer { if overlay != mark { imagery_vips_unref(overlay) } }
        var result = try Vips.apply(base) { imagery_vips_composite_over($0, overlay, $1, Int32(origin.x), Int32(origin.y)) }
        if opaqueBase {  // the result is opaque: drop the alpha band compositing added
            let bands = vips_image_get_bands(result) - 1
            result = try Vips.apply(result) { imagery_vips_extract_bands($0, $1, 0, bands) }
        }
        return result
    }

    /// `mark` repeated over an `outputWidth` × `outputHeight` output as imgproxy replicates it: each copy
    /// with the spacing around it (half before, half after), an odd number of copies each way so that
    /// one is centred, cut to the output. Leaves `mark` as it is.
    private func tiled(
        _ mark: UnsafeMutablePointer<VipsImage>, spacing: (x: Double, y: Double), dpr: Double, outputWidth: Int, outputHeight: Int
    ) throws -> UnsafeMutablePointer<VipsImage> {
        func space(_ value: Double, _ side: Int) -> Int {
            abs(value) >= 1 ? Int((value * dpr).rounded(.toNearestOrEven)) : ImageRecipe.scaleToEven(side, value)
        }
        let (spaceX, spaceY) = (max(0, space(spacing.x, outputWidth)), max(0, space(spacing.y, outputHeight)))
        let (tileWidth, tileHeight) = (Int(vips_image_get_width(mark)) + spaceX, Int(vips_image_get_height(mark)) + spaceY)
        var tile = try Vips.apply(mark, releasingInput: false) {
            imagery_vips_embed($0, $1, Int32(spaceX / 2), Int32(spaceY / 2), Int32(tileWidth), Int32(tileHeight), [0, 0, 0, 0], 4)
        }
        func odd(_ count: Int) -> Int { count % 2 == 0 ? count + 1 : count }
        let across = odd((outputWidth + tileWidth - 1) / tileWidth), down = odd((outputHeight + tileHeight - 1) / tileHeight)
        tile = try Vips.apply(tile) { imagery_vips_replicate($0, $1, Int32(across), Int32(down)) }
        let (x, y) = ((across * tileWidth - outputWidth) / 2, (down * tileHeight - outputHeight) / 2)
        return try extract(tile, ImageRecipe.Rect(x: x, y: y, width: outputWidth, height: outputHeight))
    }

    /// The watermark image decoded or its text drawn, sized for the output (its longer side a fraction
    /// of the output's shorter side, or its own size within the output), with alpha scaled by the
    /// opacity, in colour when the output is, with 16-bit samples when it has them (`deep`).
    private func prepared(
        _ watermark: ImageRecipe.Watermark, outputWidth: Int, outputHeight: Int, colour: Bool, deep: Bool
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var mark: UnsafeMutablePointer<VipsImage>
        if let image = try opened(watermark.mark) {
            mark = image
        } else if case .text(let text) = watermark.mark {
            let c = text.color
            guard let drawn = imagery_vips_text_mark(text.string, text.font, Double(c.red), Double(c.green), Double(c.blue), Double(c.alpha)) else {
                throw VipsError(message: Vips.takeError())
            }
            mark = drawn
        } else {
            throw ImageProcessingError.invalidValue("a watermark has an image or a text")
        }
        let (width, height) = (Double(vips_image_get_width(mark)), Double(vips_image_get_height(mark)))
        let factor: Double
        if let fraction = watermark.fraction {  // imgproxy: fit in that part of each side, enlarged if need be
            let box = (max(1, ImageRecipe.scaleToEven(outputWidth, fraction)), max(1, ImageRecipe.scaleToEven(outputHeight, fraction)))
            factor = min(Double(box.0) / width, Double(box.1) / height)
        } else {
            factor = watermark.scale.map { $0 * Double(min(outputWidth, outputHeight)) / max(width, height) }
                ?? (watermark.placement == .edges ? min(1, Double(outputWidth) / width, Double(outputHeight) / height) : 1)
        }
        let size = (max(1, Int((width * factor).rounded())), max(1, Int((height * factor).rounded())))
        if size != (Int(width), Int(height)) {
            mark = try Vips.apply(mark) { imagery_vips_thumbnail_image($0, $1, Int32(size.0), Int32(size.1), VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE) }
        }
        if colour, vips_image_get_bands(mark) <= 2 {
            mark = try Vips.apply(mark) { imagery_vips_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
        }
        if !Vips.hasAlpha(mark) { mark = try Vips.apply(mark) { imagery_vips_add_alpha($0, $1) } }
        if deep {  // the output's depth (alpha scaled with the colours)
            let space = vips_image_get_bands(mark) > 2 ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_GREY16
            mark = try Vips.apply(mark) { imagery_vips_colourspace($0, $1, space) }
        }
        guard watermark.opacity < 1 else { return mark }
        // Opacity scales the alpha band.
        let bands = vips_image_get_bands(mark)
        let alpha: UnsafeMutablePointer<VipsImage>
        do {
            let band = try Vips.apply(mark, releasingInput: false) { imagery_vips_extract_bands($0, $1, bands - 1, 1) }
            alpha = try Vips.apply(band) { imagery_vips_linear1($0, $1, watermark.opacity, 0, deep ? 1 : 0) }
        } catch {
            imagery_vips_unref(mark)
            throw error
        }
        defer { imagery_vips_unref(alpha) }
        let colourBands = try Vips.apply(mark) { imagery_vips_extract_bands($0, $1, 0, bands - 1) }
        return try Vips.apply(colourBands) { imagery_vips_bandjoin2($0, alpha, $1) }
    }

    /// The most interesting `width` × `height` part of `image` by `strategy`, or the part at `decided`
    /// (an earlier frame's choice), recording where it was. Consumes `image`.
    private func smartCropped(
        _ image: UnsafeMutablePointer<VipsImage>, width: Int, height: Int, _ strategy: ImageRecipe.Gravity.SmartStrategy,
        decided: inout (x: Int, y: Int)?
    ) throws -> UnsafeMutablePointer<VipsImage> {
        if let decided { return try extract(image, ImageRecipe.Rect(x: decided.x, y: decided.y, width: width, height: height)) }
        let cropped = try Vips.apply(image) { imagery_vips_smartcrop($0, $1, Int32(width), Int32(height), strategy.interesting) }
        var (x, y): (Int32, Int32) = (0, 0)
        imagery_vips_origin(cropped, &x, &y)
        decided = (Int(x), Int(y))
        return cropped
    }

    private func extract(_ image: UnsafeMutablePointer<VipsImage>, _ rect: ImageRecipe.Rect) throws -> UnsafeMutablePointer<VipsImage> {
        try Vips.apply(image) { imagery_vips_extract($0, $1, Int32(rect.x), Int32(rect.y), Int32(rect.width), Int32(rect.height)) }
    }

    /// `image` at (x, y) of a larger canvas of `color` (`nil`: zeros, transparent where there is alpha).
    private func embed(
        _ image: UnsafeMutablePointer<VipsImage>, x: Int, y: Int, width: Int, height: Int, in color: ImageRecipe.Color?
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var image = image
        var values: [Double]
        if let color {
            (image, values) = try Vips.preparing(image, for: color)
        } else {
            values = Array(repeating: 0, count: Int(vips_image_get_bands(image)))
        }
        return try Vips.apply(image) { imagery_vips_embed($0, $1, Int32(x), Int32(y), Int32(width), Int32(height), values, Int32(values.count)) }
    }

    /// A Gaussian blur; with alpha, of premultiplied pixels (no dark fringes where transparent pixels meet opaque ones).
    /// The median of each of `image`'s colour bands, as an opaque colour (grey for one band).
    private func medianColor(of image: UnsafeMutablePointer<VipsImage>) throws -> ImageRecipe.Color {
        let colourBands = Int(vips_image_get_bands(image)) - (Vips.hasAlpha(image) ? 1 : 0)
        var medians: [UInt8] = []
        for band in 0..<max(1, min(3, colourBands)) {
            let channel = try Vips.apply(image, releasingInput: false) { imagery_vips_extract_bands($0, $1, Int32(band), 1) }
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
    private func onBlurredCopy(_ image: UnsafeMutablePointer<VipsImage>, _ canvas: ImageRecipe.Rect) throws -> UnsafeMutablePointer<VipsImage> {
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

    private func blurred(_ image: UnsafeMutablePointer<VipsImage>, sigma: Double) throws -> UnsafeMutablePointer<VipsImage> {
        guard Vips.hasAlpha(image) else { return try Vips.apply(image) { imagery_vips_gaussblur($0, $1, sigma) } }
        var image = try Vips.apply(image) { imagery_vips_premultiply($0, $1) }
        image = try Vips.apply(image) { imagery_vips_gaussblur($0, $1, sigma) }
        return try Vips.apply(image) { imagery_vips_unpremultiply($0, $1) }
    }

    /// The part of `image` that is not a border of `trim`'s colour (the top-left or bottom-right pixel's by default),
    /// in `image`'s pixels; `nil` when the whole image is that colour (nothing is trimmed then).
    private func trimmedRect(of image: UnsafeMutablePointer<VipsImage>, _ trim: ImageRecipe.Trim) throws -> ImageRecipe.Rect? {
        let bands = Int(vips_image_get_bands(image))
        var background: [Double]
        if let color = trim.color {
            background = Vips.values(of: color, bands: bands, for: image)
        } else {
            background = Array(repeating: 0, count: max(4, bands))
            let (x, y) = trim.fromBottomRight ? (vips_image_get_width(image) - 1, vips_image_get_height(image) - 1) : (0, 0)
            guard imagery_vips_getpoint(image, x, y, &background, Int32(background.count)) >= 0 else {
                throw VipsError(message: Vips.takeError())
            }
            background = Array(background.prefix(bands))
        }
        // With alpha, libvips flattens onto the background first: compare colours only.
        if Vips.hasAlpha(image) { background = Array(background.prefix(bands - 1)) }
        var (left, top, width, height): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        let threshold = Vips.isHighBitDepth(image) ? trim.threshold * 257 : trim.threshold  // in the samples' own scale
        guard imagery_vips_find_trim(image, &left, &top, &width, &height, threshold, background, Int32(background.count)) == 0 else {
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
