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

    /// `.memoryCache`: decoded at the request's size; duplicates (queued, running or cached) cost nothing.
    @Test func decodesIntoMemoryOnceForDuplicates() async throws {
        try await withHarness { harness in
            let requests = Self.requests(harness, ["rocket.jpg", "chelsea.png"])
            let prefetcher = ImagePrefetcher(pipeline: harness.pipeline)
            prefetcher.startPrefetching(with: requests + requests)
            #expect(prefetcher.progress.total == 2)
            await prefetcher.waitUntilIdle()
            prefetcher.startPrefetching(with: requests)
            await prefetcher.waitUntilIdle()
            #expect(prefetcher.progress == .init(completed: 4, failed: 0, total: 4))
            #expect(harness.origin.requestCount == 2)
            #expect(harness.decoder.count == 2)
            #expect(requests.allSatisfy { harness.pipeline.cachedImage(for: $0)?.width == 24 })
        }
    }

    /// Stopping removes what has not started (the origin never sees it) and cancels what has.
    @Test func stopCancelsWhatHasNotStarted() async throws {
        try await withHarness { harness in
            let prefetcher = ImagePrefetcher(pipeline: harness.pipeline, maximumConcurrentRequests: 1)
            let first = Self.requests(harness, ["rocket.jpg?held=first"])
            let rest = Self.requests(harness, (0..<100).map { "chelsea.png?n=\($0)" })
            prefetcher.startPrefetching(with: first + rest)
            try await waitUntil { harness.origin.requestCount == 1 }
            #expect(prefetcher.queuedCount == 100 && prefetcher.runningCount == 1)
            prefetcher.stopPrefetching(with: Array(rest.dropFirst(2)))
            #expect(prefetcher.queuedCount == 2)
            #expect(prefetcher.progress.total == 3)
            harness.origin.release("first")
            await prefetcher.waitUntilIdle()
            #expect(harness.origin.requests.map { $0.query["n"] } == [nil, "0", "1"])
            #expect(prefetcher.progress == .init(completed: 3, failed: 0, total: 3))
            // Everything at once, one of them loading.
            prefetcher.startPrefetching(with: Self.requests(harness, ["chelsea.gif?held=late", "chelsea.webp"]))
            try await waitUntil { harness.origin.requestCount == 4 }
            prefetcher.stopPrefetching()
            await prefetcher.waitUntilIdle()
            #expect(prefetcher.progress == .init(completed: 3, failed: 0, total: 3))
            try await waitUntil { harness.origin.abortedCount == 1 }
            #expect(harness.origin.requestCount == 4, "the queued one never started")
        }
    }

    @Test func countsFailures() async throws {
        try await withHarness { harness in
            let prefetcher = ImagePrefetcher(pipeline: harness.pipeline)
            prefetcher.startPrefetching(with: Self.requests(harness, ["missing.jpg", "rocket.jpg", "chelsea.png?status=500"]))
            await prefetcher.waitUntilIdle()
            #expect(prefetcher.progress == .init(completed: 1, failed: 2, total: 3))
        }
    }

    /// Stress: starts and stops from many tasks at once, duplicates among them; the counts agree at the end.
    @Test func concurrentStartsAndStopsKeepTheCountsRight() async throws {
        try await withHarness { harness in
            let prefetcher = ImagePrefetcher(pipeline: harness.pipeline, destination: .diskCache, maximumConcurrentRequests: 3)
            let all = Self.requests(harness, (0..<120).map { "chelsea.webp?n=\($0 % 60)" })
            await withTaskGroup(of: Void.self) { group in
                for slice in 0..<12 {
                    group.addTask {
                        let mine = Array(all[slice * 10..<slice * 10 + 10])
                        prefetcher.startPrefetching(with: mine)
                        if slice % 3 == 0 { prefetcher.stopPrefetching(with: mine) }
                    }
                }
            }
            await prefetcher.waitUntilIdle()
            let progress = prefetcher.progress
            #expect(progress.remaining == 0 && progress.failed == 0, "\(progress)")
            #expect(progress.completed == progress.total)
            #expect(progress.total <= 60)
            #expect(prefetcher.queuedCount == 0 && prefetcher.runningCount == 0)
        }
    }
}
