import CVips
import Foundation
import Imagery

/// Decodes JPEG, PNG, GIF and WebP (every frame of an animation, or one: VipsImageDecoder+Frames.swift)
/// and AVIF/HEIC (when libvips has libheif) with libvips.
///
/// With a recipe it decodes at the size the recipe needs, never full size and then
/// shrinking: JPEG by DCT scaling (1/2, 1/4, 1/8) to the smallest scale that
/// still covers the target (VipsImageDecoder+Base.swift); other formats with
/// `vips_thumbnail_buffer` (WebP scaling, ...) to the size the recipe's resize gives;
/// then ``VipsImageProcessor`` applies the recipe, in the same pass of pixels.
/// The format is sniffed from the bytes; the pixel count is checked from the
/// header before any pixel is decoded. Output pixels: 8-bit sRGB or grey (16-bit when the source has
/// more than 8 bits and the recipe keeps them, `ImageRecipe.keepsHighBitDepth`), with alpha when the
/// source has it, EXIF orientation applied.
public struct VipsImageDecoder: ImageDecoding {
    /// The most pixels (width x height) a source image may declare; default 100 000 000.
    public var maximumPixels: Int
    /// The largest thumbnail side, in pixels; default 16 384.
    public var maximumThumbnailSide: Int
    /// Whether damaged image data is an error (`ImageDecodingError/corrupt(format:reason:)`)
    /// rather than decoded as far as it goes: a truncated file (the rest left grey), garbled
    /// compressed data (a garbage lower part), a bad checksum. Any warning of the format's
    /// decoder counts (libvips `fail_on=warning`). Default `false`, as viewers do; a proxy
    /// that caches and serves its output should set it. Every image of ../shared/corpus
    /// decodes in this mode; every damaged one of ../shared/corpus-bad is refused.
    public var rejectsCorruptData: Bool
    /// Whether JPEG thumbnails skip the progressive scans their decode scale never reads
    /// (`CJPEG`: the same pixels, without entropy-decoding what the scaled inverse DCT does not
    /// use; 3 to 5 times faster on progressive photos at 1/8). In strict mode damage inside a
    /// skipped scan goes unseen: it cannot change the thumbnail. Default `true`; `false` decodes
    /// every scan through libvips.
    public var skipsUnneededJPEGScans = true
    /// The most frames of an animation a decode takes together; default 1 000. An animation with
    /// more is refused (`ImageDecodingError/tooManyFrames(frames:width:height:pixelLimit:frameLimit:)`)
    /// before any frame is decoded, unless the recipe takes one frame (`ImageRecipe/frame`).
    public var maximumFrames = 1_000
    /// The most pixels of all an animation's frames together (frames × width × height); `nil`:
    /// ``maximumPixels`` (as imgproxy counts an animation's resolution). Checked with ``maximumFrames``.
    public var maximumAnimationPixels: Int?
    /// The most pixels of each frame of an animation (imgproxy's `max_animation_frame_resolution`);
    /// `nil`: no limit beyond ``maximumAnimationPixels``. Checked with ``maximumFrames``.
    public var maximumFramePixels: Int?

    /// A decoder with limits.
    /// - Parameters:
    ///   - maximumPixels: The most pixels a source may declare; default 100 MP.
    ///   - maximumThumbnailSide: The largest thumbnail width or height; default 16 384.
    ///   - rejectsCorruptData: Whether truncated or corrupt data is an error; default `false`.
    public init(maximumPixels: Int = 100_000_000, maximumThumbnailSide: Int = 16_384, rejectsCorruptData: Bool = false)
    {
        self.maximumPixels = maximumPixels
        self.maximumThumbnailSide = maximumThumbnailSide
        self.rejectsCorruptData = rejectsCorruptData
    }

