import Foundation
import Imagery

extension Image {
    /// This 8-bit image without its alpha: grey or RGB, transparent pixels laid onto black (`c × a / 255`,
    /// as libvips' flatten does without a background); itself when it has no alpha.
    func flattenedOntoBlack() -> Image {
        guard pixelFormat.hasAlpha else { return self }
        let channels = pixelFormat.channels - 1
        let count = width * height
        var output = Data(count: count * channels)
        pixels.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                let (source, target) = (input.bindMemory(to: UInt8.self), output.bindMemory(to: UInt8.self))
                for pixel in 0..<count {
                    let alpha = UInt32(source[pixel * (channels + 1) + channels])
                    for channel in 0..<channels {
                        target[pixel * channels + channel] = UInt8(
                            UInt32(source[pixel * (channels + 1) + channel]) * alpha / 255)
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
