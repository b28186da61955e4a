import Hummingbird
import Logging
import ServiceLifecycle

/// Imagery's routes in a Hummingbird application of your own: `/image`, `/info` and the imgproxy and
/// thumbor URL syntaxes beside your routes, behind your middleware (authentication, logging), served by
/// your server. `imagery serve` is the same routes in an application of its own (`buildApplication`).
///
/// ```swift
/// let imagery = try ImageryRoutes(configuration: configuration)
/// let router = Router()
/// router.add(middleware: MyAuthentication())
/// router.get("hello") { _, _ in "hello" }
/// imagery.add(to: router, at: "/media")       // /media/image?url=..., /media/unsafe/300x200/...
/// var app = Application(router: router)
/// app.addServices(imagery)                     // its caches, clients and memory, with the app's lifecycle
/// try await app.runService()
/// ```
///
/// Give `add(to:at:routes:)` the router itself and the whole prefix: the imgproxy and thumbor paths
/// are read after it. Without a prefix the syntaxes take every path the host's routes do not.
/// Requests time out after ``ServerConfiguration/Limits/requestTimeout`` as in `imagery serve`; what the host's
/// server does not tell (a client that left) does not cancel their work early.
public struct ImageryRoutes: Service {
    /// Which routes ``add(to:at:routes:)`` adds.
    public struct Selection: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// `GET` and `HEAD /image?url=...&w=...`: the native query.
        public static let image = Selection(rawValue: 1 << 0)
        /// `/info?url=...`: a source's size, format and placeholders, as JSON.
        public static let info = Selection(rawValue: 1 << 1)
        /// imgproxy's and thumbor's URLs (as configured: ``ServerConfiguration/Imgproxy/enabled``,
        /// ``ServerConfiguration/Thumbor/enabled``): every other path under the prefix.
        public static let dialects = Selection(rawValue: 1 << 2)
        /// `/health` and thumbor's `/healthcheck`.
        public static let health = Selection(rawValue: 1 << 3)
        /// `/metrics`: Prometheus text (requests through the routes' caches, memory, origin fetches).
        public static let metrics = Selection(rawValue: 1 << 4)
        /// The gallery page `/` and its files (`imagery serve` only: its links are at the root).
        static let gallery = Selection(rawValue: 1 << 5)

        /// `/image`, `/info` and the URL syntaxes.
        public static let standard: Selection = [.image, .info, .dialects]
        /// Everything `imagery serve` answers.
        static let server: Selection = [.standard, .health, .metrics, .gallery]
    }

    let service: ImageService
    let controller: ImageController
    let metrics: ServerMetrics
    let forwarding: OwnerForwarding?
    let logger: Logger

    /// The routes' work: caches (memory, the disk cache of ``ServerConfiguration/Caching/directory``),
    /// the origin client, the memory budget, as ``ServerConfiguration`` sets them.
    /// - Throws: `DiskCacheError` (from ImageryDiskCache) when the cache directory cannot be used,
    ///   ``ConfigurationFileError`` when presets are not valid.
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "imagery.server")) throws {
        var configuration = configuration
        // that takes `imagery serve`'s own server (its channel handlers)
        configuration.listener.answersHitsOnEventLoop = false
        try self.init(configuration: configuration, logger: logger, watcher: ConnectionWatcher())
    }

    init(configuration: ServerConfiguration, logger: Logger, watcher: ConnectionWatcher) throws {
        let metrics = ServerMetrics()
        let service = try ImageService(configuration: configuration, observer: metrics, logger: logger)
        self.service = service
        self.metrics = metrics
        self.logger = logger
        let forwarding = configuration.cluster.selfAddress.map { this in
            OwnerForwarding(
                instances: configuration.cluster.instances, this: this,
                requestTimeout: configuration.limits.requestTimeout,
                metrics: metrics, logger: logger, time: configuration.time
            )
        }
        self.forwarding = forwarding
        self.controller = try ImageController(service: service, watcher: watcher, forwarding: forwarding)
    }

    /// Adds `routes` to `router` under `prefix` (`"/media"`; `""`: at the root).
    public func add<Context: RequestContext>(
        to router: some RouterMethods<Context>, at prefix: String = "", routes: Selection = .standard
    ) {
        let prefix = prefix.split(separator: "/").joined(separator: "/")
        let group = router.group(RouterPath(prefix))
        controller.addRoutes(to: group, prefix: prefix.isEmpty ? "" : "/" + prefix, routes: routes)
        if routes.contains(.metrics) {
            group.getAndHead("metrics") { [metrics, service] _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition(of: service)))
                )
            }
        }
    }

    /// Runs what the routes need beside requests until the application shuts down: the shared
    /// tier's check at start, memory given back to the system when the process nears its limit,
    /// the origin and shared-store clients closed at the end.
    public func run() async throws {
        let configuration = service.configuration
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [service] in try await LoaderShutdown(service: service).run() }
            if let forwarding {
                group.addTask {
                    try? await gracefulShutdown()
                    try await forwarding.shutdown()
                }
            }
            if let shared = service.sharedStore {
                group.addTask { [logger] in try await SharedStoreCheck(store: shared, logger: logger).run() }
            }
            if let budget = service.pipeline.configuration.memoryBudget {
                // The ceiling: the limit, and the 100 MB of code, libraries and buffers outside it; freed
                // memory kept for reuse: up to an eighth of the limit.
                group.addTask { [logger, metrics] in
                    try await MemoryReclaimer(
                        budget: budget, residentCeiling: configuration.limits.residentCeiling,
                        retainedLimit: configuration.limits.memoryLimit / 8,
                        logger: logger, metrics: metrics
                    ).run()
                }
            }
            try await group.waitForAll()
        }
    }
}
