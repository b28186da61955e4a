import CVips
import Foundation
import Imagery

/// Encodes images with libvips: PNG, WebP, GIF, TIFF, AVIF and HEIC (when libvips has libheif with
/// AV1 and HEVC encoders) and JPEG XL (when it has libjxl); JPEG, BMP and ICO with Imagery's own writers
/// (`JPEGWriter`: libjpeg-turbo with optimised Huffman and tuned quantisation tables). Metadata is stripped but for what the image keeps
/// (`ImageMetadata`: its copyright notice as EXIF in JPEG and WebP, a kept ICC profile). JPEG has
/// no alpha: transparent pixels are flattened onto black (`EncodingOptions.flattensOnto`, or a recipe's
/// background, chooses another colour).
/// An animated image stays animated in GIF and WebP (every frame, its delays and loop count); other
/// formats get its first frame. Animated GIFs have one palette for all frames (`CGIFFrames`).
/// 16-bit images (`PixelFormat.rgb16` …) stay 16-bit in PNG, TIFF and JPEG XL and become 12-bit AVIF;
/// other formats get them reduced to 8 bits.
public struct VipsImageEncoder: ImageEncoding {
    /// Quality for lossy formats when a call gives none; default 80.
    public var defaultQuality: Int

    /// An encoder.
    /// - Parameter defaultQuality: Quality for lossy formats when a call gives none; default 80.
    public init(defaultQuality: Int = 80) {
        self.defaultQuality = defaultQuality
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodingOptions) throws -> Data {
        try encoded(image, as: format, options: options).data
    }

    /// The quality asked (else ``defaultQuality``); for a lossy format with `EncodingOptions.autoQuality`,
    /// the one its search chooses below it (`QualitySearch`); then, with a size bound, the highest
    /// quality that fits it.
    public func encoded(_ image: Image, as format: ImageFormat, options: EncodingOptions) throws -> EncodedImage {
        let lowest = Self.lowestQuality(format)
        let asked = min(100, max(lowest, options.quality ?? defaultQuality))
        let encode: QualitySearch.Encode = { try self.encode(image, as: format, quality: $0, options: options) }
        guard Self.isLossy(format, options) else {
            return EncodedImage(data: try encode(asked), quality: nil)
        }
        var output: EncodedImage
        if let auto = options.autoQuality,
            image.width * image.height <= auto.maximumPixels ?? AutoQuality.defaultMaximumPixels,
            PerceivedQuality.canMeasure(format) || !auto.measuresPerceivedQuality
        {
            let range = auto.range(asked: asked, lowest: lowest)
            switch auto.target ?? AutoQuality.defaultTarget {
            case .bytes(let limit):
                output = try QualitySearch.largest(fitting: limit, in: range, encode: encode)
            case .ssimulacra2(let target):
                let quality = try PerceivedQuality(of: image, as: format)
                output = try QualitySearch.lowest(
                    meeting: target, tolerance: auto.tolerance ?? AutoQuality.defaultTolerance, in: range,
                    quality: quality, encode: encode
                )
            }
        } else {
            let quality = options.autoQuality?.range(asked: asked, lowest: lowest).upperBound ?? asked
            output = EncodedImage(data: try encode(quality), quality: quality)
        }
        // A size bound: the highest quality below that fits.
        if let limit = options.maximumBytes, output.data.count > limit, let quality = output.quality {
            output = try QualitySearch.largest(fitting: limit, in: lowest...quality, first: output.data, encode: encode)
        }
        return output
    }

    /// JPEG: libjpeg's whole-image coefficient arrays (2 bytes a coefficient: 3 bytes a pixel at 4:2:0,
    /// 6 at 4:4:4, which optimised Huffman tables need), an 8-bit copy without alpha when the image has
    /// alpha or 16 bits, and the output (at most the pixels' size). Other formats: the image's size.
    /// A perceived-quality search (`AutoQuality`) adds its metric (`PerceivedQuality`, 67 bytes a
    /// pixel) and the outputs it keeps (at most the pixels' size).
    public func estimatedEncodeMemory(_ image: Image, as format: ImageFormat, options: EncodingOptions) -> Int {
        let pixels = image.width * image.height
        var search = 0
        if let auto = options.autoQuality, case .ssimulacra2 = auto.target ?? AutoQuality.defaultTarget,
            pixels <= auto.maximumPixels ?? AutoQuality.defaultMaximumPixels, Self.isLossy(format, options),
            PerceivedQuality.canMeasure(format)
        {
            search = PerceivedQuality.workingMemory(pixels: pixels) + pixels * 3
        }
        return search + encodeMemory(image, as: format, options: options)
    }

    private func encodeMemory(_ image: Image, as format: ImageFormat, options: EncodingOptions) -> Int {
        let pixels = image.width * image.height
        guard format == .jpeg else { return image.pixels.count }
        let quality = options.quality ?? defaultQuality
        let channels = image.pixelFormat.isGray ? 1 : 3
        let coefficients = pixels * (channels == 1 ? 2 : quality >= 90 ? 6 : 3)
        let copy = image.pixelFormat.hasAlpha || image.pixelFormat.isHighBitDepth ? pixels * channels : 0
        return coefficients + copy + pixels * channels
    }

    /// The lowest quality that means something: 1, but 5 for JPEG XL (below 5 libvips asks libjxl for
    /// a distance it does not take, and the output grows again: a 200-pixel thumbnail measured 6 995
    /// bytes at qualities 1 to 4, 842 at 5, 1 146 at 10).
    static func lowestQuality(_ format: ImageFormat) -> Int {
        format == .jxl ? 5 : 1
    }

