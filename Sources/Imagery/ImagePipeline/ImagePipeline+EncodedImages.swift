import Foundation

/// What the stores of encoded answers hold for a request (``ImagePipeline/lookUpEncodedImage(for:)``).
public enum EncodedImageLookup: Sendable {
    /// Fresh (or stale within its source's `stale-while-revalidate` window, being revalidated in the
    /// background): send it.
    case usable(EncodedImageResponse)
    /// Nothing usable: to be made (``ImagePipeline/makeEncodedImage(for:replacing:)``), revalidating
    /// the stale answer stored, if any, first (``ImagePipeline/revalidated(_:source:key:)``).
    case missing(stale: EncodedImageResponse?)
}

extension ImagePipeline {
    /// The request's image, encoded: from ``encodedImages`` (memory, then disk) while its source is
    /// fresh; else made (``makeEncodedImage(for:replacing:)``) and stored. The format is the one asked
    /// for, or the one the `Accept` header chooses (``EncodedImageRequest/output``), so one request
    /// asked with `Accept: image/avif` and with `Accept: image/webp` is two variants, each stored.
    ///
    /// ```swift
    /// let request = EncodedImageRequest(
    ///     ImageRequest(url: url, thumbnail: .init(width: 256, height: 256)), accept: headers["Accept"])
    /// let encoded = try await pipeline.encodedImage(for: request)
    /// // encoded.data, encoded.contentType, encoded.etag, encoded.cacheHeaders, encoded.variesWithAccept
    /// ```
    ///
    /// The request's options apply: ``ImageRequest/Options/reloadIgnoringCachedData`` makes it anew,
    /// ``ImageRequest/Options/returnCacheDataDontLoad`` answers what is stored, even stale.
    /// Cancelling the calling task cancels the load (shared with identical requests).
    /// - Parameter request: The image, and how it is written.
    /// - Throws: ``ImagePipelineError/noEncoder`` without an encoder; what ``image(for:)`` throws;
    ///   ``ImageEncodingError``; `CancellationError`.
    public func encodedImage(for request: EncodedImageRequest) async throws -> EncodedImageResponse {
        switch await lookUpEncodedImage(for: request) {
        case .usable(let response):
            return response
        case .missing(let stale):
            if let stale, request.image.options.contains(.returnCacheDataDontLoad) { return stale }
            return try await makeEncodedImage(for: request, replacing: stale)
        }
    }

    /// What ``encodedImages`` holds for `request`, without loading, decoding or encoding anything
    /// (cheap: a memory lookup, a disk read). A stale answer within its source's
    /// `stale-while-revalidate` window is usable, and made anew in the background
    /// (``revalidateInBackground(key:_:)``).
    /// - Parameter request: The image, and how it is written.
    public func lookUpEncodedImage(for request: EncodedImageRequest) async -> EncodedImageLookup {
        let key = request.storageKey
        let options = request.image.options
        guard
            var stored = await encodedImages.stored(
                for: key, readsMemory: !options.contains(.disableMemoryCacheReads),
                readsDisk: !options.contains(.disableDiskCacheReads))
        else { return .missing(stale: nil) }
        stored.variesWithAccept = request.variesWithAccept
        let now = configuration.time.date()
        if stored.isFresh(at: now) { return .usable(stored) }
        guard configuration.cachePolicy.allowsStaleWhileRevalidate(stored.source, now: now) else {
            return .missing(stale: stored)
        }
        revalidateInBackground(key: key) { [self, stored] in
            _ = try await makeEncodedImage(for: request, replacing: stored)
        }
        stored.origin = .staleWhileRevalidating
        return .usable(stored)
    }

    /// Runs `work` (an answer stored under `key` made anew: revalidated, or encoded again) in a task of
    /// its own, once however many callers ask meanwhile; ``waitForStores()`` waits for it. A failure
    /// leaves the stale answer to its window.
    /// - Parameters:
    ///   - key: The storage key of the answer.
    ///   - work: Makes and stores the answer.
    public func revalidateInBackground(key: String, _ work: @escaping @Sendable () async throws -> Void) {
        let revalidations = self.revalidations
        backgroundWork.start(priority: .utility) {
            _ = try? await revalidations.value(for: key) {
                try await work()
                return true
            }
        }
    }

