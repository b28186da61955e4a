import Foundation
import Imagery
import ImageryDiskCache
@testable import ImageryHTTP
import ImageryTestSupport
import Testing

/// Transfers that stop part way keep their bytes and resume with `Range` / `If-Range`, against a
/// real origin that serves ranges; never a body joined from two versions of the source.
@Suite("Resumable downloads")
struct ResumableDownloadTests {
    static let fixture = try! Fixtures.data("rocket.jpg")  // 112 525 bytes

    func withRangeOrigin(
        version: TestOrigin.SourceVersion = .init(), loader configuration: HTTPDataLoader.Configuration = .init(),
        _ body: (TestOrigin, HTTPDataLoader) async throws -> Void
    ) async throws {
        let origin = try await TestOrigin.ranges(version: version)
        let loader = HTTPDataLoader(configuration: configuration)
        do {
            try await body(origin, loader)
        } catch {
            try? await loader.shutdown()
            try? await origin.shutdown()
            throw error
        }
        try await loader.shutdown()
        try await origin.shutdown()
    }

    @Test func aTransferCutHalfWayResumesWithTheRestOnly() async throws {
        try await withRangeOrigin { origin, loader in
            let url = origin.url("rocket.jpg?cut=56000")
            await #expect(throws: DataLoadingError.self) { try await loader.loadData(for: url) }
            let progress = Recorded<TransferProgress>()
            let response = try await loader.load(DataRequest(url: url)) { progress.append($0) }
            let seen = progress.all
            #expect(response.data == Self.fixture)
            #expect(response.statusCode == 200)
            // What arrived before the cut (the client may not read all 56 000 bytes the origin sent).
            #expect(origin.requests.count == 2)
            let kept = try #require(seen.first?.completed)
            #expect(kept >= 16_384 && kept <= 56_000, "progress starts from the kept bytes")
            #expect(origin.requests[1].headers["range"] == "bytes=\(kept)-")
            #expect(origin.requests[1].headers["if-range"] == "\"v1\"")
            #expect(seen.last == TransferProgress(completed: 112_525, total: 112_525))
            // Used up: a third load is a whole one.
            _ = try await loader.loadData(for: origin.url("rocket.jpg"))
            #expect(origin.requests[2].headers["range"] == nil)
        }
    }

    @Test func aChangedSourceIsLoadedWholeNeverJoined() async throws {
        let version = TestOrigin.SourceVersion()
        try await withRangeOrigin(version: version) { origin, loader in
            let url = origin.url("rocket.jpg?cut=56000")
            await #expect(throws: DataLoadingError.self) { try await loader.loadData(for: url) }
            version.current = 2
            let data = try await loader.loadData(for: url)
            #expect(origin.requests[1].headers["if-range"] == "\"v1\"")
            #expect(data == Data(Self.fixture.reversed()), "the whole new version, not v1's half and v2's rest")
        }
    }

    @Test func aCancelledTransferKeepsItsBytes() async throws {
        try await withRangeOrigin { origin, loader in
            // Three chunks, then the origin stops: the cancel lands mid-transfer however busy the machine is.
            let url = origin.url("rocket.jpg?chunk=16384&stall_after=49152")
            let received = Counter()
            let task = Task { try await loader.loadData(for: url) { _ in received.increment() } }
            try await waitUntil { received.value >= 3 }  // the start and two chunks at least
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            let data = try await loader.loadData(for: url)
            #expect(data == Self.fixture)
            let range = try #require(origin.requests.last?.headers["range"])
            let start = try #require(Int(range.dropFirst(6).dropLast()))
            #expect(start >= 16384 && start <= 49152, "\(range)")
        }
    }

    /// An origin that does not say it serves ranges gets no `Range`; a conditional request
    /// (a revalidation) never resumes.
    @Test func onlyResumesWhereTheOriginServesRanges() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        let loader = HTTPDataLoader()
        let url = origin.url("rocket.jpg?chunk=16384&chunk_delay_ms=200")
        let received = Counter()
        let task = Task { try await loader.loadData(for: url) { _ in received.increment() } }
        try await waitUntil { received.value >= 3 }
        task.cancel()
        _ = try? await task.value
        _ = try await loader.loadData(for: url)
        #expect(origin.requests.last?.headers["range"] == nil)
        try await loader.shutdown()
        try await origin.shutdown()
    }

    @Test func keptBytesAreBoundedInMemory() async {
        let store = ResumableData(memoryLimit: 100_000)
        await store.keep(.init(data: Data(count: 60_000), validator: "\"a\""), for: "a")
        await store.keep(.init(data: Data(count: 60_000), validator: "\"b\""), for: "b")
        await store.keep(.init(data: Data(count: 1_000), validator: "\"c\""), for: "c")  // below minimumBytes
        #expect(await store.take("a") == nil, "the least recently kept went first")
        #expect(await store.take("b")?.data.count == 60_000)
        #expect(await store.take("b") == nil, "taken once")
        #expect(await store.take("c") == nil)
    }

    /// With a disk cache, kept bytes live there: another loader (after a restart) resumes them.
    @Test func keptOnDiskAcrossLoaders() async throws {
        try await withTemporaryDirectory { directory in
            let disk = try DiskCache(directory: directory)
            var configuration = HTTPDataLoader.Configuration()
            configuration.resumableData = ResumableData(disk: disk)
            // What is checked is what is kept, not how fast: a full suite on 2 cores once kept this
            // load's first response past the default deadline (nothing arrived, nothing kept).
            configuration.timeout = .seconds(120)
            let origin = try await TestOrigin.ranges()
            let url = origin.url("rocket.jpg?cut=40000")
            let first = HTTPDataLoader(configuration: configuration)
            await #expect(throws: DataLoadingError.self) { try await first.loadData(for: url) }
            try await first.shutdown()
            let second = HTTPDataLoader(configuration: configuration)
            #expect(try await second.loadData(for: url) == Self.fixture)
            #expect(origin.requests.last?.headers["range"]?.hasPrefix("bytes=") == true)
            await disk.flush()
            #expect(disk.count == 0, "used up")
            try await second.shutdown()
            try await origin.shutdown()
        }
    }

    /// Through the pipeline: a task cancelled part way (the cell scrolled away for good) leaves
    /// its bytes; the next request for the image asks only for the rest.
    @Test func aCancelledImageTaskResumesLater() async throws {
        let origin = try await TestOrigin.ranges()
        try await withHarness(origin: origin) { harness in
            let request = ImageRequest(url: origin.url("rocket.jpg?chunk=16384&stall_after=49152"), thumbnail: .init(width: 32, height: 32))
            let task = harness.pipeline.imageTask(for: request)
            // Cancelled once the bytes before the stall are in (by bytes, not by progress events: on a
            // loaded machine chunks arrive together, fewer events, and counting three never ended).
            for await event in task.events {
                if case .progress(let progress) = event, progress.completed >= 49152 { task.cancel() }
            }
            let image = try await harness.pipeline.image(for: request)
            #expect(image.width == 32)
            #expect(origin.requests.count == 2)
            #expect(origin.requests.last?.headers["range"]?.hasPrefix("bytes=") == true)
        }
    }
}
