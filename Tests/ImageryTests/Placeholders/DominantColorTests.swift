import Foundation
import Testing

@testable import Imagery

/// The colour an image shows most of: pixels grouped by the top 4 bits of each channel, the largest
/// group's mean; mostly transparent pixels left out.
@Suite("DominantColor")
struct DominantColorTests {
    static func image(_ pixels: [[UInt8]], format: PixelFormat) -> Image {
        Image(
            width: pixels.count, height: 1, pixelFormat: format, pixels: Data(pixels.flatMap { $0 }), sourceFormat: .png
        )
    }

    @Test func aSolidColourIsItsOwnDominantColour() {
        #expect(
            DominantColor.of(ThumbHashTests.solid([250, 200, 20], width: 7, height: 5))
                == ImageRecipe.Color(red: 250, green: 200, blue: 20))
    }

    @Test func theLargestGroupWinsAndGivesItsMean() {
        // Three pixels in the group of (16...31, 0...15, 0...15), two elsewhere.
        let pixels: [[UInt8]] = [[16, 0, 0], [31, 15, 3], [20, 5, 0], [200, 200, 200], [200, 200, 200]]
        // 67 / 3, 20 / 3, 3 / 3
        #expect(DominantColor.of(Self.image(pixels, format: .rgb8)) == ImageRecipe.Color(red: 22, green: 6, blue: 1))
    }

    @Test func mostlyTransparentPixelsAreLeftOut() {
        let pixels: [[UInt8]] = [[255, 0, 0, 127], [255, 0, 0, 0], [255, 0, 0, 10], [0, 0, 255, 128]]
        #expect(DominantColor.of(Self.image(pixels, format: .rgba8)) == ImageRecipe.Color(red: 0, green: 0, blue: 255))
        #expect(
            DominantColor.of(Self.image([[1, 2, 3, 0], [4, 5, 6, 127]], format: .rgba8)) == nil,
            "every pixel transparent")
    }

    @Test func greyImagesGiveGreys() {
        #expect(
            DominantColor.of(Self.image([[100], [101], [250]], format: .gray8))
                == ImageRecipe.Color(red: 100, green: 100, blue: 100))
        #expect(
            DominantColor.of(Self.image([[100, 0], [250, 255]], format: .grayAlpha8))
                == ImageRecipe.Color(red: 250, green: 250, blue: 250))
    }

    @Test func deepImagesAreReadAsEightBits() {
        let image = Self.image([[10, 20, 30], [10, 20, 30], [99, 99, 99]], format: .rgb8)
        #expect(DominantColor.of(image.withSixteenBitChannels()) == DominantColor.of(image))
    }

    @Test func aTieGoesToTheDarkerGroup() {
        #expect(DominantColor.of(Self.image([[255, 255, 255], [0, 0, 0]], format: .rgb8)) == .black)
        #expect(DominantColor.of(Self.image([[0, 0, 0], [255, 255, 255]], format: .rgb8)) == .black)
    }
}
