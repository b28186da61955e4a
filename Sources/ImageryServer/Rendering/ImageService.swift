import Foundation
import Hummingbird
import Imagery
import ImageryDiskCache
import ImageryHTTP
import ImageryS3
import ImageryVips
import Logging

/// Turns `/image` parameters into a response body: result storage (``ResponseStore``) first;
/// else the library's encoded answers (`ImagePipeline.makeEncodedImage(for:replacing:)`): the
/// pipeline loads, caches and decodes at size, encodes the format negotiated once, on its
/// encoding threads, and stores those very bytes.
final class ImageService: Sendable {
    let configuration: ServerConfiguration
    let pipeline: ImagePipeline
    let loader: SourceLoader
    let diskCache: DiskCache?
    /// The instance's disk, then the shared S3 tier (when configured): originals and stored responses.
    let persistentTiers: PersistentTiers?
    let sharedStore: SharedStore?
    let responses: ResponseStore
    /// Encodes (and header checks): the pipeline's encoding threads, one for each processor the process may use.
    let encodingPool: WorkerPool
    /// The pipeline's decoder, for checking a source's header where nothing is decoded (``unprocessed(_:_:)``).
    let sourceInspector: VipsImageDecoder
    /// Placeholders and sanitised SVGs being made, by memory key: requests for the same response
    /// share one (images are shared by the pipeline's encodes).
    ///
    /// A shared job is cancelled when every request waiting for it has been cancelled (the last
    /// client left or timed out), as the pipeline's downloads, decodes and encodes are; it no longer
    /// runs on to store a response nobody waits for. A request that joins later starts it anew.
    let encodes = Coalescer<String, StoredResponse>()

    let metrics: ServerMetrics?
    /// Each configured watermark's name in recipes: its name and a checksum of its bytes (a changed
    /// file is another variant), by the name `/image` uses.
    let watermarkIDs: [String: String]
    /// The image answered for a source that cannot be fetched or decoded, if configured.
    let fallback: FallbackImage?
    /// Loads the watermarks and frames recipes link to by URL.
    private let linkedImages: LinkedImageLoader
    /// Warns of each kind of skipped thumbor filter once.
    let skippedOptionLog: SkippedOptionLog

