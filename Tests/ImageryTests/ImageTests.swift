import Foundation
import Testing

@testable import Imagery

/// Decoded images: their layout, frames and cost, pixel formats, and changes of bit depth.
@Suite("Image")
struct ImageTests {
    static func animated(frames: Int = 3) -> Image {
        Image(
            width: 2, height: 1, pixelFormat: .rgb8, pixels: Data((0..<(6 * frames)).map { UInt8($0) }),
            sourceFormat: .gif,
            metadata: ImageMetadata(copyright: "©"),
            animation: .init(frameDelays: Array(repeating: 100, count: frames), loopCount: 2)
        )
    }

    @Test func aStillImageIsOneFrameOfTightlyPackedRows() {
        let image = Image(width: 3, height: 2, pixelFormat: .grayAlpha8, pixels: Data(count: 12), sourceFormat: .png)
        #expect(image.bytesPerRow == 6 && image.frameCount == 1 && image.cost == 12 && image.animation == nil)
        #expect(image.frame(0) == image)
        #expect(image.metadata == ImageMetadata() && image.metadata.iccProfile == nil && image.metadata.exif == nil)
        #expect(image.description == "Image(3x2 grayAlpha8, from png, 12 bytes)")
    }

    @Test func anAnimationsFramesAreStillImagesOfTheirOwnPixels() {
        let image = Self.animated()
        #expect(image.frameCount == 3 && image.cost == 18)
        #expect(image.description == "Image(2x1 rgb8, 3 frames, from gif, 18 bytes)")
        for index in 0..<3 {
            let frame = image.frame(index)
            #expect(frame.animation == nil && frame.metadata.copyright == "©" && frame.sourceFormat == .gif)
            #expect([UInt8](frame.pixels) == (0..<6).map { UInt8(index * 6 + $0) })
        }
    }

    @Test func framesAreTakenFromASliceOfALargerBuffer() {
        let buffer = Data([9, 9] + (0..<12).map { UInt8($0) })
        let image = Image(
            width: 1, height: 2, pixelFormat: .rgb8, pixels: buffer.dropFirst(2), sourceFormat: .webp,
            animation: .init(frameDelays: [1, 2]))
        #expect([UInt8](image.frame(1).pixels) == [6, 7, 8, 9, 10, 11])
        #expect(image.frame(1).withSixteenBitChannels().withEightBitChannels().pixels == image.frame(1).pixels)
    }

    @Test(
        arguments: [
            (PixelFormat.gray8, 1, 1, false, true), (.grayAlpha8, 2, 1, true, true), (.rgb8, 3, 1, false, false),
            (.rgba8, 4, 1, true, false),
            (.gray16, 1, 2, false, true), (.grayAlpha16, 2, 2, true, true), (.rgb16, 3, 2, false, false),
            (.rgba16, 4, 2, true, false),
        ] as [(PixelFormat, Int, Int, Bool, Bool)])
    func pixelFormatsKnowTheirChannels(
        format: PixelFormat, channels: Int, bytesPerChannel: Int, alpha: Bool, grey: Bool
    ) {
        #expect(
            format.channels == channels && format.bytesPerChannel == bytesPerChannel
                && format.bytesPerPixel == channels * bytesPerChannel)
        #expect(format.hasAlpha == alpha && format.isGray == grey && format.isHighBitDepth == (bytesPerChannel == 2))
        #expect(PixelFormat(channels: channels, bytesPerChannel: bytesPerChannel) == format)
        #expect(format.eightBit == PixelFormat(channels: channels) && !format.eightBit.isHighBitDepth)
    }

    @Test func onlyOneToFourChannelsOfOneOrTwoBytesAreFormats() {
        for (channels, bytes) in [(0, 1), (5, 1), (-1, 1), (3, 0), (3, 3), (1, 4)] {
            #expect(PixelFormat(channels: channels, bytesPerChannel: bytes) == nil)
        }
    }

    /// A 16-bit sample v becomes round(v × 255 / 65 535); an 8-bit one v becomes v × 257.
    @Test(
        arguments: [
            (0, 0), (65_535, 255), (128, 0), (129, 1), (257, 1), (32_767, 127), (32_768, 128), (65_406, 254),
            (65_407, 255),
        ] as [(Int, Int)])
    func sixteenBitSamplesRoundToTheNearestLevel(sample: Int, level: Int) {
        let pixels = Data([UInt16(sample)].withUnsafeBytes { Array($0) })
        let image = Image(width: 1, height: 1, pixelFormat: .gray16, pixels: pixels, sourceFormat: .png)
        #expect(image.withEightBitChannels().pixels == Data([UInt8(level)]))
    }

    @Test func everyEightBitLevelSurvivesSixteenBitsAndBack() {
        let levels = Image(
            width: 64, height: 1, pixelFormat: .rgba8, pixels: Data((0..<256).map { UInt8($0) }), sourceFormat: .png)
        let deep = levels.withSixteenBitChannels()
        #expect(deep.pixelFormat == .rgba16 && deep.pixels.count == 512)
        let samples = deep.pixels.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
        #expect(samples == (0..<256).map { UInt16($0) * 257 })
        #expect(deep.withEightBitChannels() == levels)
        #expect(
            deep.withSixteenBitChannels() == deep && levels.withEightBitChannels() == levels, "already so: as it is")
    }

    @Test func changingTheDepthKeepsMetadataAndFrames() {
        let image = Self.animated()
        let deep = image.withSixteenBitChannels()
        #expect(
            deep.animation == image.animation && deep.metadata == image.metadata && deep.sourceFormat == .gif
                && deep.frameCount == 3)
        #expect(deep.frame(2).withEightBitChannels() == image.frame(2))
    }
}
