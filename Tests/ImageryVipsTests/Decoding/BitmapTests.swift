import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// BMP and ICO through Imagery's own readers and writers (``BMP``, ``ICO``): every layout of
/// Tests/Fixtures/bitmaps decodes to the pixels Pillow reads from it (scripts/make-bitmap-fixtures),
/// what browsers do where Pillow differs, and every pixel format round-trips.
@Suite("BMP and ICO")
struct BitmapTests {
    let decoder = VipsImageDecoder(rejectsCorruptData: true)
    let encoder = VipsImageEncoder()

    static let fixtures = [
        "rgb24.bmp", "gray8.bmp", "mono1.bmp", "palette8.bmp", "palette4.bmp", "core-palette8.bmp", "rgb555.bmp",
        "rgb565-bitfields.bmp", "argb32-v5.bmp", "rgb24-topdown.bmp", "rle8.bmp", "rle4.bmp", "icon-png.ico",
        "icon-bitmap.ico",
    ]

    /// Every pixel as RGBA, whatever the format.
    static func rgba(_ image: Image) -> [[Int]] {
        let image = image.withEightBitChannels()
        let size = image.pixelFormat.bytesPerPixel
        let bytes = [UInt8](image.pixels)
        return stride(from: 0, to: bytes.count, by: size).map { offset in
            let p = bytes[offset..<offset + size].map(Int.init)
            let alpha = image.pixelFormat.hasAlpha ? p[size - 1] : 255
            return image.pixelFormat.isGray ? [p[0], p[0], p[0], alpha] : [p[0], p[1], p[2], alpha]
        }
    }

    @Test(arguments: fixtures)
    func decodesAsPillowDoes(name: String) throws {
        let data = try Fixtures.data("bitmaps/\(name)")
        let format: ImageFormat = name.hasSuffix(".ico") ? .ico : .bmp
        #expect(ImageFormat(sniffing: data) == format)
        let decoded = try decoder.decode(data, recipe: ImageRecipe())
        let expected = try decoder.decode(try Fixtures.data("bitmaps/\(name).expected.png"), recipe: ImageRecipe())
        #expect(decoded.sourceFormat == format)
        #expect((decoded.width, decoded.height) == (expected.width, expected.height))
        // Pillow widens 5- and 6-bit channels by shifting, this reader by rounding: a level apart at most.
        let tolerance = name.hasPrefix("rgb5") ? 4 : 0
        var worst = 0
        for (pixel, wanted) in zip(Self.rgba(decoded), Self.rgba(expected)) {
            // Colour under full transparency is no colour.
            if pixel[3] == 0, wanted[3] == 0 { continue }
            worst = max(worst, zip(pixel, wanted).map { abs($0 - $1) }.max()!)
        }
        #expect(worst <= tolerance, "\(name): a channel \(worst) levels from Pillow's")
        let header = try decoder.inspect(data)
        #expect((header.width, header.height, header.format) == (decoded.width, decoded.height, format))
    }

    @Test(arguments: PixelFormat.allCases)
    func everyPixelFormatRoundTripsThroughBMP(format: PixelFormat) throws {
        let source = HighBitDepthTests.gradient(width: 21, height: 5, format: format)
        let data = try encoder.encode(source, as: .bmp)
        #expect(ImageFormat(sniffing: data) == .bmp)
        let decoded = try BMP.decode(data, maximumPixels: 1_000)
        // 8 bits, alpha only where a pixel is not opaque (none is in the gradient's right half: all 0 there).
        #expect(Self.rgba(decoded) == Self.rgba(source))
    }

    @Test func anIconIsOnePNGPictureOfAtMost256() throws {
        let photo = try decoder.decode(try Fixtures.data("chelsea.png"), recipe: ImageRecipe())
        let icon = try encoder.encode(photo, as: .ico)
        #expect(ImageFormat(sniffing: icon) == .ico)
        let png = try #require(try ICO.largestPNG(in: icon))
        let decoded = try decoder.decode(icon, recipe: ImageRecipe())
        #expect(max(decoded.width, decoded.height) == 256)
        #expect(decoded == (try decoder.decode(png, recipe: ImageRecipe())).withSourceFormat(.ico))
        // A small one keeps its size.
        let small = try decoder.decode(
            try encoder.encode(HighBitDepthTests.gradient(width: 16, height: 16, format: .rgba8), as: .ico),
            recipe: ImageRecipe())
        #expect((small.width, small.height, small.pixelFormat) == (16, 16, .rgba8))
    }

