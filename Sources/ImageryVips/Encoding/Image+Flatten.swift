import Foundation
import Imagery

extension Image {
    /// This 8-bit image without its alpha: grey or RGB, transparent pixels laid onto black (`c × a / 255`,
    /// as libvips' flatten does without a background); itself when it has no alpha.
    func flattenedOntoBlack() -> Image { flattened(onto: nil) }

    /// This 8-bit image without its alpha, transparent pixels laid onto `color`
    /// (`c × a / 255 + b × (255 − a) / 255`; `nil`: black); itself when it has no alpha. A grey image
    /// laid onto a colour that is not grey becomes RGB.
    func flattened(onto color: ImageRecipe.Color?) -> Image {
        guard pixelFormat.hasAlpha else { return self }
        // Onto black, truncated as libvips' flatten without a background; onto a colour, rounded.
        let rounding: UInt32 = color == nil ? 0 : 127
        let color = color ?? .black
        let inputChannels = pixelFormat.channels - 1
        let channels =
            inputChannels == 1 && !(color.red == color.green && color.green == color.blue) ? 3 : inputChannels
        let background =
            channels == 1 ? [UInt32(color.red)] : [UInt32(color.red), UInt32(color.green), UInt32(color.blue)]
        let count = width * height
        var output = Data(count: count * channels)
        pixels.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                let (source, target) = (input.bindMemory(to: UInt8.self), output.bindMemory(to: UInt8.self))
                for pixel in 0..<count {
                    let base = pixel * (inputChannels + 1)
                    let alpha = UInt32(source[base + inputChannels])
                    for channel in 0..<channels {
                        let value = UInt32(source[base + min(channel, inputChannels - 1)])
                        target[pixel * channels + channel] = UInt8(
                            (value * alpha + background[channel] * (255 - alpha) + rounding) / 255)
                    }
                }
            }
        }
        return Image(
            width: width, height: height, pixelFormat: channels == 1 ? .gray8 : .rgb8, pixels: output,
            sourceFormat: sourceFormat, metadata: metadata
        )
    }
}
