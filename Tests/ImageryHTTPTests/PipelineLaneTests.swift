import Foundation
import Imagery
import ImageryTestSupport
import Testing

/// The two lanes of downloads: urgent work in parallel, prefetch work one at a time and paused
/// while urgent work waits or runs; tasks move between lanes as their priority changes, without a
/// second download.
@Suite("Pipeline lanes: urgent and prefetch")
struct PipelineLaneTests {
    static func request(_ harness: PipelineHarness, _ path: String, _ priority: ImageRequest.Priority) -> ImageRequest {
        ImageRequest(url: harness.origin.url(path), thumbnail: .init(width: 16, height: 16), priority: priority)
    }

    @Test func urgentWorkGoesFirstAndPausesPrefetchingUntilItEnds() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 2 }) { harness in
            let urgent = harness.pipeline.imageTask(for: Self.request(harness, "rocket.jpg?held=u1", .normal))
            try await waitUntil { harness.origin.requestCount == 1 }
            // One after the other: each task reaches the queue from a task of its own.
            var prefetches: [ImageTask] = []
            for (index, path) in ["chelsea.png?held=p1", "chelsea.gif"].enumerated() {
                prefetches.append(harness.pipeline.imageTask(for: Self.request(harness, path, .low)))
                try await waitUntil { harness.pipeline.queuedDownloadCount == index + 1 }
            }
            // An urgent slot is free, and yet no prefetch starts while urgent work runs (the queue
            // decides when a download is queued: both wait)...
            #expect(harness.pipeline.runningDownloadsByLane == (urgent: 1, prefetch: 0))
            #expect(harness.pipeline.queuedDownloadCount == 2)
            #expect(harness.origin.requestCount == 1)
            // ...while new urgent work starts at once.
            let second = harness.pipeline.imageTask(for: Self.request(harness, "chelsea.webp", .high))
            _ = try await second.image
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.webp"])
            harness.origin.release("u1")
            _ = try await urgent.image
            // Prefetching resumes: one at a time (p1 is held: chelsea.gif waits for it, queued).
            try await waitUntil("the first prefetch reaches the origin") { harness.origin.requestCount >= 3 }
            #expect(harness.pipeline.runningDownloadsByLane == (urgent: 0, prefetch: 1))
            #expect(harness.pipeline.queuedDownloadCount == 1)
            #expect(harness.origin.requestCount == 3, "\(harness.origin.requests.map { $0.path + "?" + ($0.query["held"] ?? "") })")
            harness.origin.release("p1")
            for task in prefetches { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.webp", "/chelsea.png", "/chelsea.gif"])
        }
    }

    /// The image scrolled on screen: its waiting prefetch starts at once in the urgent lane, and a
    /// running one counts as urgent from then on; one download each.
    @Test func raisingAPrefetchMovesItToTheUrgentLaneWithOneDownload() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 2 }) { harness in
            let prefetch = harness.pipeline.imageTask(for: Self.request(harness, "chelsea.png?held=p", .low))
            try await waitUntil { harness.pipeline.runningDownloadsByLane.prefetch == 1 && harness.origin.requestCount == 1 }
            let urgent = harness.pipeline.imageTask(for: Self.request(harness, "rocket.jpg?held=u", .normal))
            let waiting = harness.pipeline.imageTask(for: Self.request(harness, "chelsea.gif", .veryLow))
            try await waitUntil { harness.origin.requestCount == 2 && harness.pipeline.queuedDownloadCount == 1 }
            waiting.priority = .high
            _ = try await waiting.image  // started beside the held urgent download, not after it
            prefetch.priority = .veryHigh
            try await waitUntil { harness.pipeline.runningDownloadsByLane == (urgent: 2, prefetch: 0) }
            harness.origin.release()
            for task in [prefetch, urgent] { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/chelsea.png", "/rocket.jpg", "/chelsea.gif"])
        }
    }

    /// The cell scrolled away: its download moves to the prefetch lane instead of being cancelled,
    /// frees its urgent slot, and completes later from the same download.
    @Test func loweringAnUrgentTaskMovesItToThePrefetchLaneAndItCompletesFromTheSameDownload() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 1 }) { harness in
            let scrolledAway = harness.pipeline.imageTask(for: Self.request(harness, "rocket.jpg?held=away", .normal))
            try await waitUntil { harness.pipeline.runningDownloadsByLane == (urgent: 1, prefetch: 0) }
            let waitingAway = harness.pipeline.imageTask(for: Self.request(harness, "chelsea.png", .normal))
            try await waitUntil { harness.pipeline.queuedDownloadCount == 1 }
            waitingAway.priority = .low
            scrolledAway.priority = .low
            try await waitUntil { harness.pipeline.runningDownloadsByLane == (urgent: 0, prefetch: 1) }
            // The urgent slot is free again: what is on screen now loads at once.
            let onScreen = harness.pipeline.imageTask(for: Self.request(harness, "chelsea.webp", .normal))
            _ = try await onScreen.image
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.webp"])
            harness.origin.release("away")
            for task in [scrolledAway, waitingAway] { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.webp", "/chelsea.png"])
            #expect(harness.origin.requestCount(path: "/rocket.jpg") == 1)
        }
    }

    /// Stress: 200 tasks from many threads, their priorities flipped between the lanes and a third of
    /// them cancelled while they wait or run; every other one gets its image, no slot leaks, the
    /// lanes' bounds hold throughout (run under `--sanitize=thread` too: scripts/test-tsan).
    @Test func manyTasksChangingLanesAndCancellingConcurrently() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 3; $0.maximumConcurrentPrefetches = 1 }) { harness in
            let names = ["rocket.jpg", "chelsea.png", "chelsea.gif", "chelsea.webp"]
            let bounded = Flag()
            // Samples the lanes while the tasks run (a sampler: the bound must hold at every sample).
            let watcher = Task {
                while !Task.isCancelled {
                    let lanes = harness.pipeline.runningDownloadsByLane
                    if lanes.urgent + lanes.prefetch > 4 || lanes.urgent < 0 || lanes.prefetch < 0 { bounded.set() }
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let request = ImageRequest(
                            url: harness.origin.url("\(names[index % 4])?n=\(index % 50)&chunk=32768&chunk_delay_ms=1"),
                            thumbnail: .init(width: 8 + index % 3, height: 8), priority: index % 2 == 0 ? .low : .normal
                        )
                        let task = harness.pipeline.imageTask(for: request)
                        for flip in 0..<(index % 5) {
                            // Interleavings vary with the scheduler; what is checked holds for every one.
                            for _ in 0..<(index % 7) { await Task.yield() }
                            task.priority = flip % 2 == 0 ? .high : .veryLow
                        }
                        if index % 3 == 0 {
                            task.cancel()
                            _ = try? await task.image  // cancelled, or done before the cancel came
                            return true
                        }
                        return try await task.image.width > 0
                    }
                }
                for try await ok in group { #expect(ok) }
            }
            watcher.cancel()
            #expect(!bounded.isSet, "more downloads ran than the two lanes allow")
            try await waitUntil { harness.pipeline.runningDownloadCount == 0 && harness.pipeline.queuedDownloadCount == 0 }
            #expect(harness.pipeline.runningDownloadCount == 0 && harness.pipeline.queuedDownloadCount == 0)
        }
    }
}
