import CVips
import Foundation
import Imagery

/// Between ``Image`` and libvips images: wrapping pixels, normalising, rendering back, colours as band values.
extension Vips {
    /// `image`'s pixels as a libvips image, without copying: `buffer` must outlive it and everything made from it.
    /// An animated image's frames stay stacked, with their timing (``setAnimation(_:on:frameHeight:)``).
    static func wrap(_ image: Image, _ buffer: UnsafeRawBufferPointer) throws -> UnsafeMutablePointer<VipsImage> {
        let format = image.pixelFormat
        guard
            let wrapped = imagery_vips_wrap_pixels(
                buffer.baseAddress, buffer.count, Int32(image.width), Int32(image.height * image.frameCount),
                Int32(format.channels),
                format.isHighBitDepth ? 1 : 0
            )
        else { throw VipsError(message: takeError()) }
        let tagged = try apply(wrapped) { imagery_vips_set_interpretation($0, $1, interpretation(of: format)) }
        if let profile = image.metadata.iccProfile {
            profile.withUnsafeBytes { imagery_vips_set_icc(tagged, $0.baseAddress, $0.count) }
        }
        if let animation = image.animation { setAnimation(animation, on: tagged, frameHeight: image.height) }
        return tagged
    }

    /// `image`'s EXIF, XMP and IPTC blocks as its loader read them.
    static func metadataBlocks(of image: UnsafeMutablePointer<VipsImage>) -> (exif: Data?, xmp: Data?, iptc: Data?) {
        func block(_ name: String) -> Data? {
            var bytes: UnsafeRawPointer?
            var length = 0
            guard imagery_vips_get_blob(image, name, &bytes, &length) == 0, let bytes, length > 0 else { return nil }
            return Data(bytes: bytes, count: length)
        }
        return (block("exif-data"), block("xmp-data"), block("iptc-data"))
    }

    /// EXIF `Copyright` as libvips reads it (the value before libexif's " (…, ASCII, n components, n bytes)").
    static func copyright(of image: UnsafeMutablePointer<VipsImage>) -> String? {
        guard let text = imagery_vips_get_string(image, "exif-ifd0-Copyright") else { return nil }
        let value = String(cString: text)
        let notice = value.range(of: " (").map { String(value[..<$0.lowerBound]) } ?? value
        let trimmed = notice.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty || trimmed == "[None]" ? nil : trimmed
    }

    /// The libvips interpretation of pixels laid out as `format`: sRGB or B_W, RGB16 or GREY16.
    static func interpretation(of format: PixelFormat) -> VipsInterpretation {
        switch (format.isGray, format.isHighBitDepth) {
        case (true, false): VIPS_INTERPRETATION_B_W
        case (false, false): VIPS_INTERPRETATION_sRGB
        case (true, true): VIPS_INTERPRETATION_GREY16
        case (false, true): VIPS_INTERPRETATION_RGB16
        }
    }

    /// Whether `image` has 16-bit samples (after ``normalize(_:keepingProfile:keepingHighBitDepth:)``: more than 8 bits).
    static func isHighBitDepth(_ image: UnsafeMutablePointer<VipsImage>) -> Bool {
        imagery_vips_is_deep(image) != 0
    }

    /// The interpretation a colour image at `image`'s bit depth has: sRGB, or RGB16.
    static func colourInterpretation(for image: UnsafeMutablePointer<VipsImage>) -> VipsInterpretation {
        isHighBitDepth(image) ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB
    }

    /// The interpretation a grey image at `image`'s bit depth has: B_W, or GREY16.
    static func greyInterpretation(for image: UnsafeMutablePointer<VipsImage>) -> VipsInterpretation {
        isHighBitDepth(image) ? VIPS_INTERPRETATION_GREY16 : VIPS_INTERPRETATION_B_W
    }

