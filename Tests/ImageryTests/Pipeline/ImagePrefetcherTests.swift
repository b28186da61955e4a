import Foundation
import Testing

@testable import Imagery

/// The prefetcher on a pipeline of fakes: into memory or onto disk, a few at a time, in order, in
/// the prefetch lane; duplicates cost nothing; stopping removes what waits and cancels what runs.
@Suite("ImagePrefetcher")
struct ImagePrefetcherTests {
    static func requests(_ names: [String]) -> [ImageRequest] {
        names.map { thumbnailRequest(testURL($0), 24, 24) }
    }

    static func serving(gates: [String: Gate] = [:]) -> MockDataLoader {
        MockDataLoader(fallback: { request in
            let name = request.url.lastPathComponent
            if name.hasPrefix("missing") { return .failure(DataLoadingError.badStatus(404)) }
            if name.hasPrefix("broken") { return .failure(DataLoadingError.badStatus(500)) }
            return MockDataLoader.Stub(
                data: TestImage.data(), headers: ["cache-control": "max-age=600"], gate: gates[name]
            )
        })
    }

    /// `.diskCache`: originals downloaded into the disk cache, none decoded nor kept in memory; a
    /// later request is a disk hit, and prefetching the same again downloads nothing.
    @Test func fillsTheDiskCacheWithoutDecodingAndALaterRequestIsADiskHit() async throws {
        let test = TestPipeline(loader: Self.serving(), disk: MockDataCache())
        let names = ["a.jpg", "b.jpg", "c.jpg", "d.jpg"]
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline, destination: .diskCache)
        prefetcher.startPrefetching(with: Self.requests(names))
        await prefetcher.waitUntilIdle()
        #expect(prefetcher.progress == .init(completed: 4, failed: 0, total: 4))
        #expect(test.decoder.decodeCount == 0)
        #expect(test.loader.loadCount == 4)
        #expect(test.disk?.keys.count == 4)
        let key = ImageRequest(url: testURL("a.jpg")).sourceKey.stringValue
        #expect(await test.pipeline.configuration.dataCache?.entry(for: key) == nil)
        // Again: fresh on disk, not downloaded.
        prefetcher.startPrefetching(with: Self.requests(names))
        await prefetcher.waitUntilIdle()
        #expect(prefetcher.progress.completed == 8)
        #expect(test.loader.loadCount == 4)
        #expect(test.recorder.hits(.diskData) == 4)
        // Shown later: from disk, one decode, no download.
        #expect(try await test.pipeline.image(for: Self.requests(["a.jpg"])[0]).width == 24)
        #expect(test.loader.loadCount == 4)
        #expect(test.decoder.decodeCount == 1)
    }

    /// `.diskCache` with a stale entry on disk revalidates it rather than downloading it whole.
    @Test func aStaleOriginalOnDiskIsRevalidated() async throws {
        let test = TestPipeline(disk: MockDataCache())
        test.loader.serveRevalidating(testURL("a.jpg"), headers: ["cache-control": "max-age=10", "etag": "\"v\""])
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline, destination: .diskCache)
        prefetcher.startPrefetching(with: Self.requests(["a.jpg"]))
        await prefetcher.waitUntilIdle()
        test.advance(seconds: 11)
        prefetcher.startPrefetching(with: Self.requests(["a.jpg"]))
        await prefetcher.waitUntilIdle()
        #expect(test.loader.started.all.last?.headers["If-None-Match"] == "\"v\"")
        #expect(test.recorder.fetches.map(\.notModified) == [false, true])
        #expect(prefetcher.progress == .init(completed: 2, failed: 0, total: 2))
    }

    /// `.diskCache` without a disk cache keeps the originals in memory instead.
    @Test func withoutADiskCacheOriginalsGoToMemory() async throws {
        let test = TestPipeline(loader: Self.serving())
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline, destination: .diskCache)
        prefetcher.startPrefetching(with: Self.requests(["a.jpg"]))
        await prefetcher.waitUntilIdle()
        #expect(test.decoder.decodeCount == 0)
        _ = try await test.pipeline.data(for: ImageRequest(url: testURL("a.jpg")))
        #expect(test.loader.loadCount == 1)
    }

    /// `.memoryCache`: decoded at the request's size; duplicates (queued, running or cached) cost nothing.
    @Test func decodesIntoMemoryOnceForDuplicates() async throws {
        let test = TestPipeline(loader: Self.serving())
        let requests = Self.requests(["a.jpg", "b.jpg"])
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline)
        prefetcher.startPrefetching(with: requests + requests)
        #expect(prefetcher.progress.total == 2)
        await prefetcher.waitUntilIdle()
        prefetcher.startPrefetching(with: requests)
        await prefetcher.waitUntilIdle()
        #expect(prefetcher.progress == .init(completed: 4, failed: 0, total: 4))
        #expect(test.loader.loadCount == 2)
        #expect(test.decoder.decodeCount == 2)
        #expect(requests.allSatisfy { test.cached($0)?.width == 24 })
    }

    /// Stopping removes what has not started (the origin never sees it) and cancels what has.
    @Test func stopRemovesWhatWaitsAndCancelsWhatRuns() async throws {
        let (first, late) = (Gate(), Gate())
        let test = TestPipeline(loader: Self.serving(gates: ["first.jpg": first, "late.jpg": late]))
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline, maximumConcurrentRequests: 1)
        let rest = Self.requests((0..<100).map { "n\($0).jpg" })
        prefetcher.startPrefetching(with: Self.requests(["first.jpg"]) + rest)
        try await test.loader.waitForLoads(1)
        #expect(prefetcher.queuedCount == 100 && prefetcher.runningCount == 1)
        prefetcher.stopPrefetching(with: Array(rest.dropFirst(2)))
        #expect(prefetcher.queuedCount == 2)
        #expect(prefetcher.progress.total == 3)
        first.open()
        await prefetcher.waitUntilIdle()
        #expect(test.loader.loadedNames == ["first.jpg", "n0.jpg", "n1.jpg"])
        #expect(prefetcher.progress == .init(completed: 3, failed: 0, total: 3))
        // Everything at once, one of them loading.
        prefetcher.startPrefetching(with: Self.requests(["late.jpg", "never.jpg"]))
        try await test.loader.waitForLoads(4)
        prefetcher.stopPrefetching()
        await prefetcher.waitUntilIdle()
        #expect(prefetcher.progress == .init(completed: 3, failed: 0, total: 3))
        try await test.loader.waitForCancellations(1)
        #expect(test.loader.loadCount == 4, "the queued one never started")
        #expect(prefetcher.queuedCount == 0 && prefetcher.runningCount == 0)
    }

    /// Stopping a running request whose download an urgent task shares cancels the prefetch alone.
    @Test func stoppingAPrefetchLeavesAnUrgentTaskOnTheSameDownload() async throws {
        let gate = Gate()
        let test = TestPipeline(loader: Self.serving(gates: ["a.jpg": gate]))
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline)
        let request = Self.requests(["a.jpg"])[0]
        prefetcher.startPrefetching(with: [request])
        try await test.loader.waitForLoads(1)
        let urgent = test.pipeline.imageTask(for: request)
        try await eventually("the task joined the prefetch") {
            test.pipeline.imageJobs.waiterCount(for: request.imageKey) == 2
        }
        prefetcher.stopPrefetching(with: [request])
        await prefetcher.waitUntilIdle()
        gate.open()
        #expect(try await urgent.image.width == 24)
        #expect(test.loader.loadCount == 1)
        #expect(test.loader.cancelledCount == 0)
        #expect(prefetcher.progress == .init(completed: 0, failed: 0, total: 0))
    }

    @Test func countsFailuresAndReportsEachEnd() async throws {
        let ends = EventLog<(String, Bool)>()
        let test = TestPipeline(loader: Self.serving())
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline) { request, result in
            guard case .url(let url) = request.source else { return }
            ends.append((url.lastPathComponent, (try? result.get()) != nil))
        }
        prefetcher.startPrefetching(with: Self.requests(["missing.jpg", "a.jpg", "broken.jpg"]))
        await prefetcher.waitUntilIdle()
        #expect(prefetcher.progress == .init(completed: 1, failed: 2, total: 3))
        #expect(prefetcher.progress.remaining == 0)
        let succeeded = Dictionary(uniqueKeysWithValues: ends.all)
        #expect(succeeded == ["missing.jpg": false, "a.jpg": true, "broken.jpg": false])
    }

    /// Requests run a few at a time, in the order they were given.
    @Test(arguments: [1, 2, 4])
    func runsAtMostItsLimitInOrder(limit: Int) async throws {
        let gate = Gate()
        let loader = MockDataLoader(fallback: { _ in MockDataLoader.Stub(data: TestImage.data(), gate: gate) })
        let test = TestPipeline(loader: loader, configure: { $0.maximumConcurrentPrefetches = 4 })
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline, maximumConcurrentRequests: limit)
        prefetcher.startPrefetching(with: Self.requests((0..<8).map { "\($0).jpg" }))
        try await loader.waitForLoads(limit)
        #expect(prefetcher.runningCount == limit)
        #expect(prefetcher.queuedCount == 8 - limit)
        #expect(prefetcher.progress.remaining == 8)
        gate.open()
        await prefetcher.waitUntilIdle()
        #expect(loader.peakInFlight == limit)
        if limit == 1 { #expect(loader.loadedNames == (0..<8).map { "\($0).jpg" }) }
        #expect(prefetcher.progress == .init(completed: 8, failed: 0, total: 8))
    }

    /// Prefetches run in the prefetch lane: they wait while urgent work runs.
    @Test func prefetchesWaitForUrgentWork() async throws {
        let gate = Gate()
        let test = TestPipeline(loader: Self.serving(gates: ["urgent.jpg": gate]))
        let urgent = test.pipeline.imageTask(for: ImageRequest(url: testURL("urgent.jpg")))
        try await test.loader.waitForLoads(1)
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline)
        prefetcher.startPrefetching(with: Self.requests(["a.jpg"]))
        try await eventually("the prefetch waits for a slot") { test.pipeline.queuedDownloadCount == 1 }
        #expect(test.pipeline.downloads.pendingPriorities == [.low])
        gate.open()
        _ = try await urgent.image
        await prefetcher.waitUntilIdle()
        #expect(test.loader.loadedNames == ["urgent.jpg", "a.jpg"])
    }

    /// A prefetcher at normal priority runs in the urgent lane (what the CLI does).
    @Test func aPrefetcherAtNormalPriorityRunsBesideUrgentWork() async throws {
        let gate = Gate()
        let test = TestPipeline(loader: Self.serving(gates: ["urgent.jpg": gate]))
        let urgent = test.pipeline.imageTask(for: ImageRequest(url: testURL("urgent.jpg")))
        try await test.loader.waitForLoads(1)
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline, priority: .normal)
        prefetcher.startPrefetching(with: Self.requests(["a.jpg"]))
        await prefetcher.waitUntilIdle()
        #expect(prefetcher.priority == .normal)
        #expect(test.loader.loadCount == 2)
        gate.open()
        _ = try await urgent.image
    }

    /// An image already in memory is counted as prefetched at once.
    @Test func anImageInMemoryIsCompletedWithoutALoad() async throws {
        let test = TestPipeline(loader: Self.serving())
        let request = Self.requests(["a.jpg"])[0]
        _ = try await test.pipeline.image(for: request)
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline)
        prefetcher.startPrefetching(with: [request])
        await prefetcher.waitUntilIdle()
        #expect(prefetcher.progress == .init(completed: 1, failed: 0, total: 1))
        #expect(test.loader.loadCount == 1)
    }

    @Test func waitUntilIdleReturnsAtOnceWhenNothingRuns() async {
        let prefetcher = ImagePrefetcher(pipeline: TestPipeline().pipeline)
        await prefetcher.waitUntilIdle()
        #expect(prefetcher.progress == .init())
        #expect(prefetcher.destination == .memoryCache)
        #expect(prefetcher.maximumConcurrentRequests == 2)
    }

    /// Letting go of a prefetcher cancels its loads.
    @Test func aPrefetcherLetGoCancelsItsLoads() async throws {
        let test = TestPipeline(loader: Self.serving(gates: ["a.jpg": Gate()]))
        do {
            let prefetcher = ImagePrefetcher(pipeline: test.pipeline)
            prefetcher.startPrefetching(with: Self.requests(["a.jpg"]))
            try await test.loader.waitForLoads(1)
        }
        try await test.loader.waitForCancellations(1)
        try await eventually("the job ended") { test.pipeline.activeJobCount == (0, 0) }
    }

    /// Stress: starts and stops from many tasks at once, duplicates among them; the counts agree at the end.
    @Test func concurrentStartsAndStopsKeepTheCountsRight() async throws {
        let test = TestPipeline(loader: Self.serving(), disk: MockDataCache())
        let prefetcher = ImagePrefetcher(pipeline: test.pipeline, destination: .diskCache, maximumConcurrentRequests: 3)
        let all = Self.requests((0..<120).map { "\($0 % 60).jpg" })
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
