import CJPEG
import Foundation
import Imagery

/// JPEG through `CJPEG`'s encoder on libjpeg-turbo: Huffman tables optimised for each image, the tuned
/// quantisation tables, trellis quantisation, 4:2:0 chroma below quality 90 (4:4:4 from 90, as libvips
/// does), progressive scans for large images. At equal perceived quality this needs fewer bytes than
/// libvips' `jpegsave` with `optimize_coding` (imgproxy's settings) and no more than mozjpeg as sharp
/// sets it, by both butteraugli and SSIMULACRA2 (BENCHMARKS.md, `scripts/output-quality`).
///
/// Pixels with alpha are flattened onto black (a recipe's background has chosen another colour
/// before this); 16-bit ones are reduced to 8 bits. Metadata: the ICC profile, XMP and IPTC blocks as
/// kept; a kept EXIF block with its orientation made 1 and its pixel size the output's (the pixels are
/// turned already); a copyright notice alone as a small EXIF block of its own.
enum JPEGWriter {
    /// From this many pixels on (about 450 × 450), progressive scans: smaller on average (0.993–0.998x at
    /// 512 px and more on the corpus, with optimised tables), larger below (1.022x at 256 px, 1.086x at
    /// 128 px). A request for progressive gets it at any size.
    static let progressiveFromPixels = 200_000

    /// `image`'s first frame as a JPEG at `quality` (1...100).
    static func encode(
        _ image: Image, quality: Int, progressive: Bool, flattensOnto background: ImageRecipe.Color? = nil
    ) throws -> Data {
        let prepared = image.frame(0).withEightBitChannels().flattened(onto: background)
        let metadata = image.metadata
        let exif =
            metadata.exif.flatMap { ExifBlock.oriented($0, width: image.width, height: image.height) }
            ?? metadata.copyright.map { ExifBlock.copyright($0) }
        var settings = imagery_jpeg_encode_settings()
        settings.quality = Int32(quality)
        settings.tables = Int32(IMAGERY_JPEG_TABLES_TUNED)
        settings.progressive = progressive || prepared.width * prepared.height >= progressiveFromPixels ? 1 : 0
        settings.full_chroma = quality >= 90 ? 1 : 0
        settings.trellis = 1
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = withBytes(exif) { exif in
            withBytes(metadata.xmp) { xmp in
                withBytes(metadata.iptc) { iptc in
                    withBytes(metadata.iccProfile) { icc in
                        (settings.exif, settings.exif_length) = (exif.base, exif.count)
                        (settings.xmp, settings.xmp_length) = (xmp.base, xmp.count)
                        (settings.iptc, settings.iptc_length) = (iptc.base, iptc.count)
                        (settings.icc, settings.icc_length) = (icc.base, icc.count)
                        return prepared.pixels.withUnsafeBytes { pixels in
                            imagery_jpeg_encode(
                                pixels.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(prepared.width),
                                Int32(prepared.height),
                                Int32(prepared.pixelFormat.channels), prepared.bytesPerRow, &settings, &output, &length,
                                &message, message.count
                            )
                        }
                    }
                }
            }
        }
        guard status == IMAGERY_JPEG_OK, let output else {
            throw ImageEncodingError.failed(
                "JPEG: " + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return Data(
            bytesNoCopy: output, count: length,
            deallocator: .custom { pointer, _ in
                imagery_jpeg_free_encoded(pointer.assumingMemoryBound(to: UInt8.self))
            })
    }

    private static func withBytes<Result>(
        _ data: Data?, _ body: ((base: UnsafePointer<UInt8>?, count: Int)) -> Result
    ) -> Result {
        guard let data, !data.isEmpty else { return body((nil, 0)) }
        return data.withUnsafeBytes { body(($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count)) }
    }
}
