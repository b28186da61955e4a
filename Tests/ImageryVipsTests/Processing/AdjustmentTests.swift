import Foundation
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryVips

/// ``ImageRecipe/Adjustment``s on generated images, each pixel checked against thumbor 7.8's
/// arithmetic for it (its C filters, written out again here per pixel).
@Suite("Adjustments (thumbor's filters)")
struct AdjustmentTests {
    /// 64 × 32, every channel a different function of (x, y), alpha 255 or, with `alpha`, varying.
    static func source(alpha: Bool = false, grey: Bool = false) -> Image {
        GeneratedImages.image(width: 64, height: 32, format: grey ? .gray8 : alpha ? .rgba8 : .rgb8) { x, y in
            let (r, g, b) = (UInt8(x * 4), UInt8(y * 8), UInt8((x * 3 + y * 5) % 256))
            if grey { return [r] }
            return alpha ? [r, g, b, UInt8(255 - x)] : [r, g, b]
        }
    }

    static func apply(_ adjustments: [ImageRecipe.Adjustment], to source: Image = source()) throws -> Image {
        var recipe = ImageRecipe()
        recipe.adjustments = adjustments
        return try VipsImageProcessor().process(
            ThumbnailBase(image: source, scale: 1, sourceWidth: source.width, sourceHeight: source.height),
            recipe: recipe
        )
    }

    /// Every pixel of `output` is `expected(sourcePixel)` (colour channels; alpha as in the source).
    static func expectEachPixel(_ output: Image, from source: Image, _ expected: ([Int], Int, Int) -> [Int]) {
        #expect(output.width == source.width && output.height == source.height)
        var wrong = 0
        for y in 0..<source.height {
            for x in 0..<source.width {
                let input = GeneratedImages.pixel(source, x, y).map(Int.init)
                let actual = GeneratedImages.pixel(output, x, y).map(Int.init)
                let want = expected(Array(input.prefix(3)), x, y).map { max(0, min(255, $0)) } + input.dropFirst(3)
                if actual != want {
                    if wrong < 3 { Issue.record("(\(x), \(y)): \(input) gave \(actual), thumbor gives \(want)") }
                    wrong += 1
                }
            }
        }
        #expect(wrong == 0)
    }

    @Test(arguments: [-100, -30, 0, 25, 100])
    func brightnessAddsAPercentageOf255(percent: Int) throws {
        let source = Self.source(alpha: true)
        let output = try Self.apply([.brightness(percent)], to: source)
        Self.expectEachPixel(output, from: source) { rgb, _, _ in rgb.map { $0 + 255 * percent / 100 } }
    }

    @Test(arguments: [-100, -50, 0, 40, 100])
    func contrastScalesAround128(percent: Int) throws {
        let source = Self.source()
        let output = try Self.apply([.contrast(percent)], to: source)
        let factor = (percent + 100) * (percent + 100) / 100
        Self.expectEachPixel(output, from: source) { rgb, _, _ in rgb.map { factor * ($0 - 128) / 100 + 128 } }
    }

    @Test func rgbAddsToEachChannel() throws {
        let source = Self.source()
        let output = try Self.apply([.channels(red: 20, green: -40, blue: 100)], to: source)
        Self.expectEachPixel(output, from: source) { rgb, _, _ in [rgb[0] + 51, rgb[1] - 102, rgb[2] + 255] }
    }

    @Test func colorizeBlendsEachChannelByItsPercentage() throws {
        let source = Self.source(alpha: true)
        let output = try Self.apply(
            [.colorize(red: 10, green: 50, blue: 100, color: .init(red: 255, green: 0, blue: 64))], to: source)
        let blends: [(percent: Double, fill: Double)] = [(10, 255), (50, 0), (100, 64)]
        Self.expectEachPixel(output, from: source) { rgb, _, _ in
            (0..<3).map { band -> Int in
                let (percent, fill) = blends[band]
                return Int((Double(rgb[band]) * (100 - percent) + fill * percent) / 100)
            }
        }
    }

    @Test func saturationMovesAwayFromPerceivedBrightness() throws {
        let source = Self.source()
        for change in [0.0, 0.5, 2.0] {
            let output = try Self.apply([.saturation(change)], to: source)
            // thumbor computes in float and truncates; libvips in float too: at most one level apart.
            var worst = 0
            for y in 0..<source.height {
                for x in 0..<source.width {
                    let c = GeneratedImages.pixel(source, x, y).map(Double.init)
                    let p = (c[0] * c[0] * 0.299 + c[1] * c[1] * 0.587 + c[2] * c[2] * 0.114).squareRoot()
                    let want = c.map { max(0, min(255, Int(p + ($0 - p) * change))) }
                    let actual = GeneratedImages.pixel(output, x, y).map(Int.init)
                    worst = max(worst, zip(want, actual).map { abs($0 - $1) }.max() ?? 0)
                }
            }
            #expect(worst <= 1, "saturation(\(change))")
        }
    }

