import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

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
        let unprofiled = try decoder.decode(
            ColourManagementTests.removingICC(data), recipe: ImageRecipe(resize: recipe.resize))
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
        for recipe in [
            ImageRecipe(resize: .init(width: 100, height: 100)),
            ImageRecipe(resize: .init(width: 300, height: 300, fit: .inside)),
        ] {
            let image = try decoder.decode(jpeg, recipe: recipe)
            #expect(image.metadata.copyright == "Jane Doe 2026")
            for format in [ImageFormat.jpeg, .webp] {
                let again = try decoder.decode(try encoder.encode(image, as: format), thumbnail: nil)
                #expect(again.metadata.copyright == "Jane Doe 2026", "\(format)")
            }
        }
        // The EXIF orientation of a source is applied, not carried: the output says nothing of it.
        let rotated = try decoder.decode(
            Fixtures.data("rocket-exif6.jpg"), thumbnail: .init(width: 200, height: 200, fit: .inside))
        #expect(rotated.metadata == ImageMetadata())
        #expect(try decoder.inspect(encoder.encode(rotated, as: .jpeg)).orientation == 1)
    }
}
