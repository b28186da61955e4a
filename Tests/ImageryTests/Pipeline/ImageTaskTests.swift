import Foundation
import Testing

@testable import Imagery

/// An ``ImageTask``'s phases and events: progress as bytes arrive (one chunk at a time, held between
/// chunks by gates), then exactly one completion; streams made late, several streams, cancellation.
@Suite("ImageTask events and phases")
struct ImageTaskTests {
    /// A loader that sends `url`'s 4 000 bytes in four chunks once `start` opens, pausing after each
    /// chunk at its own gate.
    static func chunked(_ url: URL, announcesSize: Bool = true) -> (MockDataLoader, start: Gate, pauses: [Gate]) {
        let start = Gate()
        let gates = (0..<4).map { _ in Gate() }
        let loader = MockDataLoader()
        loader.stub(
            url,
            MockDataLoader.Stub(
                data: TestImage.data(size: 4000), chunks: 4, announcesSize: announcesSize, gate: start,
                pauses: Dictionary(uniqueKeysWithValues: gates.enumerated().map { ($0.offset + 1, $0.element) })
            ))
        return (loader, start, gates)
    }

    static func progress(of task: ImageTask) -> TransferProgress? {
        if case .loading(let progress) = task.phase { return progress }
        return nil
    }

    @Test func reportsEachChunkAsProgressThenOneCompletion() async throws {
        let url = testURL("a.jpg")
        let (loader, start, gates) = Self.chunked(url)
        let test = TestPipeline(loader: loader)
        let task = test.pipeline.imageTask(for: thumbnailRequest(url, 32, 32))
        let events = task.events
        try await loader.waitForLoads(1)
        #expect(Self.progress(of: task) == TransferProgress(completed: 0, total: nil))
        start.open()
        for (index, gate) in gates.enumerated() {
            let expected = TransferProgress(completed: Int64(1000 * (index + 1)), total: 4000)
            try await eventually("chunk \(index + 1)") { Self.progress(of: task) == expected }
            gate.open()
        }
        var progress: [TransferProgress] = []
        var completions: [Result<Image, any Error>] = []
        for await event in events {
            switch event {
            case .progress(let value): progress.append(value)
            case .preview: Issue.record("a preview, not asked for")
            case .completed(let result): completions.append(result)
            case .retrying: Issue.record("nothing failed, so nothing is retried")
            }
        }
        #expect(progress.map(\.completed) == [1000, 2000, 3000, 4000])
        #expect(progress.map(\.fraction) == [0.25, 0.5, 0.75, 1])
        #expect(completions.count == 1)
        #expect(try completions.first?.get().width == 32)
        #expect(task.loadedImage?.width == 32)
    }

    @Test func progressWithoutAnAnnouncedSizeHasNoTotal() async throws {
        let url = testURL("a.jpg")
        let (loader, start, gates) = Self.chunked(url, announcesSize: false)
        start.open()
        let test = TestPipeline(loader: loader)
        let task = test.pipeline.imageTask(for: ImageRequest(url: url))
        try await eventually("the first chunk") { Self.progress(of: task)?.completed == 1000 }
        #expect(Self.progress(of: task)?.total == nil)
        #expect(Self.progress(of: task)?.fraction == nil)
        for gate in gates { gate.open() }
        _ = try await task.image
    }

    /// Each call of ``ImageTask/events`` makes an independent stream: every one sees every event from then on.
    @Test func everyStreamSeesTheEventsFromWhenItWasMade() async throws {
        let url = testURL("a.jpg")
        let (loader, start, gates) = Self.chunked(url)
        let test = TestPipeline(loader: loader)
        let task = test.pipeline.imageTask(for: ImageRequest(url: url))
        let early = task.events
        start.open()
        try await eventually("the first chunk") { Self.progress(of: task)?.completed == 1000 }
        gates[0].open()
        try await eventually("two chunks") { Self.progress(of: task)?.completed == 2000 }
        let late = task.events
        for gate in gates.dropFirst() { gate.open() }
        func collect(_ stream: AsyncStream<ImageTask.Event>) async -> [Int64?] {
            var seen: [Int64?] = []
            for await event in stream {
                if case .progress(let value) = event { seen.append(value.completed) } else { seen.append(nil) }
            }
            return seen
        }
        #expect(await collect(early) == [1000, 2000, 3000, 4000, nil])
        #expect(await collect(late) == [3000, 4000, nil])
    }

