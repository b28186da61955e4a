import Foundation

extension ImagePipeline {
    /// The data stage: memory, then disk (fresh: use; stale: revalidate), then the source.
    ///
    /// The memory tiers do not apply HTTP freshness (as a browser's in-memory image
    /// cache does not): they hold a working set, bounded by their limits and an
    /// optional TTL. HTTP semantics apply to the disk tier, which outlives the process.
    func loadData(
        _ request: ImageRequest,
        priority: PriorityCell,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> CacheEntry {
        let key = request.sourceKey
        if !request.options.contains(.disableMemoryCacheReads), let cache = configuration.dataCache {
            let entry = await cache.entry(for: key.stringValue)
            record(.cacheLookup(.memoryData, hit: entry != nil))
            if let entry { return entry }
        }
        return try await dataJobs.value(for: key, priority: priority, progress: progress) { [self] job in
            try await fetchData(request, job: job)
        }
    }

    private func fetchData(_ request: ImageRequest, job: JobContext) async throws -> CacheEntry {
        let key = request.sourceKey.stringValue
        let policy = configuration.cachePolicy
        var stale: CacheEntry?
        var conditionalHeaders: [String: String] = [:]
        if !request.options.contains(.disableDiskCacheReads), let disk = configuration.diskCache {
            let entry = await disk.entry(for: key)
            switch entry.map({ policy.evaluate($0.metadata, requestHeaders: request.headers) }) {
            case .fresh?:
                record(.cacheLookup(.diskData, hit: true))
                await remember(entry!, for: request)
                return entry!
            case .stale(let headers)?:
                stale = entry
                conditionalHeaders = headers
            case .mismatch?, nil:
                break
            }
            record(.cacheLookup(.diskData, hit: false))
        }
        if request.options.contains(.returnCacheDataDontLoad) {
            if let stale { return stale }
            throw ImagePipelineError.notCached
        }

        let requestTime = Date()
        let response: DataResponse
        do {
            response = try await downloads.run(priority: job.priority) {
                let start = ContinuousClock.now
                do {
                    let response = try await fetch(request, conditionalHeaders: conditionalHeaders, progress: job.reportProgress)
                    let notModified = response.statusCode == 304
                    record(.fetched(duration: ContinuousClock.now - start, bytes: response.data.count, notModified: notModified))
                    return response
                } catch {
                    if !(error is CancellationError) { record(.fetchFailed(duration: ContinuousClock.now - start)) }
                    throw error
                }
            }
        } catch where !(error is CancellationError) {
            // The origin failed: a stale entry may stand in (stale-if-error).
            if let stale, policy.allowsStaleOnError(stale.metadata) { return stale }
            throw error
        }
        let http = httpInfo(for: request, response: response, requestTime: requestTime)

        if response.statusCode == 304 {
            guard let stale, let http else { throw ImagePipelineError.unexpectedNotModified }
            let refreshed = CacheEntry(data: stale.data, metadata: policy.refreshed(stale.metadata, notModified: http))
            if !request.options.contains(.disableDiskCacheWrites) {
                await configuration.diskCache?.updateMetadata(refreshed.metadata, for: key)
            }
            await remember(refreshed, for: request)
            return refreshed
        }

        let entry = CacheEntry(data: response.data, metadata: CacheMetadata(
            contentType: response.headers["content-type"], storedAt: Date(), http: http
        ))
        if http.map(policy.isStorable) ?? true {
            if !request.options.contains(.disableDiskCacheWrites), !request.isLocalFile {
                await configuration.diskCache?.store(entry.data, for: key, metadata: entry.metadata)
            }
            await remember(entry, for: request)
        } else if stale != nil {
            // The origin now forbids storing: drop the old copy too.
            await configuration.diskCache?.remove(for: key)
        }
        return entry
    }

    private func fetch(
        _ request: ImageRequest,
        conditionalHeaders: [String: String],
        progress: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> DataResponse {
        switch request.source {
        case .url(let url):
            let headers = request.headers.merging(conditionalHeaders) { _, conditional in conditional }
            return try await configuration.dataLoader.load(DataRequest(url: url, headers: headers), progress: progress)
        case .data(_, let fetch):
            return DataResponse(data: try await fetch())
        }
    }

    /// The HTTP facts of a response from an http(s) URL; `nil` for files and custom sources.
    private func httpInfo(for request: ImageRequest, response: DataResponse, requestTime: Date) -> HTTPResponseInfo? {
        guard case .url(let url) = request.source, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        return HTTPResponseInfo(
            statusCode: response.statusCode, headers: response.headers,
            requestTime: requestTime, responseTime: Date(), requestHeaders: request.headers
        )
    }

    private func remember(_ entry: CacheEntry, for request: ImageRequest) async {
        guard !request.options.contains(.disableMemoryCacheWrites) else { return }
        await configuration.dataCache?.store(entry.data, for: request.sourceKey.stringValue, metadata: entry.metadata)
    }
}
