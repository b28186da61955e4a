import Foundation
import Testing

@testable import Imagery

/// The two lanes of downloads: urgent work (normal priority and above) in parallel, prefetch work
/// (low and below) a few at a time and paused while urgent work waits or runs; tasks move between
/// lanes as their priority changes, without a second download.
@Suite("Pipeline lanes: urgent and prefetch")
struct PipelineLaneTests {
    static func task(
        _ test: TestPipeline, _ name: String, _ priority: ImageRequest.Priority, gate: Gate? = nil
    ) -> ImageTask {
        test.pipeline.imageTask(for: thumbnailRequest(test.serve(name, gate: gate), 16, 16, priority: priority))
    }

    @Test func urgentWorkGoesFirstAndPausesPrefetchingUntilItEnds() async throws {
        let (urgentGate, prefetchGate) = (Gate(), Gate())
        let test = TestPipeline(configure: { $0.maximumConcurrentDownloads = 2 })
        let urgent = Self.task(test, "u1.jpg", .normal, gate: urgentGate)
        try await test.loader.waitForLoads(1)
        let prefetches = [Self.task(test, "p1.jpg", .low, gate: prefetchGate), Self.task(test, "p2.jpg", .veryLow)]
        // An urgent slot is free, and yet both prefetches wait while urgent work runs...
        try await eventually("both prefetches wait") { test.pipeline.queuedDownloadCount == 2 }
        #expect(test.loader.loadCount == 1)
        #expect(test.pipeline.runningDownloadsByLane == (urgent: 1, prefetch: 0))
        // ...while new urgent work starts at once, beside the held one.
        let second = Self.task(test, "u2.jpg", .high)
        _ = try await second.image
        #expect(test.loader.loadedNames == ["u1.jpg", "u2.jpg"])
        urgentGate.open()
        _ = try await urgent.image
        // Prefetching resumes, one at a time: p1 is held, so p2 waits for it.
        try await test.loader.waitForLoads(3)
        #expect(test.pipeline.runningDownloadsByLane == (urgent: 0, prefetch: 1))
        #expect(test.pipeline.queuedDownloadCount == 1)
        prefetchGate.open()
        for task in prefetches { _ = try await task.image }
        #expect(test.loader.loadedNames == ["u1.jpg", "u2.jpg", "p1.jpg", "p2.jpg"])
    }

    /// Urgent work that only waits for a slot (all slots busy) pauses prefetching too.
    @Test func aWaitingUrgentDownloadKeepsPrefetchesWaiting() async throws {
        let gate = Gate()
        let test = TestPipeline(configure: {
            $0.maximumConcurrentDownloads = 1
            $0.maximumConcurrentPrefetches = 2
        })
        let blocker = Self.task(test, "blocker.jpg", .normal, gate: gate)
        try await test.loader.waitForLoads(1)
        let waitingUrgent = Self.task(test, "urgent.jpg", .normal)
        try await eventually("the urgent download waits") { test.pipeline.queuedDownloadCount == 1 }
        let prefetch = Self.task(test, "prefetch.jpg", .low)
        try await eventually("the prefetch waits behind it") { test.pipeline.queuedDownloadCount == 2 }
        #expect(test.pipeline.downloads.pendingPriorities == [.normal, .low])
        gate.open()
        for task in [blocker, waitingUrgent, prefetch] { _ = try await task.image }
        #expect(test.loader.loadedNames == ["blocker.jpg", "urgent.jpg", "prefetch.jpg"])
    }

    /// Up to ``ImagePipeline/Configuration/maximumConcurrentPrefetches`` prefetches run at once while
    /// nothing is urgent.
    @Test(arguments: [1, 2, 3])
    func prefetchesRunUpToTheirOwnLimit(limit: Int) async throws {
        let gate = Gate()
        let loader = MockDataLoader(fallback: { _ in MockDataLoader.Stub(data: TestImage.data(), gate: gate) })
        let test = TestPipeline(loader: loader, configure: { $0.maximumConcurrentPrefetches = limit })
        let tasks = (0..<5).map {
            test.pipeline.imageTask(for: ImageRequest(url: testURL("\($0).jpg"), priority: .low))
        }
        try await loader.waitForLoads(limit)
        try await eventually("the rest wait") { test.pipeline.queuedDownloadCount == 5 - limit }
        #expect(test.pipeline.runningDownloadsByLane == (urgent: 0, prefetch: limit))
        gate.open()
        for task in tasks { _ = try await task.image }
        #expect(loader.peakInFlight == limit)
    }

    /// The image scrolled on screen: its waiting prefetch starts at once in the urgent lane, and a
    /// running one counts as urgent from then on; one download each.
    @Test func raisingAPrefetchMovesItToTheUrgentLaneWithOneDownload() async throws {
        let (prefetchGate, urgentGate) = (Gate(), Gate())
        let test = TestPipeline(configure: { $0.maximumConcurrentDownloads = 2 })
        let prefetch = Self.task(test, "p.jpg", .low, gate: prefetchGate)
        try await test.loader.waitForLoads(1)
        #expect(test.pipeline.runningDownloadsByLane == (urgent: 0, prefetch: 1))
        let urgent = Self.task(test, "u.jpg", .normal, gate: urgentGate)
        try await test.loader.waitForLoads(2)
        let waiting = Self.task(test, "w.jpg", .veryLow)
        try await eventually("the second prefetch waits") { test.pipeline.queuedDownloadCount == 1 }
        waiting.priority = .high
        _ = try await waiting.image  // started beside the held urgent download, not after it
        prefetch.priority = .veryHigh
        try await eventually("the running prefetch counts as urgent") {
            test.pipeline.runningDownloadsByLane == (urgent: 2, prefetch: 0)
        }
        prefetchGate.open()
        urgentGate.open()
        for task in [prefetch, urgent] { _ = try await task.image }
        #expect(test.loader.loadedNames == ["p.jpg", "u.jpg", "w.jpg"])
    }

