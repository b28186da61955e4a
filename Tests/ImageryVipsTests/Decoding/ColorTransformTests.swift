import CColorTransform
import CJPEG
import Foundation
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryVips

/// `CColorTransform`: ICC profiles to sRGB with kept little cms transforms. (That its pixels are
/// libvips' own conversion, byte for byte, `JPEGScanSkippingTests` shows on every JPEG with a profile.)
@Suite("Colour transforms")
struct ColorTransformTests {
    /// A fixture decoded by `CJPEG`: its RGB pixels and its embedded profile.
    static func decoded(_ name: String) throws -> (pixels: [UInt8], profile: [UInt8]) {
        let data = try Fixtures.data(name)
        var image = imagery_jpeg_image()
        let status = data.withUnsafeBytes {
            imagery_jpeg_decode_scaled($0.baseAddress, $0.count, 4, 1, 0, &image, nil, 0)
        }
        try #require(status == Int32(IMAGERY_JPEG_OK) && image.components == 3 && image.icc_profile != nil)
        defer { imagery_jpeg_free(&image) }
        return (
            Array(UnsafeBufferPointer(start: image.pixels, count: Int(image.width * image.height * 3))),
            Array(UnsafeBufferPointer(start: image.icc_profile, count: Int(image.icc_length)))
        )
    }

    /// `profile` with its 16-byte profile ID (header bytes 84–99, which little cms does not check)
    /// set from `n`: another profile to the cache, the same colours.
    static func variant(_ profile: [UInt8], _ n: Int) -> [UInt8] {
        var bytes = profile
        withUnsafeBytes(of: UInt64(n).bigEndian) { for (i, byte) in $0.enumerated() { bytes[84 + i] = byte } }
        bytes[92] = 0x1C
        return bytes
    }

    /// Converts `pixels` (RGB) by `profile`; whether it built a transform, or `nil` when refused.
    static func convert(_ pixels: inout [UInt8], _ profile: [UInt8], bands: Int = 3) throws -> Bool? {
        let destination = try #require(ColorTransform.sRGBProfile)
        var built: Int32 = -1
        let status = destination.withUnsafeBytes { destination in
            profile.withUnsafeBytes { source in
                pixels.withUnsafeMutableBufferPointer {
                    imagery_icc_transform_rgb8(
                        source.baseAddress, source.count, destination.baseAddress, destination.count, $0.baseAddress,
                        $0.count / bands,
                        Int32(bands), &built
                    )
                }
            }
        }
        return status == 0 ? built == 1 : nil
    }

    @Test func aTransformIsBuiltOnceAndKept() throws {
        let (pixels, profile) = try Self.decoded("rocket.jpg")
        let unique = Self.variant(profile, 1_000_003)  // a profile no other test converts by
        var first = pixels
        var second = pixels
        #expect(try Self.convert(&first, unique) == true)
        #expect(try Self.convert(&second, unique) == false)
        #expect(
            first == second && first != pixels, "the same conversion both times, and not none (Adobe RGB is not sRGB)")
    }

    /// More profiles than are kept, converted from many threads at once: every conversion is the
    /// single-threaded one (a transform evicted while another thread uses it lives until that one is done).
    @Test func manyProfilesFromManyThreadsGiveTheSameConversion() async throws {
        let (pixels, profile) = try Self.decoded("rocket.jpg")
        var converted = pixels
        #expect(try Self.convert(&converted, profile) != nil)
        let expected = converted
        let profiles = (0..<40).map { Self.variant(profile, $0) }
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var same = true
                    for round in 0..<25 {
                        var copy = pixels
                        let converted = try Self.convert(&copy, profiles[(task * 7 + round * 3) % profiles.count])
                        same = same && converted != nil && copy == expected
                    }
                    return same
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }

    /// RGBA: the colours converted as RGB would be, the alpha untouched.
    @Test func alphaIsLeftAsItIs() throws {
        let (pixels, profile) = try Self.decoded("rocket.jpg")
        var rgb = pixels
        _ = try Self.convert(&rgb, profile)
        var rgba = [UInt8]()
        for index in stride(from: 0, to: pixels.count, by: 3) {
            rgba += pixels[index..<index + 3] + [UInt8(index / 3 % 256)]
        }
        #expect(try Self.convert(&rgba, profile, bands: 4) != nil)
        for index in stride(from: 0, to: pixels.count, by: 3) where index / 3 < 5_000 {
            let pixel = index / 3
            #expect(
                Array(rgba[pixel * 4..<pixel * 4 + 3]) == Array(rgb[index..<index + 3])
                    && rgba[pixel * 4 + 3] == UInt8(pixel % 256))
        }
    }

    /// A profile little cms cannot read, or one that is not RGB, is refused with the pixels untouched.
    @Test func aBrokenOrForeignProfileIsRefused() throws {
        let (pixels, profile) = try Self.decoded("rocket.jpg")
        var truncated = profile
        truncated.removeLast(profile.count / 2)
        var grey = profile
        grey[16..<20] = [0x47, 0x52, 0x41, 0x59]  // colour space "GRAY"
        for broken in [truncated, grey, [UInt8](repeating: 0x41, count: 600), []] {
            var copy = pixels
            #expect(try Self.convert(&copy, broken) == nil)
            #expect(copy == pixels)
        }
        var copy = pixels
        #expect(try Self.convert(&copy, profile, bands: 2) == nil)
    }
}
