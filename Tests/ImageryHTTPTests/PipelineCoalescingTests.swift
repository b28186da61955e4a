import Foundation
import ImageryTestSupport
import Testing

@testable import Imagery

/// Coalescing end to end (a real origin, the HTTP loader, libvips). The origin holds each download
/// (`held=NAME`) until every task the test makes has joined it (the pipeline's jobs count their
/// waiters), so what is shared never depends on how fast the tasks reached the pipeline.
@Suite("Pipeline coalescing and cancellation")
struct PipelineCoalescingTests {
    @Test func fiftyConcurrentRequestsForOneURLMakeOneHTTPRequestAndOneDecode() async throws {
        try await withHarness { harness in
            let request = ImageRequest(
                url: harness.origin.url("rocket.jpg?held=fifty"), thumbnail: .init(width: 64, height: 64))
            let tasks = (0..<50).map { _ in harness.pipeline.imageTask(for: request) }
            try await waitUntil("50 tasks wait on one decode") {
                harness.pipeline.imageJobs.waiterCount(for: request.imageKey) == 50
            }
            harness.origin.release("fifty")
            var images: [Image] = []
            for task in tasks { images.append(try await task.image) }
            #expect(Set(images.map { "\($0.width)x\($0.height)" }) == ["64x64"])
            #expect(harness.origin.requestCount == 1)
            #expect(harness.decoder.count == 1)
        }
    }

    @Test func cancellingEveryWaiterAbortsTheDownload() async throws {
        try await withHarness { harness in
            // The origin sends the head and 16 KB, then holds the rest (never released): the
            // cancellation comes first however slow the machine.
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?held_at=16384&held=never"))
            let tasks = (0..<3).map { _ in harness.pipeline.imageTask(for: request) }
            try await waitUntil("three tasks wait on one download") {
                harness.pipeline.imageJobs.waiterCount(for: request.imageKey) == 3 && harness.origin.heldCount == 1
            }
            for task in tasks { task.cancel() }
            for task in tasks {
                await #expect(throws: CancellationError.self) { try await task.image }
            }
            // The origin sees its connection closed before the body was sent.
            let aborted = try await waitUntil { harness.origin.abortedCount == 1 }
            #expect(aborted)
            #expect(harness.origin.completedCount == 0)
            #expect(harness.decoder.count == 0)
            let settled = try await waitUntil { harness.pipeline.activeJobCount == (0, 0) }
            #expect(settled)
        }
    }

    @Test func stressManyRequestsWithRandomCancellationsSettleCleanly() async throws {
        try await withHarness { harness in
            let names = [
                "rocket.jpg", "rocket-portrait.jpg", "chelsea.png", "chelsea.gif", "chelsea.webp", "camera-gray.jpg",
            ]
            let outcomes = Counter()
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    let name = names[index % names.count]
                    let size = [32, 64, 128][index % 3]
                    let request = ImageRequest(
                        url: harness.origin.url("\(name)?chunk=16384&chunk_delay_ms=2"),
                        thumbnail: .init(width: size, height: size))
                    let task = harness.pipeline.imageTask(for: request)
                    group.addTask {
                        if index % 4 == 0 { task.cancel() }
                        if index % 5 == 0 { task.priority = .high }
                        do {
                            let image = try await task.image
                            if image.width == size { outcomes.increment() }
                        } catch is CancellationError {
                            outcomes.increment()
                        } catch {
                            Issue.record("unexpected \(error)")
                        }
                    }
                }
            }
            #expect(outcomes.value == 200)
            let settled = try await waitUntil { harness.pipeline.activeJobCount == (0, 0) }
            #expect(settled)
        }
    }
}
