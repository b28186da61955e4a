import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// Animated GIF and WebP: every frame decoded, processed and encoded again with its timing; one
/// frame on request; the frame budget.
@Suite("Animation")
struct AnimationTests {
    let decoder = VipsImageDecoder(rejectsCorruptData: true)
    let encoder = VipsImageEncoder()

    static let colors: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 0, 255]]

    /// 4 frames of 120 × 80, each one colour with a black 20-pixel square moving right by 20 pixels
    /// a frame; delays 100 to 400 ms, played 3 times.
    static let animation = GeneratedImages.animation(
        width: 120, height: 80, delays: [100, 200, 300, 400], loopCount: 3
    ) { frame, x, y in
        let inSquare = (30..<50).contains(y) && (10 + 20 * frame..<30 + 20 * frame).contains(x)
        return inSquare ? [0, 0, 0, 255] : colors[frame]
    }

    static func encoded(_ format: ImageFormat) throws -> Data {
        var options = EncodingOptions(quality: 90)
        options.lossless = format == .webp  // exact colours to compare
        return try VipsImageEncoder().encode(animation, as: format, options: options)
    }

    static func expectFrameColours(_ image: Image, size: (Int, Int), _ comment: Comment? = nil) {
        #expect((image.width, image.height) == size, comment)
        for frame in 0..<min(4, image.frameCount) {
            // The bottom-right corner is never under the square.
            let pixel = GeneratedImages.pixel(image.frame(frame), image.width - 2, image.height - 2)
            let expected = colors[frame]
            #expect(
                zip(pixel.prefix(3), expected.prefix(3)).allSatisfy { abs(Int($0) - Int($1)) <= 8 },
                "frame \(frame): \(pixel)")
        }
    }

    @Test(arguments: [ImageFormat.gif, .webp])
    func keepsEveryFrameItsDelayAndTheLoopCountThroughAnEncodeAndADecode(format: ImageFormat) throws {
        let data = try Self.encoded(format)
        #expect(ImageFormat(sniffing: data) == format)
        let decoded = try decoder.decode(data, recipe: ImageRecipe())
        #expect(decoded.frameCount == 4)
        #expect(decoded.animation == Image.Animation(frameDelays: [100, 200, 300, 400], loopCount: 3))
        Self.expectFrameColours(decoded, size: (120, 80))
        // libvips' own reader agrees.
        if let header = try VipsHeader.read(data, format: format) {
            #expect(header["n-pages"] == "4")
            #expect(header["delay"] == "100 200 300 400")
            #expect(header["loop"] == "3")
        }
    }

    @Test(arguments: [ImageFormat.gif, .webp])
    func resizesEveryFrame(format: ImageFormat) throws {
        let data = try Self.encoded(format)
        let image = try decoder.decode(data, recipe: ImageRecipe(resize: .init(width: 60, height: 60, fit: .inside)))
        #expect(image.frameCount == 4)
        #expect(image.animation?.frameDelays == [100, 200, 300, 400])
        Self.expectFrameColours(image, size: (60, 40))
        // The square moved with each frame: at x 5 to 15 (of 60) in frame 0, 15 to 25 in frame 1.
        #expect(GeneratedImages.pixel(image.frame(0), 7, 20).prefix(3).allSatisfy { $0 < 40 })
        #expect(GeneratedImages.pixel(image.frame(1), 7, 20).prefix(3).max()! > 200)
        #expect(GeneratedImages.pixel(image.frame(1), 20, 20).prefix(3).allSatisfy { $0 < 40 })

        let again = try encoder.encode(image, as: format, quality: 80)
        let header = try decoder.decode(again, recipe: ImageRecipe())
        #expect(header.frameCount == 4 && (header.width, header.height) == (60, 40))
    }

    /// Every operation runs on every frame: crop, rotation, padding, blur; the output stays 4 frames.
    @Test func appliesTheWholeRecipeToEveryFrame() throws {
        var recipe = ImageRecipe(resize: .init(width: 40, height: 40, fit: .cover))
        recipe.rotation = .quarter
        recipe.padding = ImageRecipe.Insets(all: 5)
        recipe.background = ImageRecipe.Color(red: 255, green: 255, blue: 255)
        recipe.blur = 0.5
        let image = try decoder.decode(try Self.encoded(.gif), recipe: recipe)
        #expect(image.frameCount == 4)
        #expect((image.width, image.height) == (50, 50))
        for frame in 0..<4 {
            #expect(
                GeneratedImages.pixel(image.frame(frame), 1, 1).prefix(3).allSatisfy { $0 > 240 },
                "padding of frame \(frame)")
        }
    }

    @Test(arguments: [ImageFormat.gif, .webp])
    func takesOneFrame(format: ImageFormat) throws {
        var recipe = ImageRecipe(resize: .init(width: 60, height: 60, fit: .inside))
        recipe.frame = 2
        let image = try decoder.decode(try Self.encoded(format), recipe: recipe)
        #expect(image.animation == nil)
        #expect((image.width, image.height) == (60, 40))
        let pixel = GeneratedImages.pixel(image, 58, 38)
        #expect(pixel[2] > 200 && pixel[0] < 40, "frame 2 is blue: \(pixel)")

        recipe.frame = 4
        #expect(throws: ImageProcessingError.self) { try decoder.decode(try Self.encoded(format), recipe: recipe) }
        recipe.frame = 1
        #expect(throws: ImageProcessingError.self) {
            try decoder.decode(try Fixtures.data("chelsea.png"), recipe: recipe)
        }
        recipe.frame = 0
        #expect(try decoder.decode(try Fixtures.data("chelsea.png"), recipe: recipe).animation == nil)
    }

    /// Formats that cannot animate get the first frame.
    @Test(arguments: [ImageFormat.png, .jpeg, .avif])
    func encodesTheFirstFrameWhereTheFormatCannotAnimate(format: ImageFormat) throws {
        let data: Data
        do {
            data = try encoder.encode(Self.animation, as: format, quality: 90)
        } catch ImageEncodingError.unsupportedFormat {
            return
        }
        let image = try decoder.decode(data, recipe: ImageRecipe())
        #expect(image.animation == nil)
        #expect((image.width, image.height) == (120, 80))
        let pixel = GeneratedImages.pixel(image, 118, 78)
        #expect(pixel[0] > 200 && pixel[1] < 60, "frame 0 is red: \(pixel)")
    }

    /// Smart gravity chooses on the first frame and keeps that crop for every frame (a crop that
    /// followed each frame's content would make the picture jump).
    @Test func smartGravityChoosesOnceForAllFrames() throws {
        // A busy 40 × 40 patch on grey: at the left in frame 0, at the right in frame 1.
        let animation = GeneratedImages.animation(width: 200, height: 80, delays: [100, 100], format: .rgb8) {
            frame, x, y in
            let left = frame == 0 ? 20 : 140
            guard (left..<left + 40).contains(x), (20..<60).contains(y) else { return [128, 128, 128] }
            return (x / 4 + y / 4) % 2 == 0 ? [255, 0, 0] : [0, 0, 255]
        }
        var options = EncodingOptions(quality: 100)
        options.lossless = true
        let data = try encoder.encode(animation, as: .webp, options: options)
        let recipe = ImageRecipe(resize: .init(width: 80, height: 80, fit: .cover, gravity: .smart(.attention)))
        let image = try decoder.decode(data, recipe: recipe)
        #expect(image.frameCount == 2)
        func busy(_ frame: Image) -> Int { GeneratedImages.count(frame) { $0[0] > 200 || $0[2] > 200 } }
        #expect(busy(image.frame(0)) > 1_000, "frame 0's crop holds the patch")
        #expect(busy(image.frame(1)) == 0, "frame 1 is cropped where frame 0 was: its patch moved out")
    }

    @Test func refusesAnAnimationOverTheFrameBudgetBeforeDecodingIt() throws {
        let data = try Self.encoded(.gif)
        var limited = decoder
        limited.maximumFrames = 3
        #expect(
            throws: ImageDecodingError.tooManyFrames(
                frames: 4, width: 120, height: 80, pixelLimit: 100_000_000, frameLimit: 3)
        ) {
            try limited.decode(data, recipe: ImageRecipe(resize: .init(width: 60, height: 60, fit: .inside)))
        }
        limited.maximumFrames = 1_000
        limited.maximumAnimationPixels = 3 * 120 * 80
        #expect(throws: ImageDecodingError.self) { try limited.decode(data, recipe: ImageRecipe()) }
        // One frame is within any budget.
        var one = ImageRecipe()
        one.frame = 3
        #expect(try limited.decode(data, recipe: one).animation == nil)
        // The memory estimate counts every frame.
        let all = try decoder.estimatedDecodeMemory(
            data, recipe: ImageRecipe(resize: .init(width: 60, height: 60, fit: .inside)))
        let single = try decoder.estimatedDecodeMemory(
            data, recipe: ImageRecipe(resize: .init(width: 60, height: 60, fit: .inside)).with(frame: 0))
        #expect(all > 4 * 60 * 40 * 4 && all > single)
    }

    /// The corpus' hostile GIF: 20 000 frames on a 4096 × 4096 canvas, refused from its header (the
    /// frame budget's error, given before any frame is decoded; libvips' header stops counting frames
    /// once past the budget, at 4097).
    @Test(.enabled(if: Fixtures.corpusBad != nil))
    func refusesTheFrameBomb() throws {
        let data = try Data(contentsOf: Fixtures.corpusBad!.appendingPathComponent("many-frames-20000-4096x4096.gif"))
        #expect {
            try decoder.decode(data, recipe: ImageRecipe(resize: .init(width: 100, height: 100)))
        } throws: { error in
            guard case ImageDecodingError.tooManyFrames(let frames, _, _, _, let frameLimit) = error else {
                return false
            }
            return frames > frameLimit
        }
    }

    /// A truncated animation is refused by a strict decoder, never half decoded.
    @Test(arguments: [ImageFormat.gif, .webp])
    func refusesATruncatedAnimation(format: ImageFormat) throws {
        let data = try Self.encoded(format)
        let truncated = data.prefix(data.count * 2 / 3)
        #expect(throws: ImageDecodingError.self) {
            try decoder.decode(Data(truncated), recipe: ImageRecipe(resize: .init(width: 60, height: 60)))
        }
    }

    /// GIFs resize in 8 bits, their pixels taken as premultiplied (libnsgif gives transparent pixels
    /// zero colour): the result matches libvips' premultiplied float resize of the full decode, with no
    /// dark fringe where transparent pixels meet opaque ones.
    @Test(arguments: [1, 3])
    func resizesGIFsLikeAPremultipliedResize(frames: Int) throws {
        // White and orange stripes, with transparent holes that have sharp edges.
        let source = GeneratedImages.animation(
            width: 160, height: 120, delays: Array(repeating: 100, count: max(2, frames))
        ) { frame, x, y in
            if (x / 10 + y / 10 + frame) % 3 == 0 { return [0, 0, 0, 0] }
            return (x / 20) % 2 == 0 ? [255, 255, 255, 255] : [255, 128, 0, 255]
        }
        let still = frames == 1 ? source.frame(0) : source
        let gif = try encoder.encode(still, as: .gif, quality: 100)
        let recipe = ImageRecipe(resize: .init(width: 64, height: 48, fit: .fill))
        let fast = try decoder.decode(gif, recipe: recipe)
        let full = try decoder.decode(gif, recipe: ImageRecipe())
        // A still is resampled by libvips (Lanczos 3); an animation's frames are shrunk by area averaging.
        let reference =
            frames == 1
            ? try VipsImageProcessor().process(
                ThumbnailBase(image: full, scale: 1, sourceWidth: 160, sourceHeight: 120), recipe: recipe)
            : Self.areaAverage(full, width: 64, height: 48)
        #expect(fast.frameCount == still.frameCount && (fast.width, fast.height) == (64, 48))
        for frame in 0..<fast.frameCount {
            // Compared premultiplied: the colour of a transparent pixel is nothing.
            let difference = Self.premultipliedDifference(fast.frame(frame), reference.frame(frame))
            #expect(difference < 1, "frame \(frame): \(difference)")
            // No dark fringe: every visible pixel is white or orange-ish (red stays high).
            let dark = GeneratedImages.count(fast.frame(frame)) { $0[3] > 128 && $0[0] < 200 }
            #expect(dark == 0, "frame \(frame): \(dark) dark pixels")
        }
    }

    /// `image` (RGBA) shrunk to `width` × `height` by averaging the premultiplied pixels each output pixel
    /// covers, partly covered ones by their share, in doubles: what the GIF path's area averaging should give.
    static func areaAverage(_ image: Image, width: Int, height: Int) -> Image {
        let (sx, sy) = (Double(image.width) / Double(width), Double(image.height) / Double(height))
        func share(_ i: Int, _ start: Double, _ end: Double) -> Double {
            max(0, min(Double(i + 1), end) - max(Double(i), start))
        }
        var pixels = Data()
        for frame in 0..<image.frameCount {
            let source = image.frame(frame)
            for oy in 0..<height {
                for ox in 0..<width {
                    var sum = [0.0, 0.0, 0.0, 0.0]
                    let (x0, x1, y0, y1) = (Double(ox) * sx, Double(ox + 1) * sx, Double(oy) * sy, Double(oy + 1) * sy)
                    for y in Int(y0)..<min(image.height, Int(y1.rounded(.up))) {
                        for x in Int(x0)..<min(image.width, Int(x1.rounded(.up))) {
                            let weight = share(x, x0, x1) * share(y, y0, y1) / (sx * sy)
                            let p = GeneratedImages.pixel(source, x, y).map(Double.init)
                            for c in 0..<3 { sum[c] += weight * p[c] * p[3] / 255 }
                            sum[3] += weight * p[3]
                        }
                    }
                    let alpha = sum[3]
                    pixels.append(
                        contentsOf: (0..<3).map { alpha > 0 ? UInt8(min(255, (sum[$0] * 255 / alpha).rounded())) : 0 })
                    pixels.append(UInt8(alpha.rounded()))
                }
            }
        }
        return Image(
            width: width, height: height, pixelFormat: .rgba8, pixels: pixels, sourceFormat: .gif,
            animation: image.animation.map { Image.Animation(frameDelays: $0.frameDelays, loopCount: $0.loopCount) }
        )
    }

    /// The mean absolute difference of two RGBA images' premultiplied channels, in levels of 255.
    static func premultipliedDifference(_ a: Image, _ b: Image) -> Double {
        var total = 0.0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let (p, q) = (GeneratedImages.pixel(a, x, y), GeneratedImages.pixel(b, x, y))
                for channel in 0..<3 {
                    total += abs(Double(p[channel]) * Double(p[3]) - Double(q[channel]) * Double(q[3])) / 255
                }
                total += abs(Double(p[3]) - Double(q[3]))
            }
        }
        return total / Double(a.width * a.height * 4)
    }

    /// A real animated GIF (24 frames of 14 × 25, 70 ms each): every frame kept, resized, timing kept.
    @Test func decodesTheFixtureGIF() throws {
        let data = try Fixtures.data("no-time-for-that.gif")
        let image = try decoder.decode(
            data, recipe: ImageRecipe(resize: .init(width: 28, height: 50, fit: .inside, enlarge: true)))
        #expect(image.frameCount == 24)
        #expect((image.width, image.height) == (28, 50))
        #expect(image.animation?.frameDelays == Array(repeating: 70, count: 24))
        #expect(image.animation?.loopCount == 0)
        let webp = try encoder.encode(image, as: .webp, quality: 80)
        #expect(try decoder.decode(webp, recipe: ImageRecipe()).frameCount == 24)
    }
}

extension ImageRecipe {
    func with(frame: Int) -> ImageRecipe {
        var recipe = self
        recipe.frame = frame
        return recipe
    }
}
