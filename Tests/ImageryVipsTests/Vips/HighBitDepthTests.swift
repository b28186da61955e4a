import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// 16-bit sources (imgproxy's `preserve_hdr`, ``ImageRecipe/keepsHighBitDepth``): kept at 16 bits
/// through decode, processing and a format that holds them, reduced to 8 for everything else.
@Suite("High bit depth")
struct HighBitDepthTests {
    let decoder = VipsImageDecoder(rejectsCorruptData: true)
    let encoder = VipsImageEncoder()

    static func gradient(width: Int = 64, height: Int = 32, format: PixelFormat = .rgb16) -> Image {
        GeneratedImages.deepGradient(width: width, height: height, format: format)
    }

    static func samples(_ image: Image) -> [UInt16] {
        image.pixels.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
    }

    var keeping: ImageRecipe {
        var recipe = ImageRecipe()
        recipe.keepsHighBitDepth = true
        return recipe
    }

    @Test(arguments: [PixelFormat.gray16, .grayAlpha16, .rgb16, .rgba16])
    func aSixteenBitPNGComesBackSampleForSample(format: PixelFormat) throws {
        let source = Self.gradient(format: format)
        let png = try encoder.encode(source, as: .png)
        if let header = try VipsHeader.read(png, format: .png) {
            #expect(header["format"] == "ushort")
            #expect(header["interpretation"] == (format.isGray ? "grey16" : "rgb16"))
        }
        let decoded = try decoder.decode(png, recipe: keeping)
        #expect(decoded.pixelFormat == format)
        #expect(Self.samples(decoded) == Self.samples(source))
    }

    @Test func withoutTheRecipeASixteenBitSourceDecodesToEightBits() throws {
        let source = Self.gradient()
        let decoded = try decoder.decode(try encoder.encode(source, as: .png), recipe: ImageRecipe())
        #expect(decoded.pixelFormat == .rgb8)
        let expected = source.withEightBitChannels()
        #expect(GeneratedImages.meanDifference(decoded, expected) < 0.6)
    }

    @Test func aResizeKeepsTheSixteenBits() throws {
        var recipe = keeping
        recipe.resize = ImageRequest.Thumbnail(width: 32, height: 16, fit: .fill)
        let resized = try decoder.decode(try encoder.encode(Self.gradient(), as: .png), recipe: recipe)
        #expect((resized.width, resized.height, resized.pixelFormat) == (32, 16, .rgb16))
        // Precision 8 bits cannot hold survives the resize.
        #expect(Self.samples(resized).filter { $0 % 257 != 0 }.count > 1_000)
        // and it is the same picture as the 8-bit resize.
        recipe.keepsHighBitDepth = false
        let eightBit = try decoder.decode(try encoder.encode(Self.gradient(), as: .png), recipe: recipe)
        #expect(GeneratedImages.meanDifference(resized.withEightBitChannels(), eightBit) < 2)
    }

    @Test func anEightBitSourceStaysEightBits() throws {
        let source = Self.gradient().withEightBitChannels()
        let decoded = try decoder.decode(try encoder.encode(source, as: .png), recipe: keeping)
        #expect(decoded.pixelFormat == .rgb8)
    }

    @Test func aColouredBackgroundOnTranslucentGreyGivesSixteenBitColour() throws {
        // imgproxy's flatten table: a 16-bit grey source on a red background is RGB16.
        var recipe = keeping
        recipe.background = ImageRecipe.Color(red: 255, green: 0, blue: 0)
        let flattened = try decoder.decode(
            try encoder.encode(Self.gradient(format: .grayAlpha16), as: .png), recipe: recipe)
        #expect(flattened.pixelFormat == .rgb16)
        let samples = Self.samples(flattened)
        let lastPixel = Array(samples.suffix(3))  // right half: transparent, so the background
        #expect(lastPixel == [65_535, 0, 0])
    }

