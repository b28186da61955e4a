import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

/// The image proxy as a Hummingbird application (``ImageryRoutes`` with every route, served by a
/// server of its own); `imagery serve` and the tests both use it.
/// - Throws: `DiskCacheError` (from ImageryDiskCache) when the cache directory cannot be used,
///   ``ConfigurationFileError`` when presets are not valid.
public func buildApplication(
    configuration: ServerConfiguration,
    logger: Logger = Logger(label: "imagery.server")
) throws -> some ApplicationProtocol {
    let watcher = ConnectionWatcher()
    let imagery = try ImageryRoutes(configuration: configuration, logger: logger, watcher: watcher)
    let router = Router(context: ServerRequestContext.self)
    router.middlewares.add(RequestObservationMiddleware(metrics: imagery.metrics))
    router.middlewares.add(UnmatchedRouteMiddleware())
    imagery.add(to: router, routes: .server)
    // Slow and hostile clients: idle and dripping connections are closed, connections and
    // headers are bounded.
    // A client that goes cancels its request's work (ConnectionWatcher).
    var http1 = HTTP1Channel.Configuration(
        additionalChannelHandlers: [watcher.handler()],
        idleTimeout: .nanoseconds(configuration.listener.idleTimeout.nanoseconds)
    )
    http1.httpDecoder = .init(
        maxHeaderFieldSize: configuration.listener.maximumHeaderBytes / 2,
        maxHeaderListSize: configuration.listener.maximumHeaderBytes,
        maxHeaderFieldCount: 100
    )
    // Hits answered on the event loop, before the router (which answers everything else).
    let hits =
        configuration.listener.answersHitsOnEventLoop
        ? StoredHits(controller: imagery.controller, metrics: imagery.metrics, logger: logger, serverName: "imagery")
        : nil
    let limits = RequestHead.Limits(
        maximumHeadBytes: configuration.listener.maximumHeaderBytes,
        maximumFieldBytes: configuration.listener.maximumHeaderBytes / 2,
        maximumFieldCount: 100
    )
    let summary = ServerThreads.summary(of: imagery.service)
    var application = Application(
        router: router,
        server: .http1(configuration: http1, hits: hits, limits: limits),
        configuration: .init(
            address: .hostname(configuration.listener.host, port: configuration.listener.port), serverName: "imagery",
            availableConnectionsDelegate: .maximum(configuration.listener.maximumConnections, logger: logger)
        ),
        // After Hummingbird's "Server started and listening": what the server derived and runs with.
        onServerRunning: { _ in logger.info("\(summary)", metadata: ["startup": "settings"]) },
        logger: logger
    )
    application.addServices(imagery)
    return application
}

/// When the server stops (SIGTERM, SIGINT): finishes the pipeline's stores (thumbnails handed to
/// the disk cache, the disk cache flushed), shuts the origin HTTP client down, and the shared
/// store's client once its writes in flight are done (for at most 5 s).
struct LoaderShutdown: Service {
    let service: ImageService

    func run() async throws {
        try? await gracefulShutdown()
        await service.pipeline.finishStoring()
        try await service.loader.shutdown()
        if let shared = service.sharedStore {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await shared.waitUntilIdle() }
                group.addTask { try? await Task.sleep(for: .seconds(5)) }
                await group.next()
                group.cancelAll()
            }
            try await shared.client.shutdown()
        }
    }
}

/// Tries the shared tier's bucket once at start (a test object written, read back, deleted) and
/// says what the store answered: credentials, bucket and endpoint mistakes show at once, not as
/// a tier that silently never hits. The server starts and serves either way (the tier is a cache).
struct SharedStoreCheck: Service {
    let store: SharedStore
    let logger: Logger

    func run() async throws {
        if let problem = await store.check() {
            logger.error(
                "\(problem); the shared tier stays on, and is paused while its requests fail",
                metadata: ["shared_store": "check_failed"])
        } else {
            logger.info(
                "the shared tier (\(store.name)) answers: a test object was written, read and deleted",
                metadata: ["shared_store": "ok"])
        }
        try? await gracefulShutdown()  // a service that returns would stop the server
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
