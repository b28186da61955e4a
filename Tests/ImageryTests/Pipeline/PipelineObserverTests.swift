import Foundation
import Testing

@testable import Imagery

/// What an ``ImagePipelineObserver`` is told, in order, for each path through the pipeline.
@Suite("Pipeline observer events")
struct PipelineObserverTests {
    /// An event without its duration, for comparing sequences.
    static func describe(_ event: ImagePipelineEvent) -> String {
        switch event {
        case .cacheLookup(let tier, let hit): "\(tier.rawValue) \(hit ? "hit" : "miss")"
        case .fetched(_, let bytes, let notModified): notModified ? "304" : "fetched \(bytes)"
        case .fetchFailed: "fetch failed"
        case .decoded(_, let width, let height): "decoded \(width)x\(height)"
        case .decodeFailed: "decode failed"
        case .derived(_, let width, let height): "derived \(width)x\(height)"
        case .retrying(let attempt, _, let status): "retry \(attempt) after \(status.map { "\($0)" } ?? "network")"
        case .previewDecoded(_, let width, let height): "preview \(width)x\(height)"
        }
    }

    static func sequence(_ test: TestPipeline) -> [String] { test.recorder.all.map(describe) }

    static let bytes = TestImage.data().count

    @Test func aColdLoadLooksInMemoryThenFetchesThenDecodes() async throws {
        let test = TestPipeline()
        _ = try await test.pipeline.image(for: thumbnailRequest(test.serve("a.jpg"), 8, 8))
        #expect(
            Self.sequence(test) == [
                "memory_image miss", "memory_data miss", "fetched \(Self.bytes)", "decoded 8x8",
            ])
    }

    @Test func aColdLoadWithADiskCacheLooksThereToo() async throws {
        let test = TestPipeline(disk: MockDataCache())
        _ = try await test.pipeline.image(for: thumbnailRequest(test.serve("a.jpg"), 8, 8))
        #expect(
            Self.sequence(test) == [
                "memory_image miss", "disk_variant miss", "memory_data miss", "disk_data miss",
                "fetched \(Self.bytes)", "decoded 8x8",
            ])
    }

    @Test func aMemoryHitIsOneLookup() async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg"), 8, 8)
        _ = try await test.pipeline.image(for: request)
        let before = test.recorder.all.count
        _ = try await test.pipeline.image(for: request)
        #expect(test.recorder.all.dropFirst(before).map(Self.describe) == ["memory_image hit"])
    }

    @Test func aNewSizeOfAnOriginalInMemoryIsADataHitAndADecode() async throws {
        let test = TestPipeline()
        let url = test.serve("a.jpg")
        _ = try await test.pipeline.image(for: thumbnailRequest(url, 8, 8))
        let before = test.recorder.all.count
        _ = try await test.pipeline.image(for: thumbnailRequest(url, 4, 4))
        #expect(
            test.recorder.all.dropFirst(before).map(Self.describe) == [
                "memory_image miss", "memory_data hit", "decoded 4x4",
            ])
    }

    @Test func aRevalidationIsA304WithNoBytes() async throws {
        let test = TestPipeline()
        let url = testURL("a.jpg")
        test.loader.serveRevalidating(url, headers: ["cache-control": "max-age=1", "etag": "\"v\""])
        _ = try await test.pipeline.data(for: ImageRequest(url: url))
        test.advance(seconds: 2)
        _ = try await test.pipeline.data(for: ImageRequest(url: url))
        #expect(Self.sequence(test) == ["memory_data miss", "fetched \(Self.bytes)", "memory_data miss", "304"])
    }

    @Test func failuresAreReportedButCancellationIsNot() async throws {
        let test = TestPipeline()
        await #expect(throws: DataLoadingError.self) {
            try await test.pipeline.image(for: ImageRequest(url: testURL("missing.jpg")))
        }
        test.loader.stub(testURL("bad.jpg"), data: Data("not an image".utf8))
        await #expect(throws: ImageDecodingError.self) {
            try await test.pipeline.image(for: ImageRequest(url: testURL("bad.jpg")))
        }
        let task = test.pipeline.imageTask(for: ImageRequest(url: test.serve("held.jpg", gate: Gate())))
        try await test.loader.waitForLoads(3)
        task.cancel()
        try await test.loader.waitForCancellations(1)
        #expect(
            Self.sequence(test) == [
                "memory_image miss", "memory_data miss", "fetch failed",
                "memory_image miss", "memory_data miss", "fetched 12", "decode failed",
                "memory_image miss", "memory_data miss",
            ])
    }

    @Test func theObserverIsToldWhichPipelineRecorded() async throws {
        final class Identity: ImagePipelineObserver {
            let pipelines = EventLog<ObjectIdentifier>()
            func pipeline(_ pipeline: ImagePipeline, didRecord event: ImagePipelineEvent) {
                pipelines.append(ObjectIdentifier(pipeline))
            }
        }
        let identity = Identity()
        let loader = MockDataLoader()
        loader.stub(testURL("a.jpg"), data: TestImage.data())
        let pipeline = ImagePipeline(
            configuration: {
                var configuration = ImagePipeline.Configuration(decoder: MockImageDecoder(), dataLoader: loader)
                configuration.observer = identity
                return configuration
            }())
        _ = try await pipeline.image(for: ImageRequest(url: testURL("a.jpg")))
        #expect(identity.pipelines.count == 4)
        #expect(Set(identity.pipelines.all) == [ObjectIdentifier(pipeline)])
    }

    @Test func durationsAreNotNegative() async throws {
        let test = TestPipeline()
        _ = try await test.pipeline.image(for: thumbnailRequest(test.serve("a.jpg"), 8, 8))
        for event in test.recorder.all {
            switch event {
            case .fetched(let duration, _, _), .fetchFailed(let duration), .decoded(let duration, _, _),
                .decodeFailed(let duration), .derived(let duration, _, _), .previewDecoded(let duration, _, _):
                #expect(duration >= .zero)
            case .retrying(_, let delay, _): #expect(delay >= .zero)
            case .cacheLookup: break
            }
        }
    }

    @Test func cacheTiersHaveStableNames() {
        #expect(
            ImagePipelineEvent.CacheTier.allCases.map(\.rawValue) == [
                "memory_image", "memory_base", "memory_data", "disk_variant", "disk_data",
            ])
    }
}