    /// Converts to 8-bit sRGB (or 8-bit grey for grey images): colour images with an embedded ICC
    /// profile through it (a Display P3 or Adobe RGB photo keeps its colours; CMYK is converted
    /// by its profile), others by libvips' colour space conversion.
    /// - Parameters:
    ///   - keepingProfile: Leave RGB pixels in their profile's colour space, the profile attached
    ///     (``makeImage(consuming:format:computedHere:)`` carries it into the ``Image``); CMYK is converted
    ///     regardless.
    ///   - keepingHighBitDepth: Give an image of more than 8 bits per sample 16 (RGB16 or GREY16)
    ///     instead of 8 (``ImageRecipe/keepsHighBitDepth``; imgproxy's `preserve_hdr`); CMYK gets 8.
    static func normalize(
        _ image: UnsafeMutablePointer<VipsImage>, keepingProfile: Bool = false, keepingHighBitDepth: Bool = false
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var image = image
        let isCMYK = vips_image_get_interpretation(image) == VIPS_INTERPRETATION_CMYK
        let deep = keepingHighBitDepth && !isCMYK && isHighBitDepth(image)
        if imagery_vips_has_icc(image) != 0, vips_image_get_bands(image) >= 3, !keepingProfile || isCMYK {
            image = try apply(image) { imagery_vips_icc_to_srgb($0, $1, deep ? 16 : 8) }
        }
        let interpretation = vips_image_get_interpretation(image)
        let grey = interpretation == VIPS_INTERPRETATION_B_W || interpretation == VIPS_INTERPRETATION_GREY16
        let target = Self.interpretation(of: PixelFormat(channels: grey ? 1 : 3, bytesPerChannel: deep ? 2 : 1)!)
        if interpretation != target {
            image = try apply(image) { imagery_vips_colourspace($0, $1, target) }
        }
        if deep, vips_image_get_format(image) != VIPS_FORMAT_USHORT {
            image = try apply(image) { imagery_vips_cast_ushort($0, $1) }
        } else if !deep, vips_image_get_format(image) != VIPS_FORMAT_UCHAR {
            image = try apply(image) { imagery_vips_cast_uchar($0, $1) }
        }
        // A profile stays only when asked to and the pixels are still in it (libvips' CMYK conversion,
        // say, leaves the profile it used attached to sRGB pixels).
        if !keepingProfile || isCMYK || vips_image_get_bands(image) < 3, imagery_vips_has_icc(image) != 0 {
            image = try apply(image) { imagery_vips_copy($0, $1) }
            imagery_vips_remove_icc(image)
        }
        return image
    }

