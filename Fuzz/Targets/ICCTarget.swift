import CColorTransform
import CVips
import Foundation
import ImageryVips

/// Imagery's own ICC transforms (`CColorTransform`, little cms with a cache of transforms) with a
/// hostile profile as the source, and as the destination. Input: a byte (bands 3 or 4, which side
/// is hostile), 16 pixels, then the profile.
enum ICCTarget {
    /// libvips' sRGB profile (the destination of every source profile in the server).
    static let sRGB: [UInt8] = {
        _ = try? VipsImageDecoder().inspect(Data("GIF89a".utf8))  // starts libvips (its profiles with it)
        var bytes: UnsafeRawPointer?
        var length = 0
        guard imagery_vips_srgb_profile(&bytes, &length) == 0, let bytes else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }()

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        var reader = FuzzReader(bytes)
        let mode = reader.byte()
        let bands = mode & 1 == 0 ? 3 : 4
        let pixels = reader.bytes(16 * bands)
        let profile = reader.rest()
        try require(!sRGB.isEmpty, "no sRGB profile from libvips")
        let (source, destination) = mode & 2 == 0 ? (profile, sRGB) : (sRGB, profile)
        var converted = pixels
        let status = source.withUnsafeBytes { source in
            destination.withUnsafeBytes { destination in
                imagery_icc_transform_rgb8(
                    source.baseAddress, source.count, destination.baseAddress, destination.count, &converted, 16,
                    Int32(bands), nil)
            }
        }
        try require(status == 0 || status == -1, "status \(status)")
        if status == -1 { try require(converted == pixels, "a refused transform changed the pixels") }
        if bands == 4 {
            let alpha = { (pixels: [UInt8]) -> [UInt8] in stride(from: 3, to: pixels.count, by: 4).map { pixels[$0] } }
            try require(alpha(converted) == alpha(pixels), "the transform changed alpha")
        }
        // Done again it finds the transform kept, and gives the same pixels.
        var again = pixels
        var built: Int32 = -1
        let second = source.withUnsafeBytes { source in
            destination.withUnsafeBytes { destination in
                imagery_icc_transform_rgb8(
                    source.baseAddress, source.count, destination.baseAddress, destination.count, &again, 16,
                    Int32(bands), &built)
            }
        }
        try require(second == status && again == converted, "the same transform twice gave different results")
    }
}
