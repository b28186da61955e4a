import Foundation

extension ImagePipeline {
    /// The image stage: memory, then a thumbnail variant on disk, then a kept base, then data + decode.
    ///
    /// Every image carries its source's freshness (``ImageResponse/freshUntil``). A stale one is
    /// not thrown away: its source is revalidated, and when it is still the same version (by
    /// its validators) the image, or the base it can be resized from, is used again.
    /// - Parameter preview: Told of previews while the source downloads (``ProgressivePreviews``);
    ///   `nil`: the caller wants none.
    func loadImage(
        _ request: ImageRequest,
        priority: PriorityCell,
        updates: (@Sendable (JobUpdate) -> Void)?,
        preview: (@Sendable (Image) -> Void)? = nil
    ) async throws -> ImageResponse {
        let key = request.imageKey
        let readsMemory = !request.options.contains(.disableMemoryCacheReads)
        if readsMemory, let cache = configuration.imageCache {
            let cached = cache[key]
            let fresh = cached.map { isUsable($0.freshUntil) } ?? false
            record(.cacheLookup(.memoryImage, hit: fresh))
            if fresh, let cached { return cached }
        }
        let partial = preview.map { preview in
            { @Sendable (result: PartialResult) in if case .preview(let image) = result { preview(image) } }
        }
        return try await imageJobs.value(for: key, priority: priority, updates: updates, partial: partial) {
            [self] job in
            let previews = previewScheduler(for: request, job: job)
            do {
                let response = try await runImageJob(request, job: job, previews: previews)
                await previews?.finish()
                return response
            } catch {
                await previews?.finish()
                throw error
            }
        }
    }

    /// The work of an image job (``loadImage(_:priority:progress:preview:)``): `previews` read the
    /// source's body while it downloads.
    private func runImageJob(
        _ request: ImageRequest, job: JobContext, previews: PreviewScheduler?
    ) async throws -> ImageResponse {
        let key = request.imageKey
        let readsMemory = !request.options.contains(.disableMemoryCacheReads)
        // Every admission wait of this job (a download slot, the source's bytes, the decode) ends by then.
        let deadline = configuration.memoryBudget?.admissionDeadline()
        // Memory again: another job may have stored it meanwhile; a stale image stays there until replaced.
        let staleImage = readsMemory ? configuration.imageCache?[key] : nil
        if let staleImage, isUsable(staleImage.freshUntil) { return staleImage }
        var source: CacheEntry?  // the source's bytes, loaded (and revalidated) at most once
        func loadSource() async throws -> CacheEntry {
            if let source { return source }
            let entry = try await loadData(
                request, priority: job.priority, updates: job.report,
                body: previews.map { previews in { @Sendable (body: Data) in previews.receive(body) } },
                deadline: deadline)
            previews?.stop()
            source = entry
            return entry
        }
        if let staleImage, staleImage.source.http != nil {
            let entry = try await loadSource()
            if entry.metadata.isSameVersion(as: staleImage.source) {
                let refreshed = response(staleImage.image, source: entry.metadata)
                remember(refreshed, for: request)
                return refreshed
            }
        }
        if source == nil, let stored = try await storedVariant(for: request, priority: job.priority) {
            remember(stored, for: request)
            return stored
        }
        if let derived = try await derivedFromBase(request, priority: job.priority, loadSource: loadSource) {
            remember(derived, for: request)
            storeVariant(derived, for: request)
            return derived
        }
        let entry = try await loadSource()
        let image: Image
        do {
            image = try await decode(entry, for: request, priority: job.priority, deadline: deadline)
        } catch let error as ImageDecodingError {
            // Bytes that are no image (an error page sent with 200, a truncated file) must not
            // stay cached: the next request asks the origin again. Bytes whose decode only met a
            // failed allocation stay: nothing says they are bad.
            if case .outOfMemory = error {} else { await forgetSource(of: request) }
            throw error
        }
        let decoded = response(image, source: entry.metadata)
        remember(decoded, for: request)
        storeVariant(decoded, for: request)
        return decoded
    }

    /// `image` with its source's metadata and the freshness the memory tiers give it.
    func response(_ image: Image, source: CacheMetadata) -> ImageResponse {
        ImageResponse(image: image, source: source, freshUntil: freshUntil(source))
    }

    /// Until when something made from a source with `metadata` may be used from memory.
    func freshUntil(_ metadata: CacheMetadata) -> Date {
        configuration.memoryFreshness == .ignored ? .distantFuture : configuration.cachePolicy.freshUntil(metadata)
    }

