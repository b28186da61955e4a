import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

@Suite("VipsImageDecoder")
struct VipsImageDecoderTests {
    let decoder = VipsImageDecoder()

    @Test(arguments: ["rocket.jpg", "rocket-portrait.jpg", "chelsea.png", "chelsea.gif", "chelsea.webp"])
    func decodesFullSizeWithTheSourceDimensionsAndFormat(name: String) throws {
        let image = try decoder.decode(Fixtures.data(name), thumbnail: nil)
        let expected: (Int, Int) =
            switch name {
            case "rocket.jpg": (640, 427)
            case "rocket-portrait.jpg": (427, 640)
            default: (451, 300)
            }
        #expect((image.width, image.height) == expected)
        #expect(image.pixelFormat == .rgb8)
        #expect(image.pixels.count == image.width * image.height * 3)
        #expect(image.cost == image.pixels.count)
        #expect(image.sourceFormat == ImageFormat(fileExtension: URL(fileURLWithPath: name).pathExtension))
    }

    /// Box 200x100 and 100x200 on a landscape (640x427) and a portrait (427x640) source.
    @Test(
        arguments: [
            ("rocket.jpg", 200, 100, ImageRequest.Thumbnail.Fit.cover, 200, 100),
            ("rocket.jpg", 200, 100, .contain, 200, 100),
            ("rocket.jpg", 200, 100, .fill, 200, 100),
            ("rocket.jpg", 200, 100, .inside, 150, 100),
            ("rocket.jpg", 100, 200, .inside, 100, 67),
            ("rocket-portrait.jpg", 200, 100, .cover, 200, 100),
            ("rocket-portrait.jpg", 200, 100, .inside, 67, 100),
            ("rocket-portrait.jpg", 100, 200, .inside, 100, 150),
            ("rocket-portrait.jpg", 100, 200, .contain, 100, 200),
            ("rocket-portrait.jpg", 1000, 1000, .inside, 427, 640),  // inside never enlarges
            ("rocket.jpg", 1000, 1000, .cover, 640, 427),  // nothing is enlarged unless asked
            // contain's box is the result, the image not enlarged in it
            ("rocket.jpg", 1000, 1000, .contain, 1000, 1000),
        ] as [(String, Int, Int, ImageRequest.Thumbnail.Fit, Int, Int)])
    func thumbnailDimensionsFollowTheFitMode(
        name: String, boxWidth: Int, boxHeight: Int, fit: ImageRequest.Thumbnail.Fit, width: Int, height: Int
    ) throws {
        let thumbnail = ImageRequest.Thumbnail(width: boxWidth, height: boxHeight, fit: fit)
        let image = try decoder.decode(Fixtures.data(name), thumbnail: thumbnail)
        #expect(abs(image.width - width) <= 1 && abs(image.height - height) <= 1, "\(image.width)x\(image.height)")
        if fit != .inside, fit == .contain || boxWidth < 640 {
            #expect((image.width, image.height) == (boxWidth, boxHeight))
        }
    }

    @Test func containPadsWithBlackAroundTheScaledImage() throws {
        // A landscape image in a square box: bands above and below.
        let image = try decoder.decode(
            Fixtures.data("rocket.jpg"), thumbnail: .init(width: 100, height: 100, fit: .contain))
        let topLeft = image.pixels.prefix(3)
        let centre = image.pixels[(50 * 100 + 50) * 3..<(50 * 100 + 50) * 3 + 3]
        #expect(Array(topLeft) == [0, 0, 0])
        #expect(Array(centre) != [0, 0, 0])
    }

    @Test func keepsGreyImagesGrey() throws {
        let image = try decoder.decode(Fixtures.data("camera-gray.jpg"), thumbnail: .init(width: 64, height: 64))
        #expect(image.pixelFormat == .gray8)
        #expect(image.pixels.count == 64 * 64)
    }

    @Test func sniffsTheFormatFromBytesNotNames() throws {
        // PNG bytes in a file called .jpg: the decoder is never told the name.
        let image = try decoder.decode(Fixtures.data("chelsea.png"), thumbnail: nil)
        #expect(image.sourceFormat == .png)
    }

    @Test func refusesImagesOverThePixelLimitBeforeDecoding() throws {
        let bomb = BrokenImages.pngBomb(width: 100_000, height: 100_000)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 100_000, height: 100_000, limit: 100_000_000)) {
            try decoder.decode(bomb, thumbnail: .init(width: 64, height: 64))
        }
        let small = VipsImageDecoder(maximumPixels: 1000)
        #expect(throws: ImageDecodingError.tooManyPixels(width: 640, height: 427, limit: 1000)) {
            try small.decode(Fixtures.data("rocket.jpg"), thumbnail: nil)
        }
    }

    @Test func refusesEmptyAndNonImageBytesAndBadSizes() throws {
        #expect(throws: ImageDecodingError.empty) { try decoder.decode(Data(), thumbnail: nil) }
        #expect(throws: ImageDecodingError.unsupportedFormat) {
            try decoder.decode(Data("<html>".utf8), thumbnail: nil)
        }
        #expect(throws: ImageDecodingError.invalidSize(width: 0, height: 10)) {
            try decoder.decode(Fixtures.data("rocket.jpg"), thumbnail: .init(width: 0, height: 10))
        }
    }

    @Test func everyBrokenInputGivesATypedErrorOrAValidImage() throws {
        for (name, data) in try BrokenImages.all() {
            for thumbnail in [nil, ImageRequest.Thumbnail(width: 64, height: 64)] {
                do {
                    let image = try decoder.decode(data, thumbnail: thumbnail)
                    #expect(
                        image.pixels.count == image.width * image.height * image.pixelFormat.bytesPerPixel, "\(name)")
                } catch let error as ImageDecodingError {
                    #expect(!error.description.isEmpty, "\(name)")
                }
            }
        }
    }

    @Test func appliesExifOrientation() throws {
        guard let corpus = Fixtures.corpus else { return }
        // Stored 1024x1280 with orientation 6 (rotate 90° clockwise to display): shown as 1280x1024.
        let data = try Data(contentsOf: corpus.appendingPathComponent("drv-exif-orient6-GreenMeadow.jpg"))
        let full = try decoder.decode(data, thumbnail: nil)
        #expect((full.width, full.height) == (1280, 1024))
        let thumbnail = try decoder.decode(data, thumbnail: .init(width: 200, height: 200, fit: .inside))
        #expect((thumbnail.width, thumbnail.height) == (200, 160))
    }
}
