import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// Every file of ../shared/corpus and ../shared/corpus-bad, when they are there.
@Suite("Corpus decoding", .enabled(if: Fixtures.corpus != nil))
struct CorpusDecodingTests {
    let decoder = VipsImageDecoder()

    // Decoding the corpus takes seconds of CPU: it runs on threads of its own
    // (runBlocking), never on the cooperative pool the other tests share.
    @Test func everyCorpusImageDecodesAtThumbnailSizeWithinTheBox() async throws {
        let manifest = Fixtures.corpusManifest()
        let files = Fixtures.files(in: try #require(Fixtures.corpus))
        #expect(files.count >= 60)
        let decoder = self.decoder
        for file in files {
            let image = try await runBlocking {
                try decoder.decode(Data(contentsOf: file), thumbnail: .init(width: 256, height: 256, fit: .inside))
            }
            #expect(max(image.width, image.height) <= 256, "\(file.lastPathComponent)")
            #expect(
                image.sourceFormat.rawValue == manifest[file.lastPathComponent]?.format, "\(file.lastPathComponent)")
            if let row = manifest[file.lastPathComponent], max(row.width, row.height) >= 256 {
                #expect(
                    max(image.width, image.height) == 256, "\(file.lastPathComponent): \(image.width)x\(image.height)")
                // The aspect ratio survives (orientation 5-8 swaps the sides).
                let source = Double(row.width) / Double(row.height)
                let result = Double(image.width) / Double(image.height)
                let swapped = file.lastPathComponent.contains("orient6")
                #expect(
                    abs((swapped ? 1 / source : source) - result) < 0.02 * max(1, result), "\(file.lastPathComponent)")
            }
        }
    }

    @Test func everyBadCorpusFileGivesATypedErrorOrAValidImage() async throws {
        let bad = try #require(Fixtures.corpusBad)
        let files = Fixtures.files(in: bad)
        #expect(files.count == 16)
        var outcomes: [String: String] = [:]
        let decoder = self.decoder
        for file in files {
            do {
                let image = try await runBlocking {
                    try decoder.decode(Data(contentsOf: file), thumbnail: .init(width: 128, height: 128))
                }
                #expect(
                    image.pixels.count == image.width * image.height * image.pixelFormat.bytesPerPixel
                        * image.frameCount)
                outcomes[file.lastPathComponent] =
                    "image \(image.width)x\(image.height)"
                    + (image.animation.map { " \($0.frameDelays.count) frames" } ?? "")
            } catch let error as ImageDecodingError {
                outcomes[file.lastPathComponent] = "\(error)"
            }
        }
        // The ones that must be refused, and how.
        #expect(outcomes["empty.jpg"] == "\(ImageDecodingError.empty)")
        #expect(outcomes["text-named.jpg"] == "\(ImageDecodingError.unsupportedFormat)")
        #expect(outcomes["bomb-header-100000x100000-rgba.png"]?.contains("over the limit") == true)
        #expect(outcomes["bomb-full-100000x100000-1bit.png"]?.contains("over the limit") == true)
        #expect(outcomes["bomb-header-65500x65500.jpg"]?.contains("over the limit") == true)
        #expect(outcomes["png-named.jpg"]?.hasPrefix("image") == true)
        // 20 000 frames: refused from the header; a lenient decoder keeps what a truncated animation has.
        #expect(outcomes["many-frames-20000-4096x4096.gif"]?.hasPrefix("the animation has") == true)
        #expect(outcomes["truncated-anim.gif"]?.hasSuffix("frames") == true)
        for (name, outcome) in outcomes.sorted(by: { $0.key < $1.key }) { print("corpus-bad \(name): \(outcome)") }
    }
}

/// Fit modes on a real landscape and a real portrait photo of the corpus.
@Suite("Corpus fit modes", .enabled(if: Fixtures.corpus != nil))
struct CorpusFitModeTests {
    @Test(
        arguments: [
            // mate-Aqua.jpg is 2560x1600 (landscape), lomiri16-Wine is 2560x3837 (portrait).
            ("mate-Aqua.jpg", ImageRequest.Thumbnail.Fit.inside, 300, 188),
            ("mate-Aqua.jpg", .cover, 300, 300),
            ("mate-Aqua.jpg", .contain, 300, 300),
            ("mate-Aqua.jpg", .fill, 300, 300),
            ("lomiri16-Wine_by_Jakkub_Mede.jpg", .inside, 200, 300),
            ("lomiri16-Wine_by_Jakkub_Mede.jpg", .cover, 300, 300),
            ("lomiri16-Wine_by_Jakkub_Mede.jpg", .contain, 300, 300),
            ("lomiri16-Wine_by_Jakkub_Mede.jpg", .fill, 300, 300),
        ] as [(String, ImageRequest.Thumbnail.Fit, Int, Int)])
    func aThreeHundredPixelBoxGivesTheExpectedSize(
        name: String, fit: ImageRequest.Thumbnail.Fit, width: Int, height: Int
    ) async throws {
        let data = try Data(contentsOf: try #require(Fixtures.corpus).appendingPathComponent(name))
        let image = try await runBlocking {
            try VipsImageDecoder().decode(data, thumbnail: .init(width: 300, height: 300, fit: fit))
        }
        #expect(abs(image.width - width) <= 1 && abs(image.height - height) <= 1, "\(image.width)x\(image.height)")
    }
}
