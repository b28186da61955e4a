import Foundation
import Testing

@testable import Imagery

/// Admission through the pipeline's ``MemoryBudget``: a download reserves the size it announces
/// before its body, a decode its source and the decoder's estimate; what does not fit waits in line
/// or is refused; cache hits never touch the budget; every byte is given back.
///
/// The budgets here allow an hour's wait: a wait ends by the event that frees the bytes, never by
/// the clock (the deadline is only a guard).
@Suite("Pipeline memory budget")
struct PipelineMemoryBudgetTests {
    static func budget(limit: Int, queue: Int = 64) -> MemoryBudget {
        MemoryBudget(configuration: .init(limit: limit, maximumQueueLength: queue, maximumWait: .seconds(3600)))
    }

    /// A pipeline with `budget`, serving `name`s of 4 000 bytes whose download pauses after the
    /// first of two chunks when a gate is given for it.
    static func make(_ budget: MemoryBudget, pauses: [String: Gate] = [:], announcesSize: Bool = true) -> TestPipeline {
        let loader = MockDataLoader(fallback: { request in
            let pause = pauses[request.url.lastPathComponent]
            return MockDataLoader.Stub(
                data: TestImage.data(size: 4000), chunks: 2, announcesSize: announcesSize,
                pauses: pause.map { [1: $0] } ?? [:]
            )
        })
        let test = TestPipeline(loader: loader, configure: { $0.memoryBudget = budget })
        test.decoder.setEstimate(1000)
        return test
    }

    @Test func everyByteIsGivenBackAfterALoad() async throws {
        let budget = Self.budget(limit: 100_000)
        let test = Self.make(budget)
        _ = try await test.pipeline.image(for: ImageRequest(url: testURL("a.jpg")))
        let snapshot = budget.snapshot
        #expect(snapshot.used == 0)
        #expect(snapshot.admitted == 2, "the source, then the decode")
        #expect(snapshot.peak >= 4000 + 1000)
        #expect(snapshot.waited == 0 && snapshot.queued == 0)
    }

    @Test func cacheHitsNeverTouchTheBudget() async throws {
        let budget = Self.budget(limit: 100_000)
        let test = Self.make(budget)
        let request = thumbnailRequest(testURL("a.jpg"), 8, 8)
        _ = try await test.pipeline.image(for: request)
        let admitted = budget.snapshot.admitted
        _ = try await test.pipeline.image(for: request)
        _ = try await test.pipeline.data(for: request)
        #expect(budget.snapshot.admitted == admitted)
    }

