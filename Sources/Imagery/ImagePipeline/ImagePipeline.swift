import Foundation

/// Loads images: memory caches, then a disk cache, then coalesced download and decode.
///
/// ```
/// request ─► decoded-image cache (memory) ─hit─► image
///               │ miss
///               ▼
///    one decode job per (source, recipe) ─► disk: thumbnail variant ─fresh─► decode it
///               │
///               ▼
///    one data job per source ─► memory / disk: original ─fresh─► decode at size
///               │ miss or stale (conditional request: 304 refreshes the entry)
///               ▼
///    download queue (priority, limit) ─► DataLoading
/// ```
///
/// Identical requests share one download and one decode; a request for a new
/// thumbnail size of a source being downloaded shares the download. Cancelling
/// every request for a job cancels the job (and aborts its download).
public final class ImagePipeline: Sendable {
    /// The configuration the pipeline was made with.
    public let configuration: Configuration

    let imageJobs = Coalescer<ImageCacheKey, ImageResponse>()
    let dataJobs = Coalescer<SourceKey, CacheEntry>()
    let downloads: DownloadQueue
    let decodingPool: WorkerPool
    /// Decoded bases per source, when the decoder is ``ThumbnailDeriving``.
    let bases: MemoryCache<SourceKey, KeptBase>?
    /// Thumbnails being encoded for the disk cache, encoded images revalidated in the background.
    let backgroundWork = BackgroundWork()
    /// Where encoded images are kept (``encodedImage(for:)``): ``Configuration/encodedImageCache`` in
    /// front of ``Configuration/diskCache``.
    public let encodedImages: EncodedImageStore
    /// Encodes of ``encodedImage(for:)`` running, by storage key: identical requests share one.
    let encodes = Coalescer<String, EncodedImageResponse>()
    /// Encoded images being revalidated in the background (`stale-while-revalidate`), by storage key.
    let revalidations = Coalescer<String, Bool>()
    /// The threads ``encodedImage(for:)`` encodes on, when the pipeline has an encoder
    /// (``Configuration/maximumConcurrentEncodes`` of them); `nil` without one.
    public let encodingPool: WorkerPool?