    /// Whether a memory entry fresh until `date` may be used now.
    func isUsable(_ date: Date) -> Bool {
        date == .distantFuture || configuration.time.date() < date
    }

    /// Whether things made from a source with `metadata` may be kept in memory (not for `no-store`).
    func mayKeepInMemory(_ metadata: CacheMetadata) -> Bool {
        configuration.memoryFreshness == .ignored || configuration.cachePolicy.isStorable(metadata)
    }

    /// Decodes the thumbnail `request` asks for, keeping the decoder's base for later
    /// sizes of the source when the decoder makes one (``ThumbnailDeriving``).
    private func decode(
        _ entry: CacheEntry, for request: ImageRequest, priority: PriorityCell, deadline: ContinuousClock.Instant?
    ) async throws -> Image {
        let admission = try await admitDecode(of: entry.data, recipe: request.recipe, deadline: deadline)
        defer { admission.forEach { $0.release() } }
        let recipe = request.recipe
        guard recipe.resizes, let bases, !request.options.contains(.disableMemoryCacheWrites),
            let deriving = configuration.decoder as? any ThumbnailDeriving
        else { return try await decode(entry.data, recipe: recipe, priority: priority) }
        let data = entry.data
        let (image, base) = try await timedDecode(priority: priority) {
            let decoded = try deriving.decodeKeepingBase(data, recipe: recipe)
            return (decoded.image, decoded.base)
        }
        if let base, mayKeepInMemory(entry.metadata) {
            bases[request.sourceKey] = KeptBase(
                base: base, source: entry.metadata, freshUntil: freshUntil(entry.metadata))
        }
        return image
    }

    /// Charges a decode to the memory budget, if there is one: the source's bytes (held already),
    /// then the decoder's estimate (``DecodeCostEstimating``), waiting in line while it does not fit.
    /// - Returns: What to release when the decode is done.
    /// - Throws: ``MemoryBudgetError``, or `CancellationError`.
    private func admitDecode(
        of data: Data, recipe: ImageRecipe, deadline: ContinuousClock.Instant?
    ) async throws -> [Reservation] {
        guard let budget = configuration.memoryBudget else { return [] }
        let source = budget.charge(data.count)
        // An unreadable header is the decode's to report: charge the source alone.
        let estimate =
            (configuration.decoder as? any DecodeCostEstimating)
            .flatMap { try? $0.estimatedDecodeMemory(data, recipe: recipe) } ?? 0
        do {
            return [source, try await budget.reserve(estimate, for: .decode, deadline: deadline)]
        } catch {
            source.release()
            throw error
        }
    }

    /// Decodes on a decode thread (never the cooperative pool), reporting how long the decode itself took.
    private func decode(_ data: Data, recipe: ImageRecipe, priority: PriorityCell) async throws -> Image {
        let decoder = configuration.decoder
        return try await timedDecode(priority: priority) { (try decoder.decode(data, recipe: recipe), ()) }.image
    }

    /// Whether work at `priority` is urgent now (read when a decode thread looks for work: a
    /// prefetch raised while its decode waits goes ahead).
    func isUrgent(_ priority: PriorityCell) -> @Sendable () -> Bool {
        { DownloadQueueStateMachine<Void>.Lane(priority.value) == .urgent }
    }

    private func timedDecode<Extra: Sendable>(
        priority: PriorityCell, _ work: @escaping @Sendable () throws -> (image: Image, extra: Extra)
    ) async throws -> (image: Image, extra: Extra) {
        let (result, duration) = try await decodingPool.run(isUrgent: isUrgent(priority)) {
            () -> (Result<(image: Image, extra: Extra), any Error>, Duration) in
            let start = ContinuousClock.now
            let result = Result { try work() }
            return (result, ContinuousClock.now - start)
        }
        switch result {
        case .success(let value):
            record(.decoded(duration: duration, width: value.image.width, height: value.image.height))
            return value
        case .failure(let error):
            record(.decodeFailed(duration: duration))
            throw error
        }
    }

