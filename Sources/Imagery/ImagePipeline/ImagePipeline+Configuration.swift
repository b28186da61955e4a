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

        /// Decoded images in memory, keyed by source and thumbnail (cost = pixel bytes).
        /// Default: a ``MemoryCache`` limited to ``defaultImageCacheCostLimit`` bytes. `nil` disables it.
        public var imageCache: (any ImageCaching)?

        /// Encoded originals, keyed by source: a new thumbnail of a cached original needs no download.
        /// Default: a ``MemoryCache`` limited to ``defaultDataCacheCostLimit`` bytes. `nil` disables it.
        public var dataCache: (any DataCaching)?

        /// The most downloads that run at once; the rest wait by priority. Default 6.
        public var maximumConcurrentDownloads: Int

        /// The most decodes that run at once, each on its own thread (never on
        /// Swift's cooperative pool). Default: the number of active processor cores.
        public var maximumConcurrentDecodes: Int

        /// A configuration with every default but the decoder.
        /// - Parameters:
        ///   - decoder: Turns bytes into images.
        ///   - dataLoader: Loads `.url` requests; default ``FileDataLoader``.
        public init(decoder: any ImageDecoding, dataLoader: any DataLoading = FileDataLoader()) {
            self.decoder = decoder
            self.dataLoader = dataLoader
            self.imageCache = MemoryCache<ImageCacheKey, Image>(costLimit: Self.defaultImageCacheCostLimit)
            self.dataCache = MemoryCache<String, Data>(costLimit: Self.defaultDataCacheCostLimit)
            self.maximumConcurrentDownloads = 6
            self.maximumConcurrentDecodes = max(1, ProcessInfo.processInfo.activeProcessorCount)
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
}
