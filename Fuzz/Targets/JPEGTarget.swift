import CJPEG
import Foundation

/// `CJPEG`'s scaled decode (Imagery's own C on libjpeg-turbo: the progressive scans a scale does not
/// need are skipped without being entropy-decoded), on any bytes, and its decode of a preview (the
/// bytes taken for the first part of a progressive file). Input: a byte (the scale, 1/2/4/8, and
/// strict mode), then the file.
enum JPEGTarget {
    /// Small enough that a fuzzer's claims of huge images are refused fast.
    static let maximumPixels = 1 << 22

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        guard let mode = bytes.first else { return }
        let data = Array(bytes.dropFirst())
        let scale = 1 << Int(mode & 3)
        let strict = Int32((mode >> 2) & 1)
        let scaled = try decode(data, scale: scale, strict: strict)
        // The same bytes as a preview: as safe, and of the same size when both decode.
        if let preview = try decode(data, scale: scale, strict: 0, prefix: true), let scaled {
            try require(
                (preview.width, preview.height, preview.components) == (scaled.width, scaled.height, scaled.components),
                "a preview of \(preview.width)x\(preview.height), the decode \(scaled.width)x\(scaled.height)")
        }
        guard let scaled, scale > 1 else { return }
        // The same file at full size: the scaled size is the full size divided, rounded up (libjpeg's rule).
        guard let full = try decode(data, scale: 1, strict: strict) else {
            // Full size may meet damage the scaled decode skipped (a scan it never reads): only in a progressive file.
            try require(
                scaled.scansDecoded < scaled.scansInFile,
                "a \(scale)x scaled decode succeeded where the full one failed, skipping no scan")
            return
        }
        let expected = ((full.width + scale - 1) / scale, (full.height + scale - 1) / scale)
        try require(
            (scaled.width, scaled.height) == expected,
            "1/\(scale) gave \(scaled.width)x\(scaled.height), full \(full.width)x\(full.height)")
        try require(scaled.components == full.components, "components differ by scale")
    }

    struct Decoded {
        let width, height, components, scansInFile, scansDecoded: Int
    }

    /// The decode's result, checked: nil when it refused (with a message and nothing allocated).
    /// `prefix`: the preview decode (`imagery_jpeg_decode_prefix`, never strict).
    static func decode(_ data: [UInt8], scale: Int, strict: Int32, prefix: Bool = false) throws(FuzzFailure)
        -> Decoded?
    {
        var image = imagery_jpeg_image()
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { buffer in
            prefix
                ? imagery_jpeg_decode_prefix(
                    buffer.baseAddress, buffer.count, Int32(scale), maximumPixels, &image, &message, message.count)
                : imagery_jpeg_decode_scaled(
                    buffer.baseAddress, buffer.count, Int32(scale), strict, maximumPixels, &image, &message,
                    message.count)
        }
        defer { imagery_jpeg_free(&image) }
        guard status == Int32(IMAGERY_JPEG_OK) else {
            try require(
                image.pixels == nil && image.icc_profile == nil, "status \(status) left pixels or a profile allocated")
            try require(
                [IMAGERY_JPEG_CORRUPT, IMAGERY_JPEG_UNSUPPORTED, IMAGERY_JPEG_TOO_LARGE, IMAGERY_JPEG_NO_MEMORY].map(
                    Int32.init
                ).contains(status), "unknown status \(status)")
            try require(message[0] != 0 && message.contains(0), "status \(status) without a message")
            return nil
        }
        try require(image.width > 0 && image.height > 0 && image.pixels != nil, "OK without pixels")
        try require(image.components == 1 || image.components == 3, "\(image.components) components")
        try require(Int(image.width) * Int(image.height) <= maximumPixels, "decoded past the pixel limit")
        try require(
            image.scans_decoded >= 1 && image.scans_decoded <= image.scans_in_file,
            "\(image.scans_decoded) of \(image.scans_in_file) scans")
        try require((image.icc_profile == nil) == (image.icc_length == 0), "a profile pointer and length disagree")
        // Every pixel is readable (AddressSanitizer checks the buffer's end).
        let count = Int(image.width) * Int(image.height) * Int(image.components)
        var sum = 0
        for index in stride(from: 0, to: count, by: max(1, count / 64)) { sum &+= Int(image.pixels[index]) }
        sum &+= Int(image.pixels[count - 1])
        _ = sum
        return Decoded(
            width: Int(image.width), height: Int(image.height), components: Int(image.components),
            scansInFile: Int(image.scans_in_file), scansDecoded: Int(image.scans_decoded)
        )
    }
}
