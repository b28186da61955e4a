import Foundation
import Hummingbird
import Imagery
import ImageryDiskCache
import ImageryVips
import Logging
import Metrics
import Prometheus
import Synchronization

/// The proxy's metrics, in Prometheus text format at `GET /metrics`: requests by
/// route and status, request durations, requests in flight; cache lookups per tier
/// (hit or miss); origin fetch and decode durations; bytes fetched and sent; and
/// the caches' sizes. It observes the pipeline (``ImagePipelineObserver``).
/// Each application has its own registry (no global bootstrap), so tests can
/// build many applications in one process.
final class ServerMetrics: ImagePipelineObserver {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let duration: Metrics.Timer
    private let inFlight: Metrics.Gauge
    private let inFlightCount = Atomic<Int>(0)
    private let lookups: [String: (hit: Metrics.Counter, miss: Metrics.Counter)]
    private let fetchDurations: (ok: Metrics.Timer, notModified: Metrics.Timer, error: Metrics.Timer)
    private let decodeDurations: (ok: Metrics.Timer, error: Metrics.Timer, derived: Metrics.Timer)
    private let originBytes: Metrics.Counter
    private let responseBytes: Metrics.Counter
    private let eventLoopHits: Metrics.Counter
    /// Episodes of admission held back for resident memory, and the seconds they lasted (``MemoryReclaimer``).
    private let residentPressureEpisodes: Metrics.Counter
    private let residentPressureSeconds: Metrics.FloatingPointCounter
    private let labelledCounters = Locked<[String: Metrics.Counter]>([:])
    private let requestCounters = Locked<[String: Metrics.Counter]>([:])
    /// Image requests answered 200 and 304 (`/image`, and `other`: the other proxies' paths), which nearly
    /// every request is: made at the start, not looked up.
    private let imageAnswers: (ok: Metrics.Counter, notModified: Metrics.Counter)
    private let otherAnswers: (ok: Metrics.Counter, notModified: Metrics.Counter)

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        self.factory = factory
        duration = Metrics.Timer(label: "imagery_request_duration_seconds", factory: factory)
        inFlight = Metrics.Gauge(label: "imagery_requests_in_flight", factory: factory)
        let tiers = ImagePipelineEvent.CacheTier.allCases.map(\.rawValue) + ["response", "response_disk", "shared"]
        lookups = Dictionary(
            uniqueKeysWithValues: tiers.map { tier in
                let counter = { (result: String) in
                    Metrics.Counter(
                        label: "imagery_cache_lookups_total", dimensions: [("tier", tier), ("result", result)],
                        factory: factory)
                }
                return (tier, (counter("hit"), counter("miss")))
            })
        let fetch = { (result: String) in
            Metrics.Timer(
                label: "imagery_origin_fetch_duration_seconds", dimensions: [("result", result)], factory: factory)
        }
        fetchDurations = (fetch("ok"), fetch("not_modified"), fetch("error"))
        let decode = { (result: String) in
            Metrics.Timer(label: "imagery_decode_duration_seconds", dimensions: [("result", result)], factory: factory)
        }
        decodeDurations = (decode("ok"), decode("error"), decode("derived"))
        originBytes = Metrics.Counter(label: "imagery_origin_bytes_total", factory: factory)
        responseBytes = Metrics.Counter(label: "imagery_response_bytes_total", factory: factory)
        eventLoopHits = Metrics.Counter(label: "imagery_event_loop_hits_total", factory: factory)
        residentPressureEpisodes = Metrics.Counter(label: "imagery_admission_resident_pressure_total", factory: factory)
        residentPressureSeconds = Metrics.FloatingPointCounter(
            label: "imagery_admission_resident_pressure_seconds_total", factory: factory
        )
        let answers = { (route: String) in
            let counter = { (status: String) in
                Metrics.Counter(
                    label: "imagery_requests_total", dimensions: [("route", route), ("status", status)],
                    factory: factory)
            }
            return (ok: counter("200"), notModified: counter("304"))
        }
        imageAnswers = answers("/image")
        otherAnswers = answers("other")
    }

    func pipeline(_ pipeline: ImagePipeline, didRecord event: ImagePipelineEvent) {
        switch event {
        case .cacheLookup(let tier, let hit):
            cacheLookup(tier.rawValue, hit: hit)
        case .fetched(let duration, let bytes, let notModified):
            (notModified ? fetchDurations.notModified : fetchDurations.ok).record(duration)
            originBytes.increment(by: Int64(bytes))
        case .fetchFailed(let duration):
            fetchDurations.error.record(duration)
        case .retrying(_, _, let status):
            counter("imagery_origin_retries_total", [("reason", status.map { "\($0)" } ?? "network")]).increment()
        case .decoded(let duration, _, _):
            decodeDurations.ok.record(duration)
        case .decodeFailed(let duration):
            decodeDurations.error.record(duration)
        case .derived(let duration, _, _):
            decodeDurations.derived.record(duration)
        case .previewDecoded:
            break  // the server asks for no previews
        }
    }

    /// A lookup in `tier` (a pipeline tier, or `response` / `response_disk`: stored responses in memory / on disk).
    func cacheLookup(_ tier: String, hit: Bool) {
        guard let counters = lookups[tier] else { return }
        (hit ? counters.hit : counters.miss).increment()
    }

    /// A request to the shared S3 store: `operation` get/put/update/delete, `outcome` hit, miss,
    /// damaged, stored, dropped (too many bytes in flight), skipped (paused after failures) or failed.
    func sharedStoreRequest(_ operation: String, outcome: String) {
        counter("imagery_shared_store_requests_total", [("operation", operation), ("outcome", outcome)]).increment()
    }

    /// A request whose source another instance owns: `forwarded` (the owner answered) or
    /// `owner_failed` (it did not; the next on the ring was asked, or this instance served it).
    func clusterForward(_ outcome: String) {
        counter("imagery_cluster_forwards_total", [("outcome", outcome)]).increment()
    }

    /// The counter of `label` with `dimensions`, made once (the registry's lookup costs more than an increment).
    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Metrics.Counter {
        let name = ([label] + dimensions.map { $0.0 + "=" + $0.1 }).joined(separator: "|")
        return labelledCounters.withLock { counters in
            if let counter = counters[name] { return counter }
            let counter = Metrics.Counter(label: label, dimensions: dimensions, factory: factory)
            counters[name] = counter
            return counter
        }
    }

    /// An answer to a thumbor URL that names a filter skipped as thumbor skips it (``SkippedOption``);
    /// a name that is none of thumbor's filters is counted as `other` (URLs are written by anyone).
    func thumborFilterSkipped(_ name: String) {
        let label = ThumborURL.builtInFilters.contains(name) ? name : "other"
        counter("imagery_thumbor_filters_skipped_total", [("filter", label)]).increment()
    }

    /// Admission started holding work back because resident memory stayed over its ceiling after a trim.
    func residentPressureStarted() { residentPressureEpisodes.increment() }

    /// Admission stopped holding work back for resident memory, after `duration`.
    func residentPressureEnded(after duration: Duration) {
        let (seconds, attoseconds) = duration.components
        residentPressureSeconds.increment(by: Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// The allocator's free memory was given back (`reason`: `ceiling`, `retained` or `idle`; ``MemoryReclaimer``).
    func memoryTrimmed(reason: String) {
        counter("imagery_memory_trims_total", [("reason", reason)]).increment()
    }

    /// A request answered from result storage on the event loop (`HitHandler`), before the router.
    func eventLoopHit() { eventLoopHits.increment() }

    func requestStarted() {
        inFlight.record(inFlightCount.add(1, ordering: .relaxed).newValue)
    }

    /// The counter of requests to `route` answered with `status`, made once (the registry's lookup
    /// by label and dimensions costs more than the increment).
    private func requestCounter(route: String, status: Int) -> Metrics.Counter {
        let key = route + " " + String(status)
        return requestCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Metrics.Counter(
                label: "imagery_requests_total", dimensions: [("route", route), ("status", String(status))],
                factory: factory)
            counters[key] = counter
            return counter
        }
    }

    func requestFinished(
        path: String, status: Int, bytesSent: Int, after elapsed: Duration, inFlight counted: Bool = true
    ) {
        if counted { inFlight.record(inFlightCount.subtract(1, ordering: .relaxed).newValue) }
        let route =
            switch path {
            case "/image", "/health", "/metrics", "/", "/files": path
            default: path.hasPrefix("/files/") ? "/files" : "other"
            }
        let counter =
            switch (route, status) {
            case ("/image", 200): imageAnswers.ok
            case ("/image", 304): imageAnswers.notModified
            case ("other", 200): otherAnswers.ok
            case ("other", 304): otherAnswers.notModified
            default: requestCounter(route: route, status: status)
            }
        counter.increment()
        duration.record(elapsed)
        if route == "/image" { responseBytes.increment(by: Int64(bytesSent)) }
    }

    /// The Prometheus exposition, with the gauges of `service` read now.
    func exposition(of service: ImageService) -> String {
        if let disk = service.diskCache {
            let stats = disk.stats
            for (name, value) in [
                ("hits", stats.hits), ("misses", stats.misses), ("evictions", stats.evictions),
                ("corrupt_entries_removed", stats.corruptEntriesRemoved), ("bytes_written", stats.bytesWritten),
                ("bytes_read", stats.bytesRead), ("entries", disk.count), ("bytes", disk.totalSize),
                ("writes_dropped", stats.writesDropped), ("limit_bytes", disk.sizeLimitInEffect),
                ("writable", disk.currentMode == .readWrite ? 1 : 0),
            ] {
                Metrics.Gauge(label: "imagery_disk_cache_\(name)", factory: factory).record(value)
            }
            for fault in DiskCache.Fault.allCases {
                Metrics.Gauge(
                    label: "imagery_disk_cache_write_failures", dimensions: [("kind", fault.rawValue)], factory: factory
                )
                .record(stats.failedWrites[fault] ?? 0)
            }
        }
        let responses = service.responseCacheUsage
        // What each memory cache holds (their limits share --memory-limit with the in-flight budget).
        let pipeline = service.pipeline
        for (cache, bytes) in [
            ("images", (pipeline.configuration.imageCache as? MemoryCache<ImageCacheKey, ImageResponse>)?.totalCost),
            ("originals", (pipeline.configuration.dataCache as? MemoryCache<String, CacheEntry>)?.totalCost),
            ("bases", pipeline.baseCacheCost), ("responses", responses.bytes),
        ] {
            Metrics.Gauge(label: "imagery_memory_cache_bytes", dimensions: [("cache", cache)], factory: factory).record(
                bytes ?? 0)
        }
        Metrics.Gauge(label: "imagery_response_cache_entries", factory: factory).record(responses.count)
        Metrics.Gauge(label: "imagery_response_cache_bytes", factory: factory).record(responses.bytes)
        if let budget = service.pipeline.configuration.memoryBudget?.snapshot {
            for (name, value) in [
                ("imagery_inflight_memory_limit_bytes", budget.limit), ("imagery_inflight_memory_bytes", budget.used),
                ("imagery_inflight_memory_peak_bytes", budget.peak), ("imagery_admission_queue_length", budget.queued),
                ("imagery_admission_admitted", budget.admitted), ("imagery_admission_waited", budget.waited),
                ("imagery_memory_pressure", budget.underPressure ? 1 : 0),
            ] {
                Metrics.Gauge(label: name, factory: factory).record(value)
            }
            for (reason, value) in [("overloaded", budget.refusedOverloaded), ("too_large", budget.refusedTooLarge)] {
                Metrics.Gauge(label: "imagery_admission_refused", dimensions: [("reason", reason)], factory: factory)
                    .record(value)
            }
        }
        Metrics.Gauge(label: "imagery_vips_memory_bytes", factory: factory).record(VipsMemory.current)
        Metrics.Gauge(label: "imagery_vips_memory_peak_bytes", factory: factory).record(VipsMemory.peak)
        if let resident = ProcessMemory.residentBytes {
            Metrics.Gauge(label: "imagery_process_resident_memory_bytes", factory: factory).record(resident)
        }
        if let allocator = ProcessMemory.allocator {
            Metrics.Gauge(label: "imagery_allocator_in_use_bytes", factory: factory).record(allocator.inUse)
            Metrics.Gauge(label: "imagery_allocator_free_bytes", factory: factory).record(allocator.free)
        }
        Metrics.Gauge(label: "imagery_origin_fetches_in_flight", factory: factory).record(
            service.pipeline.runningDownloadCount)
        Metrics.Gauge(label: "imagery_origin_fetches_queued", factory: factory).record(
            service.pipeline.queuedDownloadCount)
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

extension Metrics.Timer {
    func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// One log line per request (method, path, status, milliseconds) and the request metrics, for
/// requests through the router (``RequestObservationMiddleware``) and for those answered on the
/// event loop (``HitHandler``): the same line and the same metrics either way.
struct RequestObservation: Sendable {
    let metrics: ServerMetrics

    func started() { metrics.requestStarted() }

    /// - Parameter requestID: Added to the line as `hb.request.id` (a route's logger has it already).
    /// - Parameter counted: Whether ``started()`` counted it in flight (a hit answered at once is not).
    /// - Parameter lineWriter: `logger`'s handler when the caller knows it is `imagery serve`'s (else it is looked at).
    func finished(
        method: HTTPRequest.Method, path: String, status: Int, bytes: Int, since start: ContinuousClock.Instant,
        logger: Logger,
        requestID: String? = nil, counted: Bool = true, lineWriter: ServerLogHandler? = nil
    ) {
        let elapsed = ContinuousClock.now - start
        metrics.requestFinished(path: path, status: status, bytesSent: bytes, after: elapsed, inFlight: counted)
        // Milliseconds with one decimal, without String(format:) (slow on Linux).
        let tenths = elapsed.components.seconds * 10_000 + elapsed.components.attoseconds / 100_000_000_000_000
        let milliseconds = String(tenths / 10) + "." + String(tenths % 10)
        // `imagery serve`'s handler writes the line straight from the fields.
        if let handler = lineWriter ?? (logger.handler as? ServerLogHandler) {
            let line = ServerLogHandler.RequestLine(
                bytes: String(bytes), requestID: requestID, method: method.rawValue, milliseconds: milliseconds,
                path: path,
                status: String(status)
            )
            if handler.logRequest(line) { return }
        }
        var metadata: Logger.Metadata = [
            "method": .string(method.rawValue), "path": .string(path), "status": .string(String(status)),
            "ms": .string(milliseconds), "bytes": .string(String(bytes)),
        ]
        if let requestID { metadata["hb.request.id"] = .string(requestID) }
        logger.info("request", metadata: metadata)
    }
}

/// ``RequestObservation`` of every request through the router.
struct RequestObservationMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let observation: RequestObservation

    init(metrics: ServerMetrics) { observation = RequestObservation(metrics: metrics) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        observation.started()
        do {
            let response = try await next(request, context)
            finish(
                request, context: context, status: Int(response.status.code), bytes: response.body.contentLength ?? 0,
                start: start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError).map { Int($0.status.code) } ?? 500
            finish(request, context: context, status: status, bytes: 0, start: start)
            throw error
        }
    }

    private func finish(_ request: Request, context: Context, status: Int, bytes: Int, start: ContinuousClock.Instant) {
        observation.finished(
            method: request.method, path: request.uri.path, status: status, bytes: bytes, since: start,
            logger: context.logger)
    }
}
