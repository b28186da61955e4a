import Foundation
import Imagery
import ImageryTestSupport
import Synchronization
import Testing

@Suite("Pipeline priorities, progress and phases")
struct PipelineSchedulingTests {
    /// With one download slot held by a slow request, waiting requests start by priority.
    @Test func waitingDownloadsStartByPriority() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 1 }) { harness in
            let blocker = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("rocket.jpg?delay_ms=300")))
            try await waitUntil { harness.origin.requestCount == 1 }
            var tasks: [ImageTask] = []
            for (name, priority) in [("chelsea.png", ImageRequest.Priority.low), ("chelsea.gif", .normal), ("chelsea.webp", .veryHigh)] {
                tasks.append(harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url(name), priority: priority)))
                try await Task.sleep(for: .milliseconds(20))
            }
            _ = try await blocker.image
            for task in tasks { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.webp", "/chelsea.gif", "/chelsea.png"])
        }
    }

    /// A waiting task whose priority is raised jumps the line; one lowered falls back.
    @Test func changingAPriorityWhileWaitingMovesTheTask() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 1 }) { harness in
            let blocker = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("rocket.jpg?delay_ms=300")))
            try await waitUntil { harness.origin.requestCount == 1 }
            let prefetch = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.png"), priority: .veryLow))
            let visible = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.gif"), priority: .normal))
            let demoted = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.webp"), priority: .high))
            try await Task.sleep(for: .milliseconds(50))
            prefetch.priority = .veryHigh  // the user scrolled to it
            demoted.priority = .veryLow  // no longer urgent
            for task in [blocker, prefetch, visible, demoted] { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.png", "/chelsea.gif", "/chelsea.webp"])
        }
    }

    /// A shared download runs at the highest priority of the tasks waiting on it.
    @Test func aSharedDownloadTakesTheHighestPriorityOfItsWaiters() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 1 }) { harness in
            let blocker = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("rocket.jpg?delay_ms=300")))
            try await waitUntil { harness.origin.requestCount == 1 }
            let normal = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.gif"), priority: .normal))
            let low = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.png"), priority: .low))
            try await Task.sleep(for: .milliseconds(20))
            // A second task for the low image, at very high priority, lifts the shared download.
            let urgent = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.png"), thumbnail: .init(width: 10, height: 10), priority: .veryHigh))
            for task in [blocker, normal, low, urgent] { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.png", "/chelsea.gif"])
        }
    }

    @Test func neverRunsMoreDownloadsThanTheLimit() async throws {
        let inFlight = Mutex((now: 0, peak: 0))
        let origin = try await TestOrigin.start { request in
            inFlight.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
            return TestOrigin.Response(body: (try? Fixtures.data("rocket.jpg")) ?? Data(), delay: .milliseconds(50))
        }
        try await withHarness(origin: origin, configure: { $0.maximumConcurrentDownloads = 3 }) { harness in
            // The origin counts a request in flight until the next one arrives after it finished:
            // instead, measure from the client side with the queue's own limit visible as concurrency.
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<12 {
                    group.addTask { _ = try await harness.pipeline.data(for: ImageRequest(url: harness.origin.url("image-\(index).jpg"))) }
                }
                try await group.waitForAll()
            }
            // 12 downloads of 50 ms each, 3 at a time: at least 4 rounds.
            #expect(ContinuousClock.now - started >= .milliseconds(200))
            #expect(harness.origin.requestCount == 12)
        }
    }

    @Test func reportsProgressThenCompletionAsEventsAndPhases() async throws {
        try await withHarness { harness in
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?chunk=16384&chunk_delay_ms=10"), thumbnail: .init(width: 32, height: 32))
            let task = harness.pipeline.imageTask(for: request)
            var progress: [TransferProgress] = []
            var completions = 0
            for await event in task.events {
                switch event {
                case .progress(let value): progress.append(value)
                case .completed(let result):
                    completions += 1
                    #expect((try? result.get())?.width == 32)
                }
            }
            #expect(completions == 1)
            #expect(progress.count >= 5)
            #expect(progress.map(\.completed) == progress.map(\.completed).sorted())
            #expect(progress.last?.completed == 112_525)
            #expect(progress.last?.total == 112_525)
            #expect(progress.last?.fraction == 1)
            guard case .success(let image) = task.phase else {
                Issue.record("phase must be success")
                return
            }
            #expect(image.width == 32)
            // A stream made after the end yields only the completion.
            var late: [ImageTask.Event] = []
            for await event in task.events { late.append(event) }
            #expect(late.count == 1)
        }
    }
}
