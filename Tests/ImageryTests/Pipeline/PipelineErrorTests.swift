import Foundation
import Testing

@testable import Imagery

/// Failures reach every waiter as the typed error they are; a failure is never cached, so the next
/// request tries again; bytes that are no image are forgotten, bytes whose decode only ran out of
/// memory are kept.
@Suite("Pipeline errors")
struct PipelineErrorTests {
    /// The loader's typed errors reach the caller unchanged, through `image(for:)` and `data(for:)`.
    @Test(arguments: [
        DataLoadingError.badStatus(404), .badStatus(503), .tooLarge(limit: 50_000), .timedOut,
        .transport("connection refused"),
        .unsupportedScheme("ftp"), .tooManyRedirects(limit: 5), .empty,
    ])
    func aLoaderErrorReachesTheCallerAsItIs(error: DataLoadingError) async throws {
        let test = TestPipeline()
        test.loader.stub(Self.url, .failure(error))
        await #expect(throws: error) { try await test.pipeline.image(for: ImageRequest(url: Self.url)) }
        await #expect(throws: error) { try await test.pipeline.data(for: ImageRequest(url: Self.url)) }
        #expect(test.recorder.fetchFailures == 2)
        #expect(test.decoder.decodeCount == 0)
        #expect(!error.description.isEmpty)
    }

    static let url = testURL("a.jpg")

