import CJPEG
import Foundation
import Imagery
import ImageryVips

/// The metadata a source brought, written into a JPEG: `ExifBlock` (the kept EXIF block's orientation and
/// size updated in place) and `CJPEG`'s encoder writing the blocks as EXIF, XMP, IPTC and ICC segments.
/// Input: the block, used as all four.
enum ExifTarget {
    static let header = Data(Array("Exif".utf8) + [0, 0])

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        let block = Data(bytes)
        if let oriented = ExifBlock.oriented(block, width: 7, height: 5) {
            try require(oriented.starts(with: header), "an updated block without its Exif header")
            try require(
                oriented.count == block.count + (block.starts(with: header) ? 0 : header.count),
                "updating changed the block's length")
            try require(
                ExifBlock.oriented(oriented, width: 7, height: 5) == oriented, "updating an updated block changed it")
        }
        var image = Image(
            width: 7, height: 5, pixelFormat: .rgb8, pixels: Data(repeating: 128, count: 7 * 5 * 3), sourceFormat: .jpeg
        )
        image.metadata = ImageMetadata(
            iccProfile: block, copyright: String(decoding: bytes.prefix(64), as: UTF8.self), exif: block, xmp: block,
            iptc: block)
        let jpeg: Data
        do {
            jpeg = try VipsImageEncoder().encode(image, as: .jpeg, quality: 80)
        } catch {
            throw FuzzFailure("the JPEG encoder refused metadata: \(error)")
        }
        // libjpeg reads it back in strict mode, with the profile as given.
        var decoded = imagery_jpeg_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = jpeg.withUnsafeBytes {
            imagery_jpeg_decode_scaled($0.baseAddress, $0.count, 1, 1, 0, &decoded, &message, message.count)
        }
        defer { imagery_jpeg_free(&decoded) }
        try require(status == Int32(IMAGERY_JPEG_OK), "libjpeg refused what was written: status \(status)")
        try require((decoded.width, decoded.height) == (7, 5), "written 7x5, read \(decoded.width)x\(decoded.height)")
        let profile = decoded.icc_profile.map { Data(bytes: $0, count: Int(decoded.icc_length)) }
        try require(profile == (block.isEmpty ? nil : block), "the profile read back is not the one written")
    }
}
