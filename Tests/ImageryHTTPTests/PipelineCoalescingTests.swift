import Foundation
import Imagery
import ImageryTestSupport
import Testing

@Suite("Pipeline coalescing and cancellation")
struct PipelineCoalescingTests {
    @Test func fiftyConcurrentRequestsForOneURLMakeOneHTTPRequestAndOneDecode() async throws {
        try await withHarness { harness in
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?delay_ms=100"), thumbnail: .init(width: 64, height: 64))
            let images = try await withThrowingTaskGroup(of: Image.self) { group in
                for _ in 0..<50 { group.addTask { try await harness.pipeline.image(for: request) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(images.count == 50)
            #expect(Set(images.map { "\($0.width)x\($0.height)" }) == ["64x64"])
            #expect(harness.origin.requestCount == 1)
            #expect(harness.decoder.count == 1)
        }
    }

    @Test func twoThumbnailSizesOfOneURLShareOneDownloadAndDecodeTwice() async throws {
        try await withHarness { harness in
            let url = harness.origin.url("chelsea.png?delay_ms=100")
            async let small = harness.pipeline.image(for: ImageRequest(url: url, thumbnail: .init(width: 48, height: 48)))
            async let large = harness.pipeline.image(for: ImageRequest(url: url, thumbnail: .init(width: 200, height: 200)))
            let (a, b) = try await (small, large)
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
            // 112 KB in 8 KB chunks every 20 ms: about 300 ms on the wire.
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?chunk=8192&chunk_delay_ms=20"))
            let first = harness.pipeline.imageTask(for: request)
            let second = harness.pipeline.imageTask(for: request)
            try await waitUntil { harness.origin.requestCount == 1 }
            first.cancel()
            await #expect(throws: CancellationError.self) { try await first.image }
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
            // 112 KB in 1 KB chunks every 200 ms: over twenty seconds on the wire, so the
            // cancellation arrives first even on a loaded machine (or under TSan; the full suite on
            // two cores once took more than the five seconds this had).
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?chunk=1024&chunk_delay_ms=200"))
            let tasks = (0..<3).map { _ in harness.pipeline.imageTask(for: request) }
            try await waitUntil { harness.origin.requestCount == 1 }
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
            let request = ImageRequest(url: harness.origin.url("rocket.jpg?chunk=1024&chunk_delay_ms=50"))
            let task = Task { try await harness.pipeline.image(for: request) }
            try await waitUntil { harness.origin.requestCount == 1 }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            let aborted = try await waitUntil { harness.origin.abortedCount == 1 }
            #expect(aborted)
        }
    }

    @Test func aCustomDataSourceIsCalledOnceForConcurrentRequestsWithItsId() async throws {
        try await withHarness { harness in
            let calls = Counter()
            let bytes = try Fixtures.data("chelsea.webp")
            let makeRequest: @Sendable (Int) -> ImageRequest = { size in
                ImageRequest(id: "cat", thumbnail: .init(width: size, height: size)) {
                    calls.increment()
                    try await Task.sleep(for: .milliseconds(50))
                    return bytes
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask { _ = try await harness.pipeline.image(for: makeRequest(index.isMultiple(of: 2) ? 32 : 64)) }
                }
                try await group.waitForAll()
            }
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
