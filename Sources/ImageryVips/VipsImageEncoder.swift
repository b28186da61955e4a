import CVips
import Foundation
import Imagery

/// Encodes images with libvips: JPEG, PNG, WebP, GIF, and AVIF when libvips has libheif with AV1.
/// Metadata is stripped. JPEG has no alpha: transparent pixels are flattened onto black.
public struct VipsImageEncoder: ImageEncoding {
    /// Quality for lossy formats when a call gives none; default 80.
    public var defaultQuality: Int

    /// An encoder.
    /// - Parameter defaultQuality: Quality for lossy formats when a call gives none; default 80.
    public init(defaultQuality: Int = 80) {
        self.defaultQuality = defaultQuality
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Int? = nil) throws -> Data {
        do {
            try Vips.start()
            let quality = Int32(min(100, max(1, quality ?? defaultQuality)))
            var vipsImage = try makeVipsImage(image)
            if format == .jpeg, image.pixelFormat.hasAlpha {
                vipsImage = try Vips.apply(vipsImage) { imagery_vips_flatten($0, $1) }
            }
            defer { imagery_vips_unref(vipsImage) }
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            let status: Int32 = switch format {
            case .jpeg: imagery_vips_jpegsave(vipsImage, &buffer, &length, quality)
            case .png: imagery_vips_pngsave(vipsImage, &buffer, &length, 6)
            case .webp: imagery_vips_webpsave(vipsImage, &buffer, &length, quality)
            case .avif: imagery_vips_avifsave(vipsImage, &buffer, &length, quality)
            case .gif: imagery_vips_gifsave(vipsImage, &buffer, &length)
            case .heic: throw ImageEncodingError.unsupportedFormat(.heic)
            }
            guard status == 0, let buffer else {
                let reason = Vips.takeError()
                if reason.contains("not a known") || reason.contains("no such") {
                    throw ImageEncodingError.unsupportedFormat(format)
                }
                throw ImageEncodingError.failed(reason)
            }
            return Data(bytesNoCopy: buffer, count: length, deallocator: .custom { pointer, _ in imagery_vips_free(pointer) })
        } catch let error as VipsError {
            throw ImageEncodingError.failed(error.message)
        }
    }

    private func makeVipsImage(_ image: Image) throws -> UnsafeMutablePointer<VipsImage> {
        let created = image.pixels.withUnsafeBytes { buffer in
            imagery_vips_from_pixels(
                buffer.baseAddress, buffer.count, Int32(image.width), Int32(image.height),
                Int32(image.pixelFormat.bytesPerPixel)
            )
        }
        guard let created else { throw VipsError(message: Vips.takeError()) }
        let interpretation = image.pixelFormat.bytesPerPixel <= 2 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
        return try Vips.apply(created) { imagery_vips_set_interpretation($0, $1, interpretation) }
    }
}