    /// A stream made after the task ended yields its completion alone.
    @Test func aStreamMadeAfterTheEndYieldsOnlyTheCompletion() async throws {
        let test = TestPipeline()
        let task = test.pipeline.imageTask(for: ImageRequest(url: test.serve("a.jpg")))
        _ = try await task.image
        var late: [ImageTask.Event] = []
        for await event in task.events { late.append(event) }
        #expect(late.count == 1)
        guard case .completed(.success(let image))? = late.first else {
            Issue.record("expected the completion, got \(late)")
            return
        }
        #expect(image.width == 64)
    }

    @Test func aFailedTaskEndsWithItsErrorInPhaseAndEvents() async throws {
        let test = TestPipeline()
        let task = test.pipeline.imageTask(for: ImageRequest(url: testURL("missing.jpg")))
        let events = task.events
        await #expect(throws: DataLoadingError.badStatus(404)) { try await task.image }
        guard case .failure(let error) = task.phase else {
            Issue.record("the phase must be a failure")
            return
        }
        #expect(error as? DataLoadingError == .badStatus(404))
        var completions = 0
        for await event in events {
            if case .completed(.failure(let error)) = event {
                completions += 1
                #expect(error as? DataLoadingError == .badStatus(404))
            }
        }
        #expect(completions == 1)
        for await event in task.events {
            guard case .completed(.failure) = event else {
                Issue.record("late stream: \(event)")
                continue
            }
        }
    }

    @Test func aCancelledTaskEndsWithCancellationInPhaseAndEvents() async throws {
        let test = TestPipeline()
        let task = test.pipeline.imageTask(for: ImageRequest(url: test.serve("a.jpg", gate: Gate())))
        let events = task.events
        try await test.loader.waitForLoads(1)
        task.cancel()
        var ended: [ImageTask.Event] = []
        for await event in events { ended.append(event) }
        guard case .completed(.failure(let error))? = ended.last else {
            Issue.record("expected a failed completion, got \(ended)")
            return
        }
        #expect(error is CancellationError)
        #expect(task.wasCancelled)
    }

    /// A subscriber that stops listening is dropped; the task and the other streams go on.
    @Test func aStreamDroppedEarlyDoesNotDisturbTheTask() async throws {
        let url = testURL("a.jpg")
        let (loader, start, gates) = Self.chunked(url)
        let test = TestPipeline(loader: loader)
        let task = test.pipeline.imageTask(for: ImageRequest(url: url))
        let kept = task.events
        let droppedStream = task.events
        start.open()
        let dropped = Task {
            for await event in droppedStream {
                if case .progress = event { return true }  // stops after the first event
            }
            return false
        }
        try await eventually("the first chunk") { Self.progress(of: task)?.completed == 1000 }
        #expect(await dropped.value)
        for gate in gates { gate.open() }
        var last: ImageTask.Event?
        for await event in kept { last = event }
        guard case .completed(.success)? = last else {
            Issue.record("the kept stream must end with the image")
            return
        }
    }

    /// A cache hit ends at once, with no progress.
    @Test func aTaskServedFromMemoryCompletesWithoutProgress() async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg"), 8, 8)
        _ = try await test.pipeline.image(for: request)
        let task = test.pipeline.imageTask(for: request)
        var events: [ImageTask.Event] = []
        for await event in task.events { events.append(event) }
        let progress = events.filter { if case .progress = $0 { true } else { false } }
        #expect(progress.isEmpty)
        #expect(task.loadedImage?.width == 8)
        #expect(test.loader.loadCount == 1)
    }

    /// A task's request, priority and identity.
    @Test func aTaskKeepsItsRequestAndIsComparedByIdentity() async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg"), 8, 8, priority: .high)
        let first = test.pipeline.imageTask(for: request)
        let second = test.pipeline.imageTask(for: request)
        #expect(first.request.imageKey == request.imageKey)
        #expect(first.priority == .high)
        first.priority = .veryLow
        #expect(first.priority == .veryLow)
        #expect(second.priority == .high, "each task has its own priority")
        #expect(first != second)
        #expect(first == first)
        #expect(Set([first, second, first]).count == 2)
        _ = try await (first.image, second.image)
    }
}
