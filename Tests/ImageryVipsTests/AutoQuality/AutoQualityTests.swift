import Foundation
import Imagery
import ImageryTestSupport
import Testing

@testable import ImageryVips

/// Qualities chosen per image (`AutoQuality`, `QualitySearch`): within their bounds, meeting their
/// target, the same bytes every time.
@Suite("Autoquality")
struct AutoQualityTests {
    let encoder = VipsImageEncoder()
    let decoder = VipsImageDecoder()

    func thumbnails() throws -> [(String, Image)] {
        try ["chelsea.png", "rocket.jpg", "camera-gray.jpg", "rocket-portrait.jpg"].map { name in
            (name, try decoder.decode(Fixtures.data(name), thumbnail: .init(width: 256, height: 256, fit: .inside)))
        }
    }

    /// The score of `data` against `image` by the whole metric (the search measures with its fast mode).
    func score(_ data: Data, against image: Image) throws -> Double {
        try #require(PerceivedDifference.ssimulacra2(image, try decoder.decode(data, thumbnail: nil)))
    }

    /// Over 70–80 (the default bounds) the quality chosen meets the target (or is 80 when none does),
    /// and is within one of the lowest that meets it, found by encoding every quality.
    @Test(arguments: [60.0, 70.0, 80.0])
    func choosesTheLowestQualityThatMeetsTheTarget(target: Double) throws {
        for (name, image) in try thumbnails() {
            let options = EncodingOptions(
                quality: 80, autoQuality: AutoQuality(target: .ssimulacra2(target), tolerance: 0))
            let chosen = try encoder.encoded(image, as: .jpeg, options: options)
            let quality = try #require(chosen.quality)
            #expect((70...80).contains(quality), "\(name): \(quality)")
            let scores = try (70...80).map { try score(encoder.encode(image, as: .jpeg, quality: $0), against: image) }
            let lowest = (70...80).first { scores[$0 - 70] >= target } ?? 80
            #expect(
                abs(quality - lowest) <= 1,
                "\(name) at \(target): chose \(quality), the lowest is \(lowest); scores \(scores)")
            if quality < 80 {
                #expect(scores[quality - 70] >= target - 0.1, "\(name): \(scores[quality - 70]) at \(quality)")
            }
            #expect(
                chosen.data == (try encoder.encode(image, as: .jpeg, quality: quality)),
                "\(name): not the bytes of quality \(quality)")
        }
    }

    /// Bounds hold whatever the target: one no quality meets gives the maximum, one every quality
    /// meets the minimum; the request's quality is the maximum when the search names none.
    @Test func staysWithinItsBounds() throws {
        let image = try thumbnails()[0].1
        func quality(_ auto: AutoQuality, asked: Int = 80) throws -> Int? {
            try encoder.encoded(image, as: .jpeg, options: EncodingOptions(quality: asked, autoQuality: auto)).quality
        }
        #expect(try quality(AutoQuality(target: .ssimulacra2(99), minimum: 40, maximum: 85)) == 85)
        #expect(try quality(AutoQuality(target: .ssimulacra2(1), minimum: 40, maximum: 85)) == 40)
        #expect(try quality(AutoQuality(target: .ssimulacra2(99)), asked: 90) == 90)
        #expect(try quality(AutoQuality(target: .ssimulacra2(1)), asked: 90) == 80)  // 10 below the maximum by default
        // A range wider than 10: more probes, still the bounds.
        for target in [40.0, 65.0, 85.0] {
            let chosen = try #require(try quality(AutoQuality(target: .ssimulacra2(target), minimum: 20, maximum: 95)))
            #expect((20...95).contains(chosen))
            if chosen < 95 {
                #expect(try score(encoder.encode(image, as: .jpeg, quality: chosen), against: image) >= target - 0.1)
            }
        }
    }

    /// The same image gives the same bytes and quality every time (a stored response's ETag is stable).
    @Test func isDeterministic() throws {
        for (name, image) in try thumbnails() {
            let options = EncodingOptions(autoQuality: AutoQuality())
            let first = try encoder.encoded(image, as: .jpeg, options: options)
            let again = try encoder.encoded(image, as: .jpeg, options: options)
            #expect(first.data == again.data && first.quality == again.quality, "\(name)")
        }
    }

    /// A size target: the highest quality whose output fits, else the smallest output (imgproxy's `size` method).
    @Test func sizeTarget() throws {
        let image = try thumbnails()[1].1
        let full = try encoder.encode(image, as: .jpeg, quality: 80)
        let limit = full.count * 2 / 3
        let chosen = try encoder.encoded(
            image, as: .jpeg, options: EncodingOptions(autoQuality: AutoQuality(target: .bytes(limit), minimum: 10)))
        let quality = try #require(chosen.quality)
        #expect(chosen.data.count <= limit && (10..<80).contains(quality))
        #expect(try encoder.encode(image, as: .jpeg, quality: quality + 1).count > limit)
        let tiny = try encoder.encoded(
            image, as: .jpeg, options: EncodingOptions(autoQuality: AutoQuality(target: .bytes(10), minimum: 50)))
        #expect(tiny.quality == 50)
    }

    /// WebP and AVIF are searched the same way (decoded by libvips); JPEG XL and lossless formats are
    /// written as they are; images past the pixel limit get the maximum without a search.
    @Test func otherFormatsAndLimits() throws {
        let image = try thumbnails()[0].1
        for format in [ImageFormat.webp, .avif] {
            let chosen = try encoder.encoded(
                image, as: format,
                options: EncodingOptions(quality: 80, autoQuality: AutoQuality(target: .ssimulacra2(60), minimum: 30)))
            let quality = try #require(chosen.quality)
            #expect((30...80).contains(quality), "\(format): \(quality)")
            if quality < 80 { #expect(try score(chosen.data, against: image) >= 60 - 0.1, "\(format) at \(quality)") }
        }
        // JPEG XL cannot be read back here (libvips' loader is blocked): its maximum, no search.
        let jxl = try encoder.encoded(
            image, as: .jxl, options: EncodingOptions(quality: 82, autoQuality: AutoQuality(target: .ssimulacra2(1))))
        #expect(jxl.quality == 82)
        let png = try encoder.encoded(image, as: .png, options: EncodingOptions(autoQuality: AutoQuality()))
        #expect(png.quality == nil)
        let capped = try encoder.encoded(
            image, as: .jpeg,
            options: EncodingOptions(autoQuality: AutoQuality(target: .ssimulacra2(1), maximumPixels: 100)))
        #expect(capped.quality == 80)
    }

    /// Grey images and images with alpha (laid on black, as JPEG writes them) are measured too.
    @Test func greyAndAlpha() throws {
        let grey = try thumbnails()[2].1
        #expect(grey.pixelFormat.isGray)
        let chosen = try encoder.encoded(
            grey, as: .jpeg, options: EncodingOptions(autoQuality: AutoQuality(target: .ssimulacra2(50), minimum: 20)))
        #expect((20...80).contains(try #require(chosen.quality)))
        let alpha = GeneratedImages.image(width: 96, height: 64, format: .rgba8) { x, y in
            [UInt8(x * 2), UInt8(y * 3), 90, UInt8((x + y) % 256)]
        }
        let flattened = try encoder.encoded(
            alpha, as: .jpeg, options: EncodingOptions(autoQuality: AutoQuality(minimum: 30)))
        #expect((30...80).contains(try #require(flattened.quality)))
    }

    /// The search's fast metric agrees with the whole one (the maps it leaves out weigh under 0.01).
    @Test func fastMetricAgreesWithTheWholeOne() throws {
        for (name, image) in try thumbnails() {
            let measure = try PerceivedQuality(of: image, as: .jpeg)
            for quality in [30, 70, 90] {
                let jpeg = try encoder.encode(image, as: .jpeg, quality: quality)
                let fast = try measure.score(jpeg)
                let whole = try score(jpeg, against: image)
                #expect(abs(fast - whole) < 0.05, "\(name) q\(quality): \(fast) against \(whole)")
            }
        }
    }
}
