import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// Watermarks: placed by gravity and offset, sized relative to the output's shorter side, translucent.
@Suite("Watermarks")
struct WatermarkTests {
    let decoder = VipsImageDecoder()
    let encoder = VipsImageEncoder()

    /// A white canvas, and an opaque red 100x50 mark.
    func canvas(_ width: Int, _ height: Int) throws -> Data {
        try encoder.encode(
            GeneratedImages.image(width: width, height: height, format: .rgb8) { _, _ in [255, 255, 255] }, as: .png)
    }

    func decoderWithMark() throws -> VipsImageDecoder {
        var decoder = VipsImageDecoder()
        decoder.watermarks = [
            "mark": try encoder.encode(
                GeneratedImages.image(width: 100, height: 50) { _, _ in [255, 0, 0, 255] }, as: .png)
        ]
        return decoder
    }

    @Test(arguments: [(400, 200, 340, 165), (200, 400, 140, 365)])
    func aMarkHasTheSameRelativeSizeOnPortraitAndLandscape(width: Int, height: Int, x: Int, y: Int) throws {
        var recipe = ImageRecipe()
        recipe.watermark = .init(name: "mark", gravity: .southEast, offsetX: 10, offsetY: 10, scale: 0.25)
        let image = try decoderWithMark().decode(canvas(width, height), recipe: recipe)
        #expect((image.width, image.height) == (width, height) && image.pixelFormat == .rgb8)
        // 0.25 of the shorter side (200): 50x25, 10 pixels from the bottom-right corner.
        let red = GeneratedImages.count(image) { $0[0] > 200 && $0[1] < 60 }
        #expect(abs(red - 50 * 25) <= 50 + 25, "\(red) red pixels")
        #expect(GeneratedImages.pixel(image, x + 25, y + 12) == [255, 0, 0])
        #expect(GeneratedImages.pixel(image, x - 3, y + 12) == [255, 255, 255])
        #expect(GeneratedImages.pixel(image, x + 25, y + 25 + 3) == [255, 255, 255])
    }

    @Test func opacityBlendsAndANamelessMarkIsAnError() throws {
        var recipe = ImageRecipe()
        recipe.watermark = .init(name: "mark", gravity: .center, opacity: 0.5)
        let image = try decoderWithMark().decode(canvas(300, 200), recipe: recipe)
        let middle = GeneratedImages.pixel(image, 150, 100)
        #expect(middle[0] == 255 && (120...135).contains(middle[1]), "\(middle)")
        recipe.watermark = .init(name: "other")
        #expect(throws: ImageProcessingError.self) { try decoderWithMark().decode(canvas(300, 200), recipe: recipe) }
    }

    /// The smallest rectangle holding the pixels `test` picks: (minX, minY, maxX, maxY), or nil.
    static func bounds(_ image: Image, where test: ([UInt8]) -> Bool) -> (Int, Int, Int, Int)? {
        var box: (Int, Int, Int, Int)?
        for y in 0..<image.height {
            for x in 0..<image.width where test(GeneratedImages.pixel(image, x, y)) {
                box = box.map { (min($0.0, x), min($0.1, y), max($0.2, x), max($0.3, y)) } ?? (x, y, x, y)
            }
        }
        return box
    }

    @Test(arguments: [(400, 200), (200, 400)])
    func textIsPlacedAndSizedLikeAnImage(width: Int, height: Int) throws {
        var recipe = ImageRecipe()
        let text = ImageRecipe.Watermark.Text("Imagery", font: "sans bold 64", color: .black)
        recipe.watermark = .init(mark: .text(text), gravity: .southEast, offsetX: 10, offsetY: 10, scale: 0.5)
        let image = try decoder.decode(canvas(width, height), recipe: recipe)
        let ink = try #require(Self.bounds(image) { $0[0] < 128 }, "no letters drawn")
        // Its longer side (the line's width) half the shorter side (200): 100 pixels at most, the letters
        // a little less (the line's box has side bearings); against the bottom-right corner, 10 pixels in.
        #expect((80...100).contains(ink.2 - ink.0 + 1), "\(ink)")
        #expect(ink.2 <= width - 10 && ink.2 >= width - 10 - 8, "\(ink)")
        #expect(ink.3 <= height - 10 && ink.3 >= height - 10 - 20, "\(ink)")
        #expect(ink.0 >= width - 10 - 100 && ink.1 >= height / 2, "\(ink)")
    }

    @Test func textHasItsColourAndIsDrawnAsWritten() throws {
        var recipe = ImageRecipe()
        // Markup is not read: the angle brackets are letters too, and nothing is made bold or huge.
        let text = ImageRecipe.Watermark.Text(
            "<span size='900000'>x</span>", font: "sans 20", color: ImageRecipe.Color(red: 255, green: 0, blue: 0))
        recipe.watermark = .init(mark: .text(text), gravity: .northWest)
        let image = try decoder.decode(canvas(400, 100), recipe: recipe)
        let red = try #require(Self.bounds(image) { $0[0] > 200 && $0[1] < 80 && $0[2] < 80 })
        #expect(red.3 < 40 && red.2 - red.0 > 150, "\(red): one line of 28 small characters")
        recipe.watermark?.opacity = 0.5
        let faint = try decoder.decode(canvas(400, 100), recipe: recipe)
        #expect(Self.bounds(faint) { $0[0] > 200 && $0[1] < 80 } == nil, "half opacity leaves no pure red")
    }

    @Test(arguments: [
        ("", "sans 20", "1 to 100 characters"),
        (String(repeating: "a", count: 101), "sans 20", "1 to 100 characters"),
        ("two\nlines", "sans 20", "control characters"),
        ("ok", "sans 9999", "size must be from 1 to 256"),
        ("ok", "sans; bold", "a watermark font is"),
        ("ok", "20", "a watermark font is"),
    ])
    func aTextThatCannotBeDrawnIsRefusedByName(string: String, font: String, message: String) throws {
        var recipe = ImageRecipe()
        recipe.watermark = .init(mark: .text(.init(string, font: font)))
        #expect {
            try decoder.decode(canvas(100, 100), recipe: recipe)
        } throws: { "\($0)".contains(message) }
    }
}
