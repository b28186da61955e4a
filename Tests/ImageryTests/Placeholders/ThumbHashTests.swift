import Foundation
import Testing

@testable import Imagery

/// ThumbHash: aspect ratios, solid colours, alpha, and hashes that are not.
@Suite("ThumbHash")
struct ThumbHashTests {
    static func solid(_ pixel: [UInt8], width: Int, height: Int) -> Image {
        let format = PixelFormat(channels: pixel.count)!
        return Image(
            width: width, height: height, pixelFormat: format,
            pixels: Data(Array(repeating: pixel, count: width * height).flatMap { $0 }), sourceFormat: .png)
    }

    /// The decoded preview keeps the source's shape: 32 pixels on the longer side.
    @Test(
        arguments: [
            (100, 50, 32, 18), (50, 100, 18, 32), (100, 100, 32, 32), (64, 64, 32, 32), (1, 1, 32, 32),
            (100, 10, 32, 5), (10, 100, 5, 32), (90, 60, 32, 23), (60, 90, 23, 32),
        ] as [(Int, Int, Int, Int)])
    func thePreviewKeepsTheShape(width: Int, height: Int, previewWidth: Int, previewHeight: Int) throws {
        let image = PlaceholderTests.generate(width, height) { x, y in [UInt8(x % 256), UInt8(y % 256), 128, 255] }
        let hash = ThumbHash.encode(image)
        let ratio = try #require(ThumbHash.aspectRatio(hash))
        #expect((ratio > 1) == (width > height) && (ratio < 1) == (width < height), "\(ratio)")
        let preview = try #require(ThumbHash.decode(hash))
        #expect((preview.width, preview.height) == (previewWidth, previewHeight))
        #expect(preview.pixelFormat == .rgba8)
    }

    /// A solid colour has no detail: every pixel of the preview is the same, near the colour, opaque.
    @Test(
        arguments: [
            [255, 0, 0], [0, 255, 0], [0, 0, 255], [128, 128, 128], [250, 200, 20], [0, 0, 0], [255, 255, 255],
        ] as [[UInt8]])
    func aSolidColourDecodesToThatColourEverywhere(colour: [UInt8]) throws {
        let hash = ThumbHash.encode(Self.solid(colour, width: 20, height: 20))
        // A square without alpha: a 5-byte header, then 27 luminance and 5 + 5 colour AC nibbles.
        #expect(hash.count == 5 + (27 + 5 + 5 + 1) / 2)
        let preview = try #require(ThumbHash.decode(hash))
        let pixels = [UInt8](preview.pixels)
        let first = Array(pixels.prefix(4))
        #expect(stride(from: 0, to: pixels.count, by: 4).allSatisfy { Array(pixels[$0..<$0 + 4]) == first })
        #expect(first[3] == 255)
        for channel in 0..<3 { #expect(abs(Int(first[channel]) - Int(colour[channel])) <= 8, "\(first) for \(colour)") }
    }

    @Test func alphaIsHashedWhenAPixelIsNotOpaque() throws {
        let opaque = ThumbHash.encode(Self.solid([10, 20, 30, 255], width: 8, height: 8))
        #expect(opaque[2] & 0x80 == 0)
        // Transparent on the left, opaque on the right.
        let half = PlaceholderTests.generate(16, 16) { x, _ in [200, 100, 50, x < 8 ? 0 : 255] }
        let hash = ThumbHash.encode(half)
        #expect(hash[2] & 0x80 != 0)
        let preview = try #require(ThumbHash.decode(hash))
        let pixels = [UInt8](preview.pixels)
        let row = preview.height / 2 * preview.width * 4
        #expect(pixels[row + 3] < 64 && pixels[row + (preview.width - 1) * 4 + 3] > 192, "alpha rises left to right")
        // A wholly transparent image hashes too (its colour is undefined: alpha says so).
        let clear = try #require(ThumbHash.decode(ThumbHash.encode(Self.solid([9, 9, 9, 0], width: 4, height: 4))))
        #expect(stride(from: 3, to: clear.pixels.count, by: 4).allSatisfy { clear.pixels[$0] == 0 })
    }

    @Test func greyAndDeepImagesHashAsTheirColours() {
        let grey = Image(
            width: 5, height: 4, pixelFormat: .gray8, pixels: Data((0..<20).map { UInt8($0 * 12) }), sourceFormat: .png)
        let colour = Image(
            width: 5, height: 4, pixelFormat: .rgb8, pixels: repeatingEachByte(grey.pixels, 3), sourceFormat: .png)
        #expect(ThumbHash.encode(grey) == ThumbHash.encode(colour))
        #expect(ThumbHash.encode(colour.withSixteenBitChannels()) == ThumbHash.encode(colour))
        #expect(ThumbHash.rgba(grey).count == 80)
    }

    @Test(
        arguments: [
            [UInt8](), [0x9f], [0x9f, 0x17, 0x0e, 0x0d],
            [0x9f, 0x17, 0x8e, 0x0d, 0x9a],  // alpha promised, no alpha byte
            [0x9f, 0x17, 0x0e, 0x0d, 0x9a], [0x00, 0x00, 0x00, 0x00, 0x00],  // a portrait of no width
            [0x00, 0x00, 0x00, 0x00, 0x80],  // a landscape of no height
        ] as [[UInt8]])
    func whatIsNotAThumbHashDecodesToNothing(bytes: [UInt8]) {
        #expect(ThumbHash.decode(bytes) == nil, "\(bytes)")
    }

    @Test func theAspectRatioNeedsTheHeader() {
        #expect(ThumbHash.aspectRatio([1, 2, 3, 4]) == nil)
        #expect(ThumbHash.aspectRatio([0, 0, 0, 7, 0]) == 1)  // portrait-or-square, 7 across and 7 down
        #expect(ThumbHash.aspectRatio([0, 0, 0, 4, 0x80]) == 7.0 / 4)  // landscape, 4 down
        #expect(ThumbHash.aspectRatio([0, 0, 0x80, 3, 0x80]) == 5.0 / 3)  // with alpha: 5 across
    }

    /// Seeded random bytes of every length up to 40: a preview of at most 32 × 32, or nothing.
    @Test func randomBytesDecodeToAPreviewOrNothing() {
        var random = SeededGenerator(seed: 25)
        var previews = 0
        for _ in 0..<3_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            if let preview = ThumbHash.decode(bytes) {
                previews += 1
                #expect(preview.width <= 32 && preview.height <= 32 && preview.width > 0 && preview.height > 0)
            }
        }
        #expect(previews > 0)
    }
}
