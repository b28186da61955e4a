import Foundation
import Testing

@testable import Imagery

/// Thumbor's filters as values: the ranges each accepts, their keys, tone curves, and the images a
/// recipe links to (watermarks and frames at URLs) with thumbor's way of pasting them.
@Suite("ImageRecipe adjustments and linked images")
struct ImageRecipeAdjustmentsTests {
    typealias Adjustment = ImageRecipe.Adjustment
    typealias Point = Adjustment.Curves.Point

    static let line = [Point(0, 0), Point(255, 255)]

    @Test(
        arguments: [
            (Adjustment.brightness(-100), true), (.brightness(100), true), (.brightness(101), false),
            (.contrast(-101), false),
            (.saturation(0), true), (.saturation(-100), true), (.saturation(100.5), false), (.saturation(.nan), false),
            (.saturation(.infinity), false),
            (.channels(red: 100, green: -100, blue: 0), true), (.channels(red: 0, green: 101, blue: 0), false),
            (.colorize(red: 0, green: 100, blue: 50, color: .white), true),
            (.colorize(red: -1, green: 0, blue: 0, color: .white), false),
            (.equalize, true), (.grayscale, true), (.frame(.source(URL(string: "https://e.com/f.png")!)), true),
            (.noise(amount: 0, seed: 0), true), (.noise(amount: 255, seed: .max), true),
            (.noise(amount: 256, seed: 1), false),
            (.roundCorners(horizontal: 0, vertical: 5, color: .black, transparent: true), true),
            (.roundCorners(horizontal: -1, vertical: 5, color: .black, transparent: false), false),
            (.scale(1), true), (.scale(0.01), true), (.scale(0), false), (.scale(1.01), false),
            (.waveletSharpen(amount: 100, radius: 10, luminanceOnly: true), true),
            (.waveletSharpen(amount: 101, radius: 1, luminanceOnly: false), false),
            (.waveletSharpen(amount: 1, radius: -1, luminanceOnly: false), false),
            (.curves(.init(all: line, red: line, green: line, blue: line)), true),
            (.curves(.init(all: [Point(0, 0)], red: line, green: line, blue: line)), false),
            (.curves(.init(all: line, red: [Point(10, 0), Point(10, 255)], green: line, blue: line)), false),
            (.curves(.init(all: line, red: line, green: [Point(200, 0), Point(100, 255)], blue: line)), false),
            (.convolution(.init(weights: [0, 0, 0, 0, 1, 0, 0, 0, 0], columns: 3)), true),
            (.convolution(.init(weights: [1], columns: 1)), true),
            (.convolution(.init(weights: [1, 2], columns: 2)), false),
            (.convolution(.init(weights: [1, 2, 3, 4, 5], columns: 3)), false),
            (.convolution(.init(weights: [1, 2, 3, 4, 5, 6], columns: 3)), false),
            (.convolution(.init(weights: [], columns: 1)), false),
            (.convolution(.init(weights: [1], columns: 0)), false),
            (.convolution(.init(weights: [1, .nan, 1], columns: 3)), false),
            (.convolution(.init(weights: [Double](repeating: 1, count: 301), columns: 301)), true),
            (.convolution(.init(weights: [Double](repeating: 1, count: 303), columns: 303)), false),
            (.convolution(.init(weights: [Double](repeating: 1, count: 627), columns: 3)), false),
            (.watermark(.init(name: "w")), true),
            (.watermark(Self.pasted(.init(x: .center, y: .center, transparency: 100))), true),
            (.watermark(Self.pasted(.init(x: .center, y: .center, transparency: 101))), false),
            (.watermark(Self.pasted(.init(x: .center, y: .center, widthRatio: 0))), false),
            (.watermark(Self.pasted(.init(x: .center, y: .center, heightRatio: -0.5))), false),
        ] as [(Adjustment, Bool)])
    func eachStepSaysWhetherItCanBeApplied(adjustment: Adjustment, valid: Bool) {
        #expect((adjustment.problem == nil) == valid, "\(adjustment): \(adjustment.problem ?? "no problem")")
    }

    static func pasted(_ paste: ImageRecipe.Watermark.Paste) -> ImageRecipe.Watermark {
        var watermark = ImageRecipe.Watermark(name: "w")
        watermark.placement = .pasted(paste)
        return watermark
    }

