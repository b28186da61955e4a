import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import Synchronization

/// The proxy's metrics, in Prometheus text format at `GET /metrics`: requests by
/// status, request durations, requests in flight, and the caches' counters.
/// Each application has its own registry (no global bootstrap), so tests can
/// build many applications in one process.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let duration: Metrics.Timer
    private let inFlight: Metrics.Gauge
    private let inFlightCount = Atomic<Int>(0)
    private let service: ImageService

    init(service: ImageService) {
        self.service = service
        factory = PrometheusMetricsFactory(registry: registry)
        duration = Metrics.Timer(label: "imagery_request_duration_seconds", factory: factory)
        inFlight = Metrics.Gauge(label: "imagery_requests_in_flight", factory: factory)
    }

    func requestStarted() {
        inFlight.record(inFlightCount.add(1, ordering: .relaxed).newValue)
    }

    func requestFinished(path: String, status: Int, after elapsed: Duration) {
        inFlight.record(inFlightCount.subtract(1, ordering: .relaxed).newValue)
        let route = ["/image", "/health", "/metrics"].contains(path) ? path : "other"
        Metrics.Counter(label: "imagery_requests_total", dimensions: [("route", route), ("status", String(status))], factory: factory).increment()
        duration.recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }

    /// The Prometheus exposition, with cache counters read now.
    func exposition() -> String {
        if let disk = service.diskCache {
            let stats = disk.stats
            for (name, value) in [
                ("hits", stats.hits), ("misses", stats.misses), ("evictions", stats.evictions),
                ("corrupt_entries_removed", stats.corruptEntriesRemoved), ("bytes_written", stats.bytesWritten),
                ("bytes_read", stats.bytesRead), ("entries", disk.count), ("bytes", disk.totalSize),
            ] {
                Metrics.Gauge(label: "imagery_disk_cache_\(name)", factory: factory).record(value)
            }
        }
        let responses = service.responseCacheUsage
        Metrics.Gauge(label: "imagery_response_cache_entries", factory: factory).record(responses.count)
        Metrics.Gauge(label: "imagery_response_cache_bytes", factory: factory).record(responses.bytes)
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

/// One log line per request (method, path, status, milliseconds) and the request metrics.
struct RequestObservationMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        metrics.requestStarted()
        let status: Int
        let response: Response
        do {
            response = try await next(request, context)
            status = Int(response.status.code)
        } catch {
            status = (error as? any HTTPResponseError).map { Int($0.status.code) } ?? 500
            finish(request, context: context, status: status, start: start)
            throw error
        }
        finish(request, context: context, status: status, start: start)
        return response
    }

    private func finish(_ request: Request, context: Context, status: Int, start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        metrics.requestFinished(path: request.uri.path, status: status, after: elapsed)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info("request", metadata: [
            "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(status)",
            "ms": "\(String(format: "%.1f", milliseconds))",
        ])
    }
}
