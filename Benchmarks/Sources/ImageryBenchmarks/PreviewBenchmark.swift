import Foundation
import Imagery
import ImageryHTTP
import ImageryVips

/// Progressive previews (issue 43): what each preview's decode costs beside the final image's, for
/// the corpus's progressive JPEGs at 256 px (fit inside 256x256), on one thread; and, through a
/// throttled origin (`scripts/preview-benchmark` starts one at 1 MB/s), how soon the first preview
/// comes against the final image, with previews on and off.
enum PreviewBenchmark {
    static let box = ImageRequest.Thumbnail(width: 256, height: 256, fit: .inside)

    /// The corpus's progressive JPEGs, by its manifest.
    static func progressiveFiles(in corpus: URL) throws -> [URL] {
        let manifest = try String(contentsOf: corpus.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        return manifest.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count > 6, fields[1] == "jpeg", fields[6].contains("progressive") else { return nil }
            return corpus.appendingPathComponent(String(fields[0]))
        }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Every point of `data` where one more scan is complete, as the pipeline's reader finds them
    /// (fed the body 4 KiB at a time, as a download hands it over).
    static func scanPoints(_ data: Data, decoder: VipsImageDecoder) -> [CompletedScans] {
        var counter = decoder.makeScanCounter()
        var points: [CompletedScans] = []
        var end = 0
        while end < data.count {
            end = min(data.count, end + 4096)
            guard let scans = counter.count(data.prefix(end)) else { break }
            if scans.count > (points.last?.count ?? 0) { points.append(scans) }
        }
        return points
    }

    static func decodeCosts(corpus: URL, rounds: Int = 3) throws {
        let decoder = VipsImageDecoder()
        let files = try progressiveFiles(in: corpus)
        print("\n### Decode time per preview and per final image, progressive JPEGs at 256 px (1 thread, median of \(rounds))\n")
        print("| file | size | bytes | scans previewed | of them new pixels | preview: mean | preview: slowest | final image | previews together / final |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        var totals = (previews: 0.0, count: 0, finals: 0.0, distinct: 0)
        for file in files {
            let data = try Data(contentsOf: file)
            let points = scanPoints(data, decoder: decoder)
            let final = try medianSeconds(rounds: rounds) { _ = try decoder.decode(data, thumbnail: box) }
            let previews = try points.map { point in
                try medianSeconds(rounds: rounds) {
                    _ = try decoder.decodePreview(data.prefix(point.byteCount), recipe: ImageRecipe(resize: box))
                }
            }
            // Previews with pixels of their own (at 1/8, the luma AC scans change nothing: the pipeline reports none of those).
            var distinct = 0
            var last: Data?
            for point in points {
                let pixels = try decoder.decodePreview(data.prefix(point.byteCount), recipe: ImageRecipe(resize: box)).pixels
                if pixels != last { distinct += 1 }
                last = pixels
            }
            let header = try decoder.inspect(data)
            let sum = previews.reduce(0, +)
            totals = (totals.previews + sum, totals.count + previews.count, totals.finals + final, totals.distinct + distinct)
            print(String(
                format: "| %@ | %dx%d | %d | %d | %d | %.1f ms | %.1f ms | %.1f ms | %.2f |",
                file.lastPathComponent, header.width, header.height, data.count, points.count, distinct,
                 1000 * sum / Double(max(1, previews.count)), 1000 * (previews.max() ?? 0), 1000 * final,
                 sum / final))
        }
        print(String(
            format: "| all %d | | | %d | %d | %.1f ms | | %.1f ms | %.2f |", files.count, totals.count, totals.distinct,
            1000 * totals.previews / Double(max(1, totals.count)), 1000 * totals.finals / Double(files.count),
            totals.previews / totals.finals))
    }

    /// One load through `pipeline`: when the first preview came, how many came, when the image came
    /// (seconds from the start).
    static func load(_ url: URL, pipeline: ImagePipeline) async throws -> (first: Double?, previews: Int, final: Double)
    {
        var request = ImageRequest(url: url, thumbnail: box)
        request.options.insert(.progressivePreviews)
        let start = ContinuousClock.now
        let task = pipeline.imageTask(for: request)
        var first: Double?
        var previews = 0
        for await event in task.events {
            switch event {
            case .progress: break
            case .preview:
                previews += 1
                if first == nil { first = seconds(ContinuousClock.now - start) }
            case .completed(let result):
                _ = try result.get()
            }
        }
        return (first, previews, seconds(ContinuousClock.now - start))
    }

    static func throttled(corpus: URL, origin: URL) async throws {
        let files = try progressiveFiles(in: corpus)
        let loader = HTTPDataLoader()
        defer { Task { try? await loader.shutdown() } }
        let decodes = PreviewDecodes()
        func pipeline(previews: Bool) -> ImagePipeline {
            var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
            configuration.imageCache = nil
            configuration.dataCache = nil
            configuration.progressivePreviews = previews ? .init() : nil
            configuration.observer = decodes
            return ImagePipeline(configuration: configuration)
        }
        print("\n### Time to the first preview and to the image, 256 px, through \(origin) (one load at a time)\n")
        print("| file | bytes | transfer at the rate | first preview | previews shown (decoded) | image, previews on | image, previews off |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        var firsts: [Double] = []
        var ratios: [Double] = []
        for file in files {
            let url = origin.appendingPathComponent(file.lastPathComponent)
            let bytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            decodes.reset()
            let on = try await load(url, pipeline: pipeline(previews: true))
            let decoded = decodes.count
            let off = try await load(url, pipeline: pipeline(previews: false))
            if let first = on.first {
                firsts.append(first / on.final)
            }
            ratios.append(on.final / off.final)
            print(String(
                format: "| %@ | %d | %.2f s | %@ | %d (%d) | %.2f s | %.2f s |", file.lastPathComponent, bytes,
                Double(bytes) / 1_000_000, on.first.map { String(format: "%.2f s", $0) } ?? "none", on.previews,
                decoded, on.final, off.final))
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        print(String(
            format: "\nmedian first preview at %.0f%% of the time to the image; image with previews on / off: median %.3f",
            100 * median(firsts), median(ratios)))
    }
}

/// Counts the previews a pipeline decoded (``ImagePipelineEvent/previewDecoded(duration:width:height:)``).
private final class PreviewDecodes: ImagePipelineObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var decoded = 0

    func pipeline(_ pipeline: ImagePipeline, didRecord event: ImagePipelineEvent) {
        if case .previewDecoded = event { lock.withLock { decoded += 1 } }
    }

    var count: Int { lock.withLock { decoded } }
    func reset() { lock.withLock { decoded = 0 } }
}