    @Test func equalizeSpreadsEachChannelsHistogram() throws {
        let source = Self.source()
        let output = try Self.apply([.equalize], to: source)
        // thumbor's tables, from the source's histograms.
        var cumulative = Array(repeating: [Double](repeating: 0, count: 256), count: 3)
        for y in 0..<source.height {
            for x in 0..<source.width {
                for (band, value) in GeneratedImages.pixel(source, x, y).enumerated() {
                    cumulative[band][Int(value)] += 1
                }
            }
        }
        for band in 0..<3 {
            var total = 0.0
            cumulative[band] = cumulative[band].map { count in
                total += count
                return count > 0 ? total : 0
            }
        }
        var minimum = [0.0, 0.0, 0.0]
        var value = 0
        while minimum == [0, 0, 0], value < 256 {
            for band in 0..<3 where minimum[band] == 0 && cumulative[band][value] != 0 {
                minimum[band] = cumulative[band][value]
            }
            value += 1
        }
        let area = Double(source.width * source.height)
        Self.expectEachPixel(output, from: source) { rgb, _, _ in
            (0..<3).map { Int((cumulative[$0][rgb[$0]] - minimum[$0]) / (area - minimum[$0]) * 255) }
        }
    }

    @Test func curvesMapThroughTheChannelsCurveThenTheCommonOne() throws {
        let source = Self.source()
        typealias P = ImageRecipe.Adjustment.Curves.Point
        let curves = ImageRecipe.Adjustment.Curves(
            all: [P(0, 0), P(128, 160), P(255, 255)], red: [P(0, 30), P(255, 255)],
            green: [P(0, 0), P(255, 255)], blue: [P(20, 0), P(100, 200), P(200, 220)]
        )
        let output = try Self.apply([.curves(curves)], to: source)
        let tables = [curves.red, curves.green, curves.blue].map(ImageRecipe.Adjustment.Curves.table)
        let all = ImageRecipe.Adjustment.Curves.table(curves.all)
        Self.expectEachPixel(output, from: source) { rgb, _, _ in (0..<3).map { Int(all[Int(tables[$0][rgb[$0]])]) } }
        // A straight line through two points is the identity between them; flat outside them.
        let blue = tables[2]
        #expect(blue[0] == 0 && blue[19] == 0 && blue[100] == 200 && blue[200] == 220 && blue[255] == 220)
        #expect(ImageRecipe.Adjustment.Curves.table([P(0, 0), P(255, 255)]) == (0..<256).map { UInt8($0) })
    }