    /// A status outside 2xx (and not a 304) is a typed error carrying the status.
    @Test(arguments: [400, 403, 404, 410, 500, 502, 503])
    func aNonSuccessStatusIsATypedError(status: Int) async throws {
        let test = TestPipeline()
        test.loader.stub(Self.url, MockDataLoader.Stub(statusCode: status))
        await #expect(throws: DataLoadingError.badStatus(status)) {
            try await test.pipeline.image(for: ImageRequest(url: Self.url))
        }
    }

    /// Every waiter of a failed download gets its error; none of it is kept; the next request loads again.
    @Test func aFailureReachesEveryWaiterAndIsNotCached() async throws {
        let gate = Gate()
        let failing = Shared(true)
        let test = TestPipeline()
        test.loader.respond(to: Self.url) { _ in
            failing.value ? .failure(DataLoadingError.transport("reset"), gate: gate) : MockDataLoader.Stub()
        }
        let requests = [
            thumbnailRequest(Self.url, 8, 8), thumbnailRequest(Self.url, 16, 16), ImageRequest(url: Self.url),
        ]
        let tasks = requests.flatMap { request in (0..<3).map { _ in test.pipeline.imageTask(for: request) } }
        try await test.loader.waitForLoads(1)
        try await eventually("every image job waits on the download") {
            test.pipeline.dataJobs.waiterCount(for: ImageRequest(url: Self.url).sourceKey) == 3
        }
        gate.open()
        for task in tasks {
            await #expect(throws: DataLoadingError.transport("reset")) { try await task.image }
        }
        #expect(test.loader.loadCount == 1)
        #expect(requests.allSatisfy { test.cached($0) == nil })
        failing.value = false
        #expect(try await test.pipeline.image(for: requests[0]).width == 8)
        #expect(test.loader.loadCount == 2)
    }

    /// A decode that fails for want of memory keeps its source (the bytes are not known to be bad), so
    /// the next request decodes again without the origin; a corrupt or unreadable one is forgotten.
    @Test(arguments: [
        (ImageDecodingError.outOfMemory(reason: "malloc failed"), 1),
        (ImageDecodingError.corrupt(format: .jpeg, reason: "Premature end of JPEG file"), 2),
        (ImageDecodingError.unsupportedFormat, 2),
        (ImageDecodingError.tooManyPixels(width: 100_000, height: 100_000, limit: 1 << 28), 2),
    ])
    func aFailedAllocationKeepsTheSourceOtherDecodeFailuresDoNot(failure: ImageDecodingError, loads: Int) async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg", headers: ["cache-control": "max-age=600"]), 16, 16)
        test.decoder.failNext(failure)
        await #expect(throws: failure) { try await test.pipeline.image(for: request) }
        #expect(test.cached(request) == nil)
        #expect(test.recorder.decodeFailures == 1)
        #expect(try await test.pipeline.image(for: request).width == 16)
        #expect(test.loader.loadCount == loads)
        #expect(test.decoder.decodeCount == 2)
    }

    /// A failed decode reaches every waiter of that decode; waiters of another size of the same source
    /// are not affected (their decode is their own).
    @Test func aDecodeFailureReachesTheWaitersOfThatDecodeOnly() async throws {
        let gate = Gate()
        let test = TestPipeline(configure: { $0.maximumConcurrentDecodes = 1 })
        let url = test.serve("a.jpg", gate: gate)
        let failing = thumbnailRequest(url, 8, 8)
        let tasks = (0..<3).map { _ in test.pipeline.imageTask(for: failing) }
        try await test.loader.waitForLoads(1)
        try await eventually("every task joined") { test.pipeline.imageJobs.waiterCount(for: failing.imageKey) == 3 }
        test.decoder.failNext(ImageDecodingError.outOfMemory(reason: "test"))
        gate.open()
        for task in tasks {
            await #expect(throws: ImageDecodingError.outOfMemory(reason: "test")) { try await task.image }
        }
        #expect(try await test.pipeline.image(for: thumbnailRequest(url, 12, 12)).width == 12)
        #expect(test.decoder.decodeCount == 2)
    }

    /// Bytes that are no image: a typed error, never a crash, and nothing decoded is cached.
    @Test(arguments: [
        (Data(), ImageDecodingError.empty),
        (Data("<html>oops</html>".utf8), .unsupportedFormat),
        (Data("TIMG".utf8), .corrupt(format: nil, reason: "header cut short")),
    ])
    func bytesThatAreNoImageGiveATypedError(bytes: Data, error: ImageDecodingError) async throws {
        let test = TestPipeline()
        test.loader.stub(Self.url, data: bytes)
        let request = thumbnailRequest(Self.url, 8, 8)
        await #expect(throws: error) { try await test.pipeline.image(for: request) }
        #expect(test.cached(request) == nil)
        #expect(await test.pipeline.configuration.dataCache?.entry(for: request.sourceKey.stringValue) == nil)
    }

    /// A 304 to a request the pipeline did not make conditional is an error of its own.
    @Test func anUnexpected304IsAnError() async throws {
        let test = TestPipeline()
        test.loader.stub(Self.url, .notModified())
        await #expect(throws: ImagePipelineError.unexpectedNotModified) {
            try await test.pipeline.data(for: ImageRequest(url: Self.url))
        }
        #expect(ImagePipelineError.unexpectedNotModified.description.contains("304"))
    }

    /// A custom data source's error reaches the caller; the next request calls the source again.
    @Test func aCustomSourcesErrorIsPassedOnAndNotCached() async throws {
        struct SourceError: Error, Equatable {}
        let calls = Counter()
        let test = TestPipeline()
        let request = ImageRequest(id: "flaky") {
            calls.increment()
            if calls.value == 1 { throw SourceError() }
            return TestImage.data()
        }
        await #expect(throws: SourceError()) { try await test.pipeline.image(for: request) }
        #expect(try await test.pipeline.image(for: request).width == 64)
        #expect(calls.value == 2)
        #expect(test.recorder.fetchFailures == 1)
    }

    /// A recipe the decoder refuses (``ImageProcessingError``) is passed on as it is.
    @Test func aProcessingErrorIsPassedOn() async throws {
        let test = TestPipeline()
        let request = thumbnailRequest(test.serve("a.jpg"), 8, 8)
        test.decoder.failNext(ImageProcessingError.emptyResult)
        await #expect(throws: ImageProcessingError.emptyResult) { try await test.pipeline.image(for: request) }
        #expect(try await test.pipeline.image(for: request).width == 8)
    }

    /// Errors describe themselves for people.
    @Test func errorsDescribeThemselves() {
        let loading: [DataLoadingError] = [
            .unsupportedScheme("ftp"), .invalidURL("x"), .badStatus(404), .tooLarge(limit: 1), .timedOut,
            .fileNotFound("/x"),
            .transport("dns"), .empty, .tooManyRedirects(limit: 5),
        ]
        #expect(Set(loading.map(\.description)).count == loading.count)
        #expect(DataLoadingError.badStatus(404).description.contains("404"))
        #expect(DataLoadingError.unsupportedScheme("ftp").description.contains("ftp"))
        let decoding: [ImageDecodingError] = [
            .empty, .unsupportedFormat, .tooManyPixels(width: 1, height: 2, limit: 3),
            .tooManyFrames(frames: 1, width: 2, height: 3, pixelLimit: 4, frameLimit: 5),
            .invalidSize(width: 0, height: 0),
            .corrupt(format: .png, reason: "r"), .outOfMemory(reason: "m"), .overRequestLimit("limit"),
        ]
        #expect(Set(decoding.map(\.description)).count == decoding.count)
    }
}