    /// `image` resized to exactly `width` × `height` at its own bit depth (libvips' thumbnail makes 8-bit
    /// sRGB of anything: 8-bit images take it, 16-bit ones a Lanczos resize of premultiplied pixels);
    /// `linear`: in linear light (scRGB floats, then back to `image`'s interpretation and depth). Consumes `image`.
    static func resized(_ image: UnsafeMutablePointer<VipsImage>, width: Int, height: Int, linear: Bool = false) throws
        -> UnsafeMutablePointer<VipsImage>
    {
        if linear {
            let (interpretation, deep) = (vips_image_get_interpretation(image), isHighBitDepth(image))
            var light = try apply(image) { imagery_vips_colourspace($0, $1, VIPS_INTERPRETATION_scRGB) }
            light = try apply(light) { imagery_vips_resize_exact($0, $1, Int32(width), Int32(height)) }
            light = try apply(light) { imagery_vips_colourspace($0, $1, interpretation) }
            return try apply(light) { deep ? imagery_vips_cast_ushort($0, $1) : imagery_vips_cast_uchar($0, $1) }
        }
        if isHighBitDepth(image) {
            return try apply(image) { imagery_vips_resize_exact($0, $1, Int32(width), Int32(height)) }
        }
        return try apply(image) {
            imagery_vips_thumbnail_image($0, $1, Int32(width), Int32(height), VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
        }
    }

    /// The most pixels ``makeImage(consuming:format:computedHere:)`` computes on the calling thread: every
    /// operation on the way then holds a region of the whole image at once, so large images go
    /// through libvips' pool, a tile at a time (memory no budget counts). Thumbnails and the bases
    /// they are made from (a 5120-pixel-wide source at 1/8) are below it.
    static let renderedHereMaximumPixels = 1_000_000

    /// Renders `image` into one buffer and wraps it as an ``Image`` without copying; releases `image`.
    /// - Parameter computedHere: Whether a small image may be computed on the calling thread; only for
    ///   pipelines of plain per-pixel operations (a decoded base: wrap, crop, rotate, colour), never for
    ///   processing (a filter such as thumbor's `sharpen` asked for all of its image at once grew to 1 GB
    ///   and past the request's time limit in a debug build).
    static func makeImage(
        consuming image: UnsafeMutablePointer<VipsImage>, format: ImageFormat, computedHere: Bool = false
    ) throws -> Image {
        defer { imagery_vips_unref(image) }
        let width = Int(vips_image_get_width(image))
        let height = Int(vips_image_get_height(image))
        let bands = Int(vips_image_get_bands(image))
        let sampleBytes = Int(vips_format_sizeof(vips_image_get_format(image)))
        guard let pixelFormat = PixelFormat(channels: bands, bytesPerChannel: sampleBytes) else {
            throw VipsError(message: "unexpected \(bands)-band image of \(sampleBytes)-byte samples")
        }
        var length = 0
        // A small image is computed on this thread (libvips' pool would hand it to a worker and wait);
        // a large one through the pool, which computes it a tile at a time (region buffers stay small).
        let computed =
            computedHere && width * height <= renderedHereMaximumPixels
            ? imagery_vips_render_here(image, &length) : vips_image_write_to_memory(image, &length)
        guard let pixels = computed else {
            throw VipsError(message: takeError())
        }
        guard length == width * height * pixelFormat.bytesPerPixel else {
            imagery_vips_free(pixels)
            throw VipsError(
                message: "pixel buffer is \(length) bytes, expected \(width * height * pixelFormat.bytesPerPixel)")
        }
        let data = Data(
            bytesNoCopy: pixels, count: length, deallocator: .custom { pointer, _ in imagery_vips_free(pointer) })
        var metadata = ImageMetadata()
        var profile: UnsafeRawPointer?
        var profileLength = 0
        if imagery_vips_get_icc(image, &profile, &profileLength) == 0, let profile {  // a kept profile
            metadata.iccProfile = Data(bytes: profile, count: profileLength)
        }
        let animation = animation(of: image)
        return Image(
            width: width, height: animation.map { _ in Int(imagery_vips_page_height(image)) } ?? height,
            pixelFormat: pixelFormat,
            pixels: data, sourceFormat: format, metadata: metadata, animation: animation
        )
    }

    static func hasAlpha(_ image: UnsafeMutablePointer<VipsImage>) -> Bool {
        vips_image_hasalpha(image) != 0
    }

    /// `image` made able to hold `color` (an alpha band for a translucent colour, sRGB for a colour on
    /// a grey image), and `color` as one value per band of the result. Consumes `image`.
    static func preparing(
        _ image: UnsafeMutablePointer<VipsImage>, for color: ImageRecipe.Color
    ) throws -> (UnsafeMutablePointer<VipsImage>, [Double]) {
        var image = image
        if color.alpha < 255, !hasAlpha(image) {
            image = try apply(image) { imagery_vips_add_alpha($0, $1) }
        }
        let isGrey = vips_image_get_bands(image) <= 2
        if isGrey, !(color.red == color.green && color.green == color.blue) {
            let space = colourInterpretation(for: image)
            image = try apply(image) { imagery_vips_colourspace($0, $1, space) }
        }
        return (image, values(of: color, bands: Int(vips_image_get_bands(image)), for: image))
    }

    /// `color` as values for `image`'s pixels with `bands` bands: ``values(of:bands:)``, scaled to
    /// 0...65535 when `image` has 16-bit samples.
    static func values(of color: ImageRecipe.Color, bands: Int, for image: UnsafeMutablePointer<VipsImage>) -> [Double]
    {
        let values = values(of: color, bands: bands)
        return isHighBitDepth(image) ? values.map { $0 * 257 } : values
    }

    /// `color` as 8-bit values for an image of `bands` bands (1 or 2: grey, 3 or 4: sRGB; the last of 2 or 4 is alpha).
    static func values(of color: ImageRecipe.Color, bands: Int) -> [Double] {
        let grey = 0.2126 * Double(color.red) + 0.7152 * Double(color.green) + 0.0722 * Double(color.blue)
        let alpha = Double(color.alpha)
        switch bands {
        case 1: return [grey.rounded()]
        case 2: return [grey.rounded(), alpha]
        case 3: return [Double(color.red), Double(color.green), Double(color.blue)]
        default:
            return [Double(color.red), Double(color.green), Double(color.blue), alpha]
                + Array(repeating: alpha, count: max(0, bands - 4))
        }
    }
}
