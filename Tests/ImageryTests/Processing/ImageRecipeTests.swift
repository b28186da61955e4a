import Foundation
import Testing

@testable import Imagery

/// The recipe's own values: what it does at all, its limits on a source, colours, lengths, and where
/// gravity puts a part of a side.
@Suite("ImageRecipe")
struct ImageRecipeTests {
    typealias Gravity = ImageRecipe.Gravity

    @Test func anEmptyRecipeDoesNothingAndAResizeAloneIsResizeOnly() {
        #expect(ImageRecipe().isIdentity && !ImageRecipe().resizes && ImageRecipe().isResizeOnly)
        let resize = ImageRecipe(resize: .init(width: 10, height: 10))
        #expect(!resize.isIdentity && resize.resizes && resize.isResizeOnly)
        var grey = resize
        grey.grayscale = true
        #expect(grey.resizes && !grey.isResizeOnly)
        var sized = ImageRecipe()
        sized.sizing = ImageRecipe.Sizing()
        #expect(sized.resizes && !sized.isResizeOnly && !sized.isIdentity)
        var metadata = ImageRecipe()
        metadata.keptMetadata = .all
        #expect(!metadata.isIdentity && !metadata.resizes)
    }

    /// A recipe's geometry is its own steps or a sizing, never both: the last assignment wins.
    @Test func aSizingAndAResizeNeverCoexistTheLastAssignedIsKept() throws {
        let box = ImageRequest.Thumbnail(width: 30, height: 20)
        var sizing = ImageRecipe.Sizing()
        (sizing.width, sizing.height) = (30, 20)
        var recipe = ImageRecipe()
        recipe.crop = .init(width: .pixels(10), height: .pixels(10))
        recipe.padding = .init(all: 2)
        recipe.sizing = sizing
        #expect(recipe.geometry == .sizing(sizing))
        #expect(recipe.crop == nil && recipe.resize == nil && recipe.padding == nil && recipe.extend == nil)
        recipe.resize = box
        #expect(
            recipe.geometry == .steps(.init(resize: box)), "the sizing is dropped, and the crop and padding with it")
        #expect(recipe.sizing == nil && recipe.resize == box)
        #expect(recipe == ImageRecipe(resize: box) && recipe.isResizeOnly)
        #expect(recipe.description == ImageRecipe(resize: box).description)
        // A sizing recipe lays out with its sizing alone (no refused combination is left to check).
        recipe.sizing = sizing
        #expect(recipe.sizing == sizing && recipe.resize == nil)
        #expect(try recipe.layout(sourceWidth: 300, sourceHeight: 200).outputWidth == 30)
        // Clearing what the recipe does not hold changes nothing; clearing the sizing leaves nothing.
        recipe.resize = nil
        recipe.padding = nil
        #expect(recipe.sizing == sizing)
        recipe.sizing = nil
        #expect(recipe.isIdentity)
        // Edited in place through its optional, a step stays a step.
        recipe.resize = box
        recipe.resize?.width = 40
        #expect(recipe.resize?.width == 40 && recipe.sizing == nil)
    }

    @Test(
        arguments: [
            (
                ImageRecipe.SourceLimits(bytes: 100), 101, 10, 10, 1,
                "the source is 101 bytes, over the request's limit of 100"
            ),
            (.init(bytes: 100), 100, 10, 10, 1, nil),
            (.init(frames: 3), 1, 10, 10, 4, "the source has 4 frames, over the request's limit of 3"),
            (.init(frames: 3), 1, 10, 10, 3, nil),
            (.init(pixels: 99), 1, 10, 10, 1, "the source is 10x10 pixels, over the request's limit of 99"),
            (.init(pixels: 100), 1, 10, 10, 1, nil),
            (
                .init(pixels: 250), 1, 10, 10, 3,
                "the source is 10x10 pixels × 3 frames, over the request's limit of 250"
            ),
            (.init(pixels: 250, framePixels: 100), 1, 10, 10, 3, nil),  // an animation is checked frame by frame
            (
                .init(pixels: 50, framePixels: 100), 1, 10, 10, 1,
                "the source is 10x10 pixels, over the request's limit of 50"
            ),
            (
                .init(framePixels: 99), 1, 10, 10, 2,
                "each frame of the source is 10x10 pixels, over the request's limit of 99"
            ),
            (.init(), Int.max, 100_000, 100_000, 1_000, nil),
        ] as [(ImageRecipe.SourceLimits, Int, Int, Int, Int, String?)])
    func sourceLimitsSayWhatIsOver(
        limits: ImageRecipe.SourceLimits, bytes: Int, width: Int, height: Int, frames: Int, problem: String?
    ) {
        #expect(limits.problem(bytes: bytes, width: width, height: height, frames: frames) == problem)
    }

    @Test func quarterTurnsSwapTheSides() {
        #expect(ImageRecipe.Rotation.allCases.filter(\.swapsSides) == [.quarter, .threeQuarters])
        #expect(ImageRecipe.Rotation.allCases.map(\.rawValue) == [0, 90, 180, 270])
    }

    @Test(
        arguments: [
            ("#FFF", ImageRecipe.Color(red: 255, green: 255, blue: 255)),
            ("abc", .init(red: 0xAA, green: 0xBB, blue: 0xCC)),
            ("AbCdEf", .init(red: 171, green: 205, blue: 239)),
            ("#12345678", .init(red: 0x12, green: 0x34, blue: 0x56, alpha: 0x78)),
            ("000000ff", .black), ("00000000", .transparent),
        ] as [(String, ImageRecipe.Color)])
    func coloursReadFromHex(text: String, colour: ImageRecipe.Color) {
        #expect(ImageRecipe.Color(hex: text) == colour)
    }

    @Test(arguments: [
        "", "#", "##fff", "ff", "ffff", "fffff", "fffffff", "fffffffff", "gggggg", "ＦＦＦ", "fff ", " fff", "0x123",
    ])
    func whatIsNotHexIsNoColour(text: String) {
        #expect(ImageRecipe.Color(hex: text) == nil, "\(text)")
    }

    @Test func coloursWriteBackAsLowerCaseHex() {
        for colour in [ImageRecipe.Color.white, .black, .transparent, .init(red: 1, green: 2, blue: 3, alpha: 254)] {
            #expect(ImageRecipe.Color(hex: colour.description) == colour)
        }
        #expect(ImageRecipe.Color(red: 10, green: 171, blue: 0).description == "0aab00")
        #expect(ImageRecipe.Color.transparent.description == "00000000")
    }

    @Test func lengthsArePixelsOrRoundedFractionsOfTheSide() {
        #expect(ImageRecipe.Length.pixels(5).resolved(in: 100) == 5)
        #expect(ImageRecipe.Length.pixels(500).resolved(in: 100) == 500, "clamped by whoever uses it")
        #expect(ImageRecipe.Length.fraction(0.25).resolved(in: 10) == 3, "2.5 rounds away from zero")
        #expect(ImageRecipe.Length.fraction(1).resolved(in: 427) == 427)
        #expect(ImageRecipe.Length.fraction(0).resolved(in: 427) == 0)
    }

    /// A part 40 long in a side of 100 (60 to spare), on each axis.
    @Test(
        arguments: [
            (Gravity.center, 30, 30), (.north, 30, 0), (.south, 30, 60), (.east, 60, 30), (.west, 0, 30),
            (.northEast, 60, 0), (.northWest, 0, 0), (.southEast, 60, 60), (.southWest, 0, 60),
            (.sourcePoint(x: 1, y: 1), 30, 30),
            (.focalPoint(x: 0.5, y: 0.5), 30, 30), (.focalPoint(x: 0.9, y: 0.1), 60, 0),
            (.focalPoint(x: 0.3, y: 0.65), 10, 45),
        ] as [(Gravity, Int, Int)])
    func gravityPlacesAPartOfASide(gravity: Gravity, x: Int, y: Int) {
        #expect(gravity.offset(part: 40, in: 100, horizontal: true) == x)
        #expect(gravity.offset(part: 40, in: 100, horizontal: false) == y)
        #expect(gravity.offset(part: 100, in: 100, horizontal: true) == 0, "nothing to spare")
        #expect(gravity.offset(part: 140, in: 100, horizontal: false) == 0, "a part larger than the side")
    }

    @Test func smartGravityIsForTheBackendToPlace() {
        #expect(Gravity.smart(.attention).offset(part: 10, in: 100, horizontal: true) == nil)
        #expect(Gravity.center.offset(part: 40, in: 101, horizontal: true) == 30, "an odd spare: the lower half")
        #expect(Gravity.east.offset(part: 40, in: 101, horizontal: true) == 61)
    }

    @Test func turningAGravityFollowsThePixels() {
        let named: [Gravity] = [.north, .northEast, .east, .southEast, .south, .southWest, .west, .northWest]
        for (index, gravity) in named.enumerated() {
            #expect(gravity.turned(quarterTurns: 1) == named[(index + 2) % 8], "\(gravity)")
            #expect(gravity.turned(quarterTurns: -1) == named[(index + 6) % 8], "\(gravity)")
            #expect(
                gravity.turned(quarterTurns: 4) == gravity && gravity.turned(quarterTurns: 2) == named[(index + 4) % 8])
            #expect(gravity.turned(quarterTurns: 0, flop: true).turned(quarterTurns: 0, flop: true) == gravity)
        }
        #expect(
            Gravity.west.turned(quarterTurns: 0, flop: true) == .east
                && Gravity.north.turned(quarterTurns: 0, flip: true) == .south)
        #expect(Gravity.northWest.turned(quarterTurns: 0, flop: true, flip: true) == .southEast)
        #expect(Gravity.center.turned(quarterTurns: 3, flop: true) == .center)
        for unmoved in [Gravity.smart(.entropy), .sourcePoint(x: 3, y: 4)] {
            #expect(unmoved.turned(quarterTurns: 1, flop: true) == unmoved)
        }
        guard case .focalPoint(let x, let y) = Gravity.focalPoint(x: 0.25, y: 0.1).turned(quarterTurns: 1) else {
            Issue.record("not a focal point")
            return
        }
        #expect(abs(x - 0.9) < 1e-12 && abs(y - 0.25) < 1e-12)
    }

    @Test func aSourcePointIsAFocalPointOfTheRegionItIsIn() {
        let region = ImageRecipe.Rect(x: 100, y: 50, width: 200, height: 100)
        #expect(
            Gravity.sourcePoint(x: 150, y: 75).resolved(in: region, rotation: .none, flip: false, flop: false)
                == .focalPoint(x: 0.25, y: 0.25))
        #expect(
            Gravity.sourcePoint(x: 0, y: 1000).resolved(in: region, rotation: .none, flip: false, flop: false)
                == .focalPoint(x: 0, y: 1), "clamped")
        #expect(
            Gravity.sourcePoint(x: 150, y: 75).resolved(in: region, rotation: .half, flip: false, flop: false)
                == .focalPoint(x: 0.75, y: 0.75))
        #expect(
            Gravity.north.resolved(in: region, rotation: .half, flip: true, flop: true) == .north,
            "other gravities are as they are")
    }

    /// A 20 × 20 watermark on a 100 × 100 output, 10 pixels in from the edges gravity puts it against.
    @Test(
        arguments: [
            (Gravity.southEast, 10, 10, 70, 70), (.northWest, 10, 10, 10, 10), (.center, 10, 10, 50, 50),
            (.north, 0, 10, 40, 10),
            (.east, 10, 0, 70, 40), (.northWest, 90, 90, 80, 80), (.southEast, -10, 0, 80, 80),
            (.focalPoint(x: 0.1, y: 0.9), 0, 0, 0, 80),
        ] as [(Gravity, Int, Int, Int, Int)])
    func aWatermarkIsPlacedByGravityAndOffsetsInsideTheOutput(
        gravity: Gravity, offsetX: Int, offsetY: Int, x: Int, y: Int
    ) {
        let watermark = ImageRecipe.Watermark(name: "logo", gravity: gravity, offsetX: offsetX, offsetY: offsetY)
        #expect(watermark.origin(width: 20, height: 20, outputWidth: 100, outputHeight: 100) == (x, y))
        #expect(
            watermark.origin(width: 120, height: 100, outputWidth: 100, outputHeight: 100) == (0, 0),
            "larger than the output")
    }

    @Test(
        arguments: [
            ("© Imagery", "sans bold 32", nil),
            ("x", "serif italic 24.5", nil),
            ("x", "DejaVu Sans, Bold 256", nil),
            ("", "sans 12", "watermark text must be 1 to 100 characters"),
            (String(repeating: "a", count: 101), "sans 12", "watermark text must be 1 to 100 characters"),
            (String(repeating: "é", count: 100), "sans 12", nil),
            ("a\nb", "sans 12", "watermark text cannot contain control characters or line breaks"),
            ("a\u{7}", "sans 12", "watermark text cannot contain control characters or line breaks"),
            (
                "x", "sans; bold", Self.fontProblem
            ),
            (
                "x", "32", Self.fontProblem
            ),
            (
                "x", "", Self.fontProblem
            ),
            (
                "x", "<b>sans</b>", Self.fontProblem
            ),
            ("x", "sans 0", "a watermark font's size must be from 1 to 256 pixels"),
            ("x", "sans 257", "a watermark font's size must be from 1 to 256 pixels"),
        ] as [(String, String, String?)])
    func watermarkTextSaysWhyItCannotBeDrawn(text: String, font: String, problem: String?) {
        #expect(ImageRecipe.Watermark.Text(text, font: font).problem == problem)
    }

    static let fontProblem =
        "a watermark font is a family, a style and a size (sans bold 32): "
        + "letters, digits, spaces, commas, dots and hyphens"

    @Test func aRectDescribesItselfAsSizeAtOrigin() {
        #expect(ImageRecipe.Rect(x: 1, y: 2, width: 3, height: 4).description == "3x4 at 1,2")
        #expect(
            ImageProcessingError.cropOutsideImage(.init(x: 9, y: 9, width: 1, height: 1), width: 5, height: 5)
                .description
                == "the crop 1x1 at 9,9 starts outside the 5x5 image")
        #expect(
            ImageProcessingError.outputTooLarge(width: 9, height: 8, limit: 7).description
                == "the output would be 9x8 pixels, over the limit of 7 on a side")
        #expect(ImageProcessingError.emptyResult.description == "the operations leave an empty image")
        #expect(
            ImageProcessingError.failed("x").description == "processing failed: x"
                && ImageProcessingError.invalidValue("y").description == "y")
    }
}

