import Foundation

extension Image {
    /// The image with 8 bits per channel: itself when it has them, otherwise each 16-bit sample
    /// scaled to 0...255 (rounded to the nearest level), for code that reads 8-bit pixels
    /// (placeholders, the GIF writer).
    public func withEightBitChannels() -> Image {
        guard pixelFormat.isHighBitDepth else { return self }
        let samples = pixels.count / 2
        var output = Data(count: samples)
        pixels.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                let target = output.bindMemory(to: UInt8.self)
                for index in 0..<samples {
                    let value = UInt32(input.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
                    target[index] = UInt8((value * 255 + 32_767) / 65_535)
                }
            }
        }
        return Image(
            width: width, height: height, pixelFormat: pixelFormat.eightBit, pixels: output, sourceFormat: sourceFormat,
            metadata: metadata, animation: animation
        )
    }

    /// The image with 16 bits per channel: itself when it has them, otherwise each 8-bit sample
    /// widened exactly (`v` becomes `v × 257`, so 255 is 65 535).
    public func withSixteenBitChannels() -> Image {
        guard !pixelFormat.isHighBitDepth else { return self }
        var output = Data(count: pixels.count * 2)
        pixels.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                let target = output.bindMemory(to: UInt16.self)
                for (index, value) in input.enumerated() { target[index] = UInt16(value) * 257 }
            }
        }
        return Image(
            width: width, height: height, pixelFormat: PixelFormat(channels: pixelFormat.channels, bytesPerChannel: 2)!,
            pixels: output, sourceFormat: sourceFormat, metadata: metadata, animation: animation
        )
    }
}
