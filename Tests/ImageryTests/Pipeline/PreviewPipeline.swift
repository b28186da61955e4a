import Foundation
import Testing

@testable import Imagery

/// A ``TestPipeline`` that makes progressive previews (``ImagePipeline/ProgressivePreviews``) with a
/// ``MockProgressiveDecoder``, serving `a.jpg` as a "progressive" ``TestImage`` of `scans` scans whose
/// body arrives one scan a chunk, pausing after each scan's chunk at its own gate (the last chunk,
/// the end mark, completes the body).
struct PreviewPipeline {
    let test: TestPipeline
    let decoder: MockProgressiveDecoder
    let url = testURL("a.jpg")
    /// Opened by the test, one after another: `pauses[k]` lets the chunk after scan k + 1 come.
    let pauses: [Gate]
    /// Holds the load before its first byte, when made `heldAtStart`.
    let start = Gate()
    let body: Data

    /// - Parameters:
    ///   - scans: Scans in the body.
    ///   - progressive: `false`: a "baseline" image of the same size, in as many chunks.
    ///   - previews: The pipeline's previews; `nil`: off.
    ///   - heldAtStart: Whether the load waits for ``start`` before its first byte.
    ///   - configure: Further changes to the configuration.
    init(
        scans: Int = 3, progressive: Bool = true,
        previews: ImagePipeline.ProgressivePreviews? = ImagePipeline.ProgressivePreviews(), heldAtStart: Bool = false,
        configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
    ) {
        let decoder = MockProgressiveDecoder()
        let pauses = (0..<scans).map { _ in Gate() }
        let progressiveBody = TestImage.progressive(scans: scans)
        body = progressive ? progressiveBody : TestImage.data(size: progressiveBody.count)
        var stub = MockDataLoader.Stub(
            data: body, gate: heldAtStart ? start : nil,
            pauses: Dictionary(uniqueKeysWithValues: pauses.enumerated().map { ($0.offset + 1, $0.element) }))
        stub.cuts = TestImage.scanEnds(scans: scans)
        let loader = MockDataLoader()
        loader.stub(url, stub)
        test = TestPipeline(loader: loader) { configuration in
            configuration.decoder = decoder
            configuration.progressivePreviews = previews
            configure(&configuration)
        }
        self.decoder = decoder
        self.pauses = pauses
    }

    var pipeline: ImagePipeline { test.pipeline }

    /// A 32 × 32 thumbnail of `a.jpg`, asking for previews unless `previews` is false.
    func request(previews: Bool = true) -> ImageRequest {
        var request = thumbnailRequest(url, 32, 32)
        if previews { request.options.insert(.progressivePreviews) }
        return request
    }

    /// Moves time past the pipeline's interval between previews.
    func passInterval() {
        test.time.advance(by: .seconds(1))
    }
}

/// Every event of a task, recorded as it comes, for a test to await by count.
final class RecordedEvents: Sendable {
    let log = EventLog<ImageTask.Event>()
    private let reader: Task<Void, Never>

    init(_ task: ImageTask) {
        let events = task.events
        let log = self.log
        reader = Task {
            for await event in events { log.append(event) }
        }
    }

    /// The scans each preview showed (its pixels' value, ``MockProgressiveDecoder``), in order.
    var previews: [UInt8] { log.all.compactMap { if case .preview(let image) = $0 { image.testTag } else { nil } } }

    /// The preview images, in order.
    var previewImages: [Image] { log.all.compactMap { if case .preview(let image) = $0 { image } else { nil } } }

    /// Returns once `count` previews have come.
    func waitForPreviews(_ count: Int) async throws {
        try await log.waitUntil("\(count) previews") { events in
            events.filter { if case .preview = $0 { true } else { false } }.count >= count
        }
    }

    /// Returns once the stream has ended (after the completion), with every event.
    func ended() async -> [ImageTask.Event] {
        await reader.value
        return log.all
    }
}

extension ImageTask.Event {
    var isPreview: Bool { if case .preview = self { true } else { false } }
    var isCompletion: Bool { if case .completed = self { true } else { false } }
}