/// imgproxy's placement (`calcPosition`): offsets from the edges a gravity names, towards the centre.
@Suite("OffsetGravity")
struct OffsetGravityTests {
    typealias OffsetGravity = ImageRecipe.OffsetGravity

    /// A 40 × 40 part in 100 × 100.
    @Test(
        arguments: [
            (OffsetGravity(.center), 1.0, false, 30, 30),  // (100 - 40 + 1) / 2 rounded to even
            (.init(.center, x: 10, y: -10), 1, false, 40, 20),
            (.init(.north), 1, false, 30, 0), (.init(.north, x: 0, y: 5), 1, false, 30, 5),
            (.init(.south, x: 0, y: 5), 1, false, 30, 55), (.init(.east, x: 5, y: 0), 1, false, 55, 30),
            (.init(.west, x: 5, y: 0), 1, false, 5, 30), (.init(.northEast), 1, false, 60, 0),
            (.init(.southWest), 1, false, 0, 60),
            (.init(.center, x: 0.1, y: 0), 1, false, 40, 30),  // below 1: a fraction of the side
            (.init(.west, x: 5, y: 0), 2, false, 10, 30),  // pixels times the dpr
            (.init(.west, x: 0.1, y: 0), 2, false, 10, 30),  // fractions are not
            (.init(.focalPoint(x: 0.25, y: 0.75)), 1, false, 5, 55),
            // Kept inside; or, with overflow, hanging off with a pixel in.
            (.init(.west, x: 80, y: 0), 1, false, 60, 30), (.init(.west, x: -10, y: 0), 1, false, 0, 30),
            (.init(.west, x: -10, y: 0), 1, true, -10, 30), (.init(.east, x: -50, y: 0), 1, true, 99, 30),
            (.init(.smart(.attention)), 1, false, 30, 30),
        ] as [(OffsetGravity, Double, Bool, Int, Int)])
    func placesAPartFromTheEdgesItsGravityNames(gravity: OffsetGravity, dpr: Double, overflow: Bool, x: Int, y: Int) {
        #expect(gravity.position(in: 100, 100, of: 40, 40, dpr: dpr, overflow: overflow) == (x, y))
    }

