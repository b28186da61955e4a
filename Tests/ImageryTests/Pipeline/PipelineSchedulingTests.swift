import Foundation
import Testing

@testable import Imagery

/// Downloads wait for a slot by priority and follow their tasks' priorities while they wait; a
/// shared download runs at the highest priority of its waiters; limits on downloads and decodes hold.
@Suite("Pipeline scheduling")
struct PipelineSchedulingTests {
    /// A pipeline with one download slot, held by a download of `blocker.jpg` until `gate` opens.
    static func blocked(by gate: Gate, limit: Int = 1) async throws -> (TestPipeline, ImageTask) {
        let test = TestPipeline(configure: { $0.maximumConcurrentDownloads = limit })
        let blocker = test.pipeline.imageTask(for: ImageRequest(url: test.serve("blocker.jpg", gate: gate)))
        try await test.loader.waitForLoads(1)
        return (test, blocker)
    }

    /// Starts a task for `name` and returns once its download waits in line (one after another, so
    /// that equal priorities keep their order).
    static func enqueue(
        _ test: TestPipeline, _ name: String, _ priority: ImageRequest.Priority
    ) async throws -> ImageTask {
        let waiting = test.pipeline.queuedDownloadCount
        let task = test.pipeline.imageTask(for: ImageRequest(url: test.serve(name), priority: priority))
        try await eventually("\(name) waits for a slot") { test.pipeline.queuedDownloadCount == waiting + 1 }
        return task
    }

    @Test func waitingDownloadsStartByPriority() async throws {
        let gate = Gate()
        let (test, blocker) = try await Self.blocked(by: gate)
        var tasks: [ImageTask] = []
        let waiting: [(String, ImageRequest.Priority)] = [
            ("low.jpg", .low), ("normal.jpg", .normal), ("veryHigh.jpg", .veryHigh),
        ]
        for (name, priority) in waiting {
            tasks.append(try await Self.enqueue(test, name, priority))
        }
        #expect(test.pipeline.downloads.pendingPriorities == [.veryHigh, .normal, .low])
        gate.open()
        _ = try await blocker.image
        for task in tasks { _ = try await task.image }
        #expect(test.loader.loadedNames == ["blocker.jpg", "veryHigh.jpg", "normal.jpg", "low.jpg"])
    }

    /// Equal priorities start in the order they came.
    @Test(arguments: [ImageRequest.Priority.veryLow, .normal, .veryHigh])
    func equalPrioritiesStartInArrivalOrder(priority: ImageRequest.Priority) async throws {
        let gate = Gate()
        let (test, blocker) = try await Self.blocked(by: gate)
        var tasks: [ImageTask] = []
        for index in 0..<5 { tasks.append(try await Self.enqueue(test, "\(index).jpg", priority)) }
        gate.open()
        _ = try await blocker.image
        for task in tasks { _ = try await task.image }
        #expect(Array(test.loader.loadedNames.dropFirst()) == (0..<5).map { "\($0).jpg" })
    }

    /// A waiting task whose priority is raised jumps the line; one lowered falls back.
    @Test func changingAPriorityWhileWaitingMovesTheTask() async throws {
        let gate = Gate()
        let (test, blocker) = try await Self.blocked(by: gate)
        let prefetch = try await Self.enqueue(test, "prefetch.jpg", .veryLow)
        let visible = try await Self.enqueue(test, "visible.jpg", .normal)
        let demoted = try await Self.enqueue(test, "demoted.jpg", .high)
        #expect(test.pipeline.downloads.pendingPriorities == [.high, .normal, .veryLow])
        prefetch.priority = .veryHigh  // the user scrolled to it
        demoted.priority = .veryLow  // no longer urgent
        #expect(prefetch.priority == .veryHigh)
        #expect(test.pipeline.downloads.pendingPriorities == [.veryHigh, .normal, .veryLow])
        gate.open()
        for task in [blocker, prefetch, visible, demoted] { _ = try await task.image }
        #expect(test.loader.loadedNames == ["blocker.jpg", "prefetch.jpg", "visible.jpg", "demoted.jpg"])
    }

    /// A shared download runs at the highest priority of the tasks that wait on it: a second task for
    /// a low-priority image, at very high priority, lifts the download they share ahead of the others.
    @Test func aSharedDownloadTakesTheHighestPriorityOfItsWaiters() async throws {
        let gate = Gate()
        let (test, blocker) = try await Self.blocked(by: gate)
        let normal = try await Self.enqueue(test, "normal.jpg", .normal)
        let low = try await Self.enqueue(test, "low.jpg", .low)
        let urgent = test.pipeline.imageTask(for: thumbnailRequest(testURL("low.jpg"), 10, 10, priority: .veryHigh))
        try await eventually("the shared download is raised") {
            test.pipeline.downloads.pendingPriorities == [.veryHigh, .normal]
        }
        gate.open()
        for task in [blocker, normal, low, urgent] { _ = try await task.image }
        #expect(test.loader.loadedNames == ["blocker.jpg", "low.jpg", "normal.jpg"])
    }

