import Foundation

extension ImagePipeline {
    /// How a pipeline loads, decodes and caches. Every property has a default
    /// except the decoder (the core has none: use `VipsImageDecoder` from ImageryVips).
    public struct Configuration: Sendable {
        /// Loads the bytes of `.url` requests. Default: ``FileDataLoader`` (`file:` URLs only);
        /// use `HTTPDataLoader` from ImageryHTTP for `http` and `https`.
        public var dataLoader: any DataLoading

        /// Turns bytes into images, at thumbnail size when asked. No default.
        public var decoder: any ImageDecoding

        /// Decoded images in memory, keyed by source and thumbnail (cost = pixel bytes), each with its source's freshness.
        /// Default: a ``MemoryCache`` limited to ``defaultImageCacheCostLimit`` bytes. `nil` disables it.
        public var imageCache: (any ImageCaching)?

        /// Encoded originals in memory, keyed by source: a new thumbnail of a cached original needs no download.
        /// Default: a ``MemoryCache`` limited to ``defaultDataCacheCostLimit`` bytes. `nil` disables it.
        public var dataCache: (any DataCaching)?

        /// The most bytes of decoded bases kept in memory when the decoder is ``ThumbnailDeriving``:
        /// a JPEG decoded at its DCT scale for one thumbnail, from which other sizes of the same
        /// source are resized without decoding again. Default: a quarter of
        /// ``defaultImageCacheCostLimit``; 0 turns it off.
        public var baseImageCacheCostLimit: Int

        /// How long a kept base lives, in seconds, on ``time``; default `nil` (until evicted).
        public var baseImageCacheTTL: TimeInterval?

        /// A persistent cache behind the memory ones (`DiskCache` from ImageryDiskCache): originals
        /// under source keys; when ``encoder`` is set, thumbnails under variant keys
        /// (``storesThumbnailsOnDisk``) and the encoded images of ``ImagePipeline/encodedImage(for:)``
        /// under their storage keys. Default `nil`.
        public var diskCache: (any DataCaching)?

        /// Encodes the images ``ImagePipeline/encodedImage(for:)`` answers with (`VipsImageEncoder` from
        /// ImageryVips), and thumbnails for ``diskCache`` (JPEG at quality 90, PNG when they have alpha),
        /// so a thumbnail is served from disk without touching its original. Default `nil`: only
        /// originals are stored on disk, and ``ImagePipeline/encodedImage(for:)`` throws
        /// ``ImagePipelineError/noEncoder``.
        public var encoder: (any ImageEncoding)?

        /// Whether decoded thumbnails are encoded and stored on ``diskCache`` (when there is an
        /// ``encoder``). Default `true`; an app or server that asks for encoded images only
        /// (``ImagePipeline/encodedImage(for:)``, stored as they are) turns it off.
        public var storesThumbnailsOnDisk: Bool

        /// Encoded images in memory (``ImagePipeline/encodedImage(for:)``), by storage key, in front of
        /// ``diskCache``. Default: a ``MemoryCache`` of 32 MiB; `nil` disables it.
        public var encodedImageCache: MemoryCache<String, EncodedImageResponse>?

        /// The most encodes of ``ImagePipeline/encodedImage(for:)`` that run at once, each on its own
        /// thread. Default: the processors the process may use.
        public var maximumConcurrentEncodes: Int

        /// How HTTP caching headers are honoured, in every tier (memory too, see ``memoryFreshness``).
        /// Default: ``HTTPCachePolicy`` in ``HTTPCachePolicy/Mode/http`` mode with a
        /// ``HTTPCachePolicy/minimumHeuristicLifetime`` of 300 s, so that a source whose origin
        /// states no expiry (many do not) is not downloaded again for every use.
        public var cachePolicy: HTTPCachePolicy

        /// Whether the memory tiers follow ``cachePolicy`` as the disk tier does. Default ``MemoryFreshness/http``.
        public var memoryFreshness: MemoryFreshness

        /// Bounds the memory that downloads and decodes in flight hold (``MemoryBudget``): a download
        /// reserves its announced size before reading the body, a decode the decoder's estimate
        /// (``DecodeCostEstimating``) before it starts; both wait in the budget's line, or fail with
        /// ``MemoryBudgetError``. Cache hits never wait. Default `nil`: no bound.
        public var memoryBudget: MemoryBudget?

        /// Changes every HTTP request the pipeline sends, at send time (a bearer token that is
        /// refreshed); a request's own ``ImageRequest/requestModifier`` runs after it. Not part of
        /// any cache key. Default `nil`.
        public var requestModifier: RequestModifier?