    init(
        configuration: ServerConfiguration, observer metrics: ServerMetrics? = nil,
        logger: Logger = Logger(label: "imagery.server")
    ) throws {
        self.metrics = metrics
        self.configuration = configuration
        skippedOptionLog = SkippedOptionLog(logger: logger)
        guard configuration.limits.inflightMemory < configuration.limits.memoryLimit else {
            throw ConfigurationFileError(
                message: "maximumInflightMemory must be less than memoryLimit (the caches get the rest)")
        }
        diskCache = try configuration.caching.directory.map { directory in
            var disk = DiskCache.Configuration(directory: directory, sizeLimit: configuration.caching.diskLimit)
            // Bytes queued for the disk are held in memory outside the caches' limits: at most an
            // eighth of the in-flight budget (a write past it is dropped; the cache is a cache).
            disk.maximumPendingBytes = min(disk.maximumPendingBytes, configuration.limits.inflightMemory / 8)
            // A full, read-only or removed directory costs the cache, never the service: it starts
            // (and goes on) memory-only, logs once, and comes back when the directory does.
            disk.retriesUnusableDirectory = true
            disk.time = configuration.time
            disk.onEvent = { event in
                switch event.kind {
                case .fault(let fault):
                    logger.warning("\(event.message)", metadata: ["disk_fault": "\(fault.rawValue)"])
                case .recovered(let fault):
                    logger.notice("\(event.message)", metadata: ["disk_recovered": "\(fault.rawValue)"])
                case .indexDamaged: logger.error("\(event.message)", metadata: ["disk_fault": "index_damaged"])
                }
            }
            return try DiskCache(configuration: disk)
        }
        let sourceGuard = SourceGuard(
            allowedHosts: configuration.origins.allowedHosts,
            privateNetworkHosts: configuration.origins.privateNetworkHosts,
            s3SourceBuckets: configuration.s3.sourceBuckets,
            lookupTimeout: configuration.origins.timeout,
            resolver: configuration.origins.resolver
        )
        let s3Client = try Self.s3Client(configuration, forSources: true)
        var loaderConfiguration = HTTPDataLoader.Configuration()
        loaderConfiguration.maximumSize = configuration.limits.maximumSourceBytes
        loaderConfiguration.timeout = configuration.origins.timeout
        loaderConfiguration.userAgent = "Imagery image proxy"
        // The pipeline's download slots are the bound: every one may go to the same origin.
        loaderConfiguration.maximumConnectionsPerHost = configuration.origins.maximumConcurrentFetches
        loaderConfiguration.validateURL = { try await sourceGuard.check($0) }  // the URL and every redirect
        // A source download cut short (its clients left, the origin's connection broke) keeps its
        // bytes on disk, never in memory outside the budget: the next request asks for the rest.
        loaderConfiguration.resumableData = diskCache.map { ResumableData(memoryLimit: 0, disk: $0) }
        let fallback = try FallbackImage(configuration)
        self.fallback = fallback
        loader = SourceLoader(
            http: HTTPDataLoader(configuration: loaderConfiguration),
            s3: s3Client.map { client in
                S3DataLoader(client: client, validateURL: { _ = try await sourceGuard.check($0) })
            },
            local: configuration.origins.localFilesystemRoot.map {
                LocalFiles(root: $0, maximumSize: configuration.limits.maximumSourceBytes)
            },
            fallback: fallback
        )
        let shared = try configuration.s3.bucket.flatMap { bucket in
            try Self.s3Client(configuration, forSources: false).map {
                // Its writes in flight hold bytes outside the caches, bounded as the disk's are.
                SharedStore(
                    client: $0, bucket: bucket, prefix: configuration.s3.prefix,
                    maximumPendingBytes: min(64 << 20, configuration.limits.inflightMemory / 8), observer: metrics,
                    logger: logger, time: configuration.time
                )
            }
        }
        sharedStore = shared
        persistentTiers =
            diskCache == nil && shared == nil
            ? nil : PersistentTiers(local: diskCache, shared: shared, observer: metrics)

        // Strict: a truncated or garbled source is a 422, never a half-grey image cached and served for a day.
        var decoder = VipsImageDecoder(
            maximumPixels: configuration.limits.maximumSourcePixels,
            maximumThumbnailSide: configuration.limits.maximumOutputSide,
            rejectsCorruptData: true
        )
        decoder.maximumFrames = configuration.limits.maximumFrames
        decoder.maximumFramePixels = configuration.limits.maximumFramePixels
        (decoder.watermarks, watermarkIDs) = try Self.loadWatermarks(configuration.rendering.watermarkFiles)
        sourceInspector = decoder
        var pipelineConfiguration = ImagePipeline.Configuration(decoder: decoder, dataLoader: loader)
        // Memory: the in-flight budget (downloads and decodes wait for it), and the caches share
        // the rest: 1/4 decoded images, 1/4 originals, 1/8 decoded bases (other sizes are resized
        // from them), 3/8 encoded responses. Every tier follows the one policy (memoryFreshness
        // .http): nothing is used past its source's freshness without revalidating.
        pipelineConfiguration.memoryBudget = MemoryBudget(
            configuration: .init(
                limit: configuration.limits.inflightMemory,
                maximumQueueLength: configuration.limits.admissionQueueLength,
                maximumWait: configuration.limits.admissionTimeout ?? configuration.limits.requestTimeout,
                maximumConcurrentDecodes: pipelineConfiguration.maximumConcurrentDecodes,
                leavesTimeForOwnWork: configuration.limits.admissionTimeout == nil
            ))
        let eighth = configuration.limits.cacheMemory / 8
        let policy = HTTPCachePolicy(minimumHeuristicLifetime: TimeInterval(configuration.caching.minimumFreshness))
        pipelineConfiguration.cachePolicy = policy
        pipelineConfiguration.memoryFreshness = .http
        pipelineConfiguration.imageCache = MemoryCache<ImageCacheKey, ImageResponse>(costLimit: 2 * eighth)
        pipelineConfiguration.dataCache = MemoryCache<String, CacheEntry>(costLimit: 2 * eighth)
        pipelineConfiguration.baseImageCacheCostLimit = eighth
        pipelineConfiguration.maximumConcurrentDownloads = configuration.origins.maximumConcurrentFetches
        pipelineConfiguration.retryPolicy = configuration.origins.retryPolicy
        pipelineConfiguration.observer = metrics
        // Originals on disk (new sizes of a known source need no download). No thumbnail variants:
        // the disk keeps final responses instead (the pipeline's encoded answers, ResponseStore), so
        // a response is encoded once. No memory tier of encoded answers: ResponseStore's, by request
        // text, stands in front.
        pipelineConfiguration.diskCache = persistentTiers
        pipelineConfiguration.encoder = VipsImageEncoder()
        pipelineConfiguration.storesThumbnailsOnDisk = false
        pipelineConfiguration.encodedImageCache = nil
        pipelineConfiguration.maximumConcurrentEncodes = UsableProcessors.current.count
        pipelineConfiguration.time = configuration.time
        pipeline = ImagePipeline(configuration: pipelineConfiguration)
        encodingPool =
            pipeline.encodingPool ?? WorkerPool(threadCount: UsableProcessors.current.count, name: "imagery.encode")
        linkedImages = LinkedImageLoader(
            pipeline: pipeline, inspector: decoder, maximumPixels: configuration.limits.maximumSourcePixels)
        responses = ResponseStore(
            memoryLimit: 3 * eighth, encoded: pipeline.encodedImages, local: diskCache, policy: policy)
    }

