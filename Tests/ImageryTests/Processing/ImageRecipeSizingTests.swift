import Foundation
import Testing

@testable import Imagery

/// imgproxy's sizing laid out without a pixel: the result sizes of imgproxy's own processing tests
/// (`processing_test.go`, on its 200 × 100 `test2.jpg`), then dpr, zoom, minimum sides and crops.
@Suite("ImageRecipe sizing (imgproxy)")
struct ImageRecipeSizingTests {
    typealias Mode = ImageRecipe.Sizing.Mode

    /// What `sizing` lays out on imgproxy's 200 × 100 test image, turned by `rotation`.
    static func size(_ sizing: ImageRecipe.Sizing, rotation: ImageRecipe.Rotation = .none) throws -> [Int] {
        var recipe = ImageRecipe()
        recipe.sizing = sizing
        recipe.rotation = rotation
        let layout = try recipe.layout(sourceWidth: 200, sourceHeight: 100)
        return [layout.outputWidth, layout.outputHeight]
    }

    static func sizing(
        _ mode: Mode, _ width: Int, _ height: Int, enlarge: Bool = false, extend: Bool = false,
        extendAspectRatio: Bool = false
    ) -> ImageRecipe.Sizing {
        var sizing = ImageRecipe.Sizing()
        (sizing.mode, sizing.width, sizing.height, sizing.enlarge) = (mode, width, height, enlarge)
        if extend { sizing.extend = ImageRecipe.OffsetGravity(.center) }
        if extendAspectRatio { sizing.extendAspectRatio = ImageRecipe.OffsetGravity(.center) }
        return sizing
    }

