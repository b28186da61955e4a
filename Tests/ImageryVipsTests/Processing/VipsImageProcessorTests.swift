import Foundation
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryVips

/// Recipes applied by libvips, through the decoder (shrink-on-load) as the pipeline runs them.
@Suite("VipsImageProcessor")
struct VipsImageProcessorTests {
    let decoder = VipsImageDecoder()
    let encoder = VipsImageEncoder()

    /// A landscape, a portrait and an EXIF-rotated JPEG, a PNG, a WebP, a GIF, and a generated PNG with alpha.
    static let sources = [
        "rocket.jpg", "rocket-portrait.jpg", "rocket-exif6.jpg", "chelsea.png", "chelsea.webp", "chelsea.gif", "alpha",
    ]

    static let recipes: [(String, ImageRecipe)] = {
        func recipe(_ resize: ImageRequest.Thumbnail?, _ change: (inout ImageRecipe) -> Void = { _ in }) -> ImageRecipe
        {
            var recipe = ImageRecipe(resize: resize)
            change(&recipe)
            return recipe
        }
        return [
            ("cover north", recipe(.init(width: 200, height: 100, gravity: .north))),
            (
                "contain south, bars",
                recipe(.init(width: 200, height: 200, fit: .contain, gravity: .south)) { $0.background = .white }
            ),
            ("fill", recipe(.init(width: 150, height: 150, fit: .fill))),
            ("inside", recipe(.init(width: 300, height: 300, fit: .inside))),
            ("outside", recipe(.init(width: 100, height: 100, fit: .outside))),
            ("cover enlarged", recipe(.init(width: 1000, height: 900, enlarge: true))),
            ("cover not enlarged", recipe(.init(width: 1000, height: 900))),
            ("focal point", recipe(.init(width: 120, height: 120, gravity: .focalPoint(x: 0.8, y: 0.2)))),
            ("smart attention", recipe(.init(width: 150, height: 150, gravity: .smart(.attention)))),
            ("smart entropy", recipe(.init(width: 150, height: 60, gravity: .smart(.entropy)))),
            (
                "crop fractions, cover",
                recipe(.init(width: 100, height: 100)) {
                    $0.crop = .init(
                        width: .fraction(0.5), height: .fraction(0.5),
                        placement: .origin(x: .fraction(0.25), y: .fraction(0.1)))
                }
            ),
            (
                "crop pixels",
                recipe(nil) {
                    $0.crop = .init(
                        width: .pixels(200), height: .pixels(100), placement: .origin(x: .pixels(10), y: .pixels(20)))
                }
            ),
            (
                "smart crop, inside",
                recipe(.init(width: 120, height: 120, fit: .inside)) {
                    $0.crop = .init(width: .pixels(160), height: .pixels(160), placement: .gravity(.smart(.attention)))
                }
            ),
            ("rotate 90, inside", recipe(.init(width: 200, height: 1000, fit: .inside)) { $0.rotation = .quarter }),
            (
                "rotate 270, flip, flop, cover",
                recipe(.init(width: 120, height: 80)) {
                    $0.rotation = .threeQuarters
                    $0.flip = true
                    $0.flop = true
                }
            ),
            (
                "pad",
                recipe(.init(width: 100, height: 100)) {
                    $0.padding = .init(top: 10, right: 20, bottom: 10, left: 20)
                    $0.background = .init(hex: "ff0000")
                }
            ),
            (
                "effects",
                recipe(.init(width: 200, height: 200, fit: .inside)) {
                    $0.blur = 2
                    $0.sharpen = 1
                    $0.grayscale = true
                }
            ),
            ("trim", recipe(.init(width: 200, height: 200, fit: .inside)) { $0.trim = .init() }),
        ]
    }()

    /// An encoded source by name: a fixture, or "alpha" (a generated 300x200 PNG, transparent around an opaque square).
    static func data(_ name: String) throws -> Data {
        guard name == "alpha" else { return try Fixtures.data(name) }
        let image = GeneratedImages.image(width: 300, height: 200) { x, y in
            (60..<240).contains(x) && (40..<160).contains(y) ? [UInt8(x), UInt8(y), 200, 255] : [0, 0, 0, 0]
        }
        return try VipsImageEncoder().encode(image, as: .png)
    }

