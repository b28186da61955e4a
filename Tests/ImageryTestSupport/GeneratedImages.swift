import Foundation
import Imagery

/// Images the tests draw themselves (so what is where is known exactly), as ``Image`` values.
public enum GeneratedImages {
    /// A `width` × `height` image whose pixel at (x, y) is `color(x, y)` (one value per channel of `format`).
    public static func image(width: Int, height: Int, format: PixelFormat = .rgba8, _ color: (Int, Int) -> [UInt8])
        -> Image
    {
        var pixels = Data(capacity: width * height * format.bytesPerPixel)
        for y in 0..<height {
            for x in 0..<width {
                let value = color(x, y)
                precondition(value.count == format.bytesPerPixel)
                pixels.append(contentsOf: value)
            }
        }
        return Image(width: width, height: height, pixelFormat: format, pixels: pixels, sourceFormat: .png)
    }

    /// An animation of `delays.count` frames, each `width` × `height`, whose pixel at (x, y) of frame
    /// `f` is `color(f, x, y)`.
    public static func animation(
        width: Int, height: Int, delays: [Int], loopCount: Int = 0, format: PixelFormat = .rgba8,
        _ color: (Int, Int, Int) -> [UInt8]
    ) -> Image {
        var pixels = Data(capacity: width * height * format.bytesPerPixel * delays.count)
        for frame in delays.indices {
            pixels.append(image(width: width, height: height, format: format) { color(frame, $0, $1) }.pixels)
        }
        return Image(
            width: width, height: height, pixelFormat: format, pixels: pixels, sourceFormat: .gif,
            animation: Image.Animation(frameDelays: delays, loopCount: loopCount)
        )
    }

    /// The channels of the pixel at (x, y).
    public static func pixel(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] {
        let size = image.pixelFormat.bytesPerPixel
        let start = image.pixels.startIndex + (y * image.width + x) * size
        return Array(image.pixels[start..<start + size])
    }

    /// How many pixels satisfy `test`.
    public static func count(_ image: Image, where test: ([UInt8]) -> Bool) -> Int {
        var total = 0
        for y in 0..<image.height {
            for x in 0..<image.width where test(pixel(image, x, y)) { total += 1 }
        }
        return total
    }

    /// The mean absolute difference per channel of two images of one size and format, in levels of 255.
    public static func meanDifference(_ a: Image, _ b: Image) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.pixelFormat == b.pixelFormat)
        var total = 0
        for (x, y) in zip(a.pixels, b.pixels) { total += abs(Int(x) - Int(y)) }
        return Double(total) / Double(a.pixels.count)
    }

    /// A `width` × `height` image of 16-bit samples that 8 bits cannot hold (few are multiples of 257).
    /// An 8-bit `format` gets the 16-bit gradient reduced.
    public static func deepGradient(width: Int = 64, height: Int = 32, format: PixelFormat = .rgb16) -> Image {
        guard format.isHighBitDepth else {
            return deepGradient(
                width: width, height: height, format: PixelFormat(channels: format.channels, bytesPerChannel: 2)!
            ).withEightBitChannels()
        }
        var samples: [UInt16] = []
        for y in 0..<height {
            for x in 0..<width {
                let channels: [UInt16] = [
                    UInt16(x * 1_000 + y * 7), UInt16(60_000 - y * 1_500 - x * 3), UInt16(x * y * 13 % 65_536),
                ]
                let colour = format.isGray ? [channels[0]] : channels
                samples += format.hasAlpha ? colour + [x < width / 2 ? 65_535 : 0] : colour
            }
        }
        let pixels = samples.withUnsafeBytes { Data($0) }
        return Image(width: width, height: height, pixelFormat: format, pixels: pixels, sourceFormat: .png)
    }
}
