import Foundation
import Testing

@testable import Imagery

/// BlurHash vectors that follow from the format itself (a hash of one component is a size digit, a
/// maximum digit and the average colour in 4 base-83 digits), round trips, what is not a hash, and
/// the encoding's invariances.
@Suite("BlurHash")
struct BlurHashTests {
    static func solid(_ red: UInt8, _ green: UInt8, _ blue: UInt8, width: Int = 8, height: Int = 8) -> Image {
        Image(
            width: width, height: height, pixelFormat: .rgb8,
            pixels: Data((0..<(width * height)).flatMap { _ in [red, green, blue] }), sourceFormat: .png)
    }

    /// One component: `0`, `0`, then the colour as the 24-bit number `RRGGBB` in base 83; more components
    /// keep those 4 digits (the DC term) after their own size and maximum digits. (The reference's basis,
    /// cos(π i x / width), does not sum to zero over a row, so a solid colour has AC terms of its own.)
    @Test(
        arguments: [
            ((255, 0, 0), "00TI:j"), ((0, 0, 0), "000000"), ((255, 255, 255), "00TSUA"), ((12, 34, 56), "001WZq"),
        ] as [((UInt8, UInt8, UInt8), String)])
    func aSolidColourIsItsAverageInFourDigits(colour: (UInt8, UInt8, UInt8), oneByOne: String) throws {
        let image = Self.solid(colour.0, colour.1, colour.2)
        #expect(BlurHash.encode(image, componentsX: 1, componentsY: 1) == oneByOne)
        let fourByThree = BlurHash.encode(image)
        #expect(fourByThree.hasPrefix("L") && fourByThree.dropFirst(2).prefix(4) == oneByOne.dropFirst(2))
        let decoded = try #require(BlurHash.decode(oneByOne, width: 5, height: 3))
        #expect((decoded.width, decoded.height, decoded.pixelFormat) == (5, 3, .rgb8))
        #expect([UInt8](decoded.pixels) == Array(repeating: [colour.0, colour.1, colour.2], count: 15).flatMap { $0 })
        // Black has no AC terms at all: every one is the middle value, `fQ`.
        if colour == (0, 0, 0) { #expect(fourByThree == "L00000" + String(repeating: "fQ", count: 11)) }
    }

    @Test(arguments: [(1, 1), (9, 1), (1, 9), (9, 9), (3, 7)] as [(Int, Int)])
    func theHashLengthAndSizeDigitFollowTheComponents(componentsX: Int, componentsY: Int) throws {
        let hash = BlurHash.encode(PlaceholderTests.image("C"), componentsX: componentsX, componentsY: componentsY)
        #expect(hash.count == 4 + 2 * componentsX * componentsY)
        #expect(Base83.decode(ArraySlice(Array(hash.utf8).prefix(1))) == (componentsX - 1) + (componentsY - 1) * 9)
        let decoded = try #require(BlurHash.decode(hash, width: 16, height: 10))
        #expect((decoded.width, decoded.height) == (16, 10))
    }

    /// Alpha is ignored, grey is colour with equal channels, and 16 bits are read as 8.
    @Test func theHashDependsOnlyOnTheColourOfThePixels() {
        let rgb = PlaceholderTests.generate(12, 9) { x, y in [UInt8(x * 20), UInt8(y * 25), UInt8((x + y) * 9), 255] }
        let rgbOnly = Image(
            width: 12, height: 9, pixelFormat: .rgb8,
            pixels: Data(rgb.pixels.enumerated().filter { $0.offset % 4 != 3 }.map(\.element)), sourceFormat: .png)
        let translucent = PlaceholderTests.generate(12, 9) { x, y in
            [UInt8(x * 20), UInt8(y * 25), UInt8((x + y) * 9), UInt8(x * y)]
        }
        #expect(BlurHash.encode(rgb) == BlurHash.encode(rgbOnly))
        #expect(BlurHash.encode(translucent) == BlurHash.encode(rgbOnly))
        #expect(BlurHash.encode(rgbOnly.withSixteenBitChannels()) == BlurHash.encode(rgbOnly))
        let grey = Image(
            width: 6, height: 4, pixelFormat: .gray8, pixels: Data((0..<24).map { UInt8($0 * 10) }), sourceFormat: .png)
        let greyAsColour = Image(
            width: 6, height: 4, pixelFormat: .rgb8, pixels: repeatingEachByte(grey.pixels, 3), sourceFormat: .png)
        #expect(BlurHash.encode(grey) == BlurHash.encode(greyAsColour))
        let greyAlpha = Image(
            width: 6, height: 4, pixelFormat: .grayAlpha8, pixels: Data(grey.pixels.flatMap { [$0, 7] as [UInt8] }),
            sourceFormat: .png)
        #expect(BlurHash.encode(greyAlpha) == BlurHash.encode(grey))
    }

    @Test func aHashDecodesToTheImagesAverageColourAtItsCentreAndPunchScalesTheRest() throws {
        // Left half black, right half white: dark on the left, light on the right.
        let image = PlaceholderTests.generate(16, 8) { x, _ in x < 8 ? [0, 0, 0, 255] : [255, 255, 255, 255] }
        let hash = BlurHash.encode(image, componentsX: 4, componentsY: 1)
        let decoded = try #require(BlurHash.decode(hash, width: 16, height: 1))
        let pixels = [UInt8](decoded.pixels)
        #expect(pixels[0] < pixels[45], "\(pixels)")
        let flat = try #require(BlurHash.decode(hash, width: 16, height: 1, punch: 0))
        #expect(Set([UInt8](flat.pixels)).count == 1, "without punch, only the average colour is left")
        let strong = try #require(BlurHash.decode(hash, width: 16, height: 1, punch: 2))
        #expect([UInt8](strong.pixels)[0] <= pixels[0] && [UInt8](strong.pixels)[45] >= pixels[45])
    }

    @Test(arguments: [
        "", "0", "00000", "L", "00TI:", "00TI:j0", "L0TI:jfQ", "10TI:j", "00TI:\u{e9}", "00 TI:",
        "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}",
        "L0TI:jfQfQfQfQfQfQfQfQfQfQf!",
    ])
    func whatIsNotAHashDecodesToNothing(text: String) {
        #expect(BlurHash.decode(text, width: 4, height: 4) == nil, "\(text.debugDescription)")
    }

    @Test func aSizeWithoutPixelsDecodesToNothing() {
        #expect(BlurHash.decode("00TI:j", width: 0, height: 4) == nil)
        #expect(BlurHash.decode("00TI:j", width: 4, height: -1) == nil)
    }

    @Test func sRGBLevelsSurviveTheTripToLinearLightAndBack() {
        for level in 0...255 { #expect(BlurHash.sRGB(BlurHash.linear(level)) == level) }
        #expect(BlurHash.sRGB(-1) == 0 && BlurHash.sRGB(2) == 255)
    }

    @Test func base83WritesAndReadsEveryValueOfTwoDigits() {
        for value in 0..<(83 * 83) {
            let text = Base83.encode(value, length: 2)
            #expect(Base83.decode(ArraySlice(Array(text.utf8))) == value)
        }
        #expect(Base83.encode(0, length: 4) == "0000" && Base83.encode(82, length: 1) == "~")
        #expect(Base83.decode(ArraySlice(Array("\"".utf8))) == nil)
    }

    /// Seeded random strings of base-83 digits and others: decoded to an image of the size asked, or to nothing.
    @Test func randomStringsDecodeToAnImageOrNothing() {
        var random = SeededGenerator(seed: 83)
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~ é\"")
        for _ in 0..<2_000 {
            let length = [6, 8, 28, 4 + 2 * 81, 4 + 2 * 90, Int.random(in: 0...40, using: &random)].randomElement(
                using: &random)!
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            if let image = BlurHash.decode(text, width: 3, height: 2) {
                #expect((image.width, image.height) == (3, 2))
            }
        }
    }
}
