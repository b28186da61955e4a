import Foundation
@testable import Imagery
import ImageryTestSupport
import Testing

@Suite("Pipeline priorities, progress and phases")
struct PipelineSchedulingTests {
    /// With one download slot held by a slow request, waiting requests start by priority.
    @Test func waitingDownloadsStartByPriority() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 1 }) { harness in
            // The blocker holds the only slot until the origin is released.
            let blocker = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("rocket.jpg?held=1")))
            try await waitUntil { harness.origin.requestCount == 1 }
            var tasks: [ImageTask] = []
            for (index, (name, priority)) in [("chelsea.png", ImageRequest.Priority.low), ("chelsea.gif", .normal), ("chelsea.webp", .veryHigh)].enumerated() {
                tasks.append(harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url(name), priority: priority)))
                try await waitUntil { harness.pipeline.queuedDownloadCount == index + 1 }
            }
            harness.origin.release()
            _ = try await blocker.image
            for task in tasks { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.webp", "/chelsea.gif", "/chelsea.png"])
        }
    }

    /// A waiting task whose priority is raised jumps the line; one lowered falls back.
    @Test func changingAPriorityWhileWaitingMovesTheTask() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 1 }) { harness in
            let blocker = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("rocket.jpg?held=1")))
            try await waitUntil { harness.origin.requestCount == 1 }
            let prefetch = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.png"), priority: .veryLow))
            let visible = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.gif"), priority: .normal))
            let demoted = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.webp"), priority: .high))
            try await waitUntil { harness.pipeline.queuedDownloadCount == 3 }
            prefetch.priority = .veryHigh  // the user scrolled to it
            demoted.priority = .veryLow  // no longer urgent
            harness.origin.release()
            for task in [blocker, prefetch, visible, demoted] { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.png", "/chelsea.gif", "/chelsea.webp"])
        }
    }

    /// A shared download runs at the highest priority of the tasks waiting on it.
    @Test func aSharedDownloadTakesTheHighestPriorityOfItsWaiters() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 1 }) { harness in
            let blocker = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("rocket.jpg?held=1")))
            try await waitUntil { harness.origin.requestCount == 1 }
            let normal = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.gif"), priority: .normal))
            let low = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.png"), priority: .low))
            try await waitUntil { harness.pipeline.queuedDownloadCount == 2 }
            // A second task for the low image, at very high priority, lifts the shared download.
            let urgent = harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("chelsea.png"), thumbnail: .init(width: 10, height: 10), priority: .veryHigh))
            // The new decode job joins the queued download and lifts it to the head of the queue.
            try await waitUntil("the shared download waits at very high priority") {
                harness.pipeline.activeJobCount.decodes == 4 && harness.pipeline.downloads.pendingPriorities == [.veryHigh, .normal]
            }
            harness.origin.release()
            for task in [blocker, normal, low, urgent] { _ = try await task.image }
            #expect(harness.origin.requests.map(\.path) == ["/rocket.jpg", "/chelsea.png", "/chelsea.gif"])
        }
    }

    @Test func neverRunsMoreDownloadsThanTheLimit() async throws {
        try await withHarness(configure: { $0.maximumConcurrentDownloads = 3 }) { harness in
            // Twelve distinct downloads (no coalescing), all held at the origin until released.
            let tasks = (0..<12).map { index in
                harness.pipeline.imageTask(for: ImageRequest(url: harness.origin.url("rocket.jpg?held=1&n=\(index)")))
            }
            try await waitUntil { harness.pipeline.queuedDownloadCount == 9 }
            try await waitUntil { harness.origin.requestCount == 3 }
            #expect(harness.origin.requestCount == 3)
            #expect(harness.origin.peakInFlight == 3)
            harness.origin.release()
            for task in tasks { _ = try await task.image }
            #expect(harness.origin.requestCount == 12)
            #expect(harness.origin.peakInFlight == 3)
        }
    }

    @Test func reportsProgressThenCompletionAsEventsAndPhases() async throws {
        try await withHarness { harness in
            // The origin sends 16 KB and holds the rest until the task has reported them.
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?held_at=16384&held=rest"), thumbnail: .init(width: 32, height: 32))
            let task = harness.pipeline.imageTask(for: request)
            let events = task.events  // from now on (the first 16 KB may be in already)
            let partial = try await waitFor("the first 16 KB reported") { () -> TransferProgress? in
                guard case .loading(let value) = task.phase, value.completed >= 16384 else { return nil }
                return value
            }
            #expect(partial == TransferProgress(completed: 16384, total: 112_525), "the rest is held at the origin")
            harness.origin.release("rest")
            var progress: [TransferProgress] = []
            var completions = 0
            for await event in events {
                switch event {
                case .progress(let value): progress.append(value)
                case .completed(let result):
                    completions += 1
                    #expect((try? result.get())?.width == 32)
                }
            }
            #expect(completions == 1)
            #expect(!progress.isEmpty, "the rest arrived after the stream was made")
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
