import Foundation
import Testing

@testable import Imagery

/// ``FileDataLoader`` (the pipeline's default loader) on real files in a temporary directory, and
/// the value types of ``DataLoading``.
@Suite("FileDataLoader and DataLoading")
struct FileDataLoaderTests {
    /// A fresh directory for one test, removed afterwards.
    static func withDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imagery-h1-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    @Test func readsAFileReportingItsSizeFirst() async throws {
        try await Self.withDirectory { directory in
            let file = directory.appendingPathComponent("a.timg")
            let bytes = TestImage.data(size: 5000)
            try bytes.write(to: file)
            let announced = EventLog<Int64?>()
            let progress = EventLog<TransferProgress>()
            var request = DataRequest(url: file)
            request.willReceiveBody = { announced.append($0) }
            let response = try await FileDataLoader().load(request) { progress.append($0) }
            #expect(response == DataResponse(data: bytes, statusCode: 200, headers: [:]))
            #expect(announced.all == [5000])
            #expect(progress.all == [TransferProgress(completed: 5000, total: 5000)])
        }
    }

    @Test func aMissingFileOrADirectoryIsNotFound() async throws {
        try await Self.withDirectory { directory in
            let missing = directory.appendingPathComponent("nope.jpg")
            await #expect(throws: DataLoadingError.fileNotFound(missing.path)) {
                try await FileDataLoader().loadData(for: missing)
            }
            await #expect(throws: DataLoadingError.fileNotFound(directory.path)) {
                try await FileDataLoader().loadData(for: directory)
            }
        }
    }

    @Test func aFileOverTheLimitIsRefusedBeforeItIsRead() async throws {
        try await Self.withDirectory { directory in
            let file = directory.appendingPathComponent("big.timg")
            try Data(count: 2000).write(to: file)
            let announced = Counter()
            var request = DataRequest(url: file)
            request.willReceiveBody = { _ in announced.increment() }
            await #expect(throws: DataLoadingError.tooLarge(limit: 1000)) {
                try await FileDataLoader(maximumSize: 1000).load(request) { _ in }
            }
            #expect(announced.value == 0)
            #expect(try await FileDataLoader(maximumSize: 2000).loadData(for: file).count == 2000)
        }
    }

    @Test(arguments: [
        "https://origin.test/a.jpg", "http://origin.test/a.jpg", "ftp://origin.test/a.jpg",
        "data:image/png;base64,AA==",
    ])
    func onlyFileURLsAreLoaded(url: String) async throws {
        let scheme = String(url.prefix { $0 != ":" })
        await #expect(throws: DataLoadingError.unsupportedScheme(scheme)) {
            try await FileDataLoader().loadData(for: URL(string: url)!)
        }
    }

    @Test func aCancelledLoadThrowsCancellation() async throws {
        try await Self.withDirectory { directory in
            let file = directory.appendingPathComponent("a.timg")
            try TestImage.data().write(to: file)
            let started = Gate()
            let task = Task {
                try await started.wait()
                return try await FileDataLoader().loadData(for: file)
            }
            task.cancel()
            started.open()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }

    /// A refusal from `willReceiveBody` (a memory budget's) fails the load with that error.
    @Test func aRefusalBeforeTheBodyFailsTheLoad() async throws {
        try await Self.withDirectory { directory in
            let file = directory.appendingPathComponent("a.timg")
            try TestImage.data().write(to: file)
            var request = DataRequest(url: file)
            request.willReceiveBody = { _ in throw MemoryBudgetError.overloaded(retryAfter: 1) }
            await #expect(throws: MemoryBudgetError.overloaded(retryAfter: 1)) {
                try await FileDataLoader().load(request) { _ in }
            }
        }
    }

    /// The pipeline with its default loader reads files, fresh until evicted, and never copies them to disk.
    @Test func thePipelinesDefaultLoaderReadsFiles() async throws {
        try await Self.withDirectory { directory in
            let file = directory.appendingPathComponent("a.timg")
            try TestImage.data(width: 30, height: 20, tag: 7).write(to: file)
            let disk = MockDataCache()
            var configuration = ImagePipeline.Configuration(decoder: MockImageDecoder())
            configuration.diskCache = disk
            configuration.encoder = MockImageEncoder()
            let pipeline = ImagePipeline(configuration: configuration)
            let image = try await pipeline.image(for: ImageRequest(url: file, thumbnail: .init(width: 10, height: 10)))
            #expect((image.width, image.testTag) == (10, 7))
            await pipeline.waitForStores()
            #expect(disk.storeCount == 0)
            let missing = directory.appendingPathComponent("missing.timg")
            await #expect(throws: DataLoadingError.fileNotFound(missing.path)) {
                try await pipeline.data(for: ImageRequest(url: missing))
            }
        }
    }

    @Test func dataRequestsCompareByURLAndHeadersOnly() {
        var first = DataRequest(url: testURL("a.jpg"), headers: ["Accept": "image/webp"])
        let second = DataRequest(url: testURL("a.jpg"), headers: ["Accept": "image/webp"])
        first.willReceiveBody = { _ in }
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first != DataRequest(url: testURL("a.jpg")))
        #expect(first != DataRequest(url: testURL("b.jpg"), headers: ["Accept": "image/webp"]))
    }

    @Test(arguments: [
        (TransferProgress(completed: 0, total: 100), 0.0 as Double?),
        (TransferProgress(completed: 50, total: 100), 0.5),
        (TransferProgress(completed: 100, total: 100), 1),
        (TransferProgress(completed: 150, total: 100), 1),
        (TransferProgress(completed: 10, total: nil), nil),
        (TransferProgress(completed: 10, total: 0), nil),
    ])
    func progressFractions(progress: TransferProgress, fraction: Double?) {
        #expect(progress.fraction == fraction)
    }

    @Test func aDataResponseDefaultsToA200WithNoHeaders() {
        let response = DataResponse(data: Data([1, 2, 3]))
        #expect(response.statusCode == 200)
        #expect(response.headers.isEmpty)
    }
}
