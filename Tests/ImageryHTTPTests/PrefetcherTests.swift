import Foundation
import Imagery
import ImageryDiskCache
import ImageryTestSupport
import Testing

@Suite("ImagePrefetcher")
struct PrefetcherTests {
    static func requests(_ harness: PipelineHarness, _ names: [String]) -> [ImageRequest] {
        names.map { ImageRequest(url: harness.origin.url($0), thumbnail: .init(width: 24, height: 24)) }
    }

    /// `.diskCache`: originals downloaded into the disk cache, none decoded; a later urgent
    /// request is a disk hit, and prefetching the same again costs nothing.
    @Test func fillsTheDiskCacheWithoutDecodingAndALaterRequestIsADiskHit() async throws {
        try await withTemporaryDirectory { directory in
            let disk = try DiskCache(directory: directory)
            try await withHarness(configure: { $0.diskCache = disk }) { harness in
                let names = ["rocket.jpg", "chelsea.png", "chelsea.gif", "chelsea.webp"]
                let prefetcher = ImagePrefetcher(pipeline: harness.pipeline, destination: .diskCache)
                prefetcher.startPrefetching(with: Self.requests(harness, names))
                await prefetcher.waitUntilIdle()
                #expect(prefetcher.progress == .init(completed: 4, failed: 0, total: 4))
                #expect(harness.decoder.count == 0)
                #expect(harness.origin.requestCount == 4)
                await disk.flush()
                #expect(disk.count == 4)
                // Again: fresh on disk, neither read nor downloaded.
                prefetcher.startPrefetching(with: Self.requests(harness, names))
                await prefetcher.waitUntilIdle()
                #expect(prefetcher.progress.completed == 8)
                #expect(harness.origin.requestCount == 4)
                // Shown later: from disk, one decode, no origin request.
                let image = try await harness.pipeline.image(for: Self.requests(harness, ["rocket.jpg"])[0])
                #expect(image.width == 24)
                #expect(harness.origin.requestCount == 4)
                #expect(harness.decoder.count == 1)
            }
        }
    }

}
