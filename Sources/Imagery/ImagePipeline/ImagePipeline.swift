import Foundation

/// Loads images: memory cache, then coalesced download and decode.
///
/// ```
/// request ─► decoded-image cache ─hit─► image
///               │ miss
///               ▼
///    one decode job per (source, thumbnail) ─► encoded-data cache ─hit─► decode
///               │ miss
///               ▼
///    one download job per source ─► download queue (priority, limit) ─► DataLoading
/// ```
///
/// Identical requests share one download and one decode; a request for a new
/// thumbnail size of a source being downloaded shares the download. Cancelling
/// every request for a job cancels the job (and aborts its download).
public final class ImagePipeline: Sendable {
    /// The configuration the pipeline was made with.
    public let configuration: Configuration

    private let imageJobs = Coalescer<ImageCacheKey, Image>()
    private let dataJobs = Coalescer<SourceKey, Data>()
    private let downloads: DownloadQueue
    private let decodingPool: WorkerPool

    /// A pipeline with `configuration`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.downloads = DownloadQueue(limit: max(1, configuration.maximumConcurrentDownloads))
        self.decodingPool = WorkerPool(threadCount: max(1, configuration.maximumConcurrentDecodes), name: "imagery.decode")
    }

    /// Loads the image for `request`, from memory when it is there.
    /// Cancelling the calling task cancels the load.
    /// - Throws: ``DataLoadingError``, ``ImageDecodingError``, an error of the request's data source,
    ///   or `CancellationError`.
    public func image(for request: ImageRequest) async throws -> Image {
        try await loadImage(request, priority: PriorityCell(request.priority), progress: nil)
    }

    /// Loads the original encoded bytes of `request` (its thumbnail is ignored).
    /// - Throws: ``DataLoadingError``, an error of the request's data source, or `CancellationError`.
    public func data(for request: ImageRequest) async throws -> Data {
        try await loadData(request, priority: PriorityCell(request.priority), progress: nil)
    }

    /// Starts loading `request` and returns a handle to watch, reprioritise or cancel it.
    public func imageTask(for request: ImageRequest) -> ImageTask {
        let task = ImageTask(request: request)
        task.start { [self] priority, progress in
            try await loadImage(request, priority: priority, progress: progress)
        }
        return task
    }

    /// The decoded image for `request` if it is in the memory cache; never starts a load.
    /// - Complexity: One memory-cache lookup.
    public func cachedImage(for request: ImageRequest) -> Image? {
        configuration.imageCache?[request.imageKey]
    }

    /// Empties the pipeline's memory caches (decoded images and encoded data).
    public func removeAllCachedData() async {
        configuration.imageCache?.removeAll()
        await configuration.dataCache?.removeAllData()
    }

    /// How many decode and download jobs run now (for tests and diagnostics).
    public var activeJobCount: (decodes: Int, downloads: Int) { (imageJobs.jobCount, dataJobs.jobCount) }

    // MARK: - Stages

    private func loadImage(
        _ request: ImageRequest,
        priority: PriorityCell,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> Image {
        let key = request.imageKey
        if let image = configuration.imageCache?[key] { return image }
        return try await imageJobs.value(for: key, priority: priority, progress: progress) { [self] job in
            if let image = configuration.imageCache?[key] { return image }
            let data = try await loadData(request, priority: job.priority, progress: job.reportProgress)
            let decoder = configuration.decoder
            let thumbnail = request.thumbnail
            let image = try await decodingPool.run { try decoder.decode(data, thumbnail: thumbnail) }
            configuration.imageCache?[key] = image
            return image
        }
    }

    private func loadData(
        _ request: ImageRequest,
        priority: PriorityCell,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> Data {
        let key = request.sourceKey
        if let data = await configuration.dataCache?.cachedData(for: key.stringValue) {
            return data
        }
        return try await dataJobs.value(for: key, priority: priority, progress: progress) { [self] job in
            let data = try await downloads.run(priority: job.priority) {
                switch request.source {
                case .url(let url):
                    return try await configuration.dataLoader.loadData(for: url, progress: job.reportProgress)
                case .data(_, let fetch):
                    return try await fetch()
                }
            }
            await configuration.dataCache?.storeData(data, for: key.stringValue)
            return data
        }
    }
}
