import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

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
                stride(from: channel, to: image.pixels.count, by: 3).reduce(0.0) {
                    $0 + Double(image.pixels[image.pixels.startIndex + $1])
                }
                    / Double(image.width * image.height)
            }
        }
        for (ours, theirs) in zip(means(image), means(reference)) { #expect(abs(ours - theirs) < 3, "\(name)") }
        // And close to the 8-bit RGB original the corpus made it from. The CMYK copy was made by
        // ImageMagick without a profile; libvips converts it back with its default CMYK profile, and
        // its own `vips colourspace` lands 15.1 levels from the original too (an inverted or
        // unconverted CMYK is over 100 off: 106.5 and 132.7 measured).
        let original = name.contains("cmyk") ? "mate-Dune.jpg" : "skimage-astronaut.png"
        let originalImage = try decoder.decode(
            Data(contentsOf: try #require(Fixtures.corpus).appendingPathComponent(original)), recipe: box)
        if (originalImage.width, originalImage.height) == (image.width, image.height) {
            let difference = GeneratedImages.meanDifference(image, originalImage)
            #expect(difference < 20, "\(name) is \(difference) levels from \(original)")
        } else {
            Issue.record(
                "\(original) is \(originalImage.width)x\(originalImage.height), \(name) \(image.width)x\(image.height)")
        }
    }
}
