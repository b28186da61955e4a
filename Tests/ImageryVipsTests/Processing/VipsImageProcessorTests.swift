import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// Recipes applied by libvips, through the decoder (shrink-on-load) as the pipeline runs them.
@Suite("VipsImageProcessor")
struct VipsImageProcessorTests {
    let decoder = VipsImageDecoder()
    let encoder = VipsImageEncoder()

    /// A landscape, a portrait and an EXIF-rotated JPEG, a PNG, a WebP, a GIF, and a generated PNG with alpha.
    static let sources = ["rocket.jpg", "rocket-portrait.jpg", "rocket-exif6.jpg", "chelsea.png", "chelsea.webp", "chelsea.gif", "alpha"]

    static let recipes: [(String, ImageRecipe)] = {
        func recipe(_ resize: ImageRequest.Thumbnail?, _ change: (inout ImageRecipe) -> Void = { _ in }) -> ImageRecipe {
            var recipe = ImageRecipe(resize: resize)
            change(&recipe)
            return recipe
        }
        return [
            ("cover north", recipe(.init(width: 200, height: 100, gravity: .north))),
            ("contain south, bars", recipe(.init(width: 200, height: 200, fit: .contain, gravity: .south)) { $0.background = .white }),
            ("fill", recipe(.init(width: 150, height: 150, fit: .fill))),
            ("inside", recipe(.init(width: 300, height: 300, fit: .inside))),
            ("outside", recipe(.init(width: 100, height: 100, fit: .outside))),
            ("cover enlarged", recipe(.init(width: 1000, height: 900, enlarge: true))),
            ("cover not enlarged", recipe(.init(width: 1000, height: 900))),
            ("focal point", recipe(.init(width: 120, height: 120, gravity: .focalPoint(x: 0.8, y: 0.2)))),
            ("smart attention", recipe(.init(width: 150, height: 150, gravity: .smart(.attention)))),
            ("smart entropy", recipe(.init(width: 150, height: 60, gravity: .smart(.entropy)))),
            ("crop fractions, cover", recipe(.init(width: 100, height: 100)) {
                $0.crop = .init(width: .fraction(0.5), height: .fraction(0.5), placement: .origin(x: .fraction(0.25), y: .fraction(0.1)))
            }),
            ("crop pixels", recipe(nil) { $0.crop = .init(width: .pixels(200), height: .pixels(100), placement: .origin(x: .pixels(10), y: .pixels(20))) }),
            ("smart crop, inside", recipe(.init(width: 120, height: 120, fit: .inside)) { $0.crop = .init(width: .pixels(160), height: .pixels(160), placement: .gravity(.smart(.attention))) }),
            ("rotate 90, inside", recipe(.init(width: 200, height: 1000, fit: .inside)) { $0.rotation = .quarter }),
            ("rotate 270, flip, flop, cover", recipe(.init(width: 120, height: 80)) { $0.rotation = .threeQuarters; $0.flip = true; $0.flop = true }),
            ("pad", recipe(.init(width: 100, height: 100)) { $0.padding = .init(top: 10, right: 20, bottom: 10, left: 20); $0.background = .init(hex: "ff0000") }),
            ("effects", recipe(.init(width: 200, height: 200, fit: .inside)) { $0.blur = 2; $0.sharpen = 1; $0.grayscale = true }),
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
        #expect(image.pixelFormat.hasAlpha == (full.pixelFormat.hasAlpha || recipe.background.map { $0.alpha < 255 } ?? false)
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
        guard (image.width, image.height) == (reference.width, reference.height), image.pixelFormat == reference.pixelFormat else { return }
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
        let cover = try decoder.decode(data, recipe: ImageRecipe(resize: .init(width: 150, height: 300, gravity: .smart(strategy))))
        #expect((cover.width, cover.height) == (150, 300))
        #expect(GeneratedImages.count(cover, where: isObject) == 40 * 40, "\(strategy): the cover crop cut the object")
        // Centre gravity, for contrast, loses it.
        let centred = try decoder.decode(data, recipe: ImageRecipe(resize: .init(width: 150, height: 300)))
        #expect(GeneratedImages.count(centred, where: isObject) == 0)
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

    @Test(arguments: [
        (ImageRecipe.Rotation.quarter, false, false, 40, 60, 39, 0),  // clockwise: the red corner goes top-right
        (.half, false, false, 60, 40, 59, 39),
        (.threeQuarters, false, false, 40, 60, 0, 59),
        (.none, true, false, 60, 40, 0, 39),  // flip: top and bottom
        (.none, false, true, 60, 40, 59, 0),  // flop: left and right
        (.quarter, true, false, 40, 60, 39, 59),  // rotated, then flipped
    ] as [(ImageRecipe.Rotation, Bool, Bool, Int, Int, Int, Int)])
    func rotationAndMirrorsMoveTheRedCorner(rotation: ImageRecipe.Rotation, flip: Bool, flop: Bool, width: Int, height: Int, redX: Int, redY: Int) throws {
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
                for x in 1..<image.width { total += abs(Int(GeneratedImages.pixel(image, x, y)[0]) - Int(GeneratedImages.pixel(image, x - 1, y)[0])) }
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
        outside.crop = .init(width: .pixels(10), height: .pixels(10), placement: .origin(x: .pixels(700), y: .pixels(0)))
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

/// Colour: sources with an embedded ICC profile are converted to sRGB by it.
@Suite("Colour management")
struct ColourManagementTests {
    let decoder = VipsImageDecoder()

    /// A Display P3 copy of an sRGB source decodes to (nearly) the sRGB source's pixels; its P3 values
    /// taken as sRGB (what ignoring the profile gives) are much further off.
    @Test(arguments: [("rocket.jpg", "Colour/rocket-p3.jpg", 640), ("chelsea.png", "Colour/chelsea-p3.png", 200)])
    func aDisplayP3SourceKeepsItsColours(original: String, p3: String, width: Int) throws {
        let box = ImageRecipe(resize: .init(width: width / 2, height: 1000, fit: .inside))
        let reference = try decoder.decode(Fixtures.data(original), recipe: box)
        let converted = try decoder.decode(Fixtures.data(p3), recipe: box)
        #expect((converted.width, converted.height) == (reference.width, reference.height))
        let difference = GeneratedImages.meanDifference(converted, reference)
        // The same bytes with the profile cut out: the P3 numbers read as sRGB.
        let unprofiled = try decoder.decode(Self.removingICC(Fixtures.data(p3)), recipe: box)
        let ignored = GeneratedImages.meanDifference(unprofiled, reference)
        #expect(difference < 2, "\(p3): \(difference) levels from the sRGB source")
        #expect(ignored > 2 * difference, "\(p3): ignoring the profile is \(ignored) levels off, converting \(difference)")
    }

    /// `data` without its ICC profile: a JPEG's APP2 `ICC_PROFILE` segments, or a PNG's `iCCP` chunk.
    static func removingICC(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        var output: [UInt8] = []
        if bytes.starts(with: [0xFF, 0xD8]) {
            output = [0xFF, 0xD8]
            var index = 2
            while index + 4 <= bytes.count, bytes[index] == 0xFF, bytes[index + 1] != 0xDA {
                let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                let segment = bytes[index..<index + 2 + length]
                let isICC = bytes[index + 1] == 0xE2 && bytes[(index + 4)...].starts(with: Array("ICC_PROFILE".utf8))
                if !isICC { output += segment }
                index += 2 + length
            }
            output += bytes[index...]
        } else {
            output = Array(bytes[0..<8])
            var index = 8
            while index + 12 <= bytes.count {
                let length = Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                let chunk = bytes[index..<index + 12 + length]
                if !bytes[(index + 4)...].starts(with: Array("iCCP".utf8)) { output += chunk }
                index += 12 + length
            }
        }
        return Data(output)
    }
}

/// Watermarks: placed by gravity and offset, sized relative to the output's shorter side, translucent.
@Suite("Watermarks")
struct WatermarkTests {
    let decoder = VipsImageDecoder()
    let encoder = VipsImageEncoder()

    /// A white canvas, and an opaque red 100x50 mark.
    func canvas(_ width: Int, _ height: Int) throws -> Data {
        try encoder.encode(GeneratedImages.image(width: width, height: height, format: .rgb8) { _, _ in [255, 255, 255] }, as: .png)
    }

    func decoderWithMark() throws -> VipsImageDecoder {
        var decoder = VipsImageDecoder()
        decoder.watermarks = ["mark": try encoder.encode(GeneratedImages.image(width: 100, height: 50) { _, _ in [255, 0, 0, 255] }, as: .png)]
        return decoder
    }

    @Test(arguments: [(400, 200, 340, 165), (200, 400, 140, 365)])
    func aMarkHasTheSameRelativeSizeOnPortraitAndLandscape(width: Int, height: Int, x: Int, y: Int) throws {
        var recipe = ImageRecipe()
        recipe.watermark = .init(name: "mark", gravity: .southEast, offsetX: 10, offsetY: 10, scale: 0.25)
        let image = try decoderWithMark().decode(canvas(width, height), recipe: recipe)
        #expect((image.width, image.height) == (width, height) && image.pixelFormat == .rgb8)
        // 0.25 of the shorter side (200): 50x25, 10 pixels from the bottom-right corner.
        let red = GeneratedImages.count(image) { $0[0] > 200 && $0[1] < 60 }
        #expect(abs(red - 50 * 25) <= 50 + 25, "\(red) red pixels")
        #expect(GeneratedImages.pixel(image, x + 25, y + 12) == [255, 0, 0])
        #expect(GeneratedImages.pixel(image, x - 3, y + 12) == [255, 255, 255])
        #expect(GeneratedImages.pixel(image, x + 25, y + 25 + 3) == [255, 255, 255])
    }

    @Test func opacityBlendsAndANamelessMarkIsAnError() throws {
        var recipe = ImageRecipe()
        recipe.watermark = .init(name: "mark", gravity: .center, opacity: 0.5)
        let image = try decoderWithMark().decode(canvas(300, 200), recipe: recipe)
        let middle = GeneratedImages.pixel(image, 150, 100)
        #expect(middle[0] == 255 && (120...135).contains(middle[1]), "\(middle)")
        recipe.watermark = .init(name: "other")
        #expect(throws: ImageProcessingError.self) { try decoderWithMark().decode(canvas(300, 200), recipe: recipe) }
    }

    /// The smallest rectangle holding the pixels `test` picks: (minX, minY, maxX, maxY), or nil.
    static func bounds(_ image: Image, where test: ([UInt8]) -> Bool) -> (Int, Int, Int, Int)? {
        var box: (Int, Int, Int, Int)?
        for y in 0..<image.height {
            for x in 0..<image.width where test(GeneratedImages.pixel(image, x, y)) {
                box = box.map { (min($0.0, x), min($0.1, y), max($0.2, x), max($0.3, y)) } ?? (x, y, x, y)
            }
        }
        return box
    }

    @Test(arguments: [(400, 200), (200, 400)])
    func textIsPlacedAndSizedLikeAnImage(width: Int, height: Int) throws {
        var recipe = ImageRecipe()
        let text = ImageRecipe.Watermark.Text("Imagery", font: "sans bold 64", color: .black)
        recipe.watermark = .init(mark: .text(text), gravity: .southEast, offsetX: 10, offsetY: 10, scale: 0.5)
        let image = try decoder.decode(canvas(width, height), recipe: recipe)
        let ink = try #require(Self.bounds(image) { $0[0] < 128 }, "no letters drawn")
        // Its longer side (the line's width) half the shorter side (200): 100 pixels at most, the letters
        // a little less (the line's box has side bearings); against the bottom-right corner, 10 pixels in.
        #expect((80...100).contains(ink.2 - ink.0 + 1), "\(ink)")
        #expect(ink.2 <= width - 10 && ink.2 >= width - 10 - 8, "\(ink)")
        #expect(ink.3 <= height - 10 && ink.3 >= height - 10 - 20, "\(ink)")
        #expect(ink.0 >= width - 10 - 100 && ink.1 >= height / 2, "\(ink)")
    }

    @Test func textHasItsColourAndIsDrawnAsWritten() throws {
        var recipe = ImageRecipe()
        // Markup is not read: the angle brackets are letters too, and nothing is made bold or huge.
        let text = ImageRecipe.Watermark.Text("<span size='900000'>x</span>", font: "sans 20", color: ImageRecipe.Color(red: 255, green: 0, blue: 0))
        recipe.watermark = .init(mark: .text(text), gravity: .northWest)
        let image = try decoder.decode(canvas(400, 100), recipe: recipe)
        let red = try #require(Self.bounds(image) { $0[0] > 200 && $0[1] < 80 && $0[2] < 80 })
        #expect(red.3 < 40 && red.2 - red.0 > 150, "\(red): one line of 28 small characters")
        recipe.watermark?.opacity = 0.5
        let faint = try decoder.decode(canvas(400, 100), recipe: recipe)
        #expect(Self.bounds(faint) { $0[0] > 200 && $0[1] < 80 } == nil, "half opacity leaves no pure red")
    }

    @Test(arguments: [
        ("", "sans 20", "1 to 100 characters"),
        (String(repeating: "a", count: 101), "sans 20", "1 to 100 characters"),
        ("two\nlines", "sans 20", "control characters"),
        ("ok", "sans 9999", "size must be from 1 to 256"),
        ("ok", "sans; bold", "a watermark font is"),
        ("ok", "20", "a watermark font is"),
    ])
    func aTextThatCannotBeDrawnIsRefusedByName(string: String, font: String, message: String) throws {
        var recipe = ImageRecipe()
        recipe.watermark = .init(mark: .text(.init(string, font: font)))
        #expect {
            try decoder.decode(canvas(100, 100), recipe: recipe)
        } throws: { "\($0)".contains(message) }
    }
}

/// CMYK and 16-bit sources of the corpus come out as libvips' own conversion to 8-bit sRGB gives them.
@Suite("CMYK and 16-bit sources")
struct DeepColourTests {
    @Test(.enabled(if: Fixtures.corpus != nil), arguments: ["drv-cmyk-Dune.jpg", "drv-16bit-astronaut.png"])
    func convertLikeLibvips(name: String) throws {
        let data = try Data(contentsOf: try #require(Fixtures.corpus).appendingPathComponent(name))
        let decoder = VipsImageDecoder()
        let box = ImageRecipe(resize: .init(width: 256, height: 256, fit: .inside))
        let image = try decoder.decode(data, recipe: box)
        #expect(image.pixelFormat == .rgb8)
        // The reference: the full-size decode (libvips' loader, its ICC or CMYK conversion, 8 bits),
        // resized by the same processor.
        let full = try decoder.decode(data, recipe: ImageRecipe())
        let reference = try VipsImageProcessor().process(
            ThumbnailBase(image: full, scale: 1, sourceWidth: full.width, sourceHeight: full.height), recipe: box
        )
        #expect((image.width, image.height) == (reference.width, reference.height))
        #expect(GeneratedImages.meanDifference(image, reference) < 3, "\(name)")
        // Not washed out or inverted: the mean of each channel is within a few levels of the reference's.
        func means(_ image: Image) -> [Double] {
            (0..<3).map { channel in
                stride(from: channel, to: image.pixels.count, by: 3).reduce(0.0) { $0 + Double(image.pixels[image.pixels.startIndex + $1]) }
                    / Double(image.width * image.height)
            }
        }
        for (ours, theirs) in zip(means(image), means(reference)) { #expect(abs(ours - theirs) < 3, "\(name)") }
        // And close to the 8-bit RGB original the corpus made it from. The CMYK copy was made by
        // ImageMagick without a profile; libvips converts it back with its default CMYK profile, and
        // its own `vips colourspace` lands 15.1 levels from the original too (an inverted or
        // unconverted CMYK is over 100 off: 106.5 and 132.7 measured).
        let original = name.contains("cmyk") ? "mate-Dune.jpg" : "skimage-astronaut.png"
        let originalImage = try decoder.decode(Data(contentsOf: try #require(Fixtures.corpus).appendingPathComponent(original)), recipe: box)
        if (originalImage.width, originalImage.height) == (image.width, image.height) {
            let difference = GeneratedImages.meanDifference(image, originalImage)
            #expect(difference < 20, "\(name) is \(difference) levels from \(original)")
        } else {
            Issue.record("\(original) is \(originalImage.width)x\(originalImage.height), \(name) \(image.width)x\(image.height)")
        }
    }
}

/// What metadata reaches the output: nothing but a copyright notice by default; a kept profile on request.
@Suite("Output metadata")
struct OutputMetadataTests {
    let decoder = VipsImageDecoder()
    let encoder = VipsImageEncoder()

    @Test func aKeptProfileTravelsAndTheDefaultConvertsAndDropsIt() throws {
        let data = try Fixtures.data("Colour/rocket-p3.jpg")
        var recipe = ImageRecipe(resize: .init(width: 320, height: 320, fit: .inside))
        let converted = try decoder.decode(data, recipe: recipe)
        #expect(converted.metadata.iccProfile == nil)
        #expect(try decoder.inspect(encoder.encode(converted, as: .jpeg)).profile == nil)
        recipe.keepsColorProfile = true
        let kept = try decoder.decode(data, recipe: recipe)
        #expect(kept.metadata.iccProfile != nil)
        // The pixels stay P3 numbers: what the bytes give with the profile cut out.
        let unprofiled = try decoder.decode(ColourManagementTests.removingICC(data), recipe: ImageRecipe(resize: recipe.resize))
        #expect(GeneratedImages.meanDifference(kept, unprofiled) < 0.5)
        for format in [ImageFormat.jpeg, .png, .webp] {
            let output = try encoder.encode(kept, as: format)
            #expect(try decoder.inspect(output).profile?.contains("P3") == true, "\(format)")
        }
        // A PNG source keeps its profile the same way.
        let png = try decoder.decode(Fixtures.data("Colour/chelsea-p3.png"), recipe: recipe)
        #expect(png.metadata.iccProfile != nil)
    }

    @Test func aCopyrightNoticeIsKeptAndNothingElse() throws {
        var source = try decoder.decode(Fixtures.data("chelsea.png"), thumbnail: nil)
        source.metadata.copyright = "Jane Doe 2026"
        let jpeg = try encoder.encode(source, as: .jpeg)
        for recipe in [ImageRecipe(resize: .init(width: 100, height: 100)), ImageRecipe(resize: .init(width: 300, height: 300, fit: .inside))] {
            let image = try decoder.decode(jpeg, recipe: recipe)
            #expect(image.metadata.copyright == "Jane Doe 2026")
            for format in [ImageFormat.jpeg, .webp] {
                let again = try decoder.decode(try encoder.encode(image, as: format), thumbnail: nil)
                #expect(again.metadata.copyright == "Jane Doe 2026", "\(format)")
            }
        }
        // The EXIF orientation of a source is applied, not carried: the output says nothing of it.
        let rotated = try decoder.decode(Fixtures.data("rocket-exif6.jpg"), thumbnail: .init(width: 200, height: 200, fit: .inside))
        #expect(rotated.metadata == ImageMetadata())
        #expect(try decoder.inspect(encoder.encode(rotated, as: .jpeg)).orientation == 1)
    }
}
