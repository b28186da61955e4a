/// Watches what a pipeline does, for metrics and logs: cache lookups, origin
/// fetches, decodes. Called synchronously on whatever thread did the work
/// (a decode thread, a task of the cooperative pool): keep it cheap and never block.
public protocol ImagePipelineObserver: Sendable {
    /// Called once for each event, as it happens.
    func pipeline(_ pipeline: ImagePipeline, didRecord event: ImagePipelineEvent)
}

/// Something an ``ImagePipeline`` did.
public enum ImagePipelineEvent: Sendable, Equatable {
    /// A cache was asked for what a request needs: `hit` when it answered
    /// (for the disk, with a fresh entry: a stale one that must be revalidated is a miss).
    case cacheLookup(CacheTier, hit: Bool)
    /// The source answered: `bytes` received (0 for a `304 Not Modified`), after `duration`
    /// (the transfer only: time waiting for a download slot is not counted).
    case fetched(duration: Duration, bytes: Int, notModified: Bool)
    /// Loading from the source failed (not counting cancellation).
    case fetchFailed(duration: Duration)
    /// A failed load is tried again (``ImagePipeline/Configuration/retryPolicy``): attempt `attempt`
    /// starts after `delay`; `status` is the HTTP status that failed the one before (`nil`: a network failure).
    case retrying(attempt: Int, delay: Duration, status: Int?)
    /// Bytes became an image, on a decode thread, in `duration`.
    case decoded(duration: Duration, width: Int, height: Int)
    /// The bytes could not be decoded.
    case decodeFailed(duration: Duration)
    /// A preview was decoded from the scans of a progressive image downloaded so far, on a decode
    /// thread, in `duration` (``ImagePipeline/ProgressivePreviews``).
    case previewDecoded(duration: Duration, width: Int, height: Int)
    /// A thumbnail was made from a kept decoded base of its source (``ThumbnailDeriving``), in `duration`.
    case derived(duration: Duration, width: Int, height: Int)

    /// The caches a pipeline consults, in order.
    public enum CacheTier: String, Sendable, CaseIterable {
        /// Decoded images in memory (``ImagePipeline/Configuration/imageCache``).
        case memoryImage = "memory_image"
        /// Decoded bases of sources in memory, that other thumbnail sizes are made from
        /// (``ImagePipeline/Configuration/baseImageCacheCostLimit``).
        case memoryBase = "memory_base"
        /// Encoded originals in memory (``ImagePipeline/Configuration/dataCache``).
        case memoryData = "memory_data"
        /// Encoded thumbnails on disk (``ImagePipeline/Configuration/diskCache``, variant keys).
        case diskVariant = "disk_variant"
        /// Encoded originals on disk (``ImagePipeline/Configuration/diskCache``, source keys).
        case diskData = "disk_data"
    }
}

extension ImagePipeline {
    @inline(__always)
    func record(_ event: @autoclosure () -> ImagePipelineEvent) {
        configuration.observer?.pipeline(self, didRecord: event())
    }
}