    /// The boxes imgproxy's tables ask for, with what each mode gives: plain, enlarged, extended, extended
    /// to the ratio.
    @Test(
        arguments: [
            // fit
            (Mode.fit, 50, 50, [50, 25], [50, 25], [50, 50], [50, 50]),
            (.fit, 50, 20, [40, 20], [40, 20], [50, 20], [50, 20]),
            (.fit, 20, 50, [20, 10], [20, 10], [20, 50], [20, 50]),
            (.fit, 300, 300, [200, 100], [300, 150], [300, 300], [200, 200]),
            (.fit, 0, 50, [100, 50], [100, 50], [100, 50], [100, 50]),
            (.fit, 50, 0, [50, 25], [50, 25], [50, 25], [50, 25]),
            (.fit, 0, 200, [200, 100], [400, 200], [200, 200], [200, 100]),
            (.fit, 300, 0, [200, 100], [300, 150], [300, 100], [200, 100]),
            // fill
            (.fill, 50, 50, [50, 50], [50, 50], [50, 50], [50, 50]),
            (.fill, 50, 20, [50, 20], [50, 20], [50, 20], [50, 20]),
            (.fill, 20, 50, [20, 50], [20, 50], [20, 50], [20, 50]),
            (.fill, 300, 300, [200, 100], [300, 300], [300, 300], [200, 200]),
            (.fill, 0, 50, [100, 50], [100, 50], [100, 50], [100, 50]),
            (.fill, 50, 0, [50, 25], [50, 25], [50, 25], [50, 25]),
            (.fill, 0, 200, [200, 100], [400, 200], [200, 200], [200, 100]),
            (.fill, 300, 0, [200, 100], [300, 150], [300, 100], [200, 100]),
            // fill-down
            (.fillDown, 50, 50, [50, 50], [50, 50], [50, 50], [50, 50]),
            (.fillDown, 50, 20, [50, 20], [50, 20], [50, 20], [50, 20]),
            (.fillDown, 20, 50, [20, 50], [20, 50], [20, 50], [20, 50]),
            (.fillDown, 300, 300, [100, 100], [300, 300], [300, 300], [100, 100]),
            (.fillDown, 0, 50, [100, 50], [100, 50], [100, 50], [100, 50]),
            (.fillDown, 50, 0, [50, 25], [50, 25], [50, 25], [50, 25]),
            (.fillDown, 0, 200, [200, 100], [400, 200], [200, 200], [200, 100]),
            (.fillDown, 300, 0, [200, 100], [300, 150], [300, 100], [200, 100]),
        ] as [(Mode, Int, Int, [Int], [Int], [Int], [Int])])
    func sizesMatchImgproxysTables(
        mode: Mode, width: Int, height: Int, plain: [Int], enlarged: [Int], extended: [Int], toRatio: [Int]
    ) throws {
        #expect(try Self.size(Self.sizing(mode, width, height)) == plain, "\(mode) \(width)x\(height)")
        #expect(
            try Self.size(Self.sizing(mode, width, height, enlarge: true)) == enlarged,
            "\(mode) \(width)x\(height) enlarged")
        #expect(
            try Self.size(Self.sizing(mode, width, height, extend: true)) == extended,
            "\(mode) \(width)x\(height) extended")
        #expect(
            try Self.size(Self.sizing(mode, width, height, extendAspectRatio: true)) == toRatio,
            "\(mode) \(width)x\(height) to the ratio")
    }

    /// The rows of imgproxy's tables that only some of its variants have.
    @Test(
        arguments: [
            (Mode.fit, 300, 50, false, false, false, [100, 50]), (.fit, 100, 300, false, false, false, [100, 50]),
            (.fit, 300, 125, true, false, false, [250, 125]), (.fit, 250, 300, true, false, false, [250, 125]),
            (.fit, 300, 125, false, true, false, [300, 125]), (.fit, 250, 300, false, true, false, [250, 300]),
            (.fit, 300, 125, false, false, true, [240, 100]), (.fit, 250, 500, false, false, true, [200, 400]),
            (.fill, 300, 50, false, false, false, [200, 50]), (.fill, 100, 300, false, false, false, [100, 100]),
            (.fill, 300, 125, true, false, false, [300, 125]), (.fill, 250, 300, true, false, false, [250, 300]),
            (.fill, 300, 125, false, true, false, [300, 125]), (.fill, 250, 300, false, true, false, [250, 300]),
            (.fill, 300, 50, false, true, false, [300, 50]), (.fill, 100, 300, false, true, false, [100, 300]),
            (.fill, 300, 125, false, false, true, [240, 100]), (.fill, 250, 500, false, false, true, [200, 400]),
            (.fill, 300, 50, false, false, true, [300, 50]), (.fill, 100, 300, false, false, true, [100, 300]),
            (.fillDown, 300, 125, false, false, false, [200, 83]),
            (.fillDown, 250, 300, false, false, false, [83, 100]),
            (.fillDown, 300, 125, true, false, false, [300, 125]),
            (.fillDown, 250, 300, true, false, false, [250, 300]),
            (.fillDown, 300, 125, false, true, false, [300, 125]),
            (.fillDown, 250, 300, false, true, false, [250, 300]),
            (.fillDown, 300, 50, false, true, false, [300, 50]), (.fillDown, 100, 300, false, true, false, [100, 300]),
            (.fillDown, 300, 125, false, false, true, [200, 83]), (.fillDown, 250, 300, false, false, true, [83, 100]),
        ] as [(Mode, Int, Int, Bool, Bool, Bool, [Int])])
    func moreSizesMatchImgproxysTables(
        mode: Mode, width: Int, height: Int, enlarge: Bool, extend: Bool, toRatio: Bool, size: [Int]
    ) throws {
        #expect(
            try Self.size(
                Self.sizing(mode, width, height, enlarge: enlarge, extend: extend, extendAspectRatio: toRatio)) == size)
    }

    /// imgproxy's `TestResultSizeLimit`: everything, padding and extension included, scaled down together
    /// to the largest result side.
    @Test(
        arguments: [
            (1000, Mode.fit, 100, 100, "", [100, 50]), (50, .fit, 100, 100, "", [50, 25]),
            (50, .fit, 0, 0, "", [50, 25]),
            (100, .fit, 0, 100, "", [100, 50]), (50, .fit, 150, 0, "", [50, 25]),
            (100, .fit, 1000, 1000, "", [100, 50]),
            (100, .fit, 1000, 1000, "enlarge", [100, 50]), (100, .fit, 1000, 2000, "extend", [50, 100]),
            (100, .fit, 1000, 2000, "ratio", [50, 100]), (100, .fit, 100, 150, "rotate", [50, 100]),
            (100, .fit, 0, 0, "rotate", [50, 100]),
            (200, .fit, 100, 100, "padding", [200, 129]),
            (1000, .fill, 100, 100, "", [100, 100]), (50, .fill, 100, 100, "", [50, 50]),
            (50, .fill, 1000, 50, "", [50, 13]),
            (50, .fill, 100, 1000, "", [50, 50]), (50, .fill, 0, 0, "", [50, 25]), (100, .fill, 0, 100, "", [100, 50]),
            (50, .fill, 150, 0, "", [50, 25]), (100, .fill, 1000, 1000, "", [100, 50]),
            (100, .fill, 1000, 1000, "enlarge", [100, 100]),
            (100, .fill, 1000, 2000, "extend", [50, 100]), (100, .fill, 1000, 2000, "ratio", [50, 100]),
            (100, .fill, 100, 150, "rotate", [67, 100]), (100, .fill, 0, 0, "rotate", [50, 100]),
            (200, .fill, 100, 100, "padding", [200, 144]),
            (1000, .fillDown, 100, 100, "", [100, 100]), (50, .fillDown, 100, 100, "", [50, 50]),
            (50, .fillDown, 1000, 50, "", [50, 3]),
            (50, .fillDown, 100, 1000, "", [5, 50]), (50, .fillDown, 0, 0, "", [50, 25]),
            (100, .fillDown, 0, 100, "", [100, 50]),
            (50, .fillDown, 150, 0, "", [50, 25]), (100, .fillDown, 1000, 1000, "", [100, 100]),
            (100, .fillDown, 1000, 1000, "enlarge", [100, 100]), (100, .fillDown, 1000, 2000, "extend", [50, 100]),
            (100, .fillDown, 1000, 2000, "ratio", [50, 100]), (100, .fillDown, 1000, 1500, "rotate", [67, 100]),
            (100, .fillDown, 0, 0, "rotate", [50, 100]), (200, .fillDown, 100, 100, "padding", [200, 144]),
            (200, .fillDown, 1000, 1000, "padding", [200, 144]),
        ] as [(Int, Mode, Int, Int, String, [Int])])
    func theLargestResultSideScalesEverythingDown(
        limit: Int, mode: Mode, width: Int, height: Int, option: String, size: [Int]
    ) throws {
        var sizing = Self.sizing(
            mode, width, height, enlarge: option == "enlarge", extend: option == "extend",
            extendAspectRatio: option == "ratio")
        sizing.maximumResultSide = limit
        if option == "padding" { sizing.padding = .init(top: 100, right: 200, bottom: 300, left: 400) }
        #expect(
            try Self.size(sizing, rotation: option == "rotate" ? .quarter : .none) == size,
            "\(mode) \(width)x\(height) \(option) limit \(limit)")
    }

    @Test func autoFillsLikeOrientationsAndFitsOthers() throws {
        #expect(try Self.size(Self.sizing(.auto, 50, 40)) == [50, 40], "both landscape: fill")
        #expect(try Self.size(Self.sizing(.auto, 40, 50)) == [40, 20], "a portrait box: fit")
        #expect(try Self.size(Self.sizing(.force, 40, 50)) == [40, 50], "force: stretched")
        #expect(try Self.size(Self.sizing(.force, 40, 0)) == [40, 100], "force: a side of 0 stays the source's")
    }

    @Test func aDevicePixelRatioMultipliesTheBoxAsFarAsTheSourceAllows() throws {
        var sizing = Self.sizing(.fit, 50, 50)
        sizing.dpr = 2
        #expect(try Self.size(sizing) == [100, 50])
        sizing.dpr = 3
        #expect(try Self.size(sizing) == [150, 75])
        sizing.dpr = 5  // 250 wide: past the source, not enlarged
        #expect(try Self.size(sizing) == [200, 100])
        sizing.padding = .init(all: 10)
        var recipe = ImageRecipe()
        recipe.sizing = sizing
        let layout = try recipe.layout(sourceWidth: 200, sourceHeight: 100)
        #expect(layout.dprScale == 4 && layout.padding == .init(all: 40), "padding follows the dpr that applied")
    }

    @Test func zoomMultipliesTheScaleAndTheBoxPerSide() throws {
        var sizing = Self.sizing(.fit, 100, 100)
        (sizing.zoomX, sizing.zoomY) = (0.5, 0.25)
        #expect(try Self.size(sizing) == [50, 13])
        var recipe = ImageRecipe()
        sizing = ImageRecipe.Sizing()
        (sizing.zoomX, sizing.zoomY) = (0.5, 0.5)
        recipe.sizing = sizing
        #expect(try recipe.layout(sourceWidth: 200, sourceHeight: 100).outputWidth == 100, "a zoom with no box")
    }

    /// A minimum side scales the image up to it, enlarged if need be, and the result is then cropped to
    /// the box, as imgproxy does (its documentation warns of it).
    @Test(
        arguments: [
            (50, 50, 80, 0, [80, 40], [50, 40]),
            (50, 50, 0, 40, [80, 40], [50, 40]),
            (50, 50, 40, 0, [50, 25], [50, 25]),  // the box already gives more
            (0, 0, 300, 0, [300, 150], [300, 150]),  // no box: nothing to crop to
            (50, 50, 0, 1000, [2000, 1000], [50, 50]),
        ] as [(Int, Int, Int, Int, [Int], [Int])])
    func minimumSidesScaleUpToThemThenTheBoxCrops(
        width: Int, height: Int, minimumWidth: Int, minimumHeight: Int, scaled: [Int], output: [Int]
    ) throws {
        var sizing = Self.sizing(.fit, width, height)
        (sizing.minimumWidth, sizing.minimumHeight) = (minimumWidth, minimumHeight)
        var recipe = ImageRecipe()
        recipe.sizing = sizing
        let layout = try recipe.layout(sourceWidth: 200, sourceHeight: 100)
        #expect([layout.scaledWidth, layout.scaledHeight] == scaled)
        #expect([layout.outputWidth, layout.outputHeight] == output)
    }

    @Test func aCropBeforeTheResizeIsInTheOutputsOrientation() throws {
        var sizing = ImageRecipe.Sizing()
        sizing.crop = .init(width: 50, height: 0.5, gravity: .init(.northWest))
        var recipe = ImageRecipe()
        recipe.sizing = sizing
        var layout = try recipe.layout(sourceWidth: 200, sourceHeight: 100)
        #expect(layout.region == .init(x: 0, y: 0, width: 50, height: 50))
        // Turned a quarter: the crop's 50 wide is the source's height, its half height half the source's width.
        recipe.rotation = .quarter
        layout = try recipe.layout(sourceWidth: 200, sourceHeight: 100)
        #expect((layout.region.width, layout.region.height) == (100, 50))
        #expect((layout.outputWidth, layout.outputHeight) == (50, 100))
    }

    /// A sizing and the recipe's own steps cannot be combined (``ImageRecipe/geometry`` is one or the
    /// other): the last assigned is laid out, alone.
    @Test func aSizingReplacesTheOtherGeometryAndNeedsPositiveScales() throws {
        var recipe = ImageRecipe(resize: .init(width: 10, height: 10))
        recipe.sizing = Self.sizing(.fit, 50, 50)
        var layout = try recipe.layout(sourceWidth: 200, sourceHeight: 100)
        #expect((layout.outputWidth, layout.outputHeight) == (50, 25), "the sizing's, the resize gone")
        recipe.padding = .init(all: 1)
        layout = try recipe.layout(sourceWidth: 200, sourceHeight: 100)
        #expect((layout.outputWidth, layout.outputHeight) == (202, 102), "the padding alone, the sizing gone")
        #expect(recipe.sizing == nil && recipe.resize == nil)
        for change in [{ (s: inout ImageRecipe.Sizing) in s.dpr = 0 }, { $0.zoomX = 0 }, { $0.zoomY = -1 }] {
            var sizing = Self.sizing(.fit, 50, 50)
            change(&sizing)
            var bad = ImageRecipe()
            bad.sizing = sizing
            #expect(throws: ImageProcessingError.self) { try bad.layout(sourceWidth: 200, sourceHeight: 100) }
        }
    }

    @Test func theOutputLimitAppliesToTheScaledImageToo() throws {
        var recipe = ImageRecipe()
        recipe.sizing = Self.sizing(.fit, 5000, 5000, enlarge: true)
        #expect(throws: ImageProcessingError.outputTooLarge(width: 5000, height: 2500, limit: 4096)) {
            try recipe.layout(sourceWidth: 200, sourceHeight: 100, maximumSide: 4096)
        }
    }

    @Test func aSizingsKeyNamesEveryPartThatIsNotItsDefault() {
        #expect(ImageRecipe.Sizing().description == "size:fit:0x0")
        var sizing = Self.sizing(.fillDown, 300, 200, enlarge: true)
        sizing.dpr = 2
        (sizing.zoomX, sizing.zoomY) = (1.5, 1)
        (sizing.minimumWidth, sizing.minimumHeight) = (10, 0)
        sizing.gravity = .init(.north, x: 5, y: 0.5)
        sizing.crop = .init(width: 0.5, height: 100)
        sizing.extend = .init(.west)
        sizing.extendAspectRatio = .init(.focalPoint(x: 0.25, y: 0.75))
        sizing.padding = .init(top: 1, right: 2, bottom: 3, left: 4)
        sizing.maximumResultSide = 800
        #expect(
            sizing.description == "size:fill-down:300x200:en:dpr2.0:z1.5x1.0:min10x0:g~north(5.0,0.5):c0.5x100.0~center"
                + ":ex~west:exar~fp:0.25:0.75:pad1:2:3:4:mrd800")
    }
}
