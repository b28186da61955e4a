import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@Suite("VipsImageEncoder")
struct VipsImageEncoderTests {
    @Test(arguments: [ImageFormat.jpeg, .png, .webp, .gif, .avif])
    func reencodesAThumbnailThatDecodesBackToTheSameSize(format: ImageFormat) throws {
        let decoder = VipsImageDecoder()
        let image = try decoder.decode(Fixtures.data("chelsea.png"), thumbnail: .init(width: 120, height: 80))
        let encoded: Data
        do {
            encoded = try VipsImageEncoder().encode(image, as: format, quality: 70)
        } catch ImageEncodingError.unsupportedFormat {
            return  // libvips here was built without this format's encoder
        }
        #expect(ImageFormat(sniffing: encoded) == format)
        let again = try decoder.decode(encoded, thumbnail: nil)
        #expect((again.width, again.height) == (120, 80))
    }

    @Test func flattensAlphaForJPEG() throws {
        let pixels = Data((0..<(4 * 4)).flatMap { _ in [UInt8(255), 0, 0, 128] })
        let image = Image(width: 4, height: 4, pixelFormat: .rgba8, pixels: pixels, sourceFormat: .png)
        let jpeg = try VipsImageEncoder().encode(image, as: .jpeg, quality: 90)
        let decoded = try VipsImageDecoder().decode(jpeg, thumbnail: nil)
        #expect(decoded.pixelFormat == .rgb8)
        let png = try VipsImageEncoder().encode(image, as: .png, quality: nil)
        #expect(try VipsImageDecoder().decode(png, thumbnail: nil).pixelFormat == .rgba8)
    }
}

/// The output options: JPEG XL, lossless, progressive and interlaced, a byte limit.
@Suite("Encoding options")
struct EncodingOptionsTests {
    let decoder = VipsImageDecoder()
    let encoder = VipsImageEncoder()

    func thumbnail() throws -> Image {
        try decoder.decode(Fixtures.data("chelsea.png"), thumbnail: .init(width: 200, height: 133, fit: .inside))
    }

    @Test func writesJPEGXL() throws {
        let data = try encoder.encode(thumbnail(), as: .jxl, quality: 75)
        #expect(ImageFormat(sniffing: data) == .jxl)
        #expect(data.count > 100)
        let lossless = try encoder.encode(thumbnail(), as: .jxl, options: .init(lossless: true))
        #expect(lossless.count > data.count)
    }

    @Test func losslessWebPGivesThePixelsBack() throws {
        let image = try thumbnail()
        let data = try encoder.encode(image, as: .webp, options: .init(lossless: true))
        let again = try decoder.decode(data, thumbnail: nil)
        #expect(again.pixels == image.pixels)
        let lossy = try decoder.decode(try encoder.encode(image, as: .webp, quality: 80), thumbnail: nil)
        #expect(lossy.pixels != image.pixels)
    }

    @Test func progressiveJPEGAndInterlacedPNG() throws {
        let image = try thumbnail()
        func hasMarker(_ data: Data, _ marker: UInt8) -> Bool {
            zip(data, data.dropFirst()).contains { $0 == 0xFF && $1 == marker }
        }
        let baseline = try encoder.encode(image, as: .jpeg, quality: 80)
        let progressive = try encoder.encode(image, as: .jpeg, options: .init(quality: 80, progressive: true))
        #expect(hasMarker(baseline, 0xC0) && !hasMarker(baseline, 0xC2))
        #expect(hasMarker(progressive, 0xC2))
        let interlaced = try encoder.encode(image, as: .png, options: .init(progressive: true))
        let plain = try encoder.encode(image, as: .png)
        #expect(interlaced[28] == 1 && plain[28] == 0)  // IHDR's interlace method
        #expect(try decoder.decode(interlaced, thumbnail: nil).pixels == decoder.decode(plain, thumbnail: nil).pixels)
    }

    /// A byte limit lowers the quality until the output fits: the result is at most the limit and
    /// is the highest quality that fits (one quality step up is over it).
    @Test(arguments: [ImageFormat.jpeg, .webp, .avif, .jxl])
    func aByteLimitLowersTheQualityUntilItFits(format: ImageFormat) throws {
        let image = try thumbnail()
        let full = try encoder.encode(image, as: format, quality: 90)
        let smallest = try encoder.encode(image, as: format, quality: 1)
        let limit = (full.count + smallest.count) / 2
        let bounded = try encoder.encode(image, as: format, options: .init(quality: 90, maximumBytes: limit))
        #expect(bounded.count <= limit, "\(format): \(bounded.count) > \(limit)")
        #expect(bounded.count > smallest.count, "\(format): it went lower than it had to")
        // Past what even quality 1 reaches: the smallest there is.
        let impossible = try encoder.encode(image, as: format, options: .init(quality: 90, maximumBytes: 10))
        #expect(impossible.count <= smallest.count)
        // Lossless formats are written as they are.
        let png = try encoder.encode(image, as: .png, options: .init(maximumBytes: 10))
        #expect(png == (try encoder.encode(image, as: .png)))
    }
}
