import Foundation
import Testing

@testable import Imagery

/// Decoding's protocols and values: what every decoder gets from the protocols' defaults, the errors,
/// and what a header says (as `/info` answers it).
@Suite("Image decoding")
struct ImageDecodingTests {
    static let pixel = Image(width: 1, height: 1, pixelFormat: .gray8, pixels: Data([9]), sourceFormat: .png)

    /// A decoder that records the recipes it is asked for and keeps a base for every decode.
    final class RecordingDecoder: ThumbnailDeriving, ImageInspecting {
        let recipes = Locked<[ImageRecipe]>([])

        func decode(_ data: Data, recipe: ImageRecipe) throws -> Image {
            guard !data.isEmpty else { throw ImageDecodingError.empty }
            recipes.withLock { $0.append(recipe) }
            return ImageDecodingTests.pixel
        }

        func decodeKeepingBase(_ data: Data, recipe: ImageRecipe) throws -> (image: Image, base: ThumbnailBase?) {
            let image = try decode(data, recipe: recipe)
            return (image, ThumbnailBase(image: image, scale: 2, sourceWidth: 2, sourceHeight: 2))
        }

        func image(_ recipe: ImageRecipe, from base: ThumbnailBase) throws -> Image? {
            recipes.withLock { $0.append(recipe) }
            return recipe.resize == nil ? nil : base.image
        }

        func inspect(_ data: Data) throws -> ImageHeader {
            guard let format = ImageFormat(sniffing: data) else { throw ImageDecodingError.unsupportedFormat }
            return ImageHeader(
                width: 1, height: 1, format: format, orientation: 1, frames: 1, hasAlpha: false, colorSpace: "b-w",
                bitsPerChannel: 8, profile: nil)
        }
    }

    @Test func aThumbnailIsARecipeThatOnlyResizes() throws {
        let decoder = RecordingDecoder()
        let box = ImageRequest.Thumbnail(width: 10, height: 20, fit: .inside)
        _ = try decoder.decode(Data([1]), thumbnail: box)
        _ = try decoder.decode(Data([1]), thumbnail: nil)
        let kept = try decoder.decodeKeepingBase(Data([1]), thumbnail: box)
        #expect(kept.base?.scale == 2 && kept.base?.cacheCost == 1)
        #expect(try decoder.thumbnail(box, from: try #require(kept.base)) == Self.pixel)
        #expect(
            decoder.recipes.withLock { $0 } == [
                ImageRecipe(resize: box), ImageRecipe(), ImageRecipe(resize: box), ImageRecipe(resize: box),
            ])
        #expect(throws: ImageDecodingError.empty) { try decoder.decode(Data(), thumbnail: nil) }
        #expect(throws: ImageDecodingError.unsupportedFormat) { try decoder.inspect(Data("<html>".utf8)) }
    }

    @Test(
        arguments: [
            (ImageDecodingError.empty, "the data is empty"),
            (
                .tooManyPixels(width: 100, height: 200, limit: 10_000),
                "the image is 100x200 pixels, over the limit of 10000 pixels"
            ),
            (
                .tooManyFrames(frames: 500, width: 10, height: 20, pixelLimit: 1000, frameLimit: 100),
                "the animation has 500 frames of 10x20 pixels, over the limit of 100 frames and 1000 pixels "
                    + "for all frames together; one frame of it can be taken"
            ),
            (.invalidSize(width: 0, height: -1), "invalid target size 0x-1"),
            (.corrupt(format: .bmp, reason: "cut short"), "the bmp data is corrupt or truncated: cut short"),
            (.corrupt(format: nil, reason: "?"), "the image data is corrupt or truncated: ?"),
            (.outOfMemory(reason: "no"), "there was not enough memory to decode the image: no"),
            (.overRequestLimit("too big"), "too big"),
        ] as [(ImageDecodingError, String)])
    func decodingErrorsSayWhatIsWrong(error: ImageDecodingError, description: String) {
        #expect(error.description == description)
    }

    @Test func theUnsupportedFormatErrorNamesTheFormatsThatAre() {
        let text = ImageDecodingError.unsupportedFormat.description
        for name in ["JPEG", "PNG", "GIF", "WebP", "AVIF", "HEIC", "TIFF", "BMP", "ICO"] {
            #expect(text.contains(name))
        }
    }

    @Test func aHeaderIsJSONWithAlphaUnderItsShortName() throws {
        let header = ImageHeader(
            width: 640, height: 427, format: .jpeg, orientation: 6, frames: 1, hasAlpha: true, colorSpace: "srgb",
            bitsPerChannel: 8,
            profile: "sRGB IEC61966-2.1"
        )
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(header)) as? [String: Any]
        #expect(json?["alpha"] as? Bool == true && json?["hasAlpha"] == nil)
        #expect(json?["format"] as? String == "jpeg" && json?["colorSpace"] as? String == "srgb")
        #expect(try JSONDecoder().decode(ImageHeader.self, from: JSONEncoder().encode(header)) == header)
        let noProfile = ImageHeader(
            width: 1, height: 1, format: .png, orientation: 1, frames: 3, hasAlpha: false, colorSpace: "b-w",
            bitsPerChannel: 16, profile: nil)
        #expect(try JSONDecoder().decode(ImageHeader.self, from: JSONEncoder().encode(noProfile)) == noProfile)
        let unknownFormat =
            #"{"width":1,"height":1,"format":"tga","orientation":1,"frames":1,"alpha":false,"#
            + #""colorSpace":"x","bitsPerChannel":8}"#
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ImageHeader.self, from: Data(unknownFormat.utf8))
        }
    }
}
