import Foundation
import Testing

@testable import Imagery

/// Cancelling one waiter leaves the others' work alone; cancelling the last one cancels the work,
/// aborts its download and frees its slot; work not started when cancelled never starts.
@Suite("Pipeline cancellation")
struct PipelineCancellationTests {
    @Test func cancellingOneOfTwoWaitersLeavesTheOthersResultIntact() async throws {
        let gate = Gate()
        let test = TestPipeline()
        let request = ImageRequest(url: test.serve("a.jpg", gate: gate))
        let first = test.pipeline.imageTask(for: request)
        let second = test.pipeline.imageTask(for: request)
        try await test.loader.waitForLoads(1)
        try await eventually("both tasks joined") { test.pipeline.imageJobs.waiterCount(for: request.imageKey) == 2 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.image }
        gate.open()
        let image = try await second.image
        #expect((image.width, image.height) == (64, 48))
        #expect(test.loader.loadCount == 1)
        #expect(test.loader.cancelledCount == 0)
        #expect(first.wasCancelled)
        #expect(second.loadedImage == image)
    }

    @Test func cancellingEveryWaiterAbortsTheDownload() async throws {
        let test = TestPipeline()
        let request = ImageRequest(url: test.serve("a.jpg", gate: Gate()))  // never opened
        let tasks = (0..<3).map { _ in test.pipeline.imageTask(for: request) }
        try await test.loader.waitForLoads(1)
        try await eventually("every task joined") { test.pipeline.imageJobs.waiterCount(for: request.imageKey) == 3 }
        for task in tasks { task.cancel() }
        for task in tasks {
            await #expect(throws: CancellationError.self) { try await task.image }
        }
        try await test.loader.waitForCancellations(1)
        #expect(test.loader.answeredCount == 0)
        #expect(test.decoder.decodeCount == 0)
        #expect(test.recorder.fetchFailures == 0, "a cancelled fetch is no failure")
        try await eventually("the download's slot is free") { test.pipeline.runningDownloadCount == 0 }
        #expect(test.pipeline.activeJobCount == (0, 0))
    }

    @Test func cancellingTheCallingTaskCancelsImageForRequest() async throws {
        let test = TestPipeline()
        let url = test.serve("a.jpg", gate: Gate())
        let task = Task { try await test.pipeline.image(for: ImageRequest(url: url)) }
        try await test.loader.waitForLoads(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        try await test.loader.waitForCancellations(1)
    }

    @Test func cancellingTheCallingTaskCancelsDataForRequest() async throws {
        let test = TestPipeline()
        let url = test.serve("a.jpg", gate: Gate())
        let task = Task { try await test.pipeline.data(for: ImageRequest(url: url)) }
        try await test.loader.waitForLoads(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        try await test.loader.waitForCancellations(1)
        #expect(test.pipeline.activeJobCount.downloads == 0)
    }

    /// Awaiting ``ImageTask/image`` from a task that is cancelled cancels the image task.
    @Test func cancellingTheTaskThatAwaitsAnImageTaskCancelsIt() async throws {
        let test = TestPipeline()
        let imageTask = test.pipeline.imageTask(for: ImageRequest(url: test.serve("a.jpg", gate: Gate())))
        let awaiting = Task { try await imageTask.image }
        try await test.loader.waitForLoads(1)
        awaiting.cancel()
        await #expect(throws: CancellationError.self) { try await awaiting.value }
        try await test.loader.waitForCancellations(1)
        await #expect(throws: CancellationError.self) { try await imageTask.image }
        #expect(imageTask.wasCancelled)
    }

    /// A download cancelled while it waits for a slot never reaches the origin and takes no slot.
    @Test func aTaskCancelledWhileWaitingForASlotNeverLoads() async throws {
        let gate = Gate()
        let test = TestPipeline(configure: { $0.maximumConcurrentDownloads = 1 })
        let blocker = test.pipeline.imageTask(for: ImageRequest(url: test.serve("blocker.jpg", gate: gate)))
        try await test.loader.waitForLoads(1)
        let waiting = test.pipeline.imageTask(for: ImageRequest(url: test.serve("waiting.jpg")))
        try await eventually("the second download waits for the slot") { test.pipeline.queuedDownloadCount == 1 }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.image }
        try await eventually("it left the line") { test.pipeline.queuedDownloadCount == 0 }
        gate.open()
        _ = try await blocker.image
        // The slot goes to the next download, not to the cancelled one.
        _ = try await test.pipeline.image(for: ImageRequest(url: test.serve("next.jpg")))
        #expect(test.loader.loadedURLs == [testURL("blocker.jpg"), testURL("next.jpg")])
    }

    /// After every waiter left, the job is forgotten: the next request starts a new download, which completes.
    @Test func aRequestAfterACancelledDownloadStartsAfresh() async throws {
        let held = Gate()
        let calls = Counter()
        let loader = MockDataLoader()
        let url = testURL("a.jpg")
        loader.respond(to: url) { _ in
            calls.increment()
            return MockDataLoader.Stub(data: TestImage.data(tag: 2), gate: calls.value == 1 ? held : nil)
        }
        let test = TestPipeline(loader: loader)
        let first = test.pipeline.imageTask(for: ImageRequest(url: url))
        try await loader.waitForLoads(1)
        first.cancel()
        try await loader.waitForCancellations(1)
        let image = try await test.pipeline.image(for: ImageRequest(url: url))
        #expect(image.testTag == 2)
        #expect(loader.loadCount == 2)
        #expect(test.decoder.decodeCount == 1)
    }

    /// A decode cancelled before a decode thread took it is skipped: the thread goes on to the next.
    @Test func aDecodeCancelledBeforeItStartsIsSkipped() async throws {
        let decodeGate = BlockingGate()
        let test = TestPipeline(configure: { $0.maximumConcurrentDecodes = 1 })
        test.decoder.hold(at: decodeGate)
        let first = test.pipeline.imageTask(for: ImageRequest(url: test.serve("first.jpg", tag: 1)))
        try await decodeGate.arrived.waitForCount(1, "the first decode held")
        let second = test.pipeline.imageTask(for: ImageRequest(url: test.serve("second.jpg", tag: 2)))
        try await test.loader.waitForLoads(2)
        try await test.loader.waitForEnds(2)  // its bytes are in: its decode is next
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.image }
        let third = test.pipeline.imageTask(for: ImageRequest(url: test.serve("third.jpg", tag: 3)))
        try await test.loader.waitForEnds(3)
        decodeGate.open()
        #expect(try await first.image.testTag == 1)
        #expect(try await third.image.testTag == 3)
        #expect(test.decoder.calls.all.map(\.tag) == [1, 3], "the one decode thread never ran the cancelled decode")
    }