    @Test(
        arguments: [
            (Adjustment.brightness(-5), "brightness(-5)"), (.contrast(7), "contrast(7)"),
            (.saturation(1.5), "saturation(1.5)"),
            (.channels(red: 1, green: -2, blue: 3), "rgb(1,-2,3)"),
            (.colorize(red: 1, green: 2, blue: 3, color: .white), "colorize(1,2,3,ffffff)"),
            (.equalize, "equalize"), (.grayscale, "gray"), (.noise(amount: 9, seed: 42), "noise(9,42)"),
            (
                .curves(
                    .init(
                        all: [Point(0, 0), Point(255, 255)], red: [Point(0, 10), Point(255, 245)], green: line,
                        blue: line)),
                "curve(0:0;255:255|0:10;255:245|0:0;255:255|0:0;255:255)"
            ),
            (
                .convolution(.init(weights: [1, 2, 1], columns: 3, normalizes: false)),
                "convolution(1.0;2.0;1.0,3,false)"
            ),
            (
                .roundCorners(horizontal: 4, vertical: 5, color: .black, transparent: true),
                "round(4|5,000000,transparent)"
            ),
            (.roundCorners(horizontal: 4, vertical: 5, color: .black, transparent: false), "round(4|5,000000)"),
            (.scale(0.5), "scale(0.5)"),
            (.waveletSharpen(amount: 2, radius: 1, luminanceOnly: true), "sharpen(2.0,1.0,true)"),
            (.frame(.source(URL(string: "https://e.com/f.png")!)), "frame(url(19:https://e.com/f.png))"),
        ] as [(Adjustment, String)])
    func eachStepHasAKey(adjustment: Adjustment, key: String) {
        #expect(adjustment.description == key)
    }

    @Test func aStraightLineIsTheIdentityAndItsReverseInvertsEveryLevel() {
        #expect(Adjustment.Curves.table(Self.line) == (0...255).map { UInt8($0) })
        #expect(Adjustment.Curves.table([Point(0, 255), Point(255, 0)]) == (0...255).map { UInt8(255 - $0) })
    }