    /// When the task that raised a shared download is cancelled, the download falls back to the
    /// priority of those still waiting.
    @Test func aSharedDownloadFallsBackWhenItsUrgentWaiterLeaves() async throws {
        let gate = Gate()
        let (test, blocker) = try await Self.blocked(by: gate)
        let normal = try await Self.enqueue(test, "normal.jpg", .normal)
        let low = try await Self.enqueue(test, "low.jpg", .veryLow)
        let urgent = test.pipeline.imageTask(for: thumbnailRequest(testURL("low.jpg"), 10, 10, priority: .veryHigh))
        try await eventually("raised") { test.pipeline.downloads.pendingPriorities == [.veryHigh, .normal] }
        urgent.cancel()
        await #expect(throws: CancellationError.self) { try await urgent.image }
        try await eventually("lowered again") { test.pipeline.downloads.pendingPriorities == [.normal, .veryLow] }
        gate.open()
        for task in [blocker, normal, low] { _ = try await task.image }
        #expect(test.loader.loadedNames == ["blocker.jpg", "normal.jpg", "low.jpg"])
    }

    @Test(arguments: [1, 3, 6])
    func neverRunsMoreDownloadsThanTheLimit(limit: Int) async throws {
        let gate = Gate()
        let loader = MockDataLoader(fallback: { _ in MockDataLoader.Stub(data: TestImage.data(), gate: gate) })
        let test = TestPipeline(loader: loader, configure: { $0.maximumConcurrentDownloads = limit })
        let tasks = (0..<12).map { test.pipeline.imageTask(for: ImageRequest(url: testURL("\($0).jpg"))) }
        try await loader.waitForLoads(limit)
        try await eventually("the rest wait") { test.pipeline.queuedDownloadCount == 12 - limit }
        #expect(loader.inFlight == limit)
        #expect(test.pipeline.runningDownloadCount == limit)
        #expect(test.pipeline.runningDownloadsByLane == (urgent: limit, prefetch: 0))
        gate.open()
        for task in tasks { _ = try await task.image }
        #expect(loader.loadCount == 12)
        #expect(loader.peakInFlight == limit)
        #expect(test.pipeline.runningDownloadCount == 0)
    }

    /// A failed download gives its slot to the next one.
    @Test func aFailedDownloadFreesItsSlot() async throws {
        let gate = Gate()
        let test = TestPipeline(configure: { $0.maximumConcurrentDownloads = 1 })
        let failing = test.pipeline.imageTask(for: ImageRequest(url: testURL("missing.jpg")))  // a 404
        await #expect(throws: DataLoadingError.badStatus(404)) { try await failing.image }
        let next = test.pipeline.imageTask(for: ImageRequest(url: test.serve("after.jpg", gate: gate)))
        try await test.loader.waitForLoads(2)
        #expect(test.pipeline.runningDownloadCount == 1)
        gate.open()
        _ = try await next.image
        #expect(test.recorder.fetchFailures == 1)
    }

    /// Decodes run on at most ``ImagePipeline/Configuration/maximumConcurrentDecodes`` threads.
    @Test(arguments: [1, 2])
    func neverRunsMoreDecodesThanTheLimit(limit: Int) async throws {
        let decodeGate = BlockingGate()
        let test = TestPipeline(configure: { $0.maximumConcurrentDecodes = limit })
        test.decoder.hold(at: decodeGate)
        let tasks = (0..<5).map { test.pipeline.imageTask(for: ImageRequest(url: test.serve("\($0).jpg"))) }
        try await decodeGate.arrived.waitForCount(limit, "decodes held")
        try await test.loader.waitForEnds(5)
        decodeGate.open()
        for task in tasks { _ = try await task.image }
        #expect(test.decoder.decodeCount == 5)
        #expect(test.decoder.peakConcurrentDecodes == limit)
    }

    /// Progress reaches every task that waits on a download, each its own events.
    @Test func progressReachesEveryTaskSharingADownload() async throws {
        let pause = Gate()
        let test = TestPipeline()
        let url = testURL("a.jpg")
        let data = TestImage.data(size: 4000)
        test.loader.stub(url, MockDataLoader.Stub(data: data, chunks: 4, pauses: [2: pause]))
        let small = test.pipeline.imageTask(for: thumbnailRequest(url, 8, 8))
        let large = test.pipeline.imageTask(for: thumbnailRequest(url, 16, 16))
        let streams = [small.events, large.events]
        try await eventually("half the bytes reached both tasks") {
            [small, large].allSatisfy {
                if case .loading(let progress) = $0.phase { progress.completed == 2000 } else { false }
            }
        }
        pause.open()
        for (task, stream) in zip([small, large], streams) {
            var completed: [Int64] = []
            for await event in stream {
                if case .progress(let progress) = event { completed.append(progress.completed) }
            }
            #expect(completed.last == 4000)
            #expect(completed == completed.sorted())
            #expect(task.loadedImage != nil)
        }
    }
}
