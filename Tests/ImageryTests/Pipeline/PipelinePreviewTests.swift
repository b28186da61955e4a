import Foundation
import Testing

@testable import Imagery

/// Progressive previews through the pipeline (``ImagePipeline/ProgressivePreviews``), on fakes: a
/// body that arrives one scan at a time (each chunk held until the test lets it go), a decoder whose
/// previews show how many scans they hold, time moved by hand.
@Suite("Pipeline progressive previews")
struct PipelinePreviewTests {
    @Test func aPreviewOfEachScanComesBeforeTheImageAndNoneIsCached() async throws {
        let setup = PreviewPipeline(scans: 3)
        let request = setup.request()
        let task = setup.pipeline.imageTask(for: request)
        let events = RecordedEvents(task)
        for (index, pause) in setup.pauses.enumerated() {
            try await events.waitForPreviews(index + 1)
            #expect(task.preview?.testTag == UInt8(index + 1))
            setup.passInterval()
            pause.open()
        }
        let all = await events.ended()
        #expect(events.previews == [1, 2, 3], "one preview per scan, in order")
        #expect(all.last?.isCompletion == true && all.filter(\.isCompletion).count == 1)
        #expect(events.previewImages.allSatisfy { ($0.width, $0.height) == (32, 32) }, "at the request's size")
        #expect(task.loadedImage?.testTag == 1 && task.preview == nil)
        #expect(setup.test.cached(request)?.testTag == 1, "the memory cache holds the image, not a preview")
        #expect(setup.decoder.decoder.decodeCount == 1)
        #expect(setup.test.recorder.previewDecodes.count == 3)
        #expect(setup.test.recorder.decodes.count == 1, "previews are not counted as decodes")
    }

    @Test func previewsComeNoMoreOftenThanTheInterval() async throws {
        let setup = PreviewPipeline(scans: 3, previews: .init(minimumInterval: .milliseconds(100)))
        let task = setup.pipeline.imageTask(for: setup.request())
        let events = RecordedEvents(task)
        try await events.waitForPreviews(1)
        setup.pauses[0].open()  // the second scan comes at the same instant: too soon
        try await setup.test.loader.chunksSent.waitForCount(2)
        setup.test.time.advance(by: .milliseconds(100))
        setup.pauses[1].open()  // the third, an interval later: a preview of all three
        try await events.waitForPreviews(2)
        setup.pauses[2].open()
        _ = await events.ended()
        #expect(events.previews == [1, 3])
        #expect(setup.decoder.previews.all == [1, 3])
    }

    @Test func aPreviewDueWhileAnotherDecodesIsSkipped() async throws {
        let setup = PreviewPipeline(scans: 3, previews: .init(minimumInterval: .zero))
        let gate = BlockingGate()
        setup.decoder.holdPreviews(at: gate)
        let task = setup.pipeline.imageTask(for: setup.request())
        let events = RecordedEvents(task)
        try await setup.decoder.previews.waitForCount(1)
        setup.pauses[0].open()  // the second scan arrives while the first one's preview decodes
        try await setup.test.loader.chunksSent.waitForCount(2)
        gate.open()
        try await events.waitForPreviews(1)
        setup.pauses[1].open()
        try await events.waitForPreviews(2)
        setup.pauses[2].open()
        _ = await events.ended()
        #expect(setup.decoder.previews.all == [1, 3], "no preview queued behind another")
        #expect(events.previews == [1, 3])
    }

    /// At a small decode scale the scans of fine detail change no pixel: such a preview is not handed out.
    @Test func aPreviewThatShowsNothingNewIsNotHandedOut() async throws {
        let setup = PreviewPipeline(scans: 3, previews: .init(minimumInterval: .zero))
        setup.decoder.setPreviewPixels { $0 == 3 ? 2 : UInt8($0) }  // the third scan changes nothing
        let task = setup.pipeline.imageTask(for: setup.request())
        let events = RecordedEvents(task)
        for (index, pause) in setup.pauses.enumerated() {
            try await setup.decoder.previews.waitForCount(index + 1)
            if index < 2 { try await events.waitForPreviews(index + 1) }
            pause.open()
        }
        _ = await events.ended()
        #expect(setup.decoder.previews.all == [1, 2, 3])
        #expect(events.previews == [1, 2])
    }

    @Test func noPreviewEverFollowsTheImage() async throws {
        let setup = PreviewPipeline(scans: 3, previews: .init(minimumInterval: .zero))
        let gate = BlockingGate()
        setup.decoder.holdPreviews(at: gate)
        let task = setup.pipeline.imageTask(for: setup.request())
        let events = RecordedEvents(task)
        try await setup.decoder.previews.waitForCount(1)
        for pause in setup.pauses { pause.open() }  // the body ends while the preview decodes
        try await setup.decoder.decoder.waitForDecodes(1)
        gate.open()
        let all = await events.ended()
        #expect(all.last?.isCompletion == true, "the image is the last event")
        #expect(all.filter(\.isPreview).count <= 1, "no preview starts once the body is complete")
        #expect(setup.decoder.previews.count == 1)
        #expect(task.loadedImage?.testTag == 1)
    }

