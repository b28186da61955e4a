import Foundation
import Testing

@testable import Imagery

/// The recipe's geometry, worked out before any pixel: sizes, positions and the decode shrink.
@Suite("ImageRecipe layout")
struct ImageRecipeLayoutTests {
    typealias Fit = ImageRequest.Thumbnail.Fit

    /// Every fit, with and without enlarge, on a landscape (640x427), a portrait (427x640) and a small
    /// (100x50) source, in a 200x100 box and a 1000x1000 box: the output size, exactly.
    @Test(
        arguments: [
            // landscape 640x427 in 200x100
            (640, 427, 200, 100, Fit.cover, false, 200, 100), (640, 427, 200, 100, .contain, false, 200, 100),
            (640, 427, 200, 100, .fill, false, 200, 100), (640, 427, 200, 100, .inside, false, 150, 100),
            (640, 427, 200, 100, .outside, false, 200, 133),
            // portrait 427x640 in 200x100
            (427, 640, 200, 100, .cover, false, 200, 100), (427, 640, 200, 100, .inside, false, 67, 100),
            (427, 640, 200, 100, .outside, false, 200, 300), (427, 640, 200, 100, .contain, false, 200, 100),
            // a box larger than the source: nothing grows unless asked
            (640, 427, 1000, 1000, .cover, false, 640, 427), (640, 427, 1000, 1000, .cover, true, 1000, 1000),
            (640, 427, 1000, 1000, .inside, false, 640, 427), (640, 427, 1000, 1000, .inside, true, 1000, 667),
            (640, 427, 1000, 1000, .fill, false, 640, 427), (640, 427, 1000, 1000, .fill, true, 1000, 1000),
            (640, 427, 1000, 1000, .outside, false, 640, 427), (640, 427, 1000, 1000, .outside, true, 1499, 1000),
            (640, 427, 1000, 1000, .contain, false, 1000, 1000), (640, 427, 1000, 1000, .contain, true, 1000, 1000),
            // a small source in a box larger on one side only
            (100, 50, 200, 40, .cover, false, 100, 40), (100, 50, 200, 40, .cover, true, 200, 40),
            (100, 50, 200, 40, .inside, false, 80, 40), (100, 50, 200, 40, .fill, false, 100, 40),
        ] as [(Int, Int, Int, Int, Fit, Bool, Int, Int)])
    func everyFitGivesItsSize(
        sourceWidth: Int, sourceHeight: Int, boxWidth: Int, boxHeight: Int, fit: Fit, enlarge: Bool, width: Int,
        height: Int
    ) throws {
        let recipe = ImageRecipe(resize: .init(width: boxWidth, height: boxHeight, fit: fit, enlarge: enlarge))
        let layout = try recipe.layout(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        #expect((layout.outputWidth, layout.outputHeight) == (width, height))
    }

    @Test func coverCropsWhereGravitySays() throws {
        // 640x427 covering 200x100: scaled to 200x133, 33 rows to lose.
        func crop(_ gravity: ImageRecipe.Gravity) throws -> ImageRecipe.Rect? {
            try ImageRecipe(resize: .init(width: 200, height: 100, gravity: gravity)).layout(
                sourceWidth: 640, sourceHeight: 427
            ).coverCrop
        }
        #expect(try crop(.center) == .init(x: 0, y: 16, width: 200, height: 100))
        #expect(try crop(.north) == .init(x: 0, y: 0, width: 200, height: 100))
        #expect(try crop(.south) == .init(x: 0, y: 33, width: 200, height: 100))
        #expect(try crop(.southWest) == .init(x: 0, y: 33, width: 200, height: 100))
        #expect(try crop(.east) == .init(x: 0, y: 16, width: 200, height: 100))  // nothing to lose sideways
        #expect(try crop(.focalPoint(x: 0.5, y: 0.9)) == .init(x: 0, y: 33, width: 200, height: 100))  // kept inside
        #expect(try crop(.focalPoint(x: 0.5, y: 0.5)) == .init(x: 0, y: 17, width: 200, height: 100))
        let smart = try ImageRecipe(resize: .init(width: 200, height: 100, gravity: .smart(.attention))).layout(
            sourceWidth: 640, sourceHeight: 427)
        #expect(smart.smartCover == .attention)
        #expect(smart.coverCrop.map { ($0.width, $0.height) } ?? (0, 0) == (200, 100))
    }

    /// imgproxy's `fill-down`: a source smaller than the box is cropped to the box's aspect ratio
    /// (its sizes as imgproxy's `calcSizes` gives them); a larger one is covered as `cover` does.
    @Test(
        arguments: [
            (100, 50, 200, 40, false, 100, 20),  // wider box: the whole width, the box's ratio
            (100, 50, 50, 200, false, 13, 50),  // taller box: the whole height
            (640, 427, 200, 100, false, 200, 100),  // larger source: cover
            (100, 50, 200, 40, true, 200, 40),  // enlarged: cover
            (100, 50, 300, 50, false, 100, 17),
        ] as [(Int, Int, Int, Int, Bool, Int, Int)])
    func coverDownKeepsTheBoxRatio(
        sourceWidth: Int, sourceHeight: Int, boxWidth: Int, boxHeight: Int, enlarge: Bool, width: Int, height: Int
    ) throws {
        let recipe = ImageRecipe(resize: .init(width: boxWidth, height: boxHeight, fit: .coverDown, enlarge: enlarge))
        let layout = try recipe.layout(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        #expect((layout.outputWidth, layout.outputHeight) == (width, height))
    }

    /// imgproxy's `auto`: `cover` when source and box are both landscape (or square) or both portrait, else `inside`.
    @Test func autoCoversLikeOrientationsAndFitsOthers() throws {
        func size(_ sourceWidth: Int, _ sourceHeight: Int, _ boxWidth: Int, _ boxHeight: Int) throws -> [Int] {
            let layout = try ImageRecipe(resize: .init(width: boxWidth, height: boxHeight, fit: .auto)).layout(
                sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            return [layout.outputWidth, layout.outputHeight]
        }
        #expect(try size(640, 427, 200, 100) == [200, 100])  // both landscape: cover
        #expect(try size(427, 640, 200, 100) == [67, 100])  // portrait in landscape: inside
        #expect(try size(427, 640, 100, 200) == [100, 200])  // both portrait: cover
        #expect(try size(640, 640, 200, 100) == [200, 100])  // square counts as landscape
    }

    /// `extend`: the resized image in a box at least that large, placed by gravity; a side of 0 is not extended.
    @Test func extendPlacesTheImageInALargerBox() throws {
        var recipe = ImageRecipe(resize: .init(width: 1000, height: 1000, fit: .inside))
        recipe.extend = .init(width: 1000, height: 1000)
        var layout = try recipe.layout(sourceWidth: 640, sourceHeight: 427)
        #expect(layout.canvas.map { [$0.width, $0.height, $0.x, $0.y] } == [1000, 1000, 180, 286])
        #expect((layout.outputWidth, layout.outputHeight) == (1000, 1000))
        recipe.extend = .init(width: 1000, height: 0, gravity: .west)
        layout = try recipe.layout(sourceWidth: 640, sourceHeight: 427)
        #expect(layout.canvas.map { [$0.width, $0.height, $0.x, $0.y] } == [1000, 427, 0, 0])
        // Already as large: nothing to do.
        recipe.extend = .init(width: 300, height: 300)
        #expect(try recipe.layout(sourceWidth: 640, sourceHeight: 427).canvas == nil)
        // After a cover crop of a small source (100x40 of 100x50): back to the box, image at the bottom.
        recipe = ImageRecipe(resize: .init(width: 200, height: 40))
        recipe.extend = .init(width: 200, height: 40, gravity: .south)
        layout = try recipe.layout(sourceWidth: 100, sourceHeight: 50)
        #expect(layout.coverCrop.map { [$0.width, $0.height] } == [100, 40])
        #expect(layout.canvas.map { [$0.width, $0.height, $0.x, $0.y] } == [200, 40, 50, 0])
        // contain's box extended further: one canvas, offsets added.
        recipe = ImageRecipe(resize: .init(width: 200, height: 200, fit: .contain))
        recipe.extend = .init(width: 300, height: 200, gravity: .east)
        layout = try recipe.layout(sourceWidth: 640, sourceHeight: 427)
        #expect(layout.canvas.map { [$0.width, $0.height, $0.x, $0.y] } == [300, 200, 100, 33])
        // Padding goes around the extended box.
        recipe.padding = .init(all: 5)
        #expect(try recipe.layout(sourceWidth: 640, sourceHeight: 427).outputWidth == 310)
    }

    /// A source point follows the crop, the rotation and the flips to the cover crop.
    @Test func aSourcePointIsFollowedThroughCropRotationAndFlips() throws {
        // 640x427 covering 100x100: scaled to 150x100; a point at x=600 keeps the right edge.
        var recipe = ImageRecipe(resize: .init(width: 100, height: 100, gravity: .sourcePoint(x: 600, y: 200)))
        #expect(try recipe.layout(sourceWidth: 640, sourceHeight: 427).coverCrop?.x == 50)
        recipe.flop = true  // mirrored: now near the left edge
        #expect(try recipe.layout(sourceWidth: 640, sourceHeight: 427).coverCrop?.x == 0)
        // Turned a quarter clockwise (427x640, scaled to 100x150): x=600 of 640 becomes y=600 of 640.
        recipe = ImageRecipe(resize: .init(width: 100, height: 100, gravity: .sourcePoint(x: 600, y: 200)))
        recipe.rotation = .quarter
        #expect(try recipe.layout(sourceWidth: 640, sourceHeight: 427).coverCrop.map { [$0.x, $0.y] } == [0, 50])
        // After a crop of the right half, the point is at 280/320 of it.
        recipe.rotation = .none
        recipe.crop = .init(
            width: .pixels(320), height: .pixels(427), placement: .origin(x: .pixels(320), y: .pixels(0)))
        recipe.resize = .init(width: 50, height: 100, gravity: .sourcePoint(x: 600, y: 200))
        let layout = try recipe.layout(sourceWidth: 640, sourceHeight: 427)
        // scaled 75 wide: centred at 66, kept inside (25 free)
        #expect(layout.coverCrop.map { [$0.x, $0.width] } == [25, 50])
        #expect(ImageRecipe.Gravity.north.turned(quarterTurns: 1) == .east)
        #expect(ImageRecipe.Gravity.northEast.turned(quarterTurns: 1, flop: true) == .southWest)
    }

    @Test func containPlacesTheImageInTheBox() throws {
        let centred = try ImageRecipe(resize: .init(width: 200, height: 200, fit: .contain)).layout(
            sourceWidth: 640, sourceHeight: 427)
        #expect(centred.canvas.map { [$0.width, $0.height, $0.x, $0.y] } == [200, 200, 0, 33])
        #expect((centred.scaledWidth, centred.scaledHeight) == (200, 133))
        let bottom = try ImageRecipe(resize: .init(width: 200, height: 200, fit: .contain, gravity: .south)).layout(
            sourceWidth: 640, sourceHeight: 427)
        #expect(bottom.canvas.map { [$0.x, $0.y] } == [0, 67])
    }

    @Test func cropsAreClampedToTheImageAndOneOutsideIsAnError() throws {
        func region(_ crop: ImageRecipe.Crop) throws -> ImageRecipe.Rect {
            var recipe = ImageRecipe()
            recipe.crop = crop
            return try recipe.layout(sourceWidth: 640, sourceHeight: 427).region
        }
        #expect(
            try region(
                .init(width: .pixels(100), height: .pixels(50), placement: .origin(x: .pixels(10), y: .pixels(20))))
                == .init(x: 10, y: 20, width: 100, height: 50))
        #expect(
            try region(
                .init(
                    width: .fraction(0.5), height: .fraction(0.5),
                    placement: .origin(x: .fraction(0.25), y: .fraction(0.25))))
                == .init(x: 160, y: 107, width: 320, height: 214))
        // Past the edge: cut there.
        #expect(
            try region(
                .init(width: .pixels(500), height: .pixels(500), placement: .origin(x: .pixels(600), y: .pixels(0))))
                == .init(x: 600, y: 0, width: 40, height: 427))
        // Larger than the image, by gravity: the whole side.
        #expect(
            try region(.init(width: .pixels(1000), height: .pixels(100), placement: .gravity(.south)))
                == .init(x: 0, y: 327, width: 640, height: 100))
        #expect(throws: ImageProcessingError.self) {
            try region(
                .init(width: .pixels(10), height: .pixels(10), placement: .origin(x: .pixels(640), y: .pixels(0))))
        }
        #expect(throws: ImageProcessingError.emptyResult) {
            try region(.init(width: .fraction(0.0001), height: .pixels(10)))
        }
    }

    @Test func aCropIsTakenFromWhatTrimLeft() throws {
        var recipe = ImageRecipe()
        recipe.crop = .init(width: .fraction(0.5), height: .fraction(1), placement: .gravity(.east))
        let trimmed = ImageRecipe.Rect(x: 100, y: 50, width: 200, height: 100)
        let layout = try recipe.layout(sourceWidth: 640, sourceHeight: 427, trimmed: trimmed)
        #expect(layout.region == .init(x: 200, y: 50, width: 100, height: 100))
    }

    @Test func rotationSwapsTheSidesTheBoxApplesTo() throws {
        var recipe = ImageRecipe(resize: .init(width: 200, height: 1000, fit: .inside))
        recipe.rotation = .quarter
        let layout = try recipe.layout(sourceWidth: 640, sourceHeight: 427)
        #expect((layout.outputWidth, layout.outputHeight) == (200, 300))
        // The decode may shrink the source's width (now the output's height) by 300/640.
        let scale = recipe.decodeScale(sourceWidth: 640, sourceHeight: 427)
        #expect(abs(scale.x - 200.0 / 427) < 1e-9 && abs(scale.y - 200.0 / 427) < 1e-9)
    }

    @Test func paddingAddsToTheOutputAndTheLimitAppliesAfterIt() throws {
        var recipe = ImageRecipe(resize: .init(width: 200, height: 100))
        recipe.padding = .init(top: 1, right: 2, bottom: 3, left: 4)
        let layout = try recipe.layout(sourceWidth: 640, sourceHeight: 427)
        #expect((layout.outputWidth, layout.outputHeight) == (206, 104))
        recipe.padding = .init(all: 100)
        #expect(throws: ImageProcessingError.outputTooLarge(width: 400, height: 300, limit: 300)) {
            try recipe.layout(sourceWidth: 640, sourceHeight: 427, maximumSide: 300)
        }
    }

    /// The decode shrink of a resize alone is what thumbnailers use: cover and fill by the smaller
    /// ratio, contain and inside by the larger; a crop needs the ratio of its region; trim none.
    @Test func theDecodeShrinkFollowsTheWholeRecipe() {
        #expect(
            ImageRecipe(resize: .init(width: 100, height: 100)).decodeShrink(sourceWidth: 1600, sourceHeight: 800) == 8)
        #expect(
            ImageRecipe(resize: .init(width: 100, height: 100, fit: .inside)).decodeShrink(
                sourceWidth: 1600, sourceHeight: 800) == 16)
        #expect(
            ImageRecipe(resize: .init(width: 100, height: 100, fit: .fill)).decodeShrink(
                sourceWidth: 1600, sourceHeight: 800) == 8)
        #expect(
            ImageRecipe(resize: .init(width: 3000, height: 3000, enlarge: true)).decodeShrink(
                sourceWidth: 1600, sourceHeight: 800) == 1)
        var cropped = ImageRecipe(resize: .init(width: 100, height: 100))
        cropped.crop = .init(width: .pixels(400), height: .pixels(400))
        #expect(cropped.decodeShrink(sourceWidth: 1600, sourceHeight: 800) == 4)
        var trimmed = ImageRecipe(resize: .init(width: 100, height: 100))
        trimmed.trim = .init()
        #expect(trimmed.decodeShrink(sourceWidth: 1600, sourceHeight: 800) == 1)
    }

    @Test func equalRecipesShareAKeyAndAnyDifferenceChangesIt() {
        let base = ImageRecipe(resize: .init(width: 200, height: 100))
        var variants: [ImageRecipe] = [base]
        func adding(_ change: (inout ImageRecipe) -> Void) {
            var recipe = base
            change(&recipe)
            variants.append(recipe)
        }
        adding { $0.resize?.fit = .contain }
        adding { $0.resize?.enlarge = true }
        adding { $0.resize?.gravity = .north }
        adding { $0.resize?.gravity = .focalPoint(x: 0.25, y: 0.75) }
        adding { $0.resize?.gravity = .smart(.entropy) }
        adding { $0.crop = .init(width: .pixels(10), height: .fraction(0.5)) }
        adding {
            $0.crop = .init(width: .pixels(10), height: .pixels(5), placement: .origin(x: .pixels(1), y: .pixels(2)))
        }
        adding { $0.trim = .init() }
        adding { $0.trim = .init(threshold: 20, color: .white) }
        adding { $0.rotation = .half }
        adding { $0.flip = true }
        adding { $0.flop = true }
        adding { $0.padding = .init(all: 4) }
        adding { $0.blur = 2 }
        adding { $0.sharpen = 1 }
        adding { $0.grayscale = true }
        adding { $0.background = .white }
        adding { $0.background = ImageRecipe.Color(red: 255, green: 255, blue: 255, alpha: 128) }
        let keys = variants.map { ImageCacheKey(source: .id("a"), recipe: $0).stringValue }
        #expect(Set(keys).count == variants.count, "\(keys)")
        #expect(
            ImageCacheKey(source: .id("a"), recipe: base).stringValue
                == ImageCacheKey(source: .id("a"), recipe: ImageRecipe(resize: .init(width: 200, height: 100)))
                .stringValue)
        #expect(ImageCacheKey(source: .id("a"), recipe: ImageRecipe()).stringValue == "id:a")
    }

    @Test func coloursParseFromHex() {
        #expect(ImageRecipe.Color(hex: "fff") == .white)
        #expect(ImageRecipe.Color(hex: "#000000") == .black)
        #expect(ImageRecipe.Color(hex: "ff880080") == ImageRecipe.Color(red: 255, green: 136, blue: 0, alpha: 128))
        for bad in ["", "ff", "ggg", "12345", "１２３", "#", "fffffffff"] {
            #expect(ImageRecipe.Color(hex: bad) == nil, "\(bad)")
        }
        #expect(ImageRecipe.Color(red: 255, green: 136, blue: 0, alpha: 128).description == "ff880080")
    }
}
