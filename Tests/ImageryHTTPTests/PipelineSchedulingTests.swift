import Foundation
import ImageryTestSupport
import Testing

@testable import Imagery

@Suite("Pipeline priorities, progress and phases")
struct PipelineSchedulingTests {

    @Test func reportsProgressThenCompletionAsEventsAndPhases() async throws {
        try await withHarness { harness in
            // The origin sends 16 KB and holds the rest until the task has reported them.
            let request = ImageRequest(
                url: harness.origin.url("rocket.jpg?held_at=16384&held=rest"), thumbnail: .init(width: 32, height: 32))
            let task = harness.pipeline.imageTask(for: request)
            let events = task.events  // from now on (the first 16 KB may be in already)
            let partial = try await waitFor("the first 16 KB reported") { () -> TransferProgress? in
                guard case .loading(let value) = task.phase, value.completed >= 16384 else { return nil }
                return value
            }
            #expect(partial == TransferProgress(completed: 16384, total: 112_525), "the rest is held at the origin")
            harness.origin.release("rest")
            var progress: [TransferProgress] = []
            var completions = 0
            for await event in events {
                switch event {
                case .progress(let value): progress.append(value)
                case .preview: Issue.record("a preview, not asked for")
                case .completed(let result):
                    completions += 1
                    #expect((try? result.get())?.width == 32)
                case .retrying: Issue.record("nothing failed, so nothing is retried")
                }
            }
            #expect(completions == 1)
            #expect(!progress.isEmpty, "the rest arrived after the stream was made")
            #expect(progress.map(\.completed) == progress.map(\.completed).sorted())
            #expect(progress.last?.completed == 112_525)
            #expect(progress.last?.total == 112_525)
            #expect(progress.last?.fraction == 1)
            guard case .success(let image) = task.phase else {
                Issue.record("phase must be success")
                return
            }
            #expect(image.width == 32)
            // A stream made after the end yields only the completion.
            var late: [ImageTask.Event] = []
            for await event in task.events { late.append(event) }
            #expect(late.count == 1)
        }
    }
}
