import Foundation
import Testing

@testable import Imagery

/// A recipe's key: one string per output, whatever order a URL named the operations in; any
/// difference another string.
@Suite("ImageRecipe keys")
struct ImageRecipeKeyTests {
    static let logo = ImageRecipe.EncodedImage(id: "https://example.com/logo.png#abc", data: Data([1, 2, 3]))

    /// Every setting of a recipe, each changed one at a time from a plain resize.
    static let variants: [(String, @Sendable (inout ImageRecipe) -> Void)] = [
        ("frame 0", { $0.frame = 0 }), ("frame 1", { $0.frame = 1 }), ("orientation", { $0.ignoresOrientation = true }),
        ("limits", { $0.sourceLimits = .init(pixels: 1) }), ("other limits", { $0.sourceLimits = .init(bytes: 1) }),
        ("trim", { $0.trim = .init() }), ("trim colour", { $0.trim = .init(color: .white) }),
        ("trim corner", { $0.trim = .init(fromBottomRight: true) }),
        (
            "trim equal",
            {
                $0.trim = .init()
                $0.trim?.equalHorizontal = true
            }
        ),
        (
            "trim equal vertically",
            {
                $0.trim = .init()
                $0.trim?.equalVertical = true
            }
        ),
        ("crop", { $0.crop = .init(width: .pixels(10), height: .pixels(10)) }),
        ("crop fraction", { $0.crop = .init(width: .fraction(0.5), height: .pixels(10)) }),
        (
            "crop placed",
            {
                $0.crop = .init(
                    width: .pixels(10), height: .pixels(10), placement: .origin(x: .pixels(1), y: .fraction(0.5)))
            }
        ),
        (
            "crop smart",
            { $0.crop = .init(width: .pixels(10), height: .pixels(10), placement: .gravity(.smart(.attention))) }
        ),
        ("rotate", { $0.rotation = .quarter }), ("flip", { $0.flip = true }), ("flop", { $0.flop = true }),
        ("sizing", { $0.sizing = .init() }), ("fill", { $0.boxFill = .blur }), ("median", { $0.boxFill = .median }),
        ("extend", { $0.extend = .init(width: 300, height: 300) }),
        ("extend west", { $0.extend = .init(width: 300, height: 300, gravity: .west) }),
        ("pixelate", { $0.pixelate = 4 }), ("padding", { $0.padding = .init(all: 1) }),
        ("padding sides", { $0.padding = .init(top: 1, right: 0, bottom: 0, left: 0) }), ("blur", { $0.blur = 1 }),
        ("sharpen", { $0.sharpen = 1 }), ("gray", { $0.grayscale = true }), ("background", { $0.background = .black }),
        ("profile", { $0.keepsColorProfile = true }), ("depth", { $0.keepsHighBitDepth = true }),
        ("linear", { $0.resizesInLinearLight = true }),
        ("no metadata", { $0.keptMetadata = .none }), ("all metadata", { $0.keptMetadata = .all }),
        ("brightness", { $0.adjustments = [.brightness(10)] }), ("contrast", { $0.adjustments = [.contrast(10)] }),
        ("two steps", { $0.adjustments = [.brightness(10), .contrast(10)] }),
        ("two steps swapped", { $0.adjustments = [.contrast(10), .brightness(10)] }),
        ("equalize", { $0.adjustments = [.equalize] }), ("grayscale step", { $0.adjustments = [.grayscale] }),
        ("noise", { $0.adjustments = [.noise(amount: 5, seed: 1)] }),
        ("noise seed", { $0.adjustments = [.noise(amount: 5, seed: 2)] }),
        ("watermark", { $0.watermark = .init(name: "logo") }),
        ("watermark other", { $0.watermark = .init(name: "logo2") }),
        (
            "watermark placed",
            { $0.watermark = .init(name: "logo", gravity: .north, offsetX: 1, offsetY: 2, opacity: 0.5, scale: 0.2) }
        ),
        (
            "watermark tiled",
            {
                $0.watermark = .init(name: "logo")
                $0.watermark?.placement = .tiled(spacingX: 5, spacingY: 5)
            }
        ),
        (
            "watermark offset",
            {
                $0.watermark = .init(name: "logo")
                $0.watermark?.placement = .offset(.init(.west, x: 3))
            }
        ),
        (
            "watermark fitted",
            {
                $0.watermark = .init(name: "logo")
                $0.watermark?.fraction = 0.5
            }
        ),
        (
            "watermark pasted",
            {
                $0.watermark = .init(name: "logo")
                $0.watermark?.placement = .pasted(.init(x: .center, y: .repeat))
            }
        ),
        ("watermark text", { $0.watermark = .init(mark: .text(.init("hi"))) }),
        (
            "watermark linked",
            { $0.watermark = .init(mark: .linked(.source(URL(string: "https://example.com/logo.png")!))) }
        ),
        ("watermark loaded", { $0.watermark = .init(mark: .linked(.encoded(Self.logo))) }),
        ("frame step", { $0.adjustments = [.frame(.source(URL(string: "https://example.com/frame.png")!))] }),
    ]