    /// The cell scrolled away: its download moves to the prefetch lane instead of being cancelled,
    /// frees its urgent slot, and completes later from the same download.
    @Test func loweringAnUrgentTaskMovesItToThePrefetchLaneAndItCompletesFromTheSameDownload() async throws {
        let gate = Gate()
        let test = TestPipeline(configure: { $0.maximumConcurrentDownloads = 1 })
        let scrolledAway = Self.task(test, "away.jpg", .normal, gate: gate)
        try await test.loader.waitForLoads(1)
        let waitingAway = Self.task(test, "waiting.jpg", .normal)
        try await eventually("it waits") { test.pipeline.queuedDownloadCount == 1 }
        waitingAway.priority = .low
        scrolledAway.priority = .low
        try await eventually("the running download counts as prefetch") {
            test.pipeline.runningDownloadsByLane == (urgent: 0, prefetch: 1)
        }
        // The urgent slot is free again: what is on screen now loads at once.
        let onScreen = Self.task(test, "screen.jpg", .normal)
        _ = try await onScreen.image
        #expect(test.loader.loadedNames == ["away.jpg", "screen.jpg"])
        gate.open()
        for task in [scrolledAway, waitingAway] { _ = try await task.image }
        #expect(test.loader.loadedNames == ["away.jpg", "screen.jpg", "waiting.jpg"])
        #expect(test.loader.loadCount(of: testURL("away.jpg")) == 1)
    }

    /// Downloads lowered while they run cannot pile up: all lanes together stay within both limits.
    @Test func loweredRunningDownloadsStayWithinBothLimits() async throws {
        let gate = Gate()
        let loader = MockDataLoader(fallback: { _ in MockDataLoader.Stub(data: TestImage.data(), gate: gate) })
        let test = TestPipeline(
            loader: loader,
            configure: {
                $0.maximumConcurrentDownloads = 2
                $0.maximumConcurrentPrefetches = 1
            })
        var tasks: [ImageTask] = []
        for index in 0..<2 { tasks.append(test.pipeline.imageTask(for: ImageRequest(url: testURL("\(index).jpg")))) }
        try await loader.waitForLoads(2)
        for task in tasks { task.priority = .veryLow }  // both running, both now prefetch work
        try await eventually("both count as prefetch") {
            test.pipeline.runningDownloadsByLane == (urgent: 0, prefetch: 2)
        }
        // One urgent slot may start (2 + 1 in all), not two.
        for index in 2..<4 { tasks.append(test.pipeline.imageTask(for: ImageRequest(url: testURL("\(index).jpg")))) }
        try await loader.waitForLoads(3)
        try await eventually("the fourth waits") { test.pipeline.queuedDownloadCount == 1 }
        #expect(loader.inFlight == 3)
        gate.open()
        for task in tasks { _ = try await task.image }
        #expect(loader.peakInFlight == 3)
    }

    /// Stress: 200 tasks, their priorities flipped between the lanes and a third of them cancelled
    /// while the downloads are held; every other one gets its image, no slot leaks, and no more
    /// downloads ever run than the two lanes allow.
    @Test func manyTasksChangingLanesAndCancellingConcurrently() async throws {
        let gate = Gate()
        let loader = MockDataLoader(fallback: { request in
            let held = request.url.lastPathComponent.hasPrefix("0")
            return MockDataLoader.Stub(data: TestImage.data(), chunks: 3, gate: held ? gate : nil)
        })
        let test = TestPipeline(
            loader: loader,
            configure: {
                $0.maximumConcurrentDownloads = 3
                $0.maximumConcurrentPrefetches = 1
            })
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let request = ImageRequest(
                        url: testURL("\(index % 4)-\(index % 50).jpg"),
                        thumbnail: .init(width: 8 + index % 3, height: 8),
                        priority: index % 2 == 0 ? .low : .normal
                    )
                    let task = test.pipeline.imageTask(for: request)
                    for flip in 0..<(index % 5) {
                        await Task.yield()
                        task.priority = flip % 2 == 0 ? .high : .veryLow
                    }
                    if index % 3 == 0 {
                        task.cancel()
                        _ = try? await task.image  // cancelled, or done before the cancel came
                        return true
                    }
                    return try await task.image.width > 0
                }
                if index == 100 { gate.open() }
            }
            for try await ok in group { #expect(ok) }
        }
        #expect(loader.peakInFlight <= 4, "more downloads ran than the two lanes allow")
        try await eventually("every slot given back") {
            test.pipeline.runningDownloadCount == 0 && test.pipeline.queuedDownloadCount == 0
        }
        #expect(test.pipeline.activeJobCount == (0, 0))
        #expect(test.pipeline.runningDownloadsByLane == (urgent: 0, prefetch: 0))
    }
}