    /// HEIC (HEVC in HEIF) is written, and read back as a HEIC source, the same picture.
    @Test func heicRoundTrips() throws {
        let photo = try decoder.decode(try Fixtures.data("chelsea.png"), recipe: ImageRecipe())
        let heic: Data
        do {
            heic = try encoder.encode(photo, as: .heic, quality: 90)
        } catch ImageEncodingError.unsupportedFormat {
            return  // libheif here has no HEVC encoder
        }
        #expect(ImageFormat(sniffing: heic) == .heic)
        let decoded = try decoder.decode(heic, recipe: ImageRecipe())
        #expect((decoded.width, decoded.height, decoded.sourceFormat) == (photo.width, photo.height, .heic))
        #expect(GeneratedImages.meanDifference(decoded, photo) < 4)
    }

    @Test func pixelsARunLengthBitmapSkipsStayTransparent() throws {
        // 4 × 3, RLE8: row 0 ends after 2 pixels, a jump skips a pixel of row 1, the bitmap ends before row 2.
        let palette: [UInt8] = [0, 0, 0, 0, 0, 0, 255, 0]  // 0: black, 1: red
        let runs: [UInt8] = [2, 1, 0, 0, /* row 1 */ 1, 1, 0, 2, 1, 0, 2, 1, 0, 0, 0, 1]
        let data = Self.bitmap(width: 4, height: 3, bits: 8, compression: 1, palette: palette, pixels: runs)
        let rows = Self.rgba(try decoder.decode(data, recipe: ImageRecipe()))
        let red = [255, 0, 0, 255]
        let none = [0, 0, 0, 0]
        #expect(Array(rows[0..<4]) == [none, none, none, none])  // the top row: never reached
        #expect(Array(rows[4..<8]) == [red, none, red, red])  // row 1 (second from the bottom)
        #expect(Array(rows[8..<12]) == [red, red, none, none])  // row 0 (the bottom)
    }

    @Test func thirtyTwoBitsWhoseAlphaIsAllZeroAreOpaque() throws {
        let pixels: [UInt8] = [10, 20, 30, 0, 40, 50, 60, 0]  // BGRA, alpha 0 everywhere
        let data = Self.bitmap(width: 2, height: 1, bits: 32, compression: 0, palette: [], pixels: pixels)
        let image = try BMP.decode(data, maximumPixels: 10)
        #expect(image.pixelFormat == .rgb8)
        #expect([UInt8](image.pixels) == [30, 20, 10, 60, 50, 40])
    }

    @Test(arguments: [
        "a header of 200 bytes", "pixels cut short", "7 bits per pixel", "a JPEG inside", "a zero width",
        "a pixel offset past the end",
    ])
    func damagedBitmapsAreRefusedWithAReason(damage: String) throws {
        var bytes = [UInt8](
            Self.bitmap(
                width: 3, height: 2, bits: 24, compression: 0, palette: [], pixels: [UInt8](repeating: 9, count: 24)))
        switch damage {
        case "a header of 200 bytes": bytes[14] = 200
        case "pixels cut short": bytes.removeLast(3)
        case "7 bits per pixel": bytes[28] = 7
        case "a JPEG inside": bytes[30] = 4
        case "a zero width": bytes[18...21] = [0, 0, 0, 0]
        default: bytes[10...13] = [0xFF, 0xFF, 0, 0]
        }
        #expect(throws: ImageDecodingError.self, "\(damage)") { try BMP.decode(Data(bytes), maximumPixels: 100) }
        #expect(throws: ImageDecodingError.self, "\(damage)") { try decoder.decode(Data(bytes), recipe: ImageRecipe()) }
    }

    @Test func theSizeIsCheckedBeforeAnyPixelIsRead() throws {
        // 60 000 × 60 000 declared in 60 bytes: refused by the limit, no 14 GB buffer.
        let data = Self.bitmap(width: 60_000, height: 60_000, bits: 24, compression: 0, palette: [], pixels: [])
        #expect(throws: ImageDecodingError.tooManyPixels(width: 60_000, height: 60_000, limit: 100_000_000)) {
            try decoder.decode(data, recipe: ImageRecipe())
        }
    }

    /// A BMP with a 40-byte header; `pixels` as stored (rows bottom first, padded).
    static func bitmap(width: Int, height: Int, bits: Int, compression: Int, palette: [UInt8], pixels: [UInt8]) -> Data
    {
        var data = Data("BM".utf8)
        func put32(_ value: Int) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { data.append(contentsOf: $0) }
        }
        func put16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
        let offset = 14 + 40 + palette.count
        put32(offset + pixels.count)
        put32(0)
        put32(offset)
        put32(40)
        put32(width)
        put32(height)
        put16(1)
        put16(bits)
        put32(compression)
        put32(pixels.count)
        put32(2835)
        put32(2835)
        put32(palette.count / 4)
        put32(0)
        data.append(contentsOf: palette)
        data.append(contentsOf: pixels)
        return data
    }
}

extension Image {
    func withSourceFormat(_ format: ImageFormat) -> Image {
        Image(
            width: width, height: height, pixelFormat: pixelFormat, pixels: pixels, sourceFormat: format,
            metadata: metadata, animation: animation)
    }
}