        /// How failed source loads are tried again: transient failures (a refused or reset
        /// connection; HTTP 408, 429, 500, 502, 503, 504) after an exponential backoff with jitter
        /// or the origin's `Retry-After`. Default ``RetryPolicy/standard`` (3 attempts within 30 s);
        /// ``RetryPolicy/never`` turns it off.
        public var retryPolicy: RetryPolicy
        /// Previews while progressive JPEGs download, for requests that ask
        /// (``ImageRequest/Options/progressivePreviews``): see ``ProgressivePreviews``. Default `nil`:
        /// none, and downloads do no work for them.
        public var progressivePreviews: ProgressivePreviews?

        /// Told of cache lookups, origin fetches and decodes (for metrics); default `nil`.
        public var observer: (any ImagePipelineObserver)?

        /// The most urgent downloads (priority ``ImageRequest/Priority/normal`` and above) that run
        /// at once; the rest wait by priority. Default 6.
        public var maximumConcurrentDownloads: Int

        /// The most prefetch downloads (priority ``ImageRequest/Priority/low`` and below) that run at
        /// once. They start only while no urgent download waits or runs, and their decodes only
        /// while no urgent decode runs; one that runs when urgent work arrives finishes. Default 1.
        public var maximumConcurrentPrefetches: Int

        /// The most decodes that run at once, each on its own thread (never on
        /// Swift's cooperative pool). Default: the processors the process may use
        /// (``UsableProcessors/current``: its affinity mask and cgroup CPU quota, not only the cores online).
        public var maximumConcurrentDecodes: Int

        /// Where the pipeline reads the time: freshness of every cache tier (``cachePolicy``,
        /// ``memoryFreshness``), the request, response and storage times it records for a source, and
        /// the time to live of kept bases (``baseImageCacheTTL``), the interval between previews
        /// (``progressivePreviews``). (A ``memoryBudget`` reads its own.)
        /// Default ``TimeSource/system``; a test passes ``ManualTime/source`` and moves time by hand
        /// instead of sleeping. (How long a fetch or decode took, for the ``observer``, is always
        /// measured on `ContinuousClock`.)
        public var time: TimeSource

        /// A configuration with every default but the decoder.
        /// - Parameters:
        ///   - decoder: Turns bytes into images.
        ///   - dataLoader: Loads `.url` requests; default ``FileDataLoader``.
        public init(decoder: any ImageDecoding, dataLoader: any DataLoading = FileDataLoader()) {
            self.decoder = decoder
            self.dataLoader = dataLoader
            self.imageCache = MemoryCache<ImageCacheKey, ImageResponse>(costLimit: Self.defaultImageCacheCostLimit)
            self.dataCache = MemoryCache<String, CacheEntry>(costLimit: Self.defaultDataCacheCostLimit)
            self.baseImageCacheCostLimit = Self.defaultImageCacheCostLimit / 4
            self.baseImageCacheTTL = nil
            self.diskCache = nil
            self.encoder = nil
            self.storesThumbnailsOnDisk = true
            self.encodedImageCache = MemoryCache(costLimit: 32 << 20)
            self.maximumConcurrentEncodes = UsableProcessors.current.count
            self.cachePolicy = HTTPCachePolicy(minimumHeuristicLifetime: 300)
            self.memoryFreshness = .http
            self.observer = nil
            self.requestModifier = nil
            self.retryPolicy = .standard
            self.memoryBudget = nil
            self.progressivePreviews = nil
            self.maximumConcurrentDownloads = 6
            self.maximumConcurrentPrefetches = 1
            self.maximumConcurrentDecodes = UsableProcessors.current.count
            self.time = .system
        }

        /// 20% of physical memory, at most 512 MiB.
        public static var defaultImageCacheCostLimit: Int {
            Int(min(Double(ProcessInfo.processInfo.physicalMemory) * 0.2, 512 * 1024 * 1024))
        }

        /// 5% of physical memory, at most 128 MiB.
        public static var defaultDataCacheCostLimit: Int {
            Int(min(Double(ProcessInfo.processInfo.physicalMemory) * 0.05, 128 * 1024 * 1024))
        }
    }

    /// How the memory tiers (encoded originals, decoded images, kept bases) treat freshness.
    public enum MemoryFreshness: Sendable, Hashable {
        /// One rule for every tier (the default): ``Configuration/cachePolicy`` decides for memory
        /// exactly as for disk. A stale original is revalidated (`If-None-Match` /
        /// `If-Modified-Since`); a `no-store` source serves the requests that waited for it and is
        /// kept nowhere, nor is anything made from it; `no-cache` revalidates before each reuse; a
        /// decoded image or base is used while its source is fresh, and after that only once the
        /// source, revalidated, is the same version. The default because a process that lives for
        /// days (a server, a daemon) must not serve what the origin said to stop serving.
        case http
        /// Memory holds a working set, as a browser's in-memory image cache does: entries are used
        /// until evicted (or their cache's TTL), whatever the source said; the disk tier still
        /// follows ``Configuration/cachePolicy``. For apps that show what they have and would rather
        /// not revalidate what is on screen.
        case ignored
    }
}
