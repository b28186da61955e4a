import Foundation
import Imagery
import ImageryTestSupport
import ImageryVips
import Testing

/// JPEG thumbnails through `CJPEG` (progressive scans the decode scale never reads are skipped)
/// must be exactly what libvips gives decoding every scan: the same pixels, for every JPEG of
/// the fixtures and the corpus, at every decode scale.
@Suite("JPEG scan skipping")
struct JPEGScanSkippingTests {
    static var sources: [URL] {
        var files = ["rocket.jpg", "rocket-portrait.jpg", "camera-gray.jpg"].map(Fixtures.url)
        if let corpus = Fixtures.corpus { files += Fixtures.files(in: corpus).filter { $0.pathExtension == "jpg" } }
        return files
    }

    static let thumbnails: [ImageRequest.Thumbnail] = [
        .init(width: 256, height: 16_384, fit: .inside), .init(width: 64, height: 64, fit: .cover),
        .init(width: 300, height: 200, fit: .contain), .init(width: 900, height: 16_384, fit: .inside),
    ]

    @Test(arguments: sources)
    func skippingScansGivesThePixelsOfAFullDecode(source: URL) async throws {
        let data = try Data(contentsOf: source)
        var full = VipsImageDecoder(rejectsCorruptData: true)
        full.skipsUnneededJPEGScans = false
        let (skipping, reference) = (VipsImageDecoder(rejectsCorruptData: true), full)
        try await runBlocking {
            for thumbnail in Self.thumbnails {
                let fast = try skipping.decodeKeepingBase(data, thumbnail: thumbnail)
                let slow = try reference.decodeKeepingBase(data, thumbnail: thumbnail)
                #expect(fast.base?.image == slow.base?.image, "\(source.lastPathComponent) \(thumbnail): bases differ")
                #expect(fast.image == slow.image, "\(source.lastPathComponent) \(thumbnail): thumbnails differ")
            }
        }
    }

    /// A progressive JPEG cut anywhere is an error in strict mode, even where the cut part
    /// holds only scans that would have been skipped.
    @Test(.enabled(if: Fixtures.corpus != nil))
    func aTruncatedProgressiveJPEGIsAnErrorInStrictMode() async throws {
        let corpus = try #require(Fixtures.corpus)
        let data = try Data(contentsOf: corpus.appendingPathComponent("plasma-Autumn-2560x1600.jpg"))
        let decoder = VipsImageDecoder(rejectsCorruptData: true)
        _ = try decoder.decode(data, thumbnail: .init(width: 256, height: 16_384, fit: .inside))
        try await runBlocking {
            for fraction in stride(from: 0.05, to: 1.0, by: 0.05) {
                let cut = Data(data.prefix(Int(Double(data.count) * fraction)))
                #expect(throws: ImageDecodingError.self, "cut at \(fraction)") {
                    try decoder.decode(cut, thumbnail: .init(width: 256, height: 16_384, fit: .inside))
                }
            }
        }
    }
}