    /// A pipeline with `configuration`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.downloads = DownloadQueue(
            limit: max(1, configuration.maximumConcurrentDownloads),
            prefetchLimit: max(1, configuration.maximumConcurrentPrefetches)
        )
        self.decodingPool = WorkerPool(
            threadCount: max(1, configuration.maximumConcurrentDecodes), name: "imagery.decode")
        self.encodingPool =
            configuration.encoder == nil
            ? nil : WorkerPool(threadCount: max(1, configuration.maximumConcurrentEncodes), name: "imagery.encode")
        self.encodedImages = EncodedImageStore(
            memory: configuration.encodedImageCache, disk: configuration.diskCache, policy: configuration.cachePolicy)
        self.bases =
            configuration.decoder is any ThumbnailDeriving && configuration.baseImageCacheCostLimit > 0
            ? MemoryCache(
                costLimit: configuration.baseImageCacheCostLimit, ttl: configuration.baseImageCacheTTL,
                time: configuration.time
            )
            : nil
    }

    /// Loads the image for `request`, from a cache when it is there.
    /// Cancelling the calling task cancels the load.
    /// - Throws: ``DataLoadingError``, ``ImageDecodingError``, ``ImagePipelineError``, an error of the
    ///   request's data source, or `CancellationError`.
    public func image(for request: ImageRequest) async throws -> Image {
        try await imageResponse(for: request).image
    }

    /// Loads the image for `request` with its source's metadata (HTTP headers, validators)
    /// and freshness, from a cache when it is there.
    /// - Throws: As ``image(for:)``.
    public func imageResponse(for request: ImageRequest) async throws -> ImageResponse {
        try await loadImage(request, priority: PriorityCell(request.priority), updates: nil)
    }

    /// Loads the original encoded bytes of `request` (its thumbnail is ignored).
    /// - Throws: ``DataLoadingError``, ``ImagePipelineError``, an error of the request's data source,
    ///   or `CancellationError`.
    public func data(for request: ImageRequest) async throws -> Data {
        try await dataEntry(for: request).data
    }

    /// Loads the original encoded bytes of `request` with their metadata, from a cache when
    /// fresh there, else from the source (a stale entry is revalidated: a 304 refreshes it).
    /// - Throws: As ``data(for:)``.
    public func dataEntry(for request: ImageRequest) async throws -> CacheEntry {
        try await loadData(request, priority: PriorityCell(request.priority), updates: nil)
    }

    /// Starts loading `request` and returns a handle to watch, reprioritise or cancel it. With
    /// ``ImageRequest/Options/progressivePreviews``, its events include previews while a progressive
    /// JPEG downloads, when this pipeline makes them (``Configuration/progressivePreviews``).
    public func imageTask(for request: ImageRequest) -> ImageTask {
        let task = ImageTask(request: request)
        let wantsPreviews = request.options.contains(.progressivePreviews) && makesPreviews
        task.start { [self] priority, reporting in
            try await loadImage(
                request, priority: priority, updates: reporting.updates,
                preview: wantsPreviews ? reporting.preview : nil
            ).image
        }
        return task
    }

    /// The decoded image for `request` if it is in the memory cache and fresh; never starts a load.
    /// - Complexity: One memory-cache lookup.
    public func cachedImage(for request: ImageRequest) -> Image? {
        guard let cached = configuration.imageCache?[request.imageKey], isUsable(cached.freshUntil) else { return nil }
        return cached.image
    }

    /// The bytes of decoded bases kept in memory (`nil` without a ``ThumbnailDeriving`` decoder).
    public var baseCacheCost: Int? { bases?.totalCost }

    /// Empties the pipeline's memory caches (decoded images, bases and encoded data); the disk cache is kept.
    public func removeAllCachedData() async {
        configuration.imageCache?.removeAll()
        bases?.removeAll()
        await configuration.dataCache?.removeAll()
    }

    /// Removes `request`'s decoded image and its source's decoded base from memory (its original stays:
    /// for a decode anew from bytes just reloaded).
    public func removeDecodedImages(for request: ImageRequest) {
        configuration.imageCache?[request.imageKey] = nil
        bases?[request.sourceKey] = nil
    }

    /// Removes `request`'s decoded image, original and variant from every cache, disk included.
    public func removeCachedData(for request: ImageRequest) async {
        configuration.imageCache?[request.imageKey] = nil
        bases?[request.sourceKey] = nil
        for cache in [configuration.dataCache, configuration.diskCache].compactMap({ $0 }) {
            await cache.remove(for: request.sourceKey.stringValue)
            if !request.recipe.isIdentity { await cache.remove(for: request.imageKey.stringValue) }
        }
    }

    /// Returns once the thumbnails being encoded for the disk cache (``Configuration/encoder``) and the
    /// encoded images being revalidated in the background have been handed to it. Call it before a process that used the pipeline exits, then flush
    /// the disk cache.
    public func waitForStores() async {
        await backgroundWork.waitUntilDone()
    }

    /// Makes what the pipeline stored durable before the process exits: waits for the thumbnails
    /// being encoded for the disk cache (``waitForStores()``), then flushes the disk cache (its queued
    /// writes on disk, its index recorded). Loads still work after it. Call it at shutdown when the
    /// app does not run `ImagePipelineService` (ImageryLifecycle) in a `ServiceGroup`, then shut the loader down:
    ///
    /// ```swift
    /// await pipeline.finishStoring()
    /// try await loader.shutdown()  // an HTTPDataLoader that made its own client
    /// ```
    public func finishStoring() async {
        await waitForStores()
        await configuration.diskCache?.flush()
    }

    /// How many decode and download jobs run now (for tests and diagnostics).
    public var activeJobCount: (decodes: Int, downloads: Int) { (imageJobs.jobCount, dataJobs.jobCount) }

    /// How many downloads wait for a slot (for tests and diagnostics).
    public var queuedDownloadCount: Int { downloads.pendingCount }

    /// How many downloads run now (each holds one of ``Configuration/maximumConcurrentDownloads`` slots).
    public var runningDownloadCount: Int { downloads.runningCount }

    /// How many downloads run now in the urgent lane and in the prefetch lane.
    public var runningDownloadsByLane: (urgent: Int, prefetch: Int) { downloads.runningByLane }
}
