import Foundation
import Hummingbird
import HummingbirdTesting
import Imagery
import ImageryDiskCache
import ImageryServer
import ImageryTestSupport
import Logging

/// How a server test reaches the server unless it says: over 127.0.0.1 (`.live`: every request through
/// the HTTP server and its channel handlers, hits answered on the event loop), or, with
/// `IMAGERY_TEST_SERVER=router`, straight into the router. `IMAGERY_TEST_HITS_ON_EVENT_LOOP=0` turns
/// ``ServerConfiguration/answersHitsOnEventLoop`` off: the suite run so checks both paths of a hit.
let defaultSetup: ServerSetup = ProcessInfo.processInfo.environment["IMAGERY_TEST_SERVER"] == "router" ? .router : .live

/// How a test reaches its server: over 127.0.0.1 (``runLive(_:timeout:_:)``), or straight into the router
/// (HummingbirdTesting's `.router`).
enum ServerSetup {
    case live
    case router
}

/// ``ServerConfiguration/answersHitsOnEventLoop`` in this run's servers (unless a test says).
let hitsOnEventLoop = ProcessInfo.processInfo.environment["IMAGERY_TEST_HITS_ON_EVENT_LOOP"] != "0"

/// The proxy (no disk cache unless asked) in front of a real origin on 127.0.0.1.
func withServer(
    _ setup: ServerSetup = defaultSetup,
    origin: TestOrigin? = nil,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol, TestOrigin) async throws -> Void
) async throws {
    let origin = if let origin { origin } else { try await TestOrigin.serving(directory: Fixtures.directory) }
    do {
        try await serve(setup, origin: origin, configure: configure) { client in try await body(client, origin) }
    } catch {
        try? await origin.shutdown()
        throw error
    }
    try await origin.shutdown()
}

/// One run of the proxy in front of `origin` (which outlives it): call it again with the same
/// `cacheDirectory` for a restart. A directory is opened by one cache at a time, and a run's cache
/// closes once its queued writes are done: a run returns only then (up to 10 s), so what it stored
/// is on disk when it returns.
func serve(
    _ setup: ServerSetup = defaultSetup,
    origin: TestOrigin,
    logger: Logger = Logger(label: "imagery.server"),
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.cacheDirectory = nil
    configuration.privateNetworkHosts = ["127.0.0.1"]  // the test origin; every other private host stays refused
    // The test client keeps one connection; inside the whole suite on 2 cores a test can leave it idle
    // past the default 30 s, and the server closes it ("I/O on closed channel" in CI). Tests of the
    // idle timeout set their own.
    configuration.idleTimeout = .seconds(600)
    configuration.answersHitsOnEventLoop = hitsOnEventLoop
    configure(&configuration)
    do {  // the application (and its cache) is released at the end of this block
        let application = try await whenDirectoryIsFree(configuration.cacheDirectory) { try buildApplication(configuration: configuration, logger: logger) }
        switch setup {
        case .live: try await runLive(application) { client in try await body(client) }
        case .router: try await application.test(.router) { client in try await body(client) }
        }
    }
    if let directory = configuration.cacheDirectory {
        _ = try await whenDirectoryIsFree(directory) { try DiskCache(directory: directory) }  // the run's cache has closed
    }
}

/// `open()`, retried while a cache still holds `directory` (for up to 10 s).
private func whenDirectoryIsFree<T>(_ directory: URL?, _ open: () throws -> T) async throws -> T {
    let deadline = ContinuousClock.now + .seconds(10)
    while true {
        do {
            return try open()
        } catch let error as DiskCacheError where directory != nil && error.message.contains("in use") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Runs `body` with a header-controlled origin (``TestOrigin/caching(failing:)``) and a cache
/// directory, both outliving every server run `body` makes (restarts share them).
func withOriginAndDirectory(_ body: (TestOrigin, URL) async throws -> Void) async throws {
    let origin = try await TestOrigin.caching()
    do {
        try await withTemporaryDirectory { directory in try await body(origin, directory) }
    } catch {
        try? await origin.shutdown()
        throw error
    }
    try await origin.shutdown()
}

/// `GET uri`: status, headers and body.
func get(_ client: any TestClientProtocol, _ uri: String, headers: HTTPFields = [:]) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: Data) {
    try await client.execute(uri: uri, method: .get, headers: headers) { ($0.status, $0.headers, $0.data) }
}

/// The server's `/metrics`, parsed.
func metrics(_ client: any TestClientProtocol) async throws -> [String: Double] {
    try await client.execute(uri: "/metrics", method: .get) { Metric.parse(String(buffer: $0.body)) }
}

/// How many lookups of a cache tier gave `result` (`hit` or `miss`), from parsed metrics.
func lookups(_ metrics: [String: Double], _ tier: String, _ result: String) -> Double {
    metrics[#"imagery_cache_lookups_total{tier="\#(tier)",result="\#(result)"}"#] ?? 0
}

/// `/image?url=<origin url of path>&<rest>`.
func imageURI(_ origin: TestOrigin, _ path: String, _ rest: String = "") -> String {
    let source = origin.url(path).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    return "/image?url=\(source)" + (rest.isEmpty ? "" : "&" + rest)
}

struct ErrorBody: Decodable, Equatable {
    let error: String
    let message: String
}

extension TestResponse {
    var errorBody: ErrorBody? { try? JSONDecoder().decode(ErrorBody.self, from: Data(buffer: body)) }
    var data: Data { Data(buffer: body) }
}