    @Test func everySettingChangesTheKeyAndEqualRecipesShareOne() {
        let base = ImageRecipe(resize: .init(width: 200, height: 100))
        var keys = [ImageCacheKey(source: .id("a"), recipe: base).stringValue]
        for (_, change) in Self.variants {
            var recipe = base
            change(&recipe)
            keys.append(ImageCacheKey(source: .id("a"), recipe: recipe).stringValue)
            var again = base
            change(&again)
            #expect(again.description == recipe.description)
        }
        let duplicates = Dictionary(grouping: keys.indices, by: { keys[$0] }).filter { $0.value.count > 1 }
        #expect(duplicates.isEmpty, "\(duplicates)")
    }

    @Test func theOperationsAreNamedInTheOrderTheyApply() {
        var recipe = ImageRecipe(resize: .init(width: 20, height: 10))
        recipe.grayscale = true
        recipe.rotation = .half
        recipe.frame = 2
        recipe.padding = .init(all: 3)
        recipe.crop = .init(width: .pixels(5), height: .fraction(0.5), placement: .origin(x: .pixels(1), y: .pixels(2)))
        recipe.background = .init(red: 255, green: 0, blue: 0, alpha: 128)
        #expect(recipe.description == "frame:2,crop:5x0.5f@1,2,rotate:180,20x10 cover,pad:3:3:3:3,gray,bg:ff000080")
        #expect(ImageRecipe().description == "")
    }

    @Test func aTrimsKeyNamesItsColourCornerAndEqualSides() {
        var trim = ImageRecipe.Trim(threshold: 12.5, color: .white, fromBottomRight: true)
        (trim.equalHorizontal, trim.equalVertical) = (true, true)
        var recipe = ImageRecipe()
        recipe.trim = trim
        #expect(recipe.description == "trim:12.5:ffffff:br:eh:ev")
    }

    /// Watermark text is written with its length first: no text, font or colour can pass for another.
    @Test func watermarkTextCannotPassForAnotherWatermark() {
        func key(_ text: String, _ font: String) -> String {
            ImageRecipe.Watermark(mark: .text(.init(text, font: font))).key
        }
        #expect(key("a:sans 1", "sans 2") != key("a", "sans 1:sans 2"))
        #expect(key("hi", "sans bold 32").hasPrefix("wm:text(2:hi:sans bold 32:ffffff)"))
        #expect(key("é", "sans 1").contains("text(2:é"), "the length in UTF-8 bytes")
        // A linked image is known by the length and text of its URL, then by its id once loaded.
        let linked = ImageRecipe.Watermark(mark: .linked(.source(URL(string: "https://e.com/a")!)))
        #expect(linked.key.hasPrefix("wm:url(15:https://e.com/a):southeast"))
        #expect(
            ImageRecipe.Watermark(mark: .linked(.encoded(Self.logo))).key.hasPrefix(
                "wm:img(32:https://example.com/logo.png#abc)"))
    }

    @Test func everyGravityHasAShortNameOfItsOwn() {
        let gravities: [ImageRecipe.Gravity] = [
            .center, .north, .south, .east, .west, .northEast, .northWest, .southEast, .southWest,
            .focalPoint(x: 0.5, y: 0.25),
            .sourcePoint(x: 3, y: 4), .smart(.attention), .smart(.entropy),
        ]
        #expect(
            gravities.map(\.description) == [
                "center", "north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest",
                "fp:0.5:0.25", "sp:3:4",
                "smart:attention", "smart:entropy",
            ])
    }

    @Test func anEncodedImageIsKnownByItsIdAlone() {
        let same = ImageRecipe.EncodedImage(id: Self.logo.id, data: Data([9, 9]))
        #expect(same == Self.logo && same.hashValue == Self.logo.hashValue && same.description == Self.logo.id)
        #expect(ImageRecipe.EncodedImage(id: "other", data: Self.logo.data) != Self.logo)
    }
}