    @Test func centringRoundsHalfToEven() {
        #expect(OffsetGravity(.center).position(in: 100, 100, of: 50, 50, dpr: 1) == (26, 26))  // 51 / 2 = 25.5: 26
        #expect(OffsetGravity(.center).position(in: 100, 100, of: 48, 48, dpr: 1) == (26, 26))  // 53 / 2 = 26.5: 26
    }

    @Test func aGravityOfTheTurnedImageIsUnturnedToTheSource() {
        // A point keeps its pixel: a half turn mirrors both fractions; a quarter turn clockwise takes the
        // output's (u, v) from the source's (v, 1 - u); three quarters from (1 - v, u).
        func point(_ gravity: OffsetGravity) -> [Double] {
            guard case .focalPoint(let x, let y) = gravity.gravity else { return [] }
            return [(x * 1e9).rounded() / 1e9, (y * 1e9).rounded() / 1e9]
        }
        let focal = OffsetGravity(.focalPoint(x: 0.2, y: 0.3))
        #expect(point(focal.unturned(rotation: .none, flop: false, flip: false)) == [0.2, 0.3])
        #expect(point(focal.unturned(rotation: .half, flop: false, flip: false)) == [0.8, 0.7])
        #expect(point(focal.unturned(rotation: .quarter, flop: false, flip: false)) == [0.3, 0.8])
        #expect(point(focal.unturned(rotation: .threeQuarters, flop: false, flip: false)) == [0.7, 0.2])
        #expect(point(focal.unturned(rotation: .none, flop: true, flip: false)) == [0.8, 0.3])
        // The output's top, after a quarter turn clockwise, was the source's left edge.
        #expect(
            OffsetGravity(.north, x: 5, y: 10).unturned(rotation: .quarter, flop: false, flip: false)
                == OffsetGravity(.west, x: 10, y: -5))
        #expect(
            OffsetGravity(.east, x: 3, y: 4).unturned(rotation: .none, flop: false, flip: false)
                == OffsetGravity(.east, x: 3, y: 4))
        #expect(OffsetGravity(.east).unturned(rotation: .none, flop: true, flip: false).gravity == .west)
    }

    @Test func itsKeyNamesTheGravityAndAnyOffsets() {
        #expect(OffsetGravity(.center).description == "~center")
        #expect(OffsetGravity(.southEast, x: 1, y: 0.5).description == "~southeast(1.0,0.5)")
        #expect(OffsetGravity(.focalPoint(x: 0.5, y: 0.25)).description == "~fp:0.5:0.25")
    }
}
