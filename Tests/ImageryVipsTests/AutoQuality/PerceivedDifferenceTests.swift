import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// SSIMULACRA2 as `CQuality` computes it, against the reference's scores and its own properties.
@Suite("Perceived difference")
struct PerceivedDifferenceTests {
    let decoder = VipsImageDecoder()

    /// The fixtures' lossy and palette copies of chelsea.png, scored by PyPI's ssimulacra2 0.3.0 (a port
    /// of Cloudinary's reference): 76.43 for the WebP, 76.14 for the GIF. Within 2 points here.
    @Test func scoresAsTheReferenceDoes() throws {
        let reference = try decoder.decode(Fixtures.data("chelsea.png"), thumbnail: nil)
        for (name, expected) in [("chelsea.webp", 76.43), ("chelsea.gif", 76.14)] {
            let distorted = try decoder.decode(Fixtures.data(name), thumbnail: nil)
            let score = try #require(PerceivedDifference.ssimulacra2(reference, distorted))
            #expect(abs(score - expected) < 2, "\(name): \(score), the reference says \(expected)")
        }
    }

    /// Identical images score 100; a JPEG scores higher as its quality rises; sizes must match.
    @Test func ordersQualities() throws {
        let image = try decoder.decode(
            Fixtures.data("rocket.jpg"), thumbnail: .init(width: 256, height: 256, fit: .inside))
        #expect(PerceivedDifference.ssimulacra2(image, image) == 100)
        let scores = try [30, 60, 90].map { quality in
            let jpeg = try decoder.decode(VipsImageEncoder().encode(image, as: .jpeg, quality: quality), thumbnail: nil)
            return try #require(PerceivedDifference.ssimulacra2(image, jpeg))
        }
        #expect(scores[0] < scores[1] && scores[1] < scores[2] && scores[2] < 100, "\(scores)")
        let smaller = try decoder.decode(
            Fixtures.data("rocket.jpg"), thumbnail: .init(width: 100, height: 100, fit: .inside))
        #expect(PerceivedDifference.ssimulacra2(image, smaller) == nil)
    }

    /// Grey images are compared as grey, the same as their RGB copies; tiny ones at one scale.
    @Test func greyAndTinyImages() throws {
        let grey = try decoder.decode(Fixtures.data("camera-gray.jpg"), thumbnail: .init(width: 64, height: 64))
        let jpeg = try decoder.decode(VipsImageEncoder().encode(grey, as: .jpeg, quality: 40), thumbnail: nil)
        let score = try #require(PerceivedDifference.ssimulacra2(grey, jpeg))
        #expect(score < 100 && score > 0)
        let tiny = GeneratedImages.image(width: 3, height: 2, format: .rgb8) { x, y in
            [UInt8(x * 80), UInt8(y * 100), 7]
        }
        #expect(PerceivedDifference.ssimulacra2(tiny, tiny) == 100)
    }
}
