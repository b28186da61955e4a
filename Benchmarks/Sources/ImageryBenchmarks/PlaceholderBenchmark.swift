import Foundation
import Imagery
import ImageryVips

/// BlurHash and ThumbHash of every corpus image, against the cost of a 256-pixel thumbnail of the
/// same image (read, decode at size with shrink-on-load, encode JPEG Q 75) in the same run, on one thread.
///
/// The hashes are computed from a decode of at most 100 pixels a side (what `/info` and
/// `placeholder=` use); that decode is timed apart, as is the hashing alone.
enum PlaceholderBenchmark {
    static func run(corpus: URL, rounds: Int = 3) throws -> [Comparison] {
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path)
            .filter { ImageFormat(fileExtension: URL(fileURLWithPath: $0).pathExtension) != nil }
            .sorted().map { corpus.appendingPathComponent($0) }
        let decoder = VipsImageDecoder()
        let encoder = VipsImageEncoder(defaultQuality: 75)
        let sample = ImageRequest.Thumbnail(width: 100, height: 100, fit: .inside)
        let thumbnail = ImageRequest.Thumbnail(width: 256, height: 256, fit: .inside)
        let sources = try files.map { try Data(contentsOf: $0) }
        let samples = try sources.map { try decoder.decode($0, thumbnail: sample) }
        print("\(files.count) images from \(corpus.path)")

        let thumbnails = try medianSeconds(rounds: rounds) {
            for data in sources { _ = try encoder.encode(decoder.decode(data, thumbnail: thumbnail), as: .jpeg, quality: 75) }
        }
        let smallDecodes = try medianSeconds(rounds: rounds) {
            for data in sources { _ = try decoder.decode(data, thumbnail: sample) }
        }
        let blurHashes = try medianSeconds(rounds: rounds) {
            for image in samples { _ = BlurHash.encode(image, componentsX: 4, componentsY: 3) }
        }
        let thumbHashes = try medianSeconds(rounds: rounds) {
            for image in samples { _ = ThumbHash.encode(image) }
        }
        let count = Double(files.count)
        func milliseconds(_ seconds: Double) -> Double { 1000 * seconds / count }
        print(String(format: "per image: thumbnail %.2f ms, 100-px decode %.2f ms, BlurHash %.3f ms, ThumbHash %.3f ms",
                     milliseconds(thumbnails), milliseconds(smallDecodes), milliseconds(blurHashes), milliseconds(thumbHashes)))
        return [
            Comparison(name: "BlurHash (4x3) of the 100-px decode, per image", unit: "ms", ours: milliseconds(blurHashes),
                       peer: milliseconds(thumbnails), peerName: "256-px thumbnail (decode, encode)"),
            Comparison(name: "ThumbHash of the 100-px decode, per image", unit: "ms", ours: milliseconds(thumbHashes),
                       peer: milliseconds(thumbnails), peerName: "256-px thumbnail (decode, encode)"),
            Comparison(name: "100-px decode + both hashes, per image", unit: "ms",
                       ours: milliseconds(smallDecodes + blurHashes + thumbHashes),
                       peer: milliseconds(thumbnails), peerName: "256-px thumbnail (decode, encode)"),
        ]
    }
}