    /// The policy every tier follows.
    var cachePolicy: HTTPCachePolicy { pipeline.configuration.cachePolicy }

    /// What result storage holds for a request: a response to send as it is, or what making one needs.
    enum Lookup: Sendable {
        /// Fresh in memory or on disk (or stale within its `stale-while-revalidate` window, being
        /// revalidated in the background): cheap, send it.
        case stored(StoredResponse)
        /// To be made (``make(_:)``): a revalidation, a fetch, a decode, an encode.
        case missing(Missing)
    }

    /// A response to make, with the stale one result storage had (revalidated first), if any.
    struct Missing: Sendable {
        let target: Target
        let stale: StoredResponse?
    }

    /// The response body for `parameters`: ``lookUp(_:accept:)``, then ``make(_:)``.
    func response(for parameters: ImageParameters, accept: String?) async throws -> StoredResponse {
        switch await lookUp(parameters, accept: accept) {
        case .stored(let response): response
        case .missing(let missing): try await make(missing)
        }
    }

    /// Result storage for `parameters` (the cheap part of a request; it never waits for admission):
    /// 1. in memory: a fresh response is answered without touching the pipeline (the key holds the
    ///    output choice, not the format it resolved to, so no decode is needed);
    /// 2. on disk: the same bytes after a restart or an eviction from memory;
    /// 3. within the source's `stale-while-revalidate` window a stale stored response is answered
    ///    at once and revalidated in the background (once per response however many ask meanwhile).
    /// - Parameter text: The request as written, remembered with the memory key it resolves to, so
    ///   that the next request written the same way is answered by ``storedResponse(forRequestKey:)``
    ///   without being parsed again; `nil`: not remembered.
    func lookUp(_ parameters: ImageParameters, accept: String?, text: RequestText? = nil) async -> Lookup {
        let output = parameters.outputChoice(accept: accept)
        let placeholder = parameters.hashPlaceholder
        // Keyed by the parameters as given (a hit costs no URL normalisation); other spellings
        // of one URL miss here and meet on disk and in the pipeline's caches, which normalise.
        let memoryKey = "\(parameters.responseKey)|\(placeholder?.rawValue ?? output.keyToken)"
        var candidate = responses.inMemory(memoryKey)
        let now = configuration.time.date()
        let freshInMemory = candidate?.isFresh(at: now) ?? false
        metrics?.cacheLookup("response", hit: freshInMemory)
        if freshInMemory, let candidate {
            // Another spelling of a stored response (another `Accept`, another path syntax): from
            // now on it too is answered unparsed. Its disk key is worked out when it is next
            // parsed, should memory have lost the response by then.
            if let text {
                responses.remember(
                    text.key,
                    as: .init(
                        memoryKey: memoryKey, diskKey: nil, negotiated: parameters.isNegotiated, terms: text.terms))
            }
            return .stored(candidate)
        }

        let target = self.target(parameters, accept: accept, output: output, memoryKey: memoryKey)
        if let text {
            responses.remember(
                text.key,
                as: .init(
                    memoryKey: memoryKey, diskKey: target.diskKey, negotiated: parameters.isNegotiated,
                    terms: text.terms)
            )
        }
        if candidate == nil, let diskKey = target.diskKey {
            candidate = await responses.onDisk(diskKey)
            let fresh = candidate?.isFresh(at: now) ?? false
            metrics?.cacheLookup("response_disk", hit: fresh)
            if fresh, let candidate {
                if !configuration.listener.answersHitsOnEventLoop {
                    responses.keepInMemory(candidate, memoryKey: memoryKey)
                }
                return .stored(candidate)
            }
        }
        if let candidate, cachePolicy.allowsStaleWhileRevalidate(candidate.source, now: now) {
            // Answered stale, made anew in the background once (the library's mechanism, as its own
            // encoded answers are), however many requests see it stale meanwhile.
            pipeline.revalidateInBackground(key: target.storageKey) { [self] in
                _ = try await render(target, revalidating: candidate)
            }
            return .stored(candidate)
        }
        return .missing(Missing(target: target, stale: candidate))
    }

