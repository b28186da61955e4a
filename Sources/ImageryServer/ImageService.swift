import Foundation
import Hummingbird
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryVips

/// An encoded response body, ready to send again (the buffer is shared, not copied, per response).
struct EncodedImage: Sendable, CacheCostReporting {
    let body: ByteBuffer
    let format: ImageFormat
    /// A strong validator: a hash of the bytes, the same on every instance.
    let etag: String
    var cacheCost: Int { body.readableBytes }

    init(data: Data, format: ImageFormat) {
        body = ByteBuffer(bytes: data)
        self.format = format
        etag = ImageService.etag(of: data)
    }
}

/// Turns `/image` parameters into encoded bytes: the pipeline loads, caches and
/// decodes at size; this encodes the requested format on its own threads and
/// keeps encoded responses in memory, one encode per response however many ask.
final class ImageService: Sendable {
    let configuration: ServerConfiguration
    let pipeline: ImagePipeline
    let loader: HTTPDataLoader
    let diskCache: DiskCache?
    private let responses: MemoryCache<String, EncodedImage>
    private let encodingPool = WorkerPool(threadCount: max(1, ProcessInfo.processInfo.activeProcessorCount), name: "imagery.encode")
    private let encoder = VipsImageEncoder()
    private let encodes = InFlight<EncodedImage>()

    private let metrics: ServerMetrics?

    init(configuration: ServerConfiguration, observer metrics: ServerMetrics? = nil) throws {
        self.metrics = metrics
        self.configuration = configuration
        let sourceGuard = SourceGuard(allowedHosts: configuration.allowedHosts, privateNetworkHosts: configuration.privateNetworkHosts)
        var loaderConfiguration = HTTPDataLoader.Configuration()
        loaderConfiguration.maximumSize = configuration.maximumSourceBytes
        loaderConfiguration.timeout = configuration.originTimeout
        loaderConfiguration.userAgent = "Imagery image proxy"
        loaderConfiguration.validateURL = { try await sourceGuard.check($0) }  // the URL and every redirect
        loader = HTTPDataLoader(configuration: loaderConfiguration)

        var pipelineConfiguration = ImagePipeline.Configuration(
            // Strict: a truncated or garbled source is a 422, never a half-grey image cached and served for a day.
            decoder: VipsImageDecoder(maximumPixels: configuration.maximumSourcePixels, rejectsCorruptData: true),
            dataLoader: loader
        )
        // Memory: 1/4 decoded images, 1/4 originals, 1/8 decoded bases (other sizes are resized
        // from them), 3/8 encoded responses. Memory tiers ignore HTTP freshness: a short TTL
        // bounds how long an origin change goes unseen.
        let eighth = configuration.memoryLimit / 8
        pipelineConfiguration.imageCache = MemoryCache<ImageCacheKey, Image>(costLimit: 2 * eighth, ttl: 300)
        pipelineConfiguration.dataCache = MemoryCache<String, CacheEntry>(costLimit: 2 * eighth, ttl: 300)
        pipelineConfiguration.baseImageCacheCostLimit = eighth
        pipelineConfiguration.baseImageCacheTTL = 300
        pipelineConfiguration.maximumConcurrentDownloads = configuration.maximumConcurrentFetches
        pipelineConfiguration.observer = metrics
        diskCache = try configuration.cacheDirectory.map { try DiskCache(directory: $0, sizeLimit: configuration.diskLimit) }
        if let diskCache {
            pipelineConfiguration.diskCache = diskCache
            pipelineConfiguration.encoder = VipsImageEncoder()
        }
        pipeline = ImagePipeline(configuration: pipelineConfiguration)
        responses = MemoryCache(costLimit: 3 * eighth, ttl: 300)
    }

    /// The encoded response for `parameters`. A response already in memory is answered
    /// without touching the pipeline (the cache key holds the output choice, not the format
    /// it resolved to, so no decode is needed to find it).
    func encodedImage(for parameters: ImageParameters, accept: String?) async throws -> EncodedImage {
        let choice = parameters.outputChoice(accept: accept)
        // Keyed by the parameters as given (a hit costs no URL normalisation); other spellings
        // of one URL miss here and meet in the pipeline's caches, which normalise.
        let key = "\(parameters.responseKey)|\(choice.cacheToken)"
        let cached = responses[key]
        metrics?.cacheLookup("response", hit: cached != nil)
        if let cached { return cached }
        let request = ImageRequest(url: parameters.url, thumbnail: parameters.thumbnail(maximumSide: configuration.maximumOutputSide))
        // Loaded in the request's own task, so cancelling the request cancels the load
        // (the pipeline shares it between identical requests).
        let image = try await pipeline.image(for: request)
        let format = choice.resolved(source: image.sourceFormat)
        let encoder = self.encoder
        let quality = parameters.quality
        let pool = encodingPool
        let encoded = try await encodes.value(for: key) {
            let data = try await pool.run { try encoder.encode(image, as: format, quality: quality) }
            return EncodedImage(data: data, format: format)
        }
        responses[key] = encoded
        return encoded
    }

    /// A local image file, read on a worker thread (not an event loop or the cooperative pool).
    /// - Throws: a 404 ``ServerError`` if it cannot be read, 413 if it is over the source byte
    ///   limit (checked before reading), 415 if it is no image.
    func readFile(_ url: URL) async throws -> EncodedImage {
        let limit = configuration.maximumSourceBytes
        return try await encodingPool.run {
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
            if let size, size > limit { throw DataLoadingError.tooLarge(limit: limit) }
            guard let data = try? Data(contentsOf: url) else {
                throw ServerError(.notFound, "not_found", "there is no gallery file \(url.lastPathComponent)")
            }
            guard let format = ImageFormat(sniffing: data) else { throw ImageDecodingError.unsupportedFormat }
            return EncodedImage(data: data, format: format)
        }
    }

    /// Entries and bytes of encoded responses held in memory.
    var responseCacheUsage: (count: Int, bytes: Int) { (responses.count, responses.totalCost) }

    /// `"` + 64-bit FNV-1a of the bytes in hex + `"`: stable across processes (unlike `Hasher`).
    static func etag(of data: Data) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return "\"\(String(hash, radix: 16))-\(String(data.count, radix: 16))\""
    }
}

/// One computation per key at a time; concurrent callers share its result.
final class InFlight<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `tasks` is guarded by `lock`.
    private let lock = NSLock()
    private var tasks: [String: Task<Value, any Error>] = [:]

    func value(for key: String, _ compute: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = lock.withLock {
            if let existing = tasks[key] { return existing }
            let task = Task { try await compute() }
            tasks[key] = task
            return task
        }
        defer { lock.withLock { if tasks[key] == task { tasks[key] = nil } } }
        return try await task.value
    }
}
