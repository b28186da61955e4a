import Foundation
@testable import Imagery
import ImageryTestSupport
import Testing

/// Coalescing end to end (a real origin, the HTTP loader, libvips). The origin holds each download
/// (`held=NAME`) until every task the test makes has joined it (the pipeline's jobs count their
/// waiters), so what is shared never depends on how fast the tasks reached the pipeline.
@Suite("Pipeline coalescing and cancellation")
struct PipelineCoalescingTests {
    @Test func fiftyConcurrentRequestsForOneURLMakeOneHTTPRequestAndOneDecode() async throws {
        try await withHarness { harness in
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?held=fifty"), thumbnail: .init(width: 64, height: 64))
            let tasks = (0..<50).map { _ in harness.pipeline.imageTask(for: request) }
            try await waitUntil("50 tasks wait on one decode") { harness.pipeline.imageJobs.waiterCount(for: request.imageKey) == 50 }
            harness.origin.release("fifty")
            var images: [Image] = []
            for task in tasks { images.append(try await task.image) }
            #expect(Set(images.map { "\($0.width)x\($0.height)" }) == ["64x64"])
            #expect(harness.origin.requestCount == 1)
            #expect(harness.decoder.count == 1)
        }
    }

    @Test func twoThumbnailSizesOfOneURLShareOneDownloadAndDecodeTwice() async throws {
        try await withHarness { harness in
            let url = harness.origin.url("chelsea.png?held=both")
            let small = harness.pipeline.imageTask(for: ImageRequest(url: url, thumbnail: .init(width: 48, height: 48)))
            let large = harness.pipeline.imageTask(for: ImageRequest(url: url, thumbnail: .init(width: 200, height: 200)))
            try await waitUntil("both decodes wait on one download") {
                harness.pipeline.dataJobs.waiterCount(for: ImageRequest(url: url).sourceKey) == 2
            }
            harness.origin.release("both")
            let (a, b) = (try await small.image, try await large.image)
            #expect((a.width, b.width) == (48, 200))
            #expect(harness.origin.requestCount == 1)
            #expect(harness.decoder.count == 2)
        }
    }

    @Test func aNewThumbnailOfACachedOriginalNeedsNoDownload() async throws {
        try await withHarness { harness in
            let url = harness.origin.url("rocket.jpg")
            let request = ImageRequest(url: url, thumbnail: .init(width: 100, height: 100))
            _ = try await harness.pipeline.image(for: request)
            #expect(harness.pipeline.cachedImage(for: request)?.width == 100)
            #expect(harness.pipeline.cachedImage(for: ImageRequest(url: url, thumbnail: .init(width: 50, height: 50))) == nil)
            _ = try await harness.pipeline.image(for: ImageRequest(url: url, thumbnail: .init(width: 50, height: 50)))
            _ = try await harness.pipeline.image(for: request)  // memory hit: no decode
            #expect(harness.origin.requestCount == 1)
            #expect(harness.decoder.count == 2)
        }
    }

    @Test func cancellingOneOfTwoWaitersLeavesTheOthersResultIntact() async throws {
        try await withHarness { harness in
            // The origin sends the head and 16 KB, then holds the rest until the first task is cancelled.
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?held_at=16384&held=rest"))
            let first = harness.pipeline.imageTask(for: request)
            let second = harness.pipeline.imageTask(for: request)
            try await waitUntil("both tasks wait on one download") {
                harness.pipeline.imageJobs.waiterCount(for: request.imageKey) == 2 && harness.origin.heldCount == 1
            }
            first.cancel()
            await #expect(throws: CancellationError.self) { try await first.image }
            harness.origin.release("rest")
            let image = try await second.image
            #expect((image.width, image.height) == (640, 427))
            #expect(harness.origin.requestCount == 1)
            #expect(harness.origin.abortedCount == 0)
            if case .failure(let error) = first.phase { #expect(error is CancellationError) } else { Issue.record("first must fail") }
            if case .success = second.phase {} else { Issue.record("second must succeed") }
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

    @Test func cancellingTheCallingTaskCancelsImageForRequest() async throws {
        try await withHarness { harness in
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?held_at=16384&held=never"))
            let task = Task { try await harness.pipeline.image(for: request) }
            try await waitUntil("the download has begun") { harness.origin.heldCount == 1 }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            let aborted = try await waitUntil { harness.origin.abortedCount == 1 }
            #expect(aborted)
        }
    }

    @Test func aCustomDataSourceIsCalledOnceForConcurrentRequestsWithItsId() async throws {
        try await withHarness { harness in
            let calls = Counter()
            let released = Flag()
            let bytes = try Fixtures.data("chelsea.webp")
            let makeRequest: @Sendable (Int) -> ImageRequest = { size in
                ImageRequest(id: "cat", thumbnail: .init(width: size, height: size)) {
                    calls.increment()
                    try await waitUntil("the test lets the source answer") { released.isSet }
                    return bytes
                }
            }
            // The source answers once all 20 requests wait: 10 on each size's decode, both decodes on the source.
            let tasks = (0..<20).map { index in harness.pipeline.imageTask(for: makeRequest(index.isMultiple(of: 2) ? 32 : 64)) }
            try await waitUntil("ten requests wait on each size, both sizes on the source") {
                [32, 64].allSatisfy { harness.pipeline.imageJobs.waiterCount(for: makeRequest($0).imageKey) == 10 }
                    && harness.pipeline.dataJobs.waiterCount(for: makeRequest(32).sourceKey) == 2
            }
            released.set()
            for task in tasks { _ = try await task.image }
            #expect(calls.value == 1)
            #expect(harness.decoder.count == 2)
            #expect(harness.pipeline.cachedImage(for: makeRequest(32))?.width == 32)
            #expect(harness.pipeline.cachedImage(for: makeRequest(64))?.width == 64)
            #expect(harness.pipeline.cachedImage(for: makeRequest(16)) == nil)
            let other = ImageRequest(id: "dog", thumbnail: .init(width: 32, height: 32)) { bytes }
            #expect(harness.pipeline.cachedImage(for: other) == nil)
        }
    }

    @Test func stressManyRequestsWithRandomCancellationsSettleCleanly() async throws {
        try await withHarness { harness in
            let names = ["rocket.jpg", "rocket-portrait.jpg", "chelsea.png", "chelsea.gif", "chelsea.webp", "camera-gray.jpg"]
            let outcomes = Counter()
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    let name = names[index % names.count]
                    let size = [32, 64, 128][index % 3]
                    let request = ImageRequest(url: harness.origin.url("\(name)?chunk=16384&chunk_delay_ms=2"), thumbnail: .init(width: size, height: size))
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
