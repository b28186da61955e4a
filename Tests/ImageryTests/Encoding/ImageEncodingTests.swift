import Foundation
import Testing

@testable import Imagery

/// Encoding's values: the quality an encoder may choose itself, the options that are part of a
/// result's key, and what the protocol gives every encoder.
@Suite("Image encoding")
struct ImageEncodingTests {
    /// An encoder that writes the options it was given, to see what the protocol's defaults pass on.
    struct OptionsEcho: ImageEncoding {
        func encode(_ image: Image, as format: ImageFormat, options: EncodingOptions) throws -> Data {
            guard format != .svg else { throw ImageEncodingError.unsupportedFormat(format) }
            return Data("\(format.rawValue) \(options)".utf8)
        }
    }

    static let image = Image(width: 3, height: 2, pixelFormat: .rgba8, pixels: Data(count: 24), sourceFormat: .png)

    @Test(
        arguments: [
            (AutoQuality(), 80, 1, 70...80),
            (AutoQuality(maximum: 90), 80, 1, 80...90),
            (AutoQuality(minimum: 75), 80, 1, 75...80),
            (AutoQuality(minimum: 95), 80, 1, 80...80),  // a minimum above the top is the top
            (AutoQuality(minimum: 20, maximum: 40), 80, 1, 20...40),
            (AutoQuality(), 5, 1, 1...5),
            (AutoQuality(), 20, 30, 30...30),  // never below what means something for the format
            (AutoQuality(minimum: 0, maximum: 500), 80, 1, 1...100),  // clamped to 1...100 when made
        ] as [(AutoQuality, Int, Int, ClosedRange<Int>)])
    func theSearchRangeEndsAtTheQualityAskedFor(auto: AutoQuality, asked: Int, lowest: Int, range: ClosedRange<Int>) {
        #expect(auto.range(asked: asked, lowest: lowest) == range)
    }

    @Test func onlyASizeTargetIsMetWithoutMeasuringQuality() {
        #expect(AutoQuality().measuresPerceivedQuality)
        #expect(AutoQuality(target: .ssimulacra2(90)).measuresPerceivedQuality)
        #expect(!AutoQuality(target: .bytes(10_000)).measuresPerceivedQuality)
        #expect(AutoQuality.defaultTarget == .ssimulacra2(70) && AutoQuality.defaultRange == 10)
    }

    @Test(
        arguments: [
            (AutoQuality(), "auto:-:---:-:-"),
            (
                AutoQuality(target: .ssimulacra2(70), minimum: 60, maximum: 80, tolerance: 0.5, maximumPixels: 1000),
                "auto:s70.0:60-80:0.5:1000"
            ),
            (AutoQuality(target: .bytes(5000)), "auto:b5000:---:-:-"),
        ] as [(AutoQuality, String)])
    func autoQualityHasAKey(auto: AutoQuality, key: String) {
        #expect(auto.description == key)
    }

    @Test func encodingOptionsNameWhatIsSet() {
        #expect(EncodingOptions().description == "q0")
        #expect(
            EncodingOptions(
                quality: 80, lossless: true, progressive: true, maximumBytes: 1000,
                autoQuality: AutoQuality(maximum: 85)
            ).description
                == "q80+lossless+progressive+max:1000+auto:-:--85:-:-")
        let keys = [
            EncodingOptions(), EncodingOptions(quality: 80), EncodingOptions(lossless: true),
            EncodingOptions(progressive: true),
            EncodingOptions(maximumBytes: 1), EncodingOptions(autoQuality: AutoQuality()),
        ].map(\.description)
        #expect(Set(keys).count == keys.count)
    }

    @Test func theDefaultsPassTheQualityOnAndCountThePixels() throws {
        let encoder = OptionsEcho()
        #expect(try encoder.encode(Self.image, as: .webp, quality: 42) == Data("webp q42".utf8))
        #expect(try encoder.encode(Self.image, as: .png) == Data("png q0".utf8))
        let encoded = try encoder.encoded(Self.image, as: .jpeg, options: EncodingOptions(quality: 77))
        #expect(encoded.quality == 77 && encoded.data == Data("jpeg q77".utf8))
        #expect(try encoder.encoded(Self.image, as: .png, options: EncodingOptions()).quality == nil)
        #expect(encoder.estimatedEncodeMemory(Self.image, as: .avif, options: EncodingOptions()) == 24)
        #expect(throws: ImageEncodingError.unsupportedFormat(.svg)) { try encoder.encode(Self.image, as: .svg) }
    }

    @Test func encodingErrorsSayWhatFailed() {
        #expect(ImageEncodingError.unsupportedFormat(.jxl).description == "cannot encode jxl here")
        #expect(ImageEncodingError.failed("out of disk").description == "encoding failed: out of disk")
    }
}
