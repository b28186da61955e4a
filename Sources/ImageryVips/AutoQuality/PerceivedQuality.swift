import CJPEG
import CQuality
import Foundation
import Imagery

/// The perceived quality of encodings of one image: their SSIMULACRA2 score against it, in the
/// metric's fast mode (the maps with weights of 0.01 or more: within 0.002 of the whole metric on the
/// corpus, about a third of its time). The image's side is prepared once; each encoding is decoded
/// (JPEG by libjpeg, others by libvips, no colour management: the pixels as written) and compared.
/// Pixels are compared as the encoders write them: the first frame, 8-bit, alpha laid onto black.
final class PerceivedQuality {
    private let reference: OpaquePointer
    private let image: Image
    private let format: ImageFormat

    /// Whether encodings in `format` can be read back here to be measured: not JPEG XL, whose libvips
    /// loader is blocked in this process (untrusted); its searches take the maximum quality.
    static func canMeasure(_ format: ImageFormat) -> Bool { format != .jxl }

    /// About how many bytes it holds at most while it scores an encoding of a `pixels`-pixel image:
    /// the prepared reference (5 floats a pixel), a comparison's planes (11) and the decoded pixels (3).
    static func workingMemory(pixels: Int) -> Int { pixels * (16 * 4 + 3) }

    /// - Throws: ``ImageEncodingError/failed(_:)`` when memory runs out.
    init(of image: Image, as format: ImageFormat) throws {
        let prepared = Self.comparable(image)
        let reference = prepared.pixels.withUnsafeBytes { pixels in
            imagery_ssimulacra2_prepare(
                pixels.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(prepared.width), Int32(prepared.height),
                Int32(prepared.pixelFormat.channels), prepared.bytesPerRow, 1
            )
        }
        guard let reference else {
            throw ImageEncodingError.failed(
                "not enough memory to measure the quality of \(image.width) × \(image.height) pixels")
        }
        (self.reference, self.image, self.format) = (reference, prepared, format)
    }

    deinit { imagery_ssimulacra2_release(reference) }

    /// The SSIMULACRA2 score of `data`, an encoding of the image as the format given.
    func score(_ data: Data) throws -> Double {
        let decoded = try decode(data)
        guard decoded.width == image.width, decoded.height == image.height,
            decoded.pixelFormat.channels == image.pixelFormat.channels
        else {
            throw ImageEncodingError.failed(
                "\(format.rawValue) came back \(decoded.width) × \(decoded.height), not \(image.width) × \(image.height)"
            )
        }
        let score = decoded.pixels.withUnsafeBytes { pixels in
            imagery_ssimulacra2_compare(
                reference, pixels.baseAddress?.assumingMemoryBound(to: UInt8.self), decoded.bytesPerRow)
        }
        guard score.isFinite else {
            throw ImageEncodingError.failed(
                "not enough memory to measure the quality of \(image.width) × \(image.height) pixels")
        }
        return score
    }

    private func decode(_ data: Data) throws -> Image {
        guard format == .jpeg else {
            var recipe = ImageRecipe()
            recipe.keepsColorProfile = true
            return Self.comparable(try VipsImageDecoder().decode(data, recipe: recipe))
        }
        var output = imagery_jpeg_image()
        var message = [CChar](repeating: 0, count: 200)
        let status = data.withUnsafeBytes { bytes in
            imagery_jpeg_decode_scaled(bytes.baseAddress, bytes.count, 1, 0, 0, &output, &message, message.count)
        }
        defer { imagery_jpeg_free(&output) }
        guard status == IMAGERY_JPEG_OK, let pixels = output.pixels else {
            throw ImageEncodingError.failed(
                "JPEG written could not be read back: "
                    + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let count = Int(output.width) * Int(output.height) * Int(output.components)
        return Image(
            width: Int(output.width), height: Int(output.height), pixelFormat: output.components == 1 ? .gray8 : .rgb8,
            pixels: Data(bytes: pixels, count: count), sourceFormat: .jpeg
        )
    }

    /// What the encoders write of `image`: its first frame, 8-bit, without alpha.
    private static func comparable(_ image: Image) -> Image {
        image.frame(0).withEightBitChannels().flattenedOntoBlack()
    }
}
