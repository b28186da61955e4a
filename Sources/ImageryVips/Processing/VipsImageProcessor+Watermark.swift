import CVips
import Foundation
import Imagery

/// Watermarks laid over the output (``ImageRecipe/Watermark``): a configured or linked image, or a
/// line of text, sized, made translucent, placed by gravity or tiled, and composited.
extension VipsImageProcessor {
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
            guard let configured = watermarks[name] else {
                throw ImageProcessingError.invalidValue("there is no watermark \(name)")
            }
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
                watermark, outputWidth: outputWidth, outputHeight: outputHeight,
                colour: vips_image_get_bands(image) > 2,
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
            (overlay, origin) = (
                mark,
                watermark.origin(
                    width: markWidth, height: markHeight, outputWidth: outputWidth, outputHeight: outputHeight)
            )
        case .offset(let gravity):
            (overlay, origin) = (
                mark,
                gravity.position(in: outputWidth, outputHeight, of: markWidth, markHeight, dpr: dpr, overflow: true)
            )
        case .tiled(let spacingX, let spacingY):
            do {
                overlay = try tiled(
                    mark, spacing: (spacingX, spacingY), dpr: dpr, outputWidth: outputWidth, outputHeight: outputHeight)
            } catch {
                imagery_vips_unref(base)
                throw error
            }
            origin = (0, 0)
        case .pasted:
            preconditionFailure("pasted watermarks are laid by pasted(_:_:_:)")
        }
        defer { if overlay != mark { imagery_vips_unref(overlay) } }
        var result = try Vips.apply(base) {
            imagery_vips_composite_over($0, overlay, $1, Int32(origin.x), Int32(origin.y))
        }
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
        _ mark: UnsafeMutablePointer<VipsImage>, spacing: (x: Double, y: Double), dpr: Double, outputWidth: Int,
        outputHeight: Int
    ) throws -> UnsafeMutablePointer<VipsImage> {
        func space(_ value: Double, _ side: Int) -> Int {
            abs(value) >= 1 ? Int((value * dpr).rounded(.toNearestOrEven)) : ImageRecipe.scaleToEven(side, value)
        }
        let (spaceX, spaceY) = (max(0, space(spacing.x, outputWidth)), max(0, space(spacing.y, outputHeight)))
        let (tileWidth, tileHeight) = (
            Int(vips_image_get_width(mark)) + spaceX, Int(vips_image_get_height(mark)) + spaceY
        )
        var tile = try Vips.apply(mark, releasingInput: false) {
            imagery_vips_embed(
                $0, $1, Int32(spaceX / 2), Int32(spaceY / 2), Int32(tileWidth), Int32(tileHeight), [0, 0, 0, 0], 4)
        }
        func odd(_ count: Int) -> Int { count % 2 == 0 ? count + 1 : count }
        let across = odd((outputWidth + tileWidth - 1) / tileWidth)
        let down = odd((outputHeight + tileHeight - 1) / tileHeight)
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
            guard
                let drawn = imagery_vips_text_mark(
                    text.string, text.font, Double(c.red), Double(c.green), Double(c.blue), Double(c.alpha))
            else {
                throw VipsError(message: Vips.takeError())
            }
            mark = drawn
        } else {
            throw ImageProcessingError.invalidValue("a watermark has an image or a text")
        }
        let (width, height) = (Double(vips_image_get_width(mark)), Double(vips_image_get_height(mark)))
        let factor: Double
        if let fraction = watermark.fraction {  // imgproxy: fit in that part of each side, enlarged if need be
            let box = (
                max(1, ImageRecipe.scaleToEven(outputWidth, fraction)),
                max(1, ImageRecipe.scaleToEven(outputHeight, fraction))
            )
            factor = min(Double(box.0) / width, Double(box.1) / height)
        } else {
            factor =
                watermark.scale.map { $0 * Double(min(outputWidth, outputHeight)) / max(width, height) }
                ?? (watermark.placement == .edges
                    ? min(1, Double(outputWidth) / width, Double(outputHeight) / height) : 1)
        }
        let size = (max(1, Int((width * factor).rounded())), max(1, Int((height * factor).rounded())))
        if size != (Int(width), Int(height)) {
            mark = try Vips.apply(mark) {
                imagery_vips_thumbnail_image(
                    $0, $1, Int32(size.0), Int32(size.1), VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
            }
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
}
