import CGIFFrames
import Foundation
import Imagery
import ImageryVips

/// Imagery's own C for animations: the area resize and the GIF writer (palette, mapping, cgif),
/// on any frames. Input: width and height (1...48), bands (1...4), frames (1...4), a smaller size,
/// a stride's padding, delays and loop count, then pixels (repeated to fill the frames).
enum GIFFramesTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        var reader = FuzzReader(bytes)
        let width = 1 + reader.integer(below: 48)
        let height = 1 + reader.integer(below: 48)
        let bands = 1 + reader.integer(below: 4)
        let frames = 1 + reader.integer(below: 4)
        let outputWidth = 1 + reader.integer(below: width)
        let outputHeight = 1 + reader.integer(below: height)
        let padding = reader.integer(below: 8)
        let delays = (0..<reader.integer(below: 6)).map { _ in Int32(reader.integer(below: 70_000)) - 1_000 }
        let loop = Int32(reader.integer(below: 70_000)) - 1_000
        var fill = reader.rest()
        if fill.isEmpty { fill = [0] }
        let stride = width * bands + padding
        let source = (0..<(stride * height * frames)).map { fill[$0 % fill.count] }

        // The resize: every frame to the smaller size; a frame of one colour stays that colour.
        var resized: [UInt8] = []
        for frame in 0..<frames {
            var output = [UInt8](repeating: 0, count: outputWidth * outputHeight * bands)
            let status = source.withUnsafeBufferPointer { input in
                imagery_area_resize(
                    input.baseAddress! + frame * stride * height, Int32(width), Int32(height), stride, Int32(bands),
                    &output, Int32(outputWidth), Int32(outputHeight))
            }
            try require(
                status == 0,
                "area resize of \(width)x\(height)x\(bands) to \(outputWidth)x\(outputHeight) failed: \(status)")
            let base = frame * stride * height
            let colour = Array(source[base..<(base + bands)])
            let uniform = (0..<height).allSatisfy { row in
                (0..<(width * bands)).allSatisfy { source[base + row * stride + $0] == colour[$0 % bands] }
            }
            if uniform {
                try require(
                    (0..<output.count).allSatisfy { output[$0] == colour[$0 % bands] },
                    "a frame of one colour changed colour when resized")
            }
            resized += output
        }

        // The writer: a GIF libvips reads back, of that size and frame count.
        var gif: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message: UnsafePointer<CChar>?
        let status = resized.withUnsafeBufferPointer { pixels in
            delays.withUnsafeBufferPointer { delays in
                imagery_gif_encode(
                    pixels.baseAddress, Int32(outputWidth), Int32(outputHeight), Int32(bands), Int32(frames),
                    delays.baseAddress, Int32(delays.count), loop, &gif, &length, &message)
            }
        }
        defer { imagery_gif_free(gif) }
        guard status == 0, let gif else {
            throw FuzzFailure(
                "the GIF writer refused \(outputWidth)x\(outputHeight)x\(bands), \(frames) frames: \(message.map { String(cString: $0) } ?? "no message")"
            )
        }
        let data = Data(bytes: gif, count: length)
        let header: ImageHeader
        do {
            header = try VipsImageDecoder().inspect(data)
        } catch {
            throw FuzzFailure("libvips cannot read the GIF written: \(error)")
        }
        try require(
            header.format == .gif && header.width == outputWidth && header.height == outputHeight,
            "wrote \(outputWidth)x\(outputHeight), read \(header.format) \(header.width)x\(header.height)")
        // (Identical frames in a row may be written as one, longer.)
        try require(header.frames >= 1 && header.frames <= frames, "wrote \(frames) frames, read \(header.frames)")
    }
}
