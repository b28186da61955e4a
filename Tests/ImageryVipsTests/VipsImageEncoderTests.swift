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
