import Foundation
import Imagery
import ImageryHTTP
import ImageryTestSupport
import Testing

/// The whole corpus through the pipeline and a real origin, when ../shared/corpus is there.
@Suite("Pipeline over the corpus", .enabled(if: Fixtures.corpus != nil))
struct PipelineCorpusTests {
    @Test func everyCorpusImageLoadsOnceAtTwoSizesWithOneRequestEach() async throws {
        let corpus = try #require(Fixtures.corpus)
        let names = Fixtures.files(in: corpus).map(\.lastPathComponent)
        // Loads past the loader's 8 connections wait for one inside their timeout: the harness's is the
        // hang guard (inside the whole suite on 2 cores the last of them passed the default 30 s).
        try await withHarness(origin: TestOrigin.serving(directory: corpus)) { harness in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for name in names {
                    for size in [64, 160] {
                        group.addTask {
                            let request = ImageRequest(
                                url: harness.origin.url(name), thumbnail: .init(width: size, height: size, fit: .inside)
                            )
                            let image = try await harness.pipeline.image(for: request)
                            #expect(max(image.width, image.height) <= size, "\(name)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(harness.origin.requestCount == names.count)
            #expect(harness.decoder.count == names.count * 2)
        }
    }
}