    @Test func aSourceLargerThanTheBudgetIsRefusedBeforeItsBody() async throws {
        let budget = Self.budget(limit: 3000)
        let test = Self.make(budget)
        await #expect(throws: MemoryBudgetError.tooLarge(bytes: 4000, limit: 3000)) {
            try await test.pipeline.image(for: ImageRequest(url: testURL("a.jpg")))
        }
        #expect(budget.snapshot.refusedTooLarge == 1)
        #expect(budget.snapshot.used == 0)
        #expect(test.decoder.decodeCount == 0)
    }

    @Test func aDecodeLargerThanTheBudgetIsRefusedBeforeItStarts() async throws {
        let budget = Self.budget(limit: 50_000)
        let test = Self.make(budget)
        test.decoder.setEstimate(60_000)
        await #expect(throws: MemoryBudgetError.tooLarge(bytes: 60_000, limit: 50_000)) {
            try await test.pipeline.image(for: ImageRequest(url: testURL("a.jpg")))
        }
        #expect(test.decoder.decodeCount == 0)
        #expect(budget.snapshot.used == 0)
        // The bytes are fine: a decode that fits later needs no new download.
        test.decoder.setEstimate(1000)
        _ = try await test.pipeline.image(for: ImageRequest(url: testURL("a.jpg")))
        #expect(test.loader.loadCount == 1)
    }

    /// Sources take at most half the budget: a second download waits, holding no bytes, until the
    /// first one's are decoded and given back.
    @Test func aDownloadThatDoesNotFitWaitsForTheBytesToBeGivenBack() async throws {
        let pause = Gate()
        let budget = Self.budget(limit: 10_000)
        let test = Self.make(budget, pauses: ["first.jpg": pause])
        let first = test.pipeline.imageTask(for: ImageRequest(url: testURL("first.jpg")))
        try await eventually("the first source holds its bytes") { budget.snapshot.used == 4000 }
        let second = test.pipeline.imageTask(for: ImageRequest(url: testURL("second.jpg")))
        try await test.loader.waitForLoads(2)
        try await eventually("the second source waits for its bytes") { budget.snapshot.queued == 1 }
        #expect(budget.snapshot.used == 4000)
        pause.open()
        _ = try await (first.image, second.image)
        let snapshot = budget.snapshot
        #expect(snapshot.waited == 1)
        #expect(snapshot.used == 0)
        #expect(snapshot.queued == 0)
    }

    /// With no room in the line, what does not fit is refused at once (`overloaded`).
    @Test func aFullLineRefusesAtOnce() async throws {
        let pause = Gate()
        let budget = Self.budget(limit: 10_000, queue: 0)
        let test = Self.make(budget, pauses: ["first.jpg": pause])
        let first = test.pipeline.imageTask(for: ImageRequest(url: testURL("first.jpg")))
        try await eventually("the first source holds its bytes") { budget.snapshot.used == 4000 }
        await #expect {
            try await test.pipeline.image(for: ImageRequest(url: testURL("second.jpg")))
        } throws: { error in
            if case MemoryBudgetError.overloaded = error { return true }
            return false
        }
        #expect(budget.snapshot.refusedOverloaded == 1)
        pause.open()
        _ = try await first.image
        #expect(budget.snapshot.used == 0)
    }

    /// A request cancelled while it waits for the budget leaves the line and holds nothing.
    @Test func aRequestCancelledWhileWaitingForTheBudgetLeavesTheLine() async throws {
        let pause = Gate()
        let budget = Self.budget(limit: 10_000)
        let test = Self.make(budget, pauses: ["first.jpg": pause])
        let first = test.pipeline.imageTask(for: ImageRequest(url: testURL("first.jpg")))
        try await eventually("the first source holds its bytes") { budget.snapshot.used == 4000 }
        let second = test.pipeline.imageTask(for: ImageRequest(url: testURL("second.jpg")))
        try await eventually("the second waits") { budget.snapshot.queued == 1 }
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.image }
        try await eventually("it left the line") { budget.snapshot.queued == 0 }
        pause.open()
        _ = try await first.image
        try await test.loader.waitForEnds(2)
        #expect(budget.snapshot.used == 0)
    }

    /// A request with no admission wait left (``MemoryBudget/Configuration/maximumWait`` zero) that
    /// would wait for a download slot is refused at once as overloaded; the download it waited behind goes on.
    @Test func aRequestThatCannotWaitForASlotIsRefused() async throws {
        let pause = Gate()
        let budget = MemoryBudget(configuration: .init(limit: 100_000, maximumWait: .zero))
        let loader = MockDataLoader(fallback: { request in
            let pauses = request.url.lastPathComponent == "first.jpg" ? [1: pause] : [:]
            return MockDataLoader.Stub(data: TestImage.data(size: 4000), chunks: 2, pauses: pauses)
        })
        let test = TestPipeline(
            loader: loader,
            configure: {
                $0.memoryBudget = budget
                $0.maximumConcurrentDownloads = 1
            })
        let first = test.pipeline.imageTask(for: ImageRequest(url: testURL("first.jpg")))
        try await eventually("the first source holds its bytes") { budget.snapshot.used == 4000 }
        await #expect {
            try await test.pipeline.image(for: ImageRequest(url: testURL("second.jpg")))
        } throws: { error in
            if case MemoryBudgetError.overloaded = error { return true }
            return false
        }
        #expect(budget.snapshot.refusedOverloaded == 1)
        #expect(test.pipeline.queuedDownloadCount == 0)
        pause.open()
        _ = try await first.image
        #expect(loader.loadedURLs == [testURL("first.jpg")])
    }

    /// A loader that announces no size is charged as the bytes arrive, and they are given back too.
    @Test func bytesOfAnUnannouncedSizeAreChargedAsTheyArrive() async throws {
        let pause = Gate()
        let budget = Self.budget(limit: 100_000)
        let test = Self.make(budget, pauses: ["a.jpg": pause], announcesSize: false)
        let task = test.pipeline.imageTask(for: ImageRequest(url: testURL("a.jpg")))
        try await eventually("the first chunk is charged") { budget.snapshot.used == 2000 }
        pause.open()
        _ = try await task.image
        #expect(budget.snapshot.used == 0)
        #expect(budget.snapshot.peak >= 4000)
    }

    /// A custom data source's bytes are charged once they are in.
    @Test func aCustomSourcesBytesAreCharged() async throws {
        let budget = Self.budget(limit: 100_000)
        let test = Self.make(budget)
        _ = try await test.pipeline.image(for: ImageRequest(id: "custom") { TestImage.data(size: 3000) })
        #expect(budget.snapshot.peak >= 3000)
        #expect(budget.snapshot.used == 0)
    }
}