    /// Makes the response result storage did not have: a stale one revalidated through its source
    /// (the same version keeps its bytes), else the pipeline's image encoded once and stored. Runs in
    /// the calling task, so cancelling it cancels the load (the pipeline shares it between identical requests).
    func make(_ missing: Missing) async throws -> StoredResponse {
        try await render(missing.target, revalidating: missing.stale)
    }

    /// What one response is made of, and where it is stored.
    struct Target: Sendable {
        /// The image and how it is written, as the library's encoded answers take it (a hash
        /// placeholder: its source and recipe).
        let encoded: EncodedImageRequest
        /// A hash placeholder (text) instead of the image.
        let placeholder: Placeholder?
        let passthrough: ImageParameters.Passthrough?
        let memoryKey: String
        /// Where the response is stored (the pipeline's encoded answers); `nil`: not on disk (local files).
        let diskKey: String?

        var request: ImageRequest { encoded.image }
        /// The format the request itself names (not one `Accept` chose): a passthrough applies only without another.
        var askedFormat: ImageFormat? { encoded.format }
        /// The key a response made anew in the background is shared under.
        var storageKey: String { diskKey ?? memoryKey }
    }

    /// The target of `parameters`: the library's encoded-image request (the negotiation, the encoding
    /// for each format the output may resolve to: the quality asked for, else the request's for that
    /// format, else the configuration's; the quality search the settings give it).
    private func target(_ parameters: ImageParameters, accept: String?, output: OutputFormat, memoryKey: String)
        -> Target
    {
        var request = ImageRequest(url: parameters.url, recipe: parameters.recipe)
        if parameters.cacheBuster != nil { request.options = .reloadIgnoringCachedData }
        var encoded = EncodedImageRequest(request, format: parameters.format, accept: accept)
        (encoded.negotiation, encoded.fallback) = (parameters.negotiation, parameters.unaskedOutput)
        let rendering = configuration.rendering
        var base = parameters.encoding(for: output.knownFormat)
        base.autoQuality = rendering.autoQuality.autoQuality(
            parameters.autoQuality, for: output.knownFormat, qualityAsked: parameters.namesAQuality)
        encoded.encoding = base
        for format in ImageFormat.allCases {
            var options = base
            options.quality =
                parameters.quality ?? parameters.formatQualities[format] ?? rendering.formatQualities[format]
            options.autoQuality = rendering.autoQuality.autoQuality(
                parameters.autoQuality, for: format, qualityAsked: parameters.namesAQuality)
            if options != base { encoded.formatEncodings[format] = options }
        }
        if let placeholder = parameters.hashPlaceholder {
            // Text, the same for every `Accept`: one variant.
            (encoded.format, encoded.negotiation, encoded.fallback) = (nil, nil, .source)
            encoded.variant = "placeholder:" + placeholder.rawValue
        } else if let passthrough = parameters.passthrough {
            encoded.variant = String(passthrough.cacheToken.dropFirst())
        }
        if let cacheBuster = parameters.cacheBuster { encoded.variant = (encoded.variant ?? "") + "|cb:" + cacheBuster }
        return Target(
            encoded: encoded, placeholder: parameters.hashPlaceholder, passthrough: parameters.passthrough,
            memoryKey: memoryKey, diskKey: request.isLocalFile ? nil : encoded.storageKey)
    }

