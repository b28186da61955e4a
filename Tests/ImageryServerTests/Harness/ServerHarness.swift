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
/// closes once its queued writes are done: a run returns only then, so what it stored is on disk when
/// it returns.
///
/// Its timeouts are hang guards (``hangGuard``), so that how fast a loaded machine runs never decides
/// an answer: the idle timeout (the test client keeps one connection; inside the whole suite on 2 cores
/// a test can leave it idle past the default 30 s, and the server closed it: "I/O on closed channel" in
/// CI), the request timeout (a page's burst took 92 s inside the suite: 504s at the default 30 s) and the
/// origin timeout (a download met the default 10 s after 48 s). Tests of a timeout set their own.
func serve(
    _ setup: ServerSetup = defaultSetup,
    origin: TestOrigin,
    logger: Logger = Logger(label: "imagery.server"),
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    var configuration = ServerConfiguration()
    configuration.listener.port = 0
    configuration.caching.directory = nil
    // the test origin; every other private host stays refused
    configuration.origins.privateNetworkHosts = ["127.0.0.1"]
    configuration.listener.idleTimeout = hangGuard
    configuration.limits.requestTimeout = hangGuard
    configuration.origins.timeout = hangGuard
    configuration.listener.answersHitsOnEventLoop = hitsOnEventLoop
    configure(&configuration)
    do {  // the application (and its cache) is released at the end of this block
        let application = try await whenDirectoryIsFree(configuration.caching.directory) {
            try buildApplication(configuration: configuration, logger: logger)
        }
        switch setup {
        case .live: try await runLive(application) { client in try await body(client) }
        case .router: try await application.test(.router) { client in try await body(client) }
        }
    }
    if let directory = configuration.caching.directory {
        // the run's cache has closed
        _ = try await whenDirectoryIsFree(directory) { try DiskCache(directory: directory) }
    }
}

/// `open()`, retried while a cache still holds `directory` (the previous run's, until its last
/// reference is released: however long that takes, under the hang guard).
private func whenDirectoryIsFree<T>(_ directory: URL?, _ open: () throws -> T) async throws -> T {
    try await waitFor("the cache directory \(directory?.path ?? "") to be free") { () throws -> T? in
        do {
            return try open()
        } catch let error as DiskCacheError where directory != nil && error.message.contains("in use") {
            return nil
        }
    }
}

/// Time that stands still at the current whole second (a response's `Date` is whole seconds too),
/// until the test moves it (``ManualTime/advance(by:)``): give its ``ManualTime/source`` to
/// ``ServerConfiguration/time`` (and the caching origin's `time`).
func stillTime() -> ManualTime {
    ManualTime(date: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
}

/// Runs `body` with a header-controlled origin (``TestOrigin/caching(failing:time:)``, its `Date` read
/// from `time`) and a cache directory, both outliving every server run `body` makes (restarts share them).
func withOriginAndDirectory(time: TimeSource = .system, _ body: (TestOrigin, URL) async throws -> Void) async throws {
    let origin = try await TestOrigin.caching(time: time)
    do {
        try await withTemporaryDirectory { directory in try await body(origin, directory) }
    } catch {
        try? await origin.shutdown()
        throw error
    }
    try await origin.shutdown()
}

/// `GET uri`: status, headers and body.
func get(_ client: any TestClientProtocol, _ uri: String, headers: HTTPFields = [:]) async throws -> (
    status: HTTPResponse.Status, headers: HTTPFields, body: Data
) {
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
