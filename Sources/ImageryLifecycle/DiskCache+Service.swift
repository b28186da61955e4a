import ImageryDiskCache
import ServiceLifecycle

/// The disk cache as a `Service`: it runs until the group's graceful shutdown, then flushes
/// (`DiskCache.flush()`: queued writes on disk, recency recorded), so that what was stored is
/// there after a restart.
extension DiskCache: Service {
    /// Waits for the graceful shutdown (or cancellation), then flushes the cache.
    public func run() async throws {
        try? await gracefulShutdown()
        await flush()
    }
}