    /// `stale` again when its source, revalidated, is the same version; otherwise the response made
    /// anew: a placeholder, a source passed on, or the library's encoded image (stored by it).
    private func render(_ target: Target, revalidating stale: StoredResponse?) async throws -> StoredResponse {
        if let stale, stale.source.http != nil,
            let refreshed = try await pipeline.revalidated(
                stale.encoded, source: target.request, key: target.diskKey ?? target.memoryKey)
        {
            let response = StoredResponse(refreshed)
            responses.keepInMemory(response, memoryKey: target.memoryKey)
            return response
        }
        var encoded = target.encoded
        if let passthrough = target.passthrough {
            if let response = try await unprocessed(target, passthrough) { return response }
            if encoded.image.options.contains(.disableMemoryCacheReads) {
                // Reloaded just now to see its format (a cache buster): decoded from those bytes, not loaded twice.
                pipeline.removeDecodedImages(for: encoded.image)
                encoded.image.options = []
            }
        }
        encoded.image.recipe = try await linkedImages.resolving(encoded.image.recipe)
        if let placeholder = target.placeholder { return try await self.placeholder(placeholder, target, encoded) }
        if target.diskKey == nil { encoded.image.options.insert(.disableDiskCacheWrites) }
        let response = StoredResponse(try await pipeline.makeEncodedImage(for: encoded, replacing: nil))
        await responses.keep(response, memoryKey: target.memoryKey)
        return response
    }

    /// A hash placeholder of the pipeline's image (text), made once for every request that asks
    /// meanwhile, stored as the encoded answers are.
    private func placeholder(_ placeholder: Placeholder, _ target: Target, _ encoded: EncodedImageRequest)
        async throws -> StoredResponse
    {
        let image = try await pipeline.imageResponse(for: encoded.image)
        let (pool, responses, policy) = (encodingPool, self.responses, cachePolicy)
        let budget = pipeline.configuration.memoryBudget
        return try await encodes.value(for: target.memoryKey) {
            let charge = budget?.charge(image.image.pixels.count)
            defer { charge?.release() }
            let data = try await pool.run { placeholder.body(of: image.image) }
            let response = StoredResponse(
                data: data, contentType: Placeholder.contentType, source: image.source, freshUntil: image.freshUntil,
                policy: policy)
            await responses.keep(response, memoryKey: target.memoryKey, diskKey: target.diskKey)
            return response
        }
    }

    /// Entries and bytes of encoded responses held in memory.
    var responseCacheUsage: (count: Int, bytes: Int) { responses.memoryUsage }
}