    /// glibc's `random()` after `srandom(1)`: its documented first values.
    @Test func theGeneratorIsTheCLibrarys() {
        var generator = CRandom(seed: 1)
        #expect(
            (0..<5).map { _ in generator.next() } == [
                1_804_289_383, 846_930_886, 1_681_692_777, 1_714_636_915, 1_957_747_793,
            ])
    }

    @Test func noiseIsThumborsForASeedAndTheSameEachTime() throws {
        let source = Self.source(alpha: true)
        let output = try Self.apply([.noise(amount: 40, seed: 7)], to: source)
        var generator = CRandom(seed: 7)
        var draws: [Int] = []
        for _ in 0..<(source.width * source.height) { draws.append(Int(generator.next()) % 40 - 20) }
        Self.expectEachPixel(output, from: source) { rgb, x, y in rgb.map { $0 + draws[y * source.width + x] } }
        #expect(try Self.apply([.noise(amount: 40, seed: 7)], to: source).pixels == output.pixels)
        #expect(try Self.apply([.noise(amount: 40, seed: 8)], to: source).pixels != output.pixels)
    }

    @Test func convolutionWeighsNeighboursWithEdgesRepeated() throws {
        let source = Self.source()
        let weights: [Double] = [0, -1, 0, -1, 5, -1, 0, -1, 0]
        let output = try Self.apply([.convolution(.init(weights: weights, columns: 3, normalizes: true))], to: source)
        Self.expectEachPixel(output, from: source) { _, x, y in
            var sums = [0.0, 0.0, 0.0]
            for ky in -1...1 {
                for kx in -1...1 {
                    let pixel = GeneratedImages.pixel(source, min(max(x + kx, 0), 63), min(max(y + ky, 0), 31))
                    for band in 0..<3 { sums[band] += Double(pixel[band]) * weights[(ky + 1) * 3 + kx + 1] }
                }
            }
            return sums.map { Int($0) }
        }
    }

    @Test func roundCornersPaintOrCutTheCornersOnly() throws {
        let source = Self.source()
        let painted = try Self.apply(
            [.roundCorners(horizontal: 10, vertical: 8, color: .init(red: 255, green: 0, blue: 0), transparent: false)],
            to: source)
        #expect(painted.pixelFormat == .rgb8)
        #expect(GeneratedImages.pixel(painted, 0, 0) == [255, 0, 0])
        #expect(GeneratedImages.pixel(painted, 63, 31) == [255, 0, 0])
        #expect(GeneratedImages.pixel(painted, 32, 16) == GeneratedImages.pixel(source, 32, 16))
        #expect(GeneratedImages.pixel(painted, 10, 0) == GeneratedImages.pixel(source, 10, 0))
        let cut = try Self.apply(
            [.roundCorners(horizontal: 10, vertical: 10, color: .black, transparent: true)], to: source)
        #expect(cut.pixelFormat == .rgba8)
        #expect(
            GeneratedImages.pixel(cut, 0, 0)[3] == 0 && GeneratedImages.pixel(cut, 63, 0)[3] == 0
                && GeneratedImages.pixel(cut, 0, 31)[3] == 0)
        #expect(GeneratedImages.pixel(cut, 32, 16) == GeneratedImages.pixel(source, 32, 16) + [255])
        let transparentCorners = GeneratedImages.count(cut) { $0[3] < 255 }
        let area = 4 * 100 - Int(Double.pi * 100)  // outside a quarter circle of radius 10, four times
        #expect(abs(transparentCorners - area) < 40)
    }

    @Test func aGreyImageBecomesColourAndScaleShrinks() throws {
        let grey = try Self.apply([.brightness(10)], to: Self.source(grey: true))
        #expect(grey.pixelFormat == .rgb8)
        let half = try Self.apply([.scale(0.5), .brightness(0)], to: Self.source())
        #expect((half.width, half.height) == (32, 16))
        let tiny = try Self.apply([.scale(0.01)])
        #expect((tiny.width, tiny.height) == (64, 32))  // under a pixel: left alone, as thumbor does
    }

    @Test func grayscaleIsPillowsLuma() throws {
        let source = Self.source(alpha: true)
        let output = try Self.apply([.grayscale], to: source)
        #expect(output.pixelFormat == .grayAlpha8)
        var wrong = 0
        for y in 0..<source.height {
            for x in 0..<source.width {
                let p = GeneratedImages.pixel(source, x, y).map(Int.init)
                let luma = (19595 * p[0] + 38470 * p[1] + 7471 * p[2] + 32768) >> 16
                if GeneratedImages.pixel(output, x, y).map(Int.init) != [luma, p[3]] { wrong += 1 }
            }
        }
        #expect(wrong == 0)
    }

    /// Wavelet sharpening: flat areas stay flat, an edge gets steeper (overshoot both sides), amount 0
    /// leaves the image as it is (each level's detail × 1, summed back).
    @Test func waveletSharpeningSteepensEdges() throws {
        let edge = GeneratedImages.image(width: 64, height: 16, format: .rgb8) { x, _ in
            x < 32 ? [80, 80, 80] : [160, 160, 160]
        }
        for luminanceOnly in [false, true] {
            let sharpened = try Self.apply(
                [.waveletSharpen(amount: 2, radius: 1, luminanceOnly: luminanceOnly)], to: edge)
            #expect(
                GeneratedImages.pixel(sharpened, 31, 8)[0] < 78 && GeneratedImages.pixel(sharpened, 32, 8)[0] > 162,
                "\(luminanceOnly)")
            #expect(
                abs(Int(GeneratedImages.pixel(sharpened, 2, 8)[0]) - 80) <= 1
                    && abs(Int(GeneratedImages.pixel(sharpened, 61, 8)[0]) - 160) <= 1)
            let none = try Self.apply(
                [.waveletSharpen(amount: 0, radius: 1, luminanceOnly: luminanceOnly)], to: Self.source())
            #expect(GeneratedImages.meanDifference(none, Self.source()) < 1, "\(luminanceOnly)")
        }
    }

    @Test func badValuesAreRefusedBeforeAnyPixel() {
        for adjustment: ImageRecipe.Adjustment in [
            .brightness(101), .contrast(-101), .noise(amount: 300, seed: 0), .scale(0), .scale(1.5),
            .convolution(.init(weights: [1, 2], columns: 2)), .convolution(.init(weights: [1, 2, 3], columns: 2)),
            .curves(.init(all: [.init(3, 3)], red: [], green: [], blue: [])),
        ] {
            #expect(throws: ImageProcessingError.self, "\(adjustment)") { try Self.apply([adjustment]) }
        }
    }
}
