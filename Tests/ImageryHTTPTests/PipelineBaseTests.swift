import Foundation
import Imagery
import ImageryHTTP
import ImageryTestSupport
import ImageryVips
import Testing

/// Records what a pipeline reports.
final class EventRecorder: ImagePipelineObserver, @unchecked Sendable {
    // @unchecked: `events` is guarded by `lock` (NSLock, which ThreadSanitizer understands).
    private let lock = NSLock()
    private var events: [ImagePipelineEvent] = []
    func pipeline(_ pipeline: ImagePipeline, didRecord event: ImagePipelineEvent) {
        lock.withLock { events.append(event) }
    }
    var all: [ImagePipelineEvent] { lock.withLock { events } }
    var decodes: Int { all.filter { if case .decoded = $0 { true } else { false } }.count }
    var derivations: Int { all.filter { if case .derived = $0 { true } else { false } }.count }
}

/// Several sizes of one JPEG: one download, one decode, the other sizes resized from the kept base.
@Suite("Pipeline thumbnails from kept bases")
struct PipelineBaseTests {
    static func make(_ origin: TestOrigin, limit: Int = 64 << 20) -> (ImagePipeline, HTTPDataLoader, EventRecorder) {
        let loader = HTTPDataLoader(configuration: .patient)
        let recorder = EventRecorder()
        var configuration = ImagePipeline.Configuration(decoder: VipsImageDecoder(), dataLoader: loader)
        configuration.observer = recorder
        configuration.baseImageCacheCostLimit = limit
        return (ImagePipeline(configuration: configuration), loader, recorder)
    }

    @Test func laterSizesOfASourceAreResizedFromItsBase() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        let (pipeline, loader, recorder) = Self.make(origin)
        let url = origin.url("rocket.jpg")  // 640x427: 100 and 110 wide decode at 1/2; 300 wide needs full scale
        let first = try await pipeline.image(for: ImageRequest(url: url, thumbnail: .init(width: 100, height: 100)))
        let second = try await pipeline.image(
            for: ImageRequest(url: url, thumbnail: .init(width: 110, height: 90, fit: .contain)))
        #expect((first.width, first.height, second.width, second.height) == (100, 100, 110, 90))
        #expect(recorder.decodes == 1 && recorder.derivations == 1)
        // A size the base is too small for is decoded (from the original cached in memory); its base replaces the old one.
        let large = try await pipeline.image(
            for: ImageRequest(url: url, thumbnail: .init(width: 300, height: 8192, fit: .inside)))
        #expect(large.width == 300)
        #expect(recorder.decodes == 2)
        _ = try await pipeline.image(
            for: ImageRequest(url: url, thumbnail: .init(width: 280, height: 8192, fit: .inside)))
        #expect(recorder.decodes == 2 && recorder.derivations == 2)
        #expect(origin.requestCount == 1)
        #expect(recorder.all.contains(.cacheLookup(.memoryBase, hit: true)))

        // Removing the source's cached data removes its base too; so does turning bases off.
        await pipeline.removeCachedData(
            for: ImageRequest(url: url, thumbnail: .init(width: 280, height: 8192, fit: .inside)))
        _ = try await pipeline.image(for: ImageRequest(url: url, thumbnail: .init(width: 90, height: 90)))
        #expect(recorder.decodes == 3)
        try await loader.shutdown()
        try await origin.shutdown()
    }

}
