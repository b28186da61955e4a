import Foundation
import Imagery
import ImageryDiskCache
import ImageryTestSupport
import Testing

@testable import ImageryHTTP

/// Transfers that stop part way keep their bytes and resume with `Range` / `If-Range`, against a
/// real origin that serves ranges; never a body joined from two versions of the source.
@Suite("Resumable downloads")
struct ResumableDownloadTests {
    static let fixture = try! Fixtures.data("rocket.jpg")  // 112 525 bytes

    func withRangeOrigin(
        version: TestOrigin.SourceVersion = .init(), loader configuration: HTTPDataLoader.Configuration = .patient,
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

    /// Loads `url` in a task of its own, reporting the bytes received: for a test that stops the
    /// transfer once the origin's held bytes (`held_at`) have arrived.
    static func startLoad(_ loader: HTTPDataLoader, _ url: URL) -> (
        task: Task<Data, any Error>, received: Recorded<Int64>
    ) {
        let received = Recorded<Int64>()
        let task = Task { try await loader.loadData(for: url) { received.append($0.completed) } }
        return (task, received)
    }

    /// Waits until the load has received `bytes` (the origin holds the rest).
    static func waitUntilReceived(_ received: Recorded<Int64>, _ bytes: Int64) async throws {
        try await waitUntil("\(bytes) bytes received") { received.all.contains(bytes) }
    }

    /// The origin sends 56 000 bytes and holds the rest; once they are in, it closes the connection
    /// (`cut`): the loader keeps exactly those bytes, and the next load asks for the rest only.
    @Test func aTransferCutHalfWayResumesWithTheRestOnly() async throws {
        try await withRangeOrigin { origin, loader in
            let url = origin.url("rocket.jpg?cut=56000&held_at=56000&held=cut")
            let first = Self.startLoad(loader, url)
            try await Self.waitUntilReceived(first.received, 56_000)
            origin.release("cut")
            await #expect(throws: DataLoadingError.self) { try await first.task.value }
            let progress = Recorded<TransferProgress>()
            let response = try await loader.load(DataRequest(url: url)) { progress.append($0) }
            let seen = progress.all
            #expect(response.data == Self.fixture)
            #expect(response.statusCode == 200)
            #expect(origin.requests.count == 2)
            #expect(seen.first?.completed == 56_000, "progress starts from the kept bytes")
            #expect(origin.requests[1].headers["range"] == "bytes=56000-")
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
            let url = origin.url("rocket.jpg?cut=56000&held_at=56000&held=cut")
            let first = Self.startLoad(loader, url)
            try await Self.waitUntilReceived(first.received, 56_000)
            origin.release("cut")
            await #expect(throws: DataLoadingError.self) { try await first.task.value }
            version.current = 2
            let data = try await loader.loadData(for: url)
            #expect(origin.requests[1].headers["if-range"] == "\"v1\"")
            #expect(data == Data(Self.fixture.reversed()), "the whole new version, not v1's half and v2's rest")
        }
    }

    /// Cancelled while the origin holds the rest after 48 KB: those bytes are kept, and resumed.
    @Test func aCancelledTransferKeepsItsBytes() async throws {
        try await withRangeOrigin { origin, loader in
            let url = origin.url("rocket.jpg?held_at=49152&held=first")
            let first = Self.startLoad(loader, url)
            try await Self.waitUntilReceived(first.received, 49_152)
            first.task.cancel()
            await #expect(throws: CancellationError.self) { try await first.task.value }
            origin.release("first")  // the next load of the URL is not held
            let data = try await loader.loadData(for: url)
            #expect(data == Self.fixture)
            #expect(origin.requests.last?.headers["range"] == "bytes=49152-")
        }
    }

    /// An origin that does not say it serves ranges gets no `Range`; a conditional request
    /// (a revalidation) never resumes.
    @Test func onlyResumesWhereTheOriginServesRanges() async throws {
        let origin = try await TestOrigin.serving(directory: Fixtures.directory)
        let loader = HTTPDataLoader(configuration: .patient)
        let url = origin.url("rocket.jpg?held_at=49152&held=first")
        let first = Self.startLoad(loader, url)
        try await Self.waitUntilReceived(first.received, 49_152)
        first.task.cancel()
        _ = try? await first.task.value
        origin.release("first")
        _ = try await loader.loadData(for: url)
        #expect(origin.requests.count == 2)
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
            var configuration = HTTPDataLoader.Configuration.patient
            configuration.resumableData = ResumableData(disk: disk)
            let origin = try await TestOrigin.ranges()
            let url = origin.url("rocket.jpg?cut=40000&held_at=40000&held=cut")
            let first = HTTPDataLoader(configuration: configuration)
            let load = Self.startLoad(first, url)
            try await Self.waitUntilReceived(load.received, 40_000)
            origin.release("cut")
            await #expect(throws: DataLoadingError.self) { try await load.task.value }
            try await first.shutdown()
            let second = HTTPDataLoader(configuration: configuration)
            #expect(try await second.loadData(for: url) == Self.fixture)
            #expect(origin.requests.last?.headers["range"] == "bytes=40000-")
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
            let url = origin.url("rocket.jpg?held_at=49152&held=first")
            let request = ImageRequest(url: url, thumbnail: .init(width: 32, height: 32))
            let task = harness.pipeline.imageTask(for: request)
            // Cancelled once the bytes before the hold are in (by the task's phase: events are from
            // the moment a stream is made, and these may have come before).
            try await waitUntil("48 KB received") {
                if case .loading(let progress) = task.phase { progress.completed >= 49152 } else { false }
            }
            task.cancel()
            _ = try? await task.image
            // The task ends at once; the download's bytes are kept as its load unwinds.
            let kept = try #require(harness.loader.configuration.resumableData)
            let key = try #require(HTTPDataLoader.resumeKey(DataRequest(url: url)))
            try await waitUntil("the stopped download's bytes kept") { await kept.keptByteCount(for: key) == 49152 }
            origin.release("first")
            let image = try await harness.pipeline.image(for: request)
            #expect(image.width == 32)
            #expect(origin.requests.count == 2)
            #expect(origin.requests.last?.headers["range"] == "bytes=49152-")
        }
    }
}