    /// `stale` refreshed, and stored so under `key`, when its source (`source`'s), revalidated, is the
    /// same version: the same bytes and ETag with the source's new freshness. `nil` when the source
    /// changed or has no validators (not HTTP): the answer is to be made anew.
    /// - Parameters:
    ///   - stale: The stale answer.
    ///   - source: A request for its source (loaded through the pipeline's caches: a conditional request).
    ///   - key: Its storage key.
    /// - Throws: What ``dataEntry(for:)`` throws.
    public func revalidated(_ stale: EncodedImageResponse, source: ImageRequest, key: String) async throws
        -> EncodedImageResponse?
    {
        guard stale.source.http != nil else { return nil }
        let entry = try await dataEntry(for: source)
        guard entry.metadata.isSameVersion(as: stale.source) else { return nil }
        let refreshed = stale.refreshed(source: entry.metadata, policy: configuration.cachePolicy)
        await encodedImages.keepRefreshed(refreshed, for: key)
        return refreshed
    }

    /// Makes the encoded image for `request` and stores it: `stale` again when its source, revalidated,
    /// is the same version (``revalidated(_:source:key:)``: the same bytes, refreshed); else the pipeline's image (``imageResponse(for:)``:
    /// its caches, one download and one decode for identical requests) encoded once, on
    /// ``encodingPool``, in the format ``EncodedImageRequest/output`` resolves to for that image. The
    /// encode's working memory is charged to the ``Configuration/memoryBudget`` while it runs (never
    /// waited for: the decode was admitted already). Identical requests share one encode.
    /// - Parameters:
    ///   - request: The image, and how it is written.
    ///   - stale: The answer stored before, if any (``EncodedImageLookup/missing(stale:)``).
    /// - Throws: As ``encodedImage(for:)``.
    public func makeEncodedImage(for request: EncodedImageRequest, replacing stale: EncodedImageResponse?)
        async throws -> EncodedImageResponse
    {
        guard let encoder = configuration.encoder, let pool = encodingPool else { throw ImagePipelineError.noEncoder }
        let key = request.storageKey
        let options = request.image.options
        let (store, policy) = (encodedImages, configuration.cachePolicy)
        if let stale, var refreshed = try await revalidated(stale, source: request.image, key: key) {
            refreshed.variesWithAccept = request.variesWithAccept
            return refreshed
        }
        let image = try await imageResponse(for: request.image)
        let format = request.output.resolved(
            source: image.image.sourceFormat, animated: image.image.animation != nil,
            transparent: image.image.pixelFormat.hasAlpha)
        let encoding = request.encoding(for: format)
        let working = encoder.estimatedEncodeMemory(image.image, as: format, options: encoding)
        let budget = configuration.memoryBudget
        let writesMemory = !options.contains(.disableMemoryCacheWrites)
        let writesDisk = !options.contains(.disableDiskCacheWrites) && !request.image.isLocalFile
        var response = try await encodes.value(for: key) {
            let charge = budget?.charge(working)
            defer { charge?.release() }
            let encoded = try await pool.run { try encoder.encoded(image.image, as: format, options: encoding) }
            var metadata = image.source
            (metadata.imageWidth, metadata.imageHeight) = (image.image.width, image.image.height)
            metadata.chosenQuality = encoding.autoQuality == nil ? nil : encoded.quality
            let response = EncodedImageResponse(
                data: encoded.data, contentType: format.mimeType, source: metadata, freshUntil: image.freshUntil,
                policy: policy, origin: .encoded)
            await store.keep(response, for: key, writesMemory: writesMemory, writesDisk: writesDisk)
            return response
        }
        response.variesWithAccept = request.variesWithAccept
        return response
    }
}