    /// Every recipe on every source: the output has exactly the size the layout gives for the
    /// oriented source (trim aside, whose region depends on the pixels).
    @Test(arguments: sources, recipes.indices)
    func theOutputHasTheLayoutsSize(source: String, recipeIndex: Int) throws {
        let (label, recipe) = Self.recipes[recipeIndex]
        let data = try Self.data(source)
        let full = try decoder.decode(data, recipe: ImageRecipe())
        let image = try decoder.decode(data, recipe: recipe)
        guard recipe.trim == nil else {
            #expect(image.width <= 200 && image.height <= 200, "\(label) on \(source)")
            return
        }
        let layout = try recipe.layout(sourceWidth: full.width, sourceHeight: full.height)
        #expect((image.width, image.height) == (layout.outputWidth, layout.outputHeight), "\(label) on \(source)")
        #expect(
            image.pixelFormat.hasAlpha
                == (full.pixelFormat.hasAlpha || recipe.background.map { $0.alpha < 255 } ?? false)
                || recipe.background != nil, "\(label) on \(source): \(image.pixelFormat)")
    }

    /// The same recipe from a source decoded at its DCT scale and from the full-size decode: the same
    /// size, and pixels within resampling's difference.
    @Test(arguments: [0, 3, 7, 10, 12, 13, 14, 15])
    func shrinkOnLoadGivesWhatAFullDecodeGives(recipeIndex: Int) throws {
        let (label, recipe) = Self.recipes[recipeIndex]
        let data = try Fixtures.data("rocket.jpg")
        let full = try decoder.decode(data, recipe: ImageRecipe())
        let reference = try VipsImageProcessor().process(
            ThumbnailBase(image: full, scale: 1, sourceWidth: full.width, sourceHeight: full.height), recipe: recipe
        )
        let image = try decoder.decode(data, recipe: recipe)
        #expect((image.width, image.height) == (reference.width, reference.height), "\(label)")
        guard (image.width, image.height) == (reference.width, reference.height),
            image.pixelFormat == reference.pixelFormat
        else { return }
        #expect(GeneratedImages.meanDifference(image, reference) < 4, "\(label)")
    }

    /// A 400x300 flat grey image with one busy, saturated 40x40 square at (300, 200): smart gravity keeps it.
    @Test(arguments: ImageRecipe.Gravity.SmartStrategy.allCases)
    func smartGravityKeepsTheSalientObject(strategy: ImageRecipe.Gravity.SmartStrategy) throws {
        let source = GeneratedImages.image(width: 400, height: 300, format: .rgb8) { x, y in
            guard (300..<340).contains(x), (200..<240).contains(y) else { return [128, 128, 128] }
            return (x / 5 + y / 5) % 2 == 0 ? [255, 40, 0] : [255, 220, 0]
        }
        let data = try encoder.encode(source, as: .png)
        func isObject(_ pixel: [UInt8]) -> Bool { pixel[0] > 200 && pixel[2] < 60 }
        // A crop of the size of a quarter, placed by smart gravity.
        var cropped = ImageRecipe()
        cropped.crop = .init(width: .pixels(100), height: .pixels(100), placement: .gravity(.smart(strategy)))
        let crop = try decoder.decode(data, recipe: cropped)
        #expect((crop.width, crop.height) == (100, 100))
        #expect(GeneratedImages.count(crop, where: isObject) == 40 * 40, "\(strategy): the crop cut the object")
        // A cover crop of the resized image.
        let cover = try decoder.decode(
            data, recipe: ImageRecipe(resize: .init(width: 150, height: 300, gravity: .smart(strategy))))
        #expect((cover.width, cover.height) == (150, 300))
        #expect(GeneratedImages.count(cover, where: isObject) == 40 * 40, "\(strategy): the cover crop cut the object")
        // Centre gravity, for contrast, loses it.
        let centred = try decoder.decode(data, recipe: ImageRecipe(resize: .init(width: 150, height: 300)))
        #expect(GeneratedImages.count(centred, where: isObject) == 0)
    }

    /// thumbor's measure: the Euclidean distance over all channels, alpha among them, against the
    /// tolerance (libvips' flattens alpha first, and finds a transparent image all border).
    @Test func euclideanTrimComparesAlphaToo() throws {
        // A transparent border whose hidden colour is the corner's, around an opaque 30x20 block and a
        // half-transparent 10x10 one to its right.
        let source = GeneratedImages.image(width: 100, height: 80) { x, y in
            if (20..<50).contains(x) && (30..<50).contains(y) { return [200, 0, 0, 255] }
            if (50..<60).contains(x) && (30..<40).contains(y) { return [0, 0, 0, 128] }
            return [0, 0, 0, 0]
        }
        var recipe = ImageRecipe()
        recipe.trim = .init(threshold: 0)
        recipe.trim?.measure = .euclidean
        let image = try decoder.decode(try encoder.encode(source, as: .png), recipe: recipe)
        #expect((image.width, image.height) == (40, 20))
        // The box as thumbor's engine finds it, on the pixels themselves; a tolerance above the
        // half-transparent block's distance (128) leaves it out.
        var pixels = source.pixels
        let box = pixels.withUnsafeMutableBytes {
            EuclideanTrim.box(
                UnsafeRawBufferPointer($0), width: 100, height: 80, bands: 4, fromBottomRight: false, tolerance: 130)
        }
        #expect(box.left == 20 && box.top == 30 && box.right == 49 && box.bottom == 49)
        // Every pixel border: nothing is trimmed.
        let plain = GeneratedImages.image(width: 10, height: 10) { _, _ in [9, 9, 9, 255] }
        let whole = try decoder.decode(try encoder.encode(plain, as: .png), recipe: recipe)
        #expect((whole.width, whole.height) == (10, 10))
    }

    @Test func trimRemovesAUniformBorder() throws {
        let source = GeneratedImages.image(width: 300, height: 200, format: .rgb8) { x, y in
            (50..<170).contains(x) && (40..<120).contains(y) ? [20, 40, 200] : [255, 255, 255]
        }
        var recipe = ImageRecipe()
        recipe.trim = .init()
        let image = try decoder.decode(try encoder.encode(source, as: .png), recipe: recipe)
        #expect((image.width, image.height) == (120, 80))
        #expect(GeneratedImages.pixel(image, 0, 0) == [20, 40, 200])
        // Then a crop of what trim left (its right half).
        recipe.crop = .init(width: .fraction(0.5), height: .fraction(1), placement: .gravity(.east))
        let half = try decoder.decode(try encoder.encode(source, as: .png), recipe: recipe)
        #expect((half.width, half.height) == (60, 80))
    }

    /// A 60x40 image, red in its top-left 30x20 quarter, white elsewhere.
    static let quarter = GeneratedImages.image(width: 60, height: 40, format: .rgb8) { x, y in
        x < 30 && y < 20 ? [255, 0, 0] : [255, 255, 255]
    }

    @Test(
        arguments: [
            (ImageRecipe.Rotation.quarter, false, false, 40, 60, 39, 0),  // clockwise: the red corner goes top-right
            (.half, false, false, 60, 40, 59, 39),
            (.threeQuarters, false, false, 40, 60, 0, 59),
            (.none, true, false, 60, 40, 0, 39),  // flip: top and bottom
            (.none, false, true, 60, 40, 59, 0),  // flop: left and right
            (.quarter, true, false, 40, 60, 39, 59),  // rotated, then flipped
        ] as [(ImageRecipe.Rotation, Bool, Bool, Int, Int, Int, Int)])
    func rotationAndMirrorsMoveTheRedCorner(
        rotation: ImageRecipe.Rotation, flip: Bool, flop: Bool, width: Int, height: Int, redX: Int, redY: Int
    ) throws {
        var recipe = ImageRecipe()
        (recipe.rotation, recipe.flip, recipe.flop) = (rotation, flip, flop)
        let image = try decoder.decode(try encoder.encode(Self.quarter, as: .png), recipe: recipe)
        #expect((image.width, image.height) == (width, height))
        #expect(GeneratedImages.pixel(image, redX, redY) == [255, 0, 0])
        #expect(GeneratedImages.pixel(image, width - 1 - redX, height - 1 - redY) == [255, 255, 255])
    }

    @Test func paddingBarsAndFlatteningUseTheBackground() throws {
        let alpha = try Self.data("alpha")
        var recipe = ImageRecipe(resize: .init(width: 300, height: 300, fit: .contain))
        recipe.padding = .init(all: 5)
        recipe.background = ImageRecipe.Color(hex: "00ff00")
        let image = try decoder.decode(alpha, recipe: recipe)
        #expect((image.width, image.height) == (310, 310))
        #expect(image.pixelFormat == .rgb8)  // flattened
        #expect(GeneratedImages.pixel(image, 0, 0) == [0, 255, 0])  // padding
        #expect(GeneratedImages.pixel(image, 150, 30) == [0, 255, 0])  // a bar above the image
        #expect(GeneratedImages.pixel(image, 20, 120) == [0, 255, 0])  // the transparent part, flattened
        #expect(GeneratedImages.pixel(image, 155, 155)[2] == 200)  // the opaque square
        // Without a background, padding is transparent where there is alpha.
        recipe.background = nil
        let transparent = try decoder.decode(alpha, recipe: recipe)
        #expect(transparent.pixelFormat == .rgba8 && GeneratedImages.pixel(transparent, 0, 0)[3] == 0)
        // A translucent background gives an opaque source an alpha channel.
        var translucent = ImageRecipe()
        translucent.padding = .init(all: 2)
        translucent.background = ImageRecipe.Color(red: 0, green: 0, blue: 255, alpha: 128)
        let padded = try decoder.decode(try encoder.encode(Self.quarter, as: .png), recipe: translucent)
        #expect(padded.pixelFormat == .rgba8 && GeneratedImages.pixel(padded, 0, 0) == [0, 0, 255, 128])
    }

    @Test func effectsChangeThePixelsTheyShould() throws {
        let data = try Fixtures.data("rocket.jpg")
        let plain = try decoder.decode(data, recipe: ImageRecipe(resize: .init(width: 200, height: 200, fit: .inside)))
        func edges(_ image: Image) -> Int {  // the sum of horizontal differences
            var total = 0
            for y in 0..<image.height {
                for x in 1..<image.width {
                    total += abs(
                        Int(GeneratedImages.pixel(image, x, y)[0]) - Int(GeneratedImages.pixel(image, x - 1, y)[0]))
                }
            }
            return total
        }
        var blur = ImageRecipe(resize: .init(width: 200, height: 200, fit: .inside))
        blur.blur = 3
        #expect(edges(try decoder.decode(data, recipe: blur)) < edges(plain) / 2)
        var sharpen = ImageRecipe(resize: .init(width: 200, height: 200, fit: .inside))
        sharpen.sharpen = 1.5
        #expect(edges(try decoder.decode(data, recipe: sharpen)) > edges(plain))
        var grey = ImageRecipe(resize: .init(width: 200, height: 200, fit: .inside))
        grey.grayscale = true
        #expect(try decoder.decode(data, recipe: grey).pixelFormat == .gray8)
        #expect(try decoder.decode(try Self.data("alpha"), recipe: grey).pixelFormat == .grayAlpha8)
    }

    @Test func recipesThatDoNotFitTheImageAreTypedErrors() throws {
        let data = try Fixtures.data("rocket.jpg")
        var outside = ImageRecipe(resize: .init(width: 100, height: 100))
        outside.crop = .init(
            width: .pixels(10), height: .pixels(10), placement: .origin(x: .pixels(700), y: .pixels(0)))
        #expect(throws: ImageProcessingError.self) { try decoder.decode(data, recipe: outside) }
        var huge = ImageRecipe(resize: .init(width: 16_000, height: 16_000, fit: .contain))
        huge.padding = .init(all: 500)
        #expect(throws: ImageProcessingError.outputTooLarge(width: 17_000, height: 17_000, limit: 16_384)) {
            try decoder.decode(data, recipe: huge)
        }
        var blur = ImageRecipe()
        blur.blur = 1000
        #expect(throws: ImageProcessingError.self) { try decoder.decode(try Self.data("chelsea.png"), recipe: blur) }
    }
}