    @Test func cancellingTheTaskEndsItsPreviewsAndGivesTheirMemoryBack() async throws {
        let budget = MemoryBudget(configuration: .init(limit: 1_000_000, maximumWait: .seconds(3600)))
        let setup = PreviewPipeline(scans: 3) { $0.memoryBudget = budget }
        let gate = BlockingGate()
        setup.decoder.holdPreviews(at: gate)
        let task = setup.pipeline.imageTask(for: setup.request())
        let events = RecordedEvents(task)
        try await setup.decoder.previews.waitForCount(1)
        let prefix = TestImage.scanEnds(scans: 1)[0]
        #expect(
            budget.snapshot.used >= setup.body.count + prefix + 32 * 32,
            "the source, and the preview's bytes and decode estimate")
        task.cancel()
        let all = await events.ended()
        #expect(task.wasCancelled)
        #expect(all.filter(\.isPreview).isEmpty)
        gate.open()
        try await eventually("the preview's charge given back") { budget.snapshot.used == 0 }
        #expect(setup.decoder.previews.count == 1)
        #expect(setup.decoder.decoder.decodeCount == 0)
    }

    /// A preview is charged only if it fits at once (never waiting, never refused): under memory
    /// pressure, when the budget admits one decode at a time, every preview is left out.
    @Test func aPreviewThatDoesNotFitTheBudgetIsLeftOut() async throws {
        let budget = MemoryBudget(configuration: .init(limit: 1_000_000, maximumWait: .seconds(3600)))
        budget.setResidentPressure(true)
        let setup = PreviewPipeline(scans: 3, previews: .init(minimumInterval: .zero)) { $0.memoryBudget = budget }
        let task = setup.pipeline.imageTask(for: setup.request())
        let events = RecordedEvents(task)
        for pause in setup.pauses { pause.open() }
        let all = await events.ended()
        #expect(all.filter(\.isPreview).isEmpty)
        #expect(setup.decoder.previews.count == 0)
        #expect(task.loadedImage?.testTag == 1)
        let snapshot = budget.snapshot
        #expect(
            snapshot.used == 0 && snapshot.refusedOverloaded == 0 && snapshot.admitted == 2, "left out, not refused")
    }

    @Test func aBaselineImageGivesNoPreview() async throws {
        let setup = PreviewPipeline(scans: 3, progressive: false, previews: .init(minimumInterval: .zero))
        let task = setup.pipeline.imageTask(for: setup.request())
        let events = RecordedEvents(task)
        for pause in setup.pauses { pause.open() }
        let all = await events.ended()
        #expect(all.filter(\.isPreview).isEmpty)
        #expect(setup.decoder.previews.count == 0)
        #expect(task.loadedImage != nil)
    }

    @Test(arguments: [(pipeline: true, request: false), (pipeline: false, request: true)])
    func previewsNeedThePipelineAndTheRequest(_ optedIn: (pipeline: Bool, request: Bool)) async throws {
        let setup = PreviewPipeline(scans: 3, previews: optedIn.pipeline ? .init(minimumInterval: .zero) : nil)
        let task = setup.pipeline.imageTask(for: setup.request(previews: optedIn.request))
        let events = RecordedEvents(task)
        for pause in setup.pauses { pause.open() }
        let all = await events.ended()
        #expect(all.filter(\.isPreview).isEmpty)
        #expect(setup.decoder.previews.count == 0, "no decode for previews nobody asked for")
        #expect(task.loadedImage != nil)
    }

    @Test func sharedWorkShowsItsPreviewsToTheTasksThatAsked() async throws {
        let setup = PreviewPipeline(scans: 3, heldAtStart: true)
        let asking = setup.pipeline.imageTask(for: setup.request())
        let askingEvents = RecordedEvents(asking)
        try await setup.test.loader.waitForLoads(1)
        let other = setup.pipeline.imageTask(for: setup.request(previews: false))
        let also = setup.pipeline.imageTask(for: setup.request())
        let otherEvents = RecordedEvents(other)
        let alsoEvents = RecordedEvents(also)
        try await eventually("three waiters on one decode") {
            setup.pipeline.imageJobs.waiterCount(for: setup.request().imageKey) == 3
        }
        setup.start.open()
        for (index, pause) in setup.pauses.enumerated() {
            try await askingEvents.waitForPreviews(index + 1)
            try await alsoEvents.waitForPreviews(index + 1)
            setup.passInterval()
            pause.open()
        }
        _ = await (askingEvents.ended(), otherEvents.ended(), alsoEvents.ended())
        #expect(askingEvents.previews == [1, 2, 3] && alsoEvents.previews == [1, 2, 3])
        #expect(otherEvents.previews.isEmpty)
        #expect(setup.decoder.previews.all == [1, 2, 3], "one decode per preview, shared")
        #expect(setup.test.loader.loadCount == 1 && setup.decoder.decoder.decodeCount == 1)
    }

    @Test func aCachedImageComesWithoutPreviews() async throws {
        let setup = PreviewPipeline(scans: 3)
        for pause in setup.pauses { pause.open() }
        _ = try await setup.pipeline.image(for: setup.request())
        let task = setup.pipeline.imageTask(for: setup.request())
        let all = await RecordedEvents(task).ended()
        #expect(all.count == 1 && all[0].isCompletion)
        #expect(setup.decoder.previews.count == 0, "image(for:) has no events: nothing to preview")
    }
}