    /// A waiter cancelled while the decode it waits for runs is answered at once; the other waiter
    /// gets the image when the decode ends.
    @Test func cancellingOneWaiterDuringItsDecodeLeavesTheOther() async throws {
        let decodeGate = BlockingGate()
        let test = TestPipeline()
        test.decoder.hold(at: decodeGate)
        let request = thumbnailRequest(test.serve("a.jpg"), 10, 10)
        let first = test.pipeline.imageTask(for: request)
        let second = test.pipeline.imageTask(for: request)
        try await decodeGate.arrived.waitForCount(1, "the decode held")
        try await eventually("both tasks joined") { test.pipeline.imageJobs.waiterCount(for: request.imageKey) == 2 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.image }
        decodeGate.open()
        #expect(try await second.image.width == 10)
        #expect(test.decoder.decodeCount == 1)
    }

    /// Cancelling a task that has finished changes nothing.
    @Test func cancellingAFinishedTaskKeepsItsImage() async throws {
        let test = TestPipeline()
        let task = test.pipeline.imageTask(for: ImageRequest(url: test.serve("a.jpg")))
        let image = try await task.image
        task.cancel()
        #expect(try await task.image == image)
        #expect(task.loadedImage == image)
    }

    /// Stress: many tasks over a few sources, a deterministic quarter of them cancelled and a fifth
    /// raised while the downloads are held; every task ends with its image or `CancellationError`,
    /// and every job and slot is given back.
    @Test func manyTasksWithCancellationsSettleCleanly() async throws {
        let gate = Gate()
        let loader = MockDataLoader(fallback: { _ in
            MockDataLoader.Stub(data: TestImage.data(width: 200, height: 200), gate: gate)
        })
        let test = TestPipeline(loader: loader, configure: { $0.maximumConcurrentDownloads = 3 })
        let tasks = (0..<200).map { index in
            let url = testURL("image\(index % 6).jpg")
            let size = [32, 64, 128][index % 3]
            return (index, size, test.pipeline.imageTask(for: thumbnailRequest(url, size, size)))
        }
        for (index, _, task) in tasks {
            if index % 4 == 0 { task.cancel() }
            if index % 5 == 0 { task.priority = .high }
        }
        try await loader.waitForLoads(3)  // the three slots taken, the rest waiting
        gate.open()
        for (index, size, task) in tasks {
            do {
                let image = try await task.image
                #expect(image.width == size)
                #expect(index % 4 != 0, "cancelled while its download was held")
            } catch is CancellationError {
                #expect(index % 4 == 0)
            }
        }
        try await eventually("every job ended") {
            test.pipeline.activeJobCount == (0, 0) && test.pipeline.runningDownloadCount == 0
        }
        #expect(test.pipeline.queuedDownloadCount == 0)
        #expect(loader.peakInFlight == 3)
        #expect(loader.loadCount == 6, "one download per source: none lost all its waiters")
        #expect(loader.cancelledCount == 0)
    }
}
