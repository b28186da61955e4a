import Foundation
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryTestSupport
import ImageryVips
import Testing

/// Progressive previews end to end: a real origin on 127.0.0.1 that sends a progressive JPEG one scan
/// at a time (each part held until the test lets it go: a throttled origin whose pace is the test's
/// events, not a clock), the HTTP loader, libvips and `CJPEG`.
@Suite("Progressive previews over HTTP")
struct ProgressivePreviewTests {
    /// Where each scan but the last of `jpeg` is complete: two bytes into the next scan's SOS marker
    /// (entropy-coded data never holds 0xFF 0xDA), the tables before it sent.
    static func scanCuts(_ jpeg: Data) -> [Int] {
        let bytes = [UInt8](jpeg)
        let starts = bytes.indices.dropLast().filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }
        return starts.dropFirst().map { $0 + 2 }
    }

    /// The mean difference, in levels, between two images of one size and format.
    static func meanDifference(_ a: Image, _ b: Image) -> Double {
        precondition(a.pixels.count == b.pixels.count)
        let total = zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        return Double(total) / Double(a.pixels.count)
    }

    /// Runs `body` with a harness whose pipeline makes previews (none closer together than `time`
    /// allows: it stands still unless moved), with a disk cache that stores thumbnails.
    static func withPreviews(time: ManualTime, _ body: (PipelineHarness) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let disk = try openDiskCache(directory)
            try await withHarness(
                configure: { configuration in
                    configuration.progressivePreviews = .init(minimumInterval: .milliseconds(100))
                    configuration.time = time.source
                    configuration.diskCache = disk
                    configuration.encoder = VipsImageEncoder()
                }, body)
        }
    }

    @Test func aThrottledProgressiveJPEGShowsItsScansInMoreDetailEachBeforeTheImage() async throws {
        let jpeg = try Fixtures.data("rocket-progressive.jpg")
        let cuts = Self.scanCuts(jpeg)
        #expect(cuts.count == 9, "libjpeg-turbo's progression: 10 scans")
        let time = ManualTime()
        try await Self.withPreviews(time: time) { harness in
            let held = cuts.map(String.init).joined(separator: ",")
            var request = ImageRequest(
                url: harness.origin.url("rocket-progressive.jpg?held=scans&held_at=\(held)"),
                thumbnail: .init(width: 320, height: 320, fit: .inside))
            request.options.insert(.progressivePreviews)
            let task = harness.pipeline.imageTask(for: request)
            let events = Recorded<ImageTask.Event>()
            let reader = Task { for await event in task.events { events.append(event) } }
            var previews: [Image] = []
            for _ in cuts {
                // One more scan has come: its preview, then the next part (an interval later).
                try await waitUntil("a preview of \(previews.count + 1) scans") {
                    events.all.filter(\.isPreview).count > previews.count
                }
                previews = events.all.compactMap(\.preview)
                time.advance(by: .seconds(1))
                harness.origin.release("scans")
            }
            let image = try await task.image
            await reader.value
            let all = events.all
            #expect(all.last.map { if case .completed = $0 { true } else { false } } == true)
            #expect(all.filter(\.isPreview).count == cuts.count, "one preview per scan but the last, none after")
            #expect(previews.allSatisfy { ($0.width, $0.height) == (image.width, image.height) })
            #expect(harness.decoder.previewCount == cuts.count && harness.decoder.count == 1)

            let differences = previews.map { Self.meanDifference($0, image) }
            // Mean differences from the image, in levels: 4.5, 3.4, 3.1, 2.5, 2.1, 1.9, 1.7, 1.4, 0.7.
            #expect(differences.count >= 2)
            #expect(
                zip(differences, differences.dropFirst()).allSatisfy { $1 < $0 },
                "each scan adds detail: \(differences)")
            #expect(differences.last! > 0, "the last preview still lacks its final scan")

            // Nothing but the image is cached: in memory, and on disk (the original and the thumbnail).
            #expect(harness.pipeline.cachedImage(for: request)?.pixels == image.pixels)
            await harness.pipeline.waitForStores()
            let disk = try #require(harness.pipeline.configuration.diskCache as? DiskCache)
            await disk.flush()
            #expect(disk.count == 2)
            var again = request
            again.options = [.disableMemoryCacheReads, .returnCacheDataDontLoad]
            let stored = try await harness.pipeline.image(for: again)
            #expect(Self.meanDifference(stored, image) < 2, "the stored thumbnail is the image (JPEG at 90)")
        }
    }

    @Test func aBaselineJPEGShowsNoPreview() async throws {
        let time = ManualTime()
        try await Self.withPreviews(time: time) { harness in
            var request = ImageRequest(
                url: harness.origin.url("rocket.jpg?held=parts&held_at=20000,60000,100000"),
                thumbnail: .init(width: 320, height: 320, fit: .inside))
            request.options.insert(.progressivePreviews)
            let task = harness.pipeline.imageTask(for: request)
            let events = Recorded<ImageTask.Event>()
            let reader = Task { for await event in task.events { events.append(event) } }
            for part in 1...3 {
                try await waitUntil("part \(part) of the body") { harness.origin.heldCount >= part }
                time.advance(by: .seconds(1))
                harness.origin.release("parts")
            }
            _ = try await task.image
            await reader.value
            #expect(events.all.filter(\.isPreview).isEmpty)
            #expect(harness.decoder.previewCount == 0 && harness.decoder.count == 1)
        }
    }
}

extension ImageTask.Event {
    fileprivate var isPreview: Bool { preview != nil }
    fileprivate var preview: Image? { if case .preview(let image) = self { image } else { nil } }
}