    @Test func aCurvePassesThroughItsPointsAndIsFlatBeyondThem() {
        let points = [Point(50, 20), Point(128, 200), Point(200, 230)]
        let table = Adjustment.Curves.table(points)
        #expect(table.count == 256)
        for point in points { #expect(table[Int(point.input)] == point.output, "\(point)") }
        #expect(table[0..<50].allSatisfy { $0 == 20 }, "below the first input: its output")
        #expect(table[200...].allSatisfy { $0 == 230 }, "from the last input on: its output")
        #expect(zip(table[50..<200], table[51...200]).allSatisfy { $0 <= $1 }, "a rising curve through rising points")
    }

    @Test func aSteepCurveIsClampedToTheLevelsThereAre() {
        // Up, down and up again sharply: the spline overshoots both ends of 0...255.
        let table = Adjustment.Curves.table([
            Point(0, 0), Point(10, 255), Point(20, 0), Point(30, 255), Point(255, 255),
        ])
        #expect(table[10] == 255 && table[20] == 0 && table[30] == 255)
        #expect(table.contains(0) && table.contains(255), "clamped, not wrapped")
    }

    @Test func aCurveOfFewerThanTwoPointsIsFlat() {
        #expect(Adjustment.Curves.table([Point(7, 99)]) == [UInt8](repeating: 99, count: 256))
        #expect(Adjustment.Curves.table([]) == [UInt8](repeating: 0, count: 256))
    }

    // MARK: - Linked images

    static let watermarkURL = URL(string: "https://example.com/mark.png")!
    static let frameURL = URL(string: "https://example.com/frame.png")!

    static func linking() -> ImageRecipe {
        var recipe = ImageRecipe(resize: .init(width: 10, height: 10))
        recipe.watermark = .init(mark: .linked(.source(watermarkURL)))
        recipe.adjustments = [
            .brightness(5), .frame(.source(frameURL)), .watermark(.init(mark: .linked(.source(watermarkURL)))),
            .watermark(.init(name: "local")), .frame(.encoded(.init(id: "loaded", data: Data()))),
        ]
        return recipe
    }

    @Test func theLinkedSourcesAreEachURLOnceInOrder() {
        #expect(Self.linking().linkedSources == [Self.watermarkURL, Self.frameURL])
        #expect(ImageRecipe().linkedSources.isEmpty)
    }

    @Test func resolvingGivesLoadedBytesToEveryUseOfAURLAndLeavesTheRest() {
        let mark = ImageRecipe.EncodedImage(id: "mark#1", data: Data([1]))
        let resolved = Self.linking().resolvingLinks { $0 == Self.watermarkURL ? mark : nil }
        #expect(resolved.watermark?.mark == .linked(.encoded(mark)))
        #expect(resolved.adjustments[2] == .watermark(.init(mark: .linked(.encoded(mark)))))
        #expect(resolved.adjustments[1] == .frame(.source(Self.frameURL)), "nothing loaded for it")
        #expect(resolved.adjustments[0] == .brightness(5) && resolved.adjustments[3] == Self.linking().adjustments[3])
        #expect(resolved.linkedSources == [Self.frameURL])
        let all = resolved.resolvingLinks { _ in mark }
        #expect(all.linkedSources.isEmpty)
        #expect(all.adjustments[4] == .frame(.encoded(.init(id: "loaded", data: Data()))), "what was loaded stays")
    }

    /// A 40 × 20 watermark on a 200 × 100 output.
    @Test(
        arguments: [
            (nil, nil, 40, 20), (0.5, nil, 100, 50), (nil, 0.1, 20, 10), (0.5, 0.1, 20, 10), (0.1, 0.5, 20, 10),
            (0.0, nil, 1, 1),
            (2.0, nil, 400, 200),
        ] as [(Double?, Double?, Int, Int)])
    func aPastedWatermarkFitsTheRatiosOfTheOutput(widthRatio: Double?, heightRatio: Double?, width: Int, height: Int) {
        let paste = ImageRecipe.Watermark.Paste(
            x: .center, y: .center, widthRatio: widthRatio, heightRatio: heightRatio)
        #expect(paste.size(width: 40, height: 20, outputWidth: 200, outputHeight: 100) == (width, height))
    }

    @Test func pastedWatermarksGoWhereThumborPutsThem() {
        typealias Paste = ImageRecipe.Watermark.Paste
        func origins(_ x: Paste.Position, _ y: Paste.Position, part: Int = 40, side: Int = 200) -> [[Int]] {
            Paste(x: x, y: y).origins(width: part, height: part, outputWidth: side, outputHeight: side).map {
                [$0.x, $0.y]
            }
        }
        #expect(origins(.pixels(10, fromEnd: false), .pixels(10, fromEnd: true)) == [[10, 150]])
        #expect(origins(.percent(20, fromEnd: false), .percent(20, fromEnd: true)) == [[40, 120]])
        #expect(origins(.center, .center) == [[80, 80]])
        #expect(origins(.repeat, .pixels(0, fromEnd: false)) == [[0, 0], [40, 0], [80, 0], [120, 0], [160, 0]])
        // Less than twice the watermark: as many as cover the side, 10 pixels apart.
        #expect(origins(.repeat, .center, part: 40, side: 70) == [[0, 15], [50, 15]])
        // Past 100 copies: 6 × 6, spread over the output.
        let many = origins(.repeat, .repeat, part: 10, side: 1000)
        #expect(many.count == 36 && Set(many.map { $0[0] }) == [0, 198, 396, 594, 792, 990])
    }

    /// The ratios size the mark as thumbor's `calc_watermark_size` does, Python's `round` included (a half
    /// goes to the even neighbour: an 80x40 mark at 15% of a 300-wide output is 45x22, then 9 rows of it
    /// fit 200 pixels, where 45x23 gave 8 and moved every copy).
    @Test func ratiosRoundAsPythonDoes() {
        let paste = ImageRecipe.Watermark.Paste(x: .repeat, y: .repeat, widthRatio: 0.15)
        #expect(paste.size(width: 80, height: 40, outputWidth: 300, outputHeight: 200) == (45, 22))
        #expect(paste.size(width: 80, height: 40, outputWidth: 400, outputHeight: 267) == (60, 30))
        #expect(
            ImageRecipe.Watermark.Paste(x: .repeat, y: .repeat, heightRatio: 0.25).size(
                width: 50, height: 20, outputWidth: 100, outputHeight: 50) == (31, 12))
        #expect(paste.origins(width: 45, height: 22, outputWidth: 300, outputHeight: 200).count == 6 * 9)
    }

    @Test func pasteKeysNameEveryPart() {
        let paste = ImageRecipe.Watermark.Paste(
            x: .percent(5, fromEnd: true), y: .repeat, widthRatio: 0.5, transparency: 20)
        #expect(paste.description == "paste(-5p,repeat,0.5,none,20)")
        #expect(ImageRecipe.Watermark.Paste.Position.pixels(0, fromEnd: true).description == "-0")
    }
}