    /// The thumbnail made from the source's kept base when the base has enough pixels for it: no
    /// download and no decode. A stale base is used once its source, revalidated, is the same version.
    private func derivedFromBase(
        _ request: ImageRequest, priority: PriorityCell, loadSource: () async throws -> CacheEntry
    ) async throws -> ImageResponse? {
        let recipe = request.recipe
        guard recipe.resizes, let bases, !request.options.contains(.disableMemoryCacheReads),
            let deriving = configuration.decoder as? any ThumbnailDeriving
        else { return nil }
        guard var kept = bases[request.sourceKey] else {
            record(.cacheLookup(.memoryBase, hit: false))
            return nil
        }
        if !isUsable(kept.freshUntil) {
            let entry = try await loadSource()
            guard entry.metadata.isSameVersion(as: kept.source) else {
                bases[request.sourceKey] = nil
                record(.cacheLookup(.memoryBase, hit: false))
                return nil
            }
            kept = KeptBase(base: kept.base, source: entry.metadata, freshUntil: freshUntil(entry.metadata))
            bases[request.sourceKey] = kept
        }
        let base = kept.base
        let (image, duration) = try await decodingPool.run(isUrgent: isUrgent(priority)) { () -> (Image?, Duration) in
            let start = ContinuousClock.now
            let image = try? deriving.image(recipe, from: base)  // a failure just means: decode
            return (image, ContinuousClock.now - start)
        }
        record(.cacheLookup(.memoryBase, hit: image != nil))
        guard let image else { return nil }
        record(.derived(duration: duration, width: image.width, height: image.height))
        return response(image, source: kept.source)
    }

    private func forgetSource(of request: ImageRequest) async {
        bases?[request.sourceKey] = nil
        let key = request.sourceKey.stringValue
        await configuration.dataCache?.remove(for: key)
        await configuration.diskCache?.remove(for: key)
    }

    private func remember(_ image: ImageResponse, for request: ImageRequest) {
        guard !request.options.contains(.disableMemoryCacheWrites), mayKeepInMemory(image.source) else { return }
        configuration.imageCache?[request.imageKey] = image
    }

    /// A fresh thumbnail stored on disk under the variant key, decoded.
    private func storedVariant(for request: ImageRequest, priority: PriorityCell) async throws -> ImageResponse? {
        guard !request.recipe.isIdentity, !request.options.contains(.disableDiskCacheReads),
            configuration.storesThumbnailsOnDisk, let disk = configuration.diskCache
        else { return nil }
        let entry = await disk.entry(for: request.imageKey.stringValue)
        let now = configuration.time.date()
        let usable =
            entry.map {
                request.options.contains(.returnCacheDataDontLoad)
                    || configuration.cachePolicy.evaluate($0.metadata, requestHeaders: request.headers, now: now)
                        == .fresh
            } ?? false
        record(.cacheLookup(.diskVariant, hit: usable))
        guard let entry, usable else { return nil }
        guard let variant = try? await decode(entry.data, recipe: ImageRecipe(), priority: priority) else {
            await disk.remove(for: request.imageKey.stringValue)  // unreadable: forget it
            return nil
        }
        // Report the original's format, recorded when the variant was stored.
        let sourceFormat = entry.metadata.contentType.flatMap(ImageFormat.init(mimeType:)) ?? variant.sourceFormat
        let image = Image(
            width: variant.width, height: variant.height, pixelFormat: variant.pixelFormat, pixels: variant.pixels,
            sourceFormat: sourceFormat, metadata: variant.metadata, animation: variant.animation
        )
        return response(image, source: entry.metadata)
    }

    /// Encodes a thumbnail and stores it on disk in the background, with its source's freshness.
    private func storeVariant(_ response: ImageResponse, for request: ImageRequest) {
        guard !request.recipe.isIdentity, !request.options.contains(.disableDiskCacheWrites), !request.isLocalFile,
            configuration.storesThumbnailsOnDisk, let disk = configuration.diskCache,
            let encoder = configuration.encoder,
            configuration.cachePolicy.isStorable(response.source)
        else { return }
        let image = response.image
        var metadata = response.source
        metadata.contentType = image.sourceFormat.mimeType
        let key = request.imageKey.stringValue
        let pool = decodingPool
        backgroundWork.start(priority: .utility) { [metadata] in
            // Animated: WebP keeps every frame and alpha (GIF would lose colours).
            let format: ImageFormat = image.animation != nil ? .webp : image.pixelFormat.hasAlpha ? .png : .jpeg
            guard let data = try? await pool.run({ try encoder.encode(image, as: format, quality: 90) }) else { return }
            await disk.store(data, for: key, metadata: metadata)
        }
    }
}

/// A decoder's base for a source, with the source's cache metadata (for the variants made from it)
/// and freshness (as ``ImageResponse/freshUntil``).
struct KeptBase: Sendable, CacheCostReporting {
    let base: ThumbnailBase
    let source: CacheMetadata
    let freshUntil: Date
    var cacheCost: Int { base.cacheCost }
}