    @Test func anEightBitWatermarkOnASixteenBitImageKeepsSixteen() throws {
        var decoder = decoder
        decoder.watermarks = [
            "mark": try encoder.encode(
                GeneratedImages.image(width: 20, height: 10) { _, _ in [0, 0, 255, 255] }, as: .png)
        ]
        var recipe = keeping
        recipe.watermark = ImageRecipe.Watermark(name: "mark", opacity: 0.5)
        let marked = try decoder.decode(try encoder.encode(Self.gradient(format: .gray16), as: .png), recipe: recipe)
        #expect(marked.pixelFormat == .rgb16)  // a colour mark on grey: colour, at the image's depth
    }

    @Test(arguments: [ImageFormat.tiff, .avif, .jxl])
    func otherFormatsThatHoldMoreThanEightBitsKeepThem(format: ImageFormat) throws {
        let source = Self.gradient()
        let encoded: Data
        do {
            encoded = try encoder.encode(source, as: format, quality: 100)
        } catch ImageEncodingError.unsupportedFormat {
            return  // libvips here was built without it
        }
        guard format != .jxl else {  // written here, not read (libvips 8.14's JPEG XL loader is in the untrusted set)
            if let header = try VipsHeader.read(encoded, format: format) { #expect(header["format"] == "ushort") }
            return
        }
        let decoded = try decoder.decode(encoded, recipe: keeping)
        #expect(decoded.pixelFormat == .rgb16)
        #expect(GeneratedImages.meanDifference(decoded.withEightBitChannels(), source.withEightBitChannels()) < 2)
    }

    @Test(arguments: [ImageFormat.jpeg, .webp, .gif])
    func aFormatOfEightBitsGetsTheSamePictureAsFromEightBits(format: ImageFormat) throws {
        let source = Self.gradient(format: .rgba16)
        let fromSixteen = try decoder.decode(try encoder.encode(source, as: format), recipe: ImageRecipe())
        let fromEight = try decoder.decode(
            try encoder.encode(source.withEightBitChannels(), as: format), recipe: ImageRecipe())
        #expect(fromSixteen.pixelFormat == fromEight.pixelFormat)
        #expect(GeneratedImages.meanDifference(fromSixteen, fromEight) < 1)
    }

    @Test func placeholdersReadSixteenBitImagesAsTheirEightBitSelves() throws {
        let source = Self.gradient(format: .rgba16)
        #expect(DominantColor.of(source) == DominantColor.of(source.withEightBitChannels()))
        #expect(ThumbHash.encode(source) == ThumbHash.encode(source.withEightBitChannels()))
    }

    /// In linear light a black and white checkerboard halved is the grey of half the light (sRGB 188),
    /// not the average of its encoded values (128); at either depth, through decode and processing alike.
    @Test(arguments: [PixelFormat.rgb8, .rgb16, .gray8])
    func linearLightKeepsTheBrightnessOfFineDetail(format: PixelFormat) throws {
        let board = GeneratedImages.image(width: 64, height: 64, format: format.eightBit) { x, y in
            let value: UInt8 = (x + y) % 2 == 0 ? 255 : 0
            return Array(repeating: value, count: format.channels)
        }
        let source = format.isHighBitDepth ? board.withSixteenBitChannels() : board
        let png = try encoder.encode(source, as: .png)
        for linear in [false, true] {
            var recipe = ImageRecipe(resize: ImageRequest.Thumbnail(width: 32, height: 32, fit: .fill))
            recipe.resizesInLinearLight = linear
            recipe.keepsHighBitDepth = format.isHighBitDepth
            let halved = try decoder.decode(png, recipe: recipe)
            #expect(halved.pixelFormat == format)
            let grey = Int(GeneratedImages.pixel(halved.withEightBitChannels(), 16, 16)[0])
            #expect(abs(grey - (linear ? 188 : 128)) <= 3, "linear \(linear): \(grey)")
            // And the processor's own resize (an image already decoded: the path bases take).
            let processed = try VipsImageProcessor().process(
                ThumbnailBase(image: source, scale: 1, sourceWidth: 64, sourceHeight: 64), recipe: recipe
            )
            #expect(
                abs(Int(GeneratedImages.pixel(processed.withEightBitChannels(), 16, 16)[0]) - (linear ? 188 : 128)) <= 3
            )
        }
    }
}
