import Foundation
import Imagery
import ImageryServer
import ImageryTestSupport
import ImageryVips
import Testing

/// The default qualities are one perceived quality across formats (calibrated on the corpus by
/// butteraugli and SSIMULACRA2: `scripts/output-quality --formats`, BENCHMARKS.md, issue 28). This
/// fails when a default changes without the table, or when the encoders drift (a libwebp, libaom or
/// libjxl that no longer looks the same at that number).
@Suite("Format calibration")
struct FormatCalibrationTests {
    /// Each format's default: on the corpus, the quality whose mean score is JPEG 80's (butteraugli
    /// and SSIMULACRA2 each give one; the default lies between). WebP 81.6 and 79.7, AVIF 66.2 and
    /// 67.7, JPEG XL 80.0 and 83.5.
    static let table: [(format: ImageFormat, quality: Int)] = [(.jpeg, 80), (.webp, 81), (.avif, 67), (.jxl, 81)]

    @Test func theDefaultsAreTheTable() {
        #expect(
            ServerConfiguration().rendering.formatQualities
                == Dictionary(uniqueKeysWithValues: Self.table.map { ($0.format, $0.quality) }))
    }

    /// On the fixtures (photos, a grey image, at 256 px), each format at its default scores within 5 %
    /// of JPEG at its default by SSIMULACRA2, on average (when calibrated: WebP 1.016, AVIF 1.003).
    /// JPEG XL is not measured here: libvips' JPEG XL loader is blocked in this process (untrusted).
    @Test func eachDefaultLooksLikeJPEGs() throws {
        let decoder = VipsImageDecoder()
        let encoder = VipsImageEncoder()
        let images = try ["chelsea.png", "rocket.jpg", "camera-gray.jpg", "rocket-portrait.jpg"].map {
            try decoder.decode(Fixtures.data($0), thumbnail: .init(width: 256, height: 256, fit: .inside))
        }
        func meanScore(_ format: ImageFormat, _ quality: Int) throws -> Double {
            try images.map { image in
                let decoded = try decoder.decode(
                    try encoder.encode(image, as: format, quality: quality), thumbnail: nil)
                return try #require(PerceivedDifference.ssimulacra2(image, decoded))
            }.reduce(0, +) / Double(images.count)
        }
        let jpeg = try meanScore(.jpeg, 80)
        for (format, quality) in Self.table where format != .jpeg && format != .jxl {
            let relative = try meanScore(format, quality) / jpeg
            #expect(abs(relative - 1) <= 0.05, "\(format) at \(quality) scores \(relative) of JPEG 80's")
        }
    }
}