    /// Whether quality changes `format`'s size (so a byte limit can be met by lowering it).
    static func isLossy(_ format: ImageFormat, _ options: EncodingOptions) -> Bool {
        switch format {
        case .jpeg: true
        case .webp, .avif, .jxl, .heic: !options.lossless
        case .png, .gif, .tiff, .bmp, .ico, .svg: false
        }
    }

    private func encode(_ image: Image, as format: ImageFormat, quality: Int, options: EncodingOptions) throws -> Data {
        if format == .gif, image.animation != nil { return try AnimatedGIFWriter.encode(image) }
        if format == .bmp { return BMP.encode(image) }
        if format == .ico { return try encodeIcon(image) }
        if format == .jpeg {
            return try JPEGWriter.encode(
                image, quality: quality, progressive: options.progressive, flattensOnto: options.flattensOnto)
        }
        do {
            try Vips.start()
            let quality = Int32(quality)
            let vipsImage = try makeVipsImage(format.canAnimate ? image : image.frame(0), for: format)
            defer { imagery_vips_unref(vipsImage) }
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            let (lossless, progressive): (Int32, Int32) = (options.lossless ? 1 : 0, options.progressive ? 1 : 0)
            // Only what was set on this fresh image is written (a kept profile, a copyright): nothing else is there.
            let strip: Int32 = image.metadata == ImageMetadata() ? 1 : 0
            let status: Int32 =
                switch format {
                case .png: imagery_vips_pngsave(vipsImage, &buffer, &length, 6, progressive, strip)
                case .webp: imagery_vips_webpsave(vipsImage, &buffer, &length, quality, lossless, strip)
                case .avif: imagery_vips_avifsave(vipsImage, &buffer, &length, quality, lossless, strip)
                case .jxl: imagery_vips_jxlsave(vipsImage, &buffer, &length, quality, lossless, strip)
                case .gif: imagery_vips_gifsave(vipsImage, &buffer, &length)
                case .tiff: imagery_vips_tiffsave(vipsImage, &buffer, &length, strip)
                case .heic: imagery_vips_heicsave(vipsImage, &buffer, &length, quality, lossless, strip)
                case .jpeg, .bmp, .ico: throw ImageEncodingError.unsupportedFormat(format)  // written above
                case .svg: throw ImageEncodingError.unsupportedFormat(.svg)  // a raster is never made a vector
                }
            guard status == 0, let buffer else {
                let reason = Vips.takeError()
                if reason.contains("not a known") || reason.contains("no such") || reason.contains("blocked") {
                    throw ImageEncodingError.unsupportedFormat(format)
                }
                throw ImageEncodingError.failed(reason)
            }
            return Data(
                bytesNoCopy: buffer, count: length, deallocator: .custom { pointer, _ in imagery_vips_free(pointer) })
        } catch let error as VipsError {
            throw ImageEncodingError.failed(error.message)
        }
    }

    /// `image` as an icon of one PNG picture, scaled down to fit 256 × 256 when larger (as imgproxy does).
    private func encodeIcon(_ image: Image) throws -> Data {
        var image = image.frame(0).withEightBitChannels()
        if image.width > 256 || image.height > 256 {
            let scale = 256 / Double(max(image.width, image.height))
            let (width, height) = (
                max(1, Int((Double(image.width) * scale).rounded())),
                max(1, Int((Double(image.height) * scale).rounded()))
            )
            image = try VipsImageProcessor().process(
                ThumbnailBase(image: image, scale: 1, sourceWidth: image.width, sourceHeight: image.height),
                recipe: ImageRecipe(resize: ImageRequest.Thumbnail(width: width, height: height, fit: .fill))
            )
        }
        let png = try encode(image, as: .png, quality: 100, options: EncodingOptions())
        return ICO.encode(png: png, width: image.width, height: image.height, hasAlpha: image.pixelFormat.hasAlpha)
    }

    /// `image` as a libvips image to save as `format`: 16-bit pixels reduced to 8 bits for a format that
    /// does not hold more (``ImageFormat/holdsHighBitDepth``).
    private func makeVipsImage(_ image: Image, for format: ImageFormat) throws -> UnsafeMutablePointer<VipsImage> {
        let pixelFormat = image.pixelFormat
        let created = image.pixels.withUnsafeBytes { buffer in
            imagery_vips_from_pixels(
                buffer.baseAddress, buffer.count, Int32(image.width), Int32(image.height * image.frameCount),
                Int32(pixelFormat.channels), pixelFormat.isHighBitDepth ? 1 : 0
            )
        }
        guard let created else { throw VipsError(message: Vips.takeError()) }
        var tagged = try Vips.apply(created) {
            imagery_vips_set_interpretation($0, $1, Vips.interpretation(of: pixelFormat))
        }
        if pixelFormat.isHighBitDepth, !format.holdsHighBitDepth {
            let eightBit = Vips.interpretation(of: pixelFormat.eightBit)
            tagged = try Vips.apply(tagged) { imagery_vips_colourspace($0, $1, eightBit) }
        }
        if let profile = image.metadata.iccProfile {
            profile.withUnsafeBytes { imagery_vips_set_icc(tagged, $0.baseAddress, $0.count) }
        }
        let metadata = image.metadata
        for (name, block) in [("exif-data", metadata.exif), ("xmp-data", metadata.xmp), ("iptc-data", metadata.iptc)] {
            block?.withUnsafeBytes { imagery_vips_set_blob(tagged, name, $0.baseAddress, $0.count) }
        }
        // The pixels are as they are to be shown: a kept EXIF block says so (libvips writes this field into it).
        if metadata.exif != nil { imagery_vips_set_orientation(tagged, 1) }
        if let copyright = metadata.copyright { imagery_vips_set_string(tagged, "exif-ifd0-Copyright", copyright) }
        if let animation = image.animation { Vips.setAnimation(animation, on: tagged, frameHeight: image.height) }
        return tagged
    }
}
