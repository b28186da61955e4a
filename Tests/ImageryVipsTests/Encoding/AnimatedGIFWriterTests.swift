import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// Animated GIF output (`AnimatedGIFWriter`: one palette for all frames, cgif's frame-to-frame
/// transparency): what a reader gets back is every frame, close to what was encoded, transparent
/// exactly where it was, whatever the pixel format; frames that do not fit the shared palette get
/// their own.
@Suite("Animated GIF writer")
struct AnimatedGIFWriterTests {
    let decoder = VipsImageDecoder(rejectsCorruptData: true)

    /// The RGBA of every pixel of frame `frame`, whatever the image's pixel format.
    static func rgba(_ image: Image, frame: Int) -> [[Int]] {
        let one = image.frame(frame).withEightBitChannels()
        let size = one.pixelFormat.bytesPerPixel
        return stride(from: 0, to: one.pixels.count, by: size).map { offset in
            let p = one.pixels.dropFirst(offset).prefix(size).map(Int.init)
            let alpha = one.pixelFormat.hasAlpha ? p[size - 1] : 255
            return one.pixelFormat.isGray ? [p[0], p[0], p[0], alpha] : [p[0], p[1], p[2], alpha]
        }
    }

    /// Encodes `animation` as GIF, reads it back, and returns per frame the mean difference of the
    /// colours of opaque pixels (levels of 255) and how many pixels are transparent in one and not the other.
    func roundTrip(_ animation: Image) throws -> [(difference: Double, alphaMismatches: Int)] {
        let data = try VipsImageEncoder().encode(animation, as: .gif, options: EncodingOptions())
        #expect(ImageFormat(sniffing: data) == .gif)
        let decoded = try decoder.decode(data, recipe: ImageRecipe())
        #expect(decoded.frameCount == animation.frameCount)
        #expect(decoded.animation == animation.animation)
        #expect((decoded.width, decoded.height) == (animation.width, animation.height))
        return (0..<animation.frameCount).map { frame in
            let (source, result) = (Self.rgba(animation, frame: frame), Self.rgba(decoded, frame: frame))
            var (total, opaque, mismatches) = (0, 0, 0)
            for (s, r) in zip(source, result) {
                if (s[3] >= 128) != (r[3] >= 128) { mismatches += 1 }
                guard s[3] >= 128, r[3] >= 128 else { continue }
                total += abs(s[0] - r[0]) + abs(s[1] - r[1]) + abs(s[2] - r[2])
                opaque += 1
            }
            return (opaque == 0 ? 0 : Double(total) / Double(3 * opaque), mismatches)
        }
    }

    /// 8 frames of 96 × 64 panning across the fixture photo (16-bit formats: the 8-bit frames widened).
    func photoPan(format: PixelFormat = .rgba8) throws -> Image {
        let photo = try VipsImageDecoder().decode(try Fixtures.data("chelsea.png"), recipe: ImageRecipe())
        let pixels = Self.rgba(photo, frame: 0)
        let pan = GeneratedImages.animation(
            width: 96, height: 64, delays: Array(repeating: 80, count: 8), loopCount: 0, format: format.eightBit
        ) { frame, x, y in
            let p = pixels[(y + 4 * frame) * photo.width + x + 8 * frame]
            let grey = UInt8((p[0] * 299 + p[1] * 587 + p[2] * 114) / 1000)
            let channels = format.isGray ? [grey] : [UInt8(p[0]), UInt8(p[1]), UInt8(p[2])]
            return format.hasAlpha ? channels + [255] : channels
        }
        return format.isHighBitDepth ? pan.withSixteenBitChannels() : pan
    }

    @Test(arguments: PixelFormat.allCases)
    func keepsThePhotosColoursInEveryFrame(format: PixelFormat) throws {
        let frames = try roundTrip(try photoPan(format: format))
        for (index, frame) in frames.enumerated() {
            // Measured 1.2-1.5 levels (libvips' writer, a palette per frame: 1.3-1.6).
            #expect(frame.difference < 2.5, "frame \(index): \(frame.difference) levels")
            #expect(frame.alphaMismatches == 0, "frame \(index)")
        }
    }

    @Test func transparentPixelsStayTransparentAsTheyComeAndGo() throws {
        // A transparent square that appears, moves, and goes: opaque pixels become transparent and back.
        let holes: [Range<Int>?] = [nil, 10..<30, 40..<60, nil, 0..<20]
        let animation = GeneratedImages.animation(
            width: 80, height: 40, delays: [100, 100, 100, 100, 100], loopCount: 2
        ) { frame, x, y in
            if let hole = holes[frame], hole.contains(x), (10..<30).contains(y) { return [0, 0, 0, 0] }
            return [UInt8(3 * x), UInt8(6 * y), UInt8(60 * frame), 255]
        }
        let frames = try roundTrip(animation)
        for (index, frame) in frames.enumerated() {
            #expect(frame.alphaMismatches == 0, "frame \(index): \(frame.alphaMismatches) pixels")
            #expect(frame.difference < 3, "frame \(index): \(frame.difference) levels")
        }
    }

    @Test func framesOfUnrelatedColoursGetPalettesOfTheirOwn() throws {
        // Each frame 225 colours (15 × 15 blocks) in its own pair of channels: 900 colours that share
        // almost none. One palette of 255 cannot hold them; a palette per frame holds each exactly.
        let animation = GeneratedImages.animation(width: 120, height: 120, delays: [50, 50, 50, 50]) { frame, x, y in
            let (a, b) = (UInt8(17 * (x / 8)), UInt8(17 * (y / 8)))
            switch frame {
            case 0: return [a, b, 0, 255]
            case 1: return [0, a, b, 255]
            case 2: return [b, 0, a, 255]
            default: return [a, 255 - b, 128, 255]
            }
        }
        let frames = try roundTrip(animation)
        for (index, frame) in frames.enumerated() {
            #expect(frame.difference < 0.5, "frame \(index): \(frame.difference) levels")
        }
    }

    @Test func aFrameEqualToTheOneBeforeCostsAlmostNothing() throws {
        // cgif's frame-to-frame optimisation: only what changed is written.
        let pan = try photoPan()
        let first = Self.rgba(pan, frame: 0)
        func repeated(_ count: Int) -> Image {
            GeneratedImages.animation(width: pan.width, height: pan.height, delays: Array(repeating: 80, count: count))
            { _, x, y in
                first[y * pan.width + x].map(UInt8.init)
            }
        }
        let two = try VipsImageEncoder().encode(repeated(2), as: .gif, options: EncodingOptions())
        let eight = try VipsImageEncoder().encode(repeated(8), as: .gif, options: EncodingOptions())
        #expect(eight.count < two.count + 6 * 64, "\(eight.count) bytes for 8 equal frames, \(two.count) for 2")
        #expect(try roundTrip(repeated(8)).allSatisfy { $0.difference < 2.5 })
    }
}
