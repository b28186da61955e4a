import Foundation
import Testing

@testable import Imagery

/// A pipeline on fakes, in process: ``MockDataLoader`` for the origin, ``MockImageDecoder`` (or
/// ``MockDerivingDecoder``) for the codec, ``ManualTime`` for the date, ``PipelineEventRecorder``
/// as its observer, and optionally ``MockDataCache`` as its disk cache with ``MockImageEncoder``.
/// No TCP, no libvips, no sleeping: a test moves time with ``time`` and orders work with gates.
struct TestPipeline {
    let loader: MockDataLoader
    /// Counts decodes (the deriving decoder's inner one when bases are on).
    let decoder: MockImageDecoder
    /// Set when the pipeline keeps bases (``make(deriving:)``).
    let deriving: MockDerivingDecoder?
    let recorder = PipelineEventRecorder()
    let time: ManualTime
    let disk: MockDataCache?
    let encoder: MockImageEncoder?
    let pipeline: ImagePipeline

    /// The date every test's time starts at (a fixed one: HTTP dates in headers are whole seconds).
    static let epoch = Date(timeIntervalSince1970: 1_750_000_000)

    /// - Parameters:
    ///   - loader: The origin; default an empty one (every URL a 404 until stubbed).
    ///   - deriving: Whether the decoder keeps bases (``ThumbnailDeriving``); default no.
    ///   - disk: The disk cache, with a ``MockImageEncoder`` for thumbnails; default none. Pipelines
    ///     made one after another on one disk cache (and one loader and time) stand for restarts.
    ///   - time: The pipeline's time; default a new ``ManualTime`` at ``epoch``.
    ///   - configure: Changes to the configuration, after the defaults above (2 decode threads,
    ///     the fake time, the recorder, no retries: a retry test sets its own policy) are set.
    init(
        loader: MockDataLoader = MockDataLoader(), deriving: Bool = false, disk: MockDataCache? = nil,
        time: ManualTime? = nil, configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
    ) {
        self.loader = loader
        self.time = time ?? ManualTime(date: Self.epoch)
        let derivingDecoder = deriving ? MockDerivingDecoder() : nil
        self.deriving = derivingDecoder
        self.decoder = derivingDecoder?.decoder ?? MockImageDecoder()
        self.disk = disk
        self.encoder = disk == nil ? nil : MockImageEncoder()
        var configuration = ImagePipeline.Configuration(decoder: derivingDecoder ?? decoder, dataLoader: loader)
        configuration.maximumConcurrentDecodes = 2
        configuration.time = self.time.source
        configuration.observer = recorder
        configuration.retryPolicy = .never
        configuration.diskCache = disk
        configuration.encoder = encoder
        configure(&configuration)
        self.pipeline = ImagePipeline(configuration: configuration)
    }

    /// Another pipeline on this one's loader, disk cache and time, with empty memory: a restart.
    func restarted(
        deriving: Bool = false, configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
    ) -> TestPipeline {
        TestPipeline(loader: loader, deriving: deriving, disk: disk, time: time, configure: configure)
    }

    /// Stubs `name` at the test origin with a ``TestImage`` and returns its URL.
    @discardableResult
    func serve(
        _ name: String, width: Int = 64, height: Int = 48, tag: UInt8 = 1, headers: [String: String] = [:],
        chunks: Int = 1, gate: Gate? = nil
    ) -> URL {
        let url = testURL(name)
        loader.stub(
            url,
            MockDataLoader.Stub(
                data: TestImage.data(width: width, height: height, tag: tag), headers: headers, chunks: chunks,
                gate: gate
            ))
        return url
    }

    /// Moves the pipeline's time forward.
    func advance(seconds: Int) {
        time.advance(by: .seconds(seconds))
    }

    /// The decoded image `request` would get from memory now (nil: none, or not fresh).
    func cached(_ request: ImageRequest) -> Image? { pipeline.cachedImage(for: request) }
}

/// A URL at the tests' origin (an `https` URL: the pipeline treats its responses as HTTP).
func testURL(_ name: String) -> URL {
    URL(string: "https://origin.test/\(name)")!
}

/// A request for a thumbnail of `width` × `height` (cover) of `url`.
func thumbnailRequest(
    _ url: URL, _ width: Int, _ height: Int, priority: ImageRequest.Priority = .normal
) -> ImageRequest {
    ImageRequest(url: url, thumbnail: .init(width: width, height: height), priority: priority)
}

/// An HTTP date `offset` seconds from the tests' epoch, as a header value.
func httpDate(_ offset: Int = 0) -> String {
    HTTPDate.format(TestPipeline.epoch.addingTimeInterval(TimeInterval(offset)))
}

extension ImagePipeline {
    /// Runs `count` loads of `request` at once and returns their images.
    func images(for request: ImageRequest, count: Int) async throws -> [Image] {
        try await withThrowingTaskGroup(of: Image.self) { group in
            for _ in 0..<count { group.addTask { try await self.image(for: request) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }
}

extension ImageTask {
    /// Whether the task failed with `CancellationError`.
    var wasCancelled: Bool {
        if case .failure(let error) = phase { return error is CancellationError }
        return false
    }

    /// The image of a task that succeeded.
    var loadedImage: Image? {
        if case .success(let image) = phase { return image }
        return nil
    }
}

extension MockDataLoader {
    /// Serves `url` as an origin that honours validators: a request whose `If-None-Match` is the
    /// current `etag` (or whose `If-Modified-Since` is the current `last-modified`) gets a 304 with
    /// `notModifiedHeaders`; any other gets `data` with `headers`. `version` is read at each request,
    /// so a test can change the source between loads.
    func serveRevalidating(
        _ url: URL, notModifiedHeaders: [String: String] = [:],
        version: @escaping @Sendable () -> (data: Data, headers: [String: String])
    ) {
        respond(to: url) { request in
            let (data, headers) = version()
            let etag = headers["etag"]
            let lastModified = headers["last-modified"]
            if let etag, request.headers["If-None-Match"] == etag {
                return .notModified(headers: notModifiedHeaders)
            }
            if etag == nil, let lastModified, request.headers["If-Modified-Since"] == lastModified {
                return .notModified(headers: notModifiedHeaders)
            }
            return Stub(data: data, headers: headers)
        }
    }

    /// ``serveRevalidating(_:notModifiedHeaders:version:)`` of one version that never changes.
    func serveRevalidating(
        _ url: URL, data: Data = TestImage.data(), headers: [String: String], notModifiedHeaders: [String: String] = [:]
    ) {
        serveRevalidating(url, notModifiedHeaders: notModifiedHeaders) { (data, headers) }
    }
}

/// A value tasks share and a test changes (the current version of a source, say).
final class Shared<Value: Sendable>: Sendable {
    private let storage: Locked<Value>
    init(_ value: Value) { storage = Locked(value) }
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
