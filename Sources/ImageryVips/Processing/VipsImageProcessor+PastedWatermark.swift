import CVips
import Foundation
import Imagery

/// thumbor's watermarks (``ImageRecipe/Watermark/Placement/pasted(_:)``): the mark prepared once per
/// image, size and transparency, and blended into the rendered image in place.
extension VipsImageProcessor {
    /// `mark` pasted on `image` as thumbor pastes a watermark (``ImageRecipe/Watermark/Paste``): sized by
    /// the ratios, its alpha less the transparency, each copy composited "over" (thumbor's
    /// `_composite`: the same arithmetic), 8-bit sRGB. Consumes `image`.
    func pasted(
        _ image: UnsafeMutablePointer<VipsImage>, _ mark: ImageRecipe.Watermark.Mark,
        _ paste: ImageRecipe.Watermark.Paste
    ) throws -> UnsafeMutablePointer<VipsImage> {
        let base = try eightBitColour(image)
        let (width, height) = (Int(vips_image_get_width(base)), Int(vips_image_get_height(base)))
        let overlay: Image
        do {
            overlay = try pastedMark(mark, paste, outputWidth: width, outputHeight: height)
        } catch {
            imagery_vips_unref(base)
            throw error
        }
        let origins = paste.origins(
            width: overlay.width, height: overlay.height, outputWidth: width, outputHeight: height
        )
        .filter { $0.x < width && $0.y < height && $0.x + overlay.width > 0 && $0.y + overlay.height > 0 }
        guard !origins.isEmpty else { return base }
        return try blended(base, origins.map { (overlay, $0.x, $0.y) }, removingAlpha: false)
    }

    /// RGBA `overlays` laid over `image` at their places, each on the pixels under it only (the image
    /// rendered once, then changed in place: no libvips operation per overlay), or with
    /// `removingAlpha`, the image's alpha lowered where they are opaque. Consumes `image`.
    func blended(
        _ image: UnsafeMutablePointer<VipsImage>, _ overlays: [(image: Image, x: Int, y: Int)], removingAlpha: Bool
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var image = try Vips.apply(image) { imagery_vips_cast_uchar($0, $1) }
        image = try Vips.apply(image) { imagery_vips_render_copy($0, $1) }
        for overlay in overlays where overlay.image.pixelFormat == .rgba8 {
            overlay.image.pixels.withUnsafeBytes { buffer in
                guard let pixels = buffer.bindMemory(to: UInt8.self).baseAddress else { return }
                imagery_blend_in_place(
                    image, pixels, Int32(overlay.image.width), Int32(overlay.image.height), Int32(overlay.x),
                    Int32(overlay.y), removingAlpha ? 1 : 0
                )
            }
        }
        return image
    }

    /// A watermark made ready to paste (decoded, 8-bit sRGB with alpha, sized, its transparency taken
    /// off its alpha), from ``preparedMarks``: made once per image, size and transparency.
    private func pastedMark(
        _ mark: ImageRecipe.Watermark.Mark, _ paste: ImageRecipe.Watermark.Paste, outputWidth: Int, outputHeight: Int
    ) throws -> Image {
        let name: String
        switch mark {
        case .image(let configured): name = "configured:" + configured
        case .linked(.encoded(let image)): name = "linked:" + image.id
        default: throw ImageProcessingError.invalidValue("thumbor watermarks are images")
        }
        let natural = name + "|natural"
        var source = Self.preparedMarks.withLock { $0[natural] }
        if source == nil {
            guard let opened = try opened(mark) else {
                throw ImageProcessingError.invalidValue("thumbor watermarks are images")
            }
            var rgba = try eightBitColour(opened)
            if !Vips.hasAlpha(rgba) { rgba = try Vips.apply(rgba) { imagery_vips_add_alpha($0, $1) } }
            let pixels = try Vips.makeImage(consuming: rgba, format: .png)
            Self.remember(natural, pixels)
            source = pixels
        }
        guard let source else { throw ImageProcessingError.invalidValue("thumbor watermarks are images") }
        let size = paste.size(
            width: source.width, height: source.height, outputWidth: outputWidth, outputHeight: outputHeight)
        let key = name + "|\(size.width)x\(size.height)|\(paste.transparency)"
        if let prepared = Self.preparedMarks.withLock({ $0[key] }) { return prepared }
        var overlay = try Self.wrapped(source)
        if size.width != source.width || size.height != source.height {
            overlay = try Vips.resized(overlay, width: size.width, height: size.height)
        }
        if paste.transparency > 0 {  // thumbor's _alpha: alpha less 255 × transparency / 100, at least 0
            let delta = -Double(255 * paste.transparency / 100)
            let alpha = try Vips.apply(overlay, releasingInput: false) { imagery_vips_extract_bands($0, $1, 3, 1) }
            let lowered = try Vips.apply(alpha) { imagery_vips_linear1($0, $1, 1, delta, 0) }
            defer { imagery_vips_unref(lowered) }
            let colour = try Vips.apply(overlay) { imagery_vips_extract_bands($0, $1, 0, 3) }
            overlay = try Vips.apply(colour) { imagery_vips_bandjoin2($0, lowered, $1) }
        }
        let prepared = try Vips.makeImage(consuming: overlay, format: .png)
        Self.remember(key, prepared)
        return prepared
    }

    /// Watermarks ready to paste, as 8-bit RGBA pixels, by image, size and transparency: at most 64,
    /// the oldest forgotten first (a site uses a few watermarks at a few sizes).
    private static let preparedMarks = Locked([String: Image]())
    private static let preparedOrder = Locked([String]())

    private static func remember(_ key: String, _ image: Image) {
        preparedOrder.withLock { order in
            preparedMarks.withLock { marks in
                if marks[key] == nil { order.append(key) }
                marks[key] = image
                while order.count > 64 { marks[order.removeFirst()] = nil }
            }
        }
    }

    /// 8-bit RGBA pixels as an sRGB libvips image (a copy; no operation runs).
    private static func wrapped(_ image: Image) throws -> UnsafeMutablePointer<VipsImage> {
        let made = image.pixels.withUnsafeBytes { buffer in
            imagery_vips_srgb_from_pixels(buffer.baseAddress, buffer.count, Int32(image.width), Int32(image.height), 4)
        }
        guard let made else { throw VipsError(message: Vips.takeError()) }
        return made
    }
}