    public func decode(_ data: Data, recipe: ImageRecipe) throws -> Image {
        let (data, format) = try started(data)
        if Self.readsItself(format) { return try decodeBitmap(data, format: format, recipe: recipe) }
        // JPEG: DCT-scaled decode, then the recipe (VipsImageDecoder+Base.swift).
        if format == .jpeg, recipe.resizes, !recipe.ignoresOrientation, recipe.keptMetadata != .all,
            !recipe.resizesInLinearLight
        {
            return try decodeKeepingBase(data, recipe: recipe).image
        }
        if let resize = recipe.resize { try validate(resize) }
        if rejectsCorruptData, format == .gif, Self.lacksGIFTrailer(data) {
            // libvips decodes the frames before the cut without a warning: a frame would go missing.
            throw ImageDecodingError.corrupt(format: .gif, reason: "the GIF ends before its trailer: it is truncated")
        }
        return try data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { throw ImageDecodingError.empty }
            do {
                let header = try checkHeader(base, buffer.count, format: format)
                try check(recipe.sourceLimits, header, bytes: buffer.count)
                let (sourceWidth, sourceHeight) =
                    recipe.ignoresOrientation ? (header.width, header.height) : header.orientedSize
                let options = loaderOptions(for: try frames(of: header, for: recipe))
                var image: UnsafeMutablePointer<VipsImage>
                // libvips' shrink-on-load makes 8-bit sRGB, in gamma space (and leaves grey images so in its linear
                // mode): a source whose 16 bits stay, or resized in linear light, is decoded whole and resized after.
                let keepsDepth = recipe.keepsHighBitDepth && header.sampleBytes > 1
                if !keepsDepth, !recipe.resizesInLinearLight,
                    let size = Self.decodeSize(for: recipe, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
                {
                    image =
                        format == .gif
                        ? try decodeGIFResized(
                            base, buffer.count, width: size.width, height: size.height, options: options)
                        : try decodeResized(
                            base, buffer.count, width: size.width, height: size.height, options: options,
                            oriented: !recipe.ignoresOrientation
                        )
                } else {
                    image = try decodeFullSize(
                        base, buffer.count, options: options, oriented: !recipe.ignoresOrientation)
                }
                let keepsProfile = recipe.keepsColorProfile
                image = try Vips.normalize(image, keepingProfile: keepsProfile, keepingHighBitDepth: keepsDepth)
                image = try processor.apply(recipe, to: image, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
                image = try Vips.normalize(image, keepingProfile: keepsProfile, keepingHighBitDepth: keepsDepth)
                let blocks = recipe.keptMetadata == .all ? Vips.metadataBlocks(of: image) : nil
                // decodes now, inside the bytes' lifetime
                var decoded = try Vips.makeImage(consuming: image, format: format)
                decoded.metadata.copyright = recipe.keptMetadata == .none ? nil : header.copyright
                if let blocks { (decoded.metadata.exif, decoded.metadata.xmp, decoded.metadata.iptc) = blocks }
                return decoded
            } catch let error as VipsError {
                throw error.decodingError(format: format)
            }
        }
    }

    /// Watermark images by name, for recipes that lay one over the output (``VipsImageProcessor/watermarks``);
    /// default none.
    public var watermarks: [String: Data] = [:]

    /// The processor that applies recipes after decoding (outputs up to ``maximumThumbnailSide``).
    var processor: VipsImageProcessor { VipsImageProcessor(maximumSide: maximumThumbnailSide, watermarks: watermarks) }

    /// The size to decode a source of `sourceWidth` × `sourceHeight` (oriented) at for `recipe`, with
    /// shrink-on-load; `nil`: full size (no resize, trim, or a recipe that enlarges). Without a crop it is
    /// the size the resize gives (so nothing is resampled twice); with one, the whole source at the
    /// scale the crop's region needs.
    static func decodeSize(for recipe: ImageRecipe, sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int)? {
        let scale = recipe.decodeScale(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        guard scale.x < 1 || scale.y < 1 else { return nil }
        if recipe.crop == nil, recipe.sizing?.crop == nil,
            let layout = try? recipe.layout(sourceWidth: sourceWidth, sourceHeight: sourceHeight, maximumSide: .max)
        {
            return recipe.rotation.swapsSides
                ? (layout.scaledHeight, layout.scaledWidth) : (layout.scaledWidth, layout.scaledHeight)
        }
        return (
            max(1, Int((Double(sourceWidth) * scale.x).rounded(.up))),
            max(1, Int((Double(sourceHeight) * scale.y).rounded(.up)))
        )
    }

    /// Whether GIF bytes end without the trailer byte (0x3B; zero padding after it is tolerated).
    static func lacksGIFTrailer(_ data: Data) -> Bool {
        data.last { $0 != 0 } != 0x3B
    }

    /// What an image's header says, before any pixel is decoded.
    struct Header {
        /// The size as stored (before orientation).
        let width: Int
        let height: Int
        /// Whether the EXIF orientation swaps width and height.
        let swapped: Bool
        let orientation: Int32
        let bands: Int
        /// Bytes per band value (1 for 8-bit, 2 for 16-bit).
        let sampleBytes: Int
        /// EXIF `Copyright`, kept with the image.
        let copyright: String?
        /// Frames (pages) in the file: more than 1 for an animation.
        let frames: Int

        /// The size once oriented.
        var orientedSize: (width: Int, height: Int) { swapped ? (height, width) : (width, height) }
    }

    /// Reads the header only (one libvips open) and refuses images over the pixel limit.
    @discardableResult
    func checkHeader(_ base: UnsafeRawPointer, _ count: Int, format: ImageFormat) throws -> Header {
        if Self.readsItself(format) { return try bitmapHeader(base, count, format: format) }
        let header = try openHeader(base, count)
        defer { imagery_vips_unref(header) }
        let width = Int(vips_image_get_width(header))
        let height = Int(vips_image_get_height(header))
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maximumPixels else {
            throw ImageDecodingError.tooManyPixels(width: width, height: height, limit: maximumPixels)
        }
        return Header(
            width: width, height: height, swapped: vips_image_get_orientation_swap(header) != 0,
            orientation: imagery_vips_orientation(header), bands: Int(vips_image_get_bands(header)),
            sampleBytes: max(1, Int(vips_format_sizeof(vips_image_get_format(header)))),
            copyright: Vips.copyright(of: header), frames: max(1, Int(imagery_vips_n_pages(header)))
        )
    }

    /// The format `data` is in, with libvips started, and the bytes to read: the first step of every
    /// decode and inspection. An SVG is read only sanitised (``SVGSanitizer``): librsvg never sees what
    /// came in.
    /// - Throws: ``ImageDecodingError`` for no bytes, an unknown format, an SVG refused, or libvips failing to start.
    func started(_ data: Data) throws -> (data: Data, format: ImageFormat) {
        guard !data.isEmpty else { throw ImageDecodingError.empty }
        guard let format = ImageFormat(sniffing: data) else { throw ImageDecodingError.unsupportedFormat }
        do {
            try Vips.start()
        } catch {
            throw ImageDecodingError.corrupt(format: format, reason: "\(error)")
        }
        return (format == .svg ? try SVGSanitizer.sanitized(data) : data, format)
    }

    /// The image opened lazily (its header read, no pixel decoded); the caller releases it.
    /// - Throws: ``ImageDecodingError/unsupportedFormat`` when no libvips loader takes the bytes, ``VipsError`` when the header is broken.
    func openHeader(_ base: UnsafeRawPointer, _ count: Int) throws -> UnsafeMutablePointer<VipsImage> {
        guard imagery_vips_loader_name(base, count) != nil else {
            _ = Vips.takeError()
            throw ImageDecodingError.unsupportedFormat
        }
        guard let header = imagery_vips_open_buffer(base, count, "") else { throw VipsError(message: Vips.takeError()) }
        return header
    }

    /// Refuses a source over the limits its recipe sets (before any pixel is decoded).
    func check(_ limits: ImageRecipe.SourceLimits?, _ header: Header, bytes: Int) throws {
        let (width, height) = header.orientedSize
        if let problem = limits?.problem(bytes: bytes, width: width, height: height, frames: header.frames) {
            throw ImageDecodingError.overRequestLimit(problem)
        }
    }

    func validate(_ thumbnail: ImageRequest.Thumbnail) throws {
        let range = 1...maximumThumbnailSide
        guard range.contains(thumbnail.width), range.contains(thumbnail.height) else {
            throw ImageDecodingError.invalidSize(width: thumbnail.width, height: thumbnail.height)
        }
    }

    /// The source resized to width × height on load (shrink-on-load where the format has it), oriented
    /// unless `oriented` is false; each frame so when `options` loads several.
    private func decodeResized(
        _ base: UnsafeRawPointer, _ count: Int, width: Int, height: Int, options: String, oriented: Bool = true
    ) throws -> UnsafeMutablePointer<VipsImage> {
        var output: UnsafeMutablePointer<VipsImage>?
        let status = imagery_vips_thumbnail(
            base, count, &output, Int32(width), Int32(height), VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE, options,
            oriented ? 0 : 1
        )
        guard status == 0, let output else { throw VipsError(message: Vips.takeError()) }
        return output
    }

    private func decodeFullSize(_ base: UnsafeRawPointer, _ count: Int, options: String, oriented: Bool = true) throws
        -> UnsafeMutablePointer<VipsImage>
    {
        guard let image = imagery_vips_open_buffer(base, count, options) else {
            throw VipsError(message: Vips.takeError())
        }
        guard oriented else { return image }
        return try Vips.apply(image) { imagery_vips_autorot($0, $1) }
    }

}
