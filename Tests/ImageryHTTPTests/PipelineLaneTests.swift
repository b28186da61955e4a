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

    /// Stress: 200 tasks from many threads, their priorities flipped between the lanes and a third of
    /// them cancelled while they wait or run; every other one gets its image, no slot leaks, the
    /// lanes' bounds hold throughout (run under `--sanitize=thread` too: scripts/test-tsan).
    @Test func manyTasksChangingLanesAndCancellingConcurrently() async throws {
        try await withHarness(configure: {
            $0.maximumConcurrentDownloads = 3
            $0.maximumConcurrentPrefetches = 1
        }) { harness in
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
            try await waitUntil {
                harness.pipeline.runningDownloadCount == 0 && harness.pipeline.queuedDownloadCount == 0
            }
            #expect(harness.pipeline.runningDownloadCount == 0 && harness.pipeline.queuedDownloadCount == 0)
        }
    }
}
