import CVips
import Foundation
import Imagery

/// Headers described without decoding pixels (one libvips open, as ``VipsImageDecoder/checkHeader(_:_:format:)``).
extension VipsImageDecoder: ImageInspecting {
    public func inspect(_ data: Data) throws -> ImageHeader {
        let (data, format) = try started(data)
        if Self.readsItself(format) {
            if format == .ico, let png = try ICO.largestPNG(in: data) {
                var header = try inspect(png)
                header.format = .ico
                return header
            }
            let header = try data.withUnsafeBytes { try bitmapHeader($0.baseAddress!, $0.count, format: format) }
            let alpha = try format == .ico || BMP.header(of: data).mayHaveAlpha
            return ImageHeader(
                width: header.width, height: header.height, format: format, orientation: 1, frames: 1, hasAlpha: alpha,
                colorSpace: "srgb", bitsPerChannel: 8, profile: nil
            )
        }
        return try data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { throw ImageDecodingError.empty }
            let image: UnsafeMutablePointer<VipsImage>
            do {
                image = try openHeader(base, buffer.count)
            } catch let error as VipsError {
                throw error.decodingError(format: format)
            }
            defer { imagery_vips_unref(image) }
            let (width, height) = (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
            let swapped = vips_image_get_orientation_swap(image) != 0
            var profile: String?
            var bytes: UnsafeRawPointer?
            var length = 0
            if imagery_vips_get_icc(image, &bytes, &length) == 0, let bytes {
                profile = ICCProfile.description(UnsafeRawBufferPointer(start: bytes, count: length)) ?? ""
            }
            let pageHeight = Int(vips_image_get_page_height(image))
            return ImageHeader(
                width: swapped ? height : width, height: swapped ? width : height, format: format,
                orientation: Int(imagery_vips_orientation(image)),
                frames: max(
                    1, Int(imagery_vips_n_pages(image)), pageHeight > 0 && pageHeight < height ? height / pageHeight : 1
                ),
                hasAlpha: vips_image_hasalpha(image) != 0,
                colorSpace: String(cString: imagery_vips_interpretation_name(image)),
                bitsPerChannel: 8 * max(1, Int(vips_format_sizeof(vips_image_get_format(image)))),
                profile: profile
            )
        }
    }
}

/// The one fact of an ICC profile worth showing: its description (`desc` tag, ICC v2 text or v4 `mluc`).
enum ICCProfile {
    static func description(_ bytes: UnsafeRawBufferPointer) -> String? {
        func uint32(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            return Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
        }
        guard let tagCount = uint32(128), tagCount < 1000 else { return nil }
        for index in 0..<tagCount {
            let entry = 132 + 12 * index
            guard let signature = uint32(entry), let offset = uint32(entry + 4), let size = uint32(entry + 8) else {
                return nil
            }
            guard signature == 0x6465_7363 /* desc */, offset + size <= bytes.count, size >= 12,
                let type = uint32(offset)
            else { continue }
            // textDescriptionType
            if type == 0x6465_7363, let count = uint32(offset + 8), count > 0, offset + 12 + count <= bytes.count {
                let text = (0..<count).map { bytes[offset + 12 + $0] }.prefix { $0 != 0 }
                return String(decoding: text, as: UTF8.self)
            }
            if type == 0x6D6C_7563 /* mluc */, let records = uint32(offset + 8), records > 0,
                let length = uint32(offset + 16 + 4), let start = uint32(offset + 16 + 8),
                offset + start + length <= bytes.count
            {
                let units = stride(from: 0, to: length - 1, by: 2).map {
                    UInt16(bytes[offset + start + $0]) << 8 | UInt16(bytes[offset + start + $0 + 1])
                }
                return String(decoding: units, as: UTF16.self).trimmingCharacters(in: .controlCharacters)
            }
            return nil
        }
        return nil
    }
}
