import CVips
import Foundation
import Imagery

/// Decodes JPEG, PNG, GIF (first frame), WebP and AVIF/HEIC (when libvips has
/// libheif) with libvips.
///
/// With a thumbnail it decodes at the target size, never full size and then
/// shrinking: JPEG by DCT scaling (1/2, 1/4, 1/8) to the smallest scale that
/// still covers the target, then a Lanczos resize (VipsImageDecoder+Base.swift);
/// other formats with `vips_thumbnail_buffer` (WebP scaling, ...).
/// The format is sniffed from the bytes; the pixel count is checked from the
/// header before any pixel is decoded. Output pixels: 8-bit sRGB or grey, with
/// alpha when the source has it, EXIF orientation applied.
public struct VipsImageDecoder: ImageDecoding {
    /// The most pixels (width x height) a source image may declare; default 100 000 000.
    public var maximumPixels: Int
    /// The largest thumbnail side, in pixels; default 16 384.
    public var maximumThumbnailSide: Int
    /// Whether damaged image data is an error (``ImageDecodingError/corrupt(format:reason:)``)
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

    /// A decoder with limits.
    /// - Parameters:
    ///   - maximumPixels: The most pixels a source may declare; default 100 MP.
    ///   - maximumThumbnailSide: The largest thumbnail width or height; default 16 384.
    ///   - rejectsCorruptData: Whether truncated or corrupt data is an error; default `false`.
    public init(maximumPixels: Int = 100_000_000, maximumThumbnailSide: Int = 16_384, rejectsCorruptData: Bool = false) {
        self.maximumPixels = maximumPixels
        self.maximumThumbnailSide = maximumThumbnailSide
        self.rejectsCorruptData = rejectsCorruptData
    }

    public func decode(_ data: Data, thumbnail: ImageRequest.Thumbnail?) throws -> Image {
        guard !data.isEmpty else { throw ImageDecodingError.empty }
        guard let format = ImageFormat(sniffing: data) else { throw ImageDecodingError.unsupportedFormat }
        // JPEG thumbnails: DCT-scaled decode, then resize (VipsImageDecoder+Base.swift).
        if format == .jpeg, let thumbnail { return try decodeKeepingBase(data, thumbnail: thumbnail).image }
        if let thumbnail { try validate(thumbnail) }
        do {
            try Vips.start()
        } catch {
            throw ImageDecodingError.corrupt(format: format, reason: "\(error)")
        }
        return try data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { throw ImageDecodingError.empty }
            do {
                try checkHeader(base, buffer.count, format: format)
                var image = try thumbnail.map { try decodeThumbnail(base, buffer.count, $0) }
                    ?? decodeFullSize(base, buffer.count)
                image = try normalize(image)
                return try makeImage(consuming: image, format: format)
            } catch let error as VipsError {
                throw ImageDecodingError.corrupt(format: format, reason: error.message)
            }
        }
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
    }

    /// Reads the header only (one libvips open) and refuses images over the pixel limit.
    @discardableResult
    func checkHeader(_ base: UnsafeRawPointer, _ count: Int, format: ImageFormat) throws -> Header {
        guard imagery_vips_loader_name(base, count) != nil else {
            _ = Vips.takeError()
            throw ImageDecodingError.unsupportedFormat
        }
        guard let header = imagery_vips_open_buffer(base, count, 0) else { throw VipsError(message: Vips.takeError()) }
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
            sampleBytes: max(1, Int(vips_format_sizeof(vips_image_get_format(header))))
        )
    }

    func validate(_ thumbnail: ImageRequest.Thumbnail) throws {
        let range = 1...maximumThumbnailSide
        guard range.contains(thumbnail.width), range.contains(thumbnail.height) else {
            throw ImageDecodingError.invalidSize(width: thumbnail.width, height: thumbnail.height)
        }
    }

    static func sizeAndCrop(_ fit: ImageRequest.Thumbnail.Fit) -> (VipsSize, VipsInteresting) {
        switch fit {
        case .cover: (VIPS_SIZE_BOTH, VIPS_INTERESTING_CENTRE)
        case .contain: (VIPS_SIZE_BOTH, VIPS_INTERESTING_NONE)
        case .fill: (VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
        case .inside: (VIPS_SIZE_DOWN, VIPS_INTERESTING_NONE)
        }
    }

    private func decodeThumbnail(
        _ base: UnsafeRawPointer, _ count: Int, _ thumbnail: ImageRequest.Thumbnail
    ) throws -> UnsafeMutablePointer<VipsImage> {
        let (size, crop) = Self.sizeAndCrop(thumbnail.fit)
        var output: UnsafeMutablePointer<VipsImage>?
        let status = imagery_vips_thumbnail(
            base, count, &output, Int32(thumbnail.width), Int32(thumbnail.height), size, crop, rejectsCorruptData ? 1 : 0
        )
        guard status == 0, var image = output else { throw VipsError(message: Vips.takeError()) }
        if thumbnail.fit == .contain {
            image = try Vips.apply(image) {
                imagery_vips_center_on_canvas($0, $1, Int32(thumbnail.width), Int32(thumbnail.height))
            }
        }
        return image
    }

    private func decodeFullSize(_ base: UnsafeRawPointer, _ count: Int) throws -> UnsafeMutablePointer<VipsImage> {
        guard let image = imagery_vips_open_buffer(base, count, rejectsCorruptData ? 1 : 0) else {
            throw VipsError(message: Vips.takeError())
        }
        return try Vips.apply(image) { imagery_vips_autorot($0, $1) }
    }

    /// Converts to 8-bit sRGB (or 8-bit grey for grey sources).
    func normalize(_ image: UnsafeMutablePointer<VipsImage>) throws -> UnsafeMutablePointer<VipsImage> {
        var image = image
        let interpretation = vips_image_get_interpretation(image)
        let target = (interpretation == VIPS_INTERPRETATION_B_W || interpretation == VIPS_INTERPRETATION_GREY16)
            ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
        if interpretation != target {
            image = try Vips.apply(image) { imagery_vips_colourspace($0, $1, target) }
        }
        if vips_image_get_format(image) != VIPS_FORMAT_UCHAR {
            image = try Vips.apply(image) { imagery_vips_cast_uchar($0, $1) }
        }
        return image
    }

    /// Renders the pipeline into one buffer and wraps it without copying.
    func makeImage(consuming image: UnsafeMutablePointer<VipsImage>, format: ImageFormat) throws -> Image {
        defer { imagery_vips_unref(image) }
        let width = Int(vips_image_get_width(image))
        let height = Int(vips_image_get_height(image))
        let bands = Int(vips_image_get_bands(image))
        guard let pixelFormat = PixelFormat(channels: bands) else {
            throw VipsError(message: "unexpected \(bands)-band image")
        }
        var length = 0
        guard let pixels = vips_image_write_to_memory(image, &length) else {
            throw VipsError(message: Vips.takeError())
        }
        guard length == width * height * bands else {
            imagery_vips_free(pixels)
            throw VipsError(message: "pixel buffer is \(length) bytes, expected \(width * height * bands)")
        }
        let data = Data(bytesNoCopy: pixels, count: length, deallocator: .custom { pointer, _ in imagery_vips_free(pointer) })
        return Image(width: width, height: height, pixelFormat: pixelFormat, pixels: data, sourceFormat: format)
    }
}
