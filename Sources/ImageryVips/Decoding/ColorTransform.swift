import CColorTransform
import CVips
import Foundation

/// Embedded ICC profiles to sRGB on pixels Imagery holds (a JPEG decoded by `CJPEG`), with little
/// cms transforms kept by profile (`CColorTransform`) instead of one built per image as libvips'
/// `icc_transform` does (about 5 ms each, more than converting a thumbnail's pixels). The same
/// destination profile, intent and library as libvips' conversion in
/// ``Vips/normalize(_:keepingProfile:keepingHighBitDepth:)``, which stays the path for images libvips decodes.
enum ColorTransform {
    /// libvips' built-in sRGB profile; `nil` if libvips cannot load it.
    static let sRGBProfile: Data? = {
        guard (try? Vips.start()) != nil else { return nil }
        var bytes: UnsafeRawPointer?
        var length = 0
        guard imagery_vips_srgb_profile(&bytes, &length) == 0, let bytes else { return nil }
        return Data(bytes: bytes, count: length)
    }()

    /// Converts `count` pixels of `bands` 8-bit samples (3 or 4, alpha untouched) in place from
    /// `profile` to sRGB. `false`, with the pixels untouched, when the profile is not an RGB profile
    /// little cms can read: then the caller leaves it to libvips.
    static func convertToSRGB(
        _ pixels: UnsafeMutablePointer<UInt8>, count: Int, bands: Int, profile: UnsafeRawBufferPointer
    ) -> Bool {
        guard let destination = sRGBProfile, let source = profile.baseAddress, !profile.isEmpty else { return false }
        return destination.withUnsafeBytes { destination in
            imagery_icc_transform_rgb8(
                source, profile.count, destination.baseAddress, destination.count, pixels, count, Int32(bands), nil)
                == 0
        }
    }
}
