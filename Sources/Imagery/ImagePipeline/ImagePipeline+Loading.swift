import Foundation

extension ImagePipeline {
    /// The data stage: memory, then disk, then the source. Both tiers follow
    /// ``Configuration/cachePolicy`` (memory only when ``Configuration/memoryFreshness`` is
    /// ``Configuration/MemoryFreshness/http``): a fresh entry is used, a stale one is
    /// revalidated with a conditional request, and a 304 refreshes it in every tier.
    /// - Parameters:
    ///   - body: Told of the body so far while it downloads, when the pipeline makes previews
    ///     (``Configuration/progressivePreviews``); `nil`: the caller wants nothing of it.
    ///   - deadline: The end of the request's admission waits (``MemoryBudget``); default: the
    ///     budget's wait from now.
    func loadData(
        _ request: ImageRequest,
        priority: PriorityCell,
        updates: (@Sendable (JobUpdate) -> Void)?,
        body: (@Sendable (Data) -> Void)? = nil,
        deadline: ContinuousClock.Instant? = nil
    ) async throws -> CacheEntry {
        let deadline = deadline ?? configuration.memoryBudget?.admissionDeadline()
        let key = request.sourceKey
        if !request.options.contains(.disableMemoryCacheReads), let cache = configuration.dataCache {
            let entry = await cache.entry(for: key.stringValue)
            let fresh = entry.map { memoryDecision($0.metadata, for: request) == .fresh } ?? false
            record(.cacheLookup(.memoryData, hit: fresh))
            if fresh, let entry { return entry }
        }
        let partial = body.map { body in
            { @Sendable (result: PartialResult) in if case .body(let data) = result { body(data) } }
        }
        return try await dataJobs.value(for: key, priority: priority, updates: updates, partial: partial) {
            [self] job in
            try await fetchData(request, job: job, deadline: deadline)
        }
    }

    /// Makes sure the disk cache holds `request`'s original, fresh: a fresh entry is neither read
    /// nor downloaded again (its metadata says so), a stale one is revalidated, a missing one
    /// downloaded; nothing is decoded or kept in memory. Without a disk cache, the memory tier
    /// holds it instead.
    /// - Returns: Whether the disk (or memory) cache held it fresh already.
    func storeOriginal(_ request: ImageRequest, priority: PriorityCell) async throws -> Bool {
        guard let disk = configuration.diskCache, !request.isLocalFile else {
            _ = try await loadData(request, priority: priority, updates: nil)
            return false
        }
        let key = request.sourceKey.stringValue
        if !request.options.contains(.disableDiskCacheReads), let metadata = await disk.metadata(for: key),
            configuration.cachePolicy.evaluate(
                metadata, requestHeaders: request.headers, now: configuration.time.date()) == .fresh
        {
            record(.cacheLookup(.diskData, hit: true))
            return true
        }
        if !request.options.contains(.disableMemoryCacheReads),
            let entry = await configuration.dataCache?.entry(for: key),
            memoryDecision(entry.metadata, for: request) == .fresh, configuration.cachePolicy.isStorable(entry.metadata)
        {
            await disk.store(entry.data, for: key, metadata: entry.metadata)
            return true
        }
        var request = request
        request.options.insert([.disableMemoryCacheReads, .disableMemoryCacheWrites])
        _ = try await loadData(request, priority: priority, updates: nil)
        return false
    }

    /// How the policy judges an entry of the memory tier.
    private func memoryDecision(_ metadata: CacheMetadata, for request: ImageRequest) -> HTTPCachePolicy.Decision {
        configuration.memoryFreshness == .ignored
            ? .fresh
            : configuration.cachePolicy.evaluate(
                metadata, requestHeaders: request.headers, now: configuration.time.date())
    }

    private func fetchData(_ request: ImageRequest, job: JobContext, deadline: ContinuousClock.Instant?) async throws
        -> CacheEntry
    {
        let key = request.sourceKey.stringValue
        let policy = configuration.cachePolicy
        var stale: CacheEntry?
        var conditionalHeaders: [String: String] = [:]
        // Memory again (another job may have refreshed it meanwhile): a stale copy is revalidated, not downloaded.
        if !request.options.contains(.disableMemoryCacheReads),
            let entry = await configuration.dataCache?.entry(for: key)
        {
            switch memoryDecision(entry.metadata, for: request) {
            case .fresh: return entry
            case .stale(let headers): (stale, conditionalHeaders) = (entry, headers)
            case .mismatch: break
            }
        }
        if stale == nil, !request.options.contains(.disableDiskCacheReads), let disk = configuration.diskCache {
            let entry = await disk.entry(for: key)
            let now = configuration.time.date()
            switch entry.map({ policy.evaluate($0.metadata, requestHeaders: request.headers, now: now) }) {
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

        let requestTime = configuration.time.date()
        let response: DataResponse
        // The body's bytes, held against the memory budget until this job ends (the decode that
        // follows charges them again for as long as it holds them).
        let budget = configuration.memoryBudget
        let admission = SourceAdmission(budget: budget, deadline: deadline)
        defer { admission.release() }
        // The body as it arrives, for the image jobs that make previews of it.
        let body: (@Sendable (Data) -> Void)? =
            makesPreviews ? { @Sendable (data: Data) in job.reportPartial(.body(data)) } : nil
        do {
            // `deadline` is set only with a budget: a slot waited for past it is the budget's refusal.
            let overloaded: @Sendable () -> any Error = {
                budget?.overloaded() ?? MemoryBudgetError.overloaded(retryAfter: 1)
            }
            if let budget, let deadline { try budget.refuseIfLate(alsoAhead: downloads.waiting, deadline: deadline) }
            // Each attempt takes a download slot of its own: a retry's wait holds none.
            let onRetry: (RetryPolicy.Retry) -> Void = { retry in
                self.record(.retrying(attempt: retry.attempt, delay: retry.delay, status: retry.status))
                job.report(.retrying(retry))
            }
            response = try await configuration.retryPolicy.run(onRetry: onRetry) { _ in
                try await downloads.run(
                    priority: job.priority, deadline: deadline, time: budget?.time ?? .system, timeoutError: overloaded
                ) {
                    let start = ContinuousClock.now
                    do {
                        let response = try await fetch(
                            request, conditionalHeaders: conditionalHeaders, admission: admission, report: job.report,
                            body: body)
                        let notModified = response.statusCode == 304
                        record(
                            .fetched(
                                duration: ContinuousClock.now - start, bytes: response.data.count,
                                notModified: notModified))
                        return response
                    } catch {
                        if !(error is CancellationError) { record(.fetchFailed(duration: ContinuousClock.now - start)) }
                        throw error
                    }
                }
            }
        } catch  where !(error is CancellationError) {
            // The origin failed: a stale entry may stand in (stale-if-error).
            if let stale, policy.allowsStaleOnError(stale.metadata, now: configuration.time.date()) { return stale }
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

        let entry = CacheEntry(
            data: response.data,
            metadata: CacheMetadata(
                contentType: response.headers["content-type"], storedAt: configuration.time.date(), http: http
            ))
        if policy.isStorable(entry.metadata) {
            if !request.options.contains(.disableDiskCacheWrites), !request.isLocalFile {
                await configuration.diskCache?.store(entry.data, for: key, metadata: entry.metadata)
            }
            await remember(entry, for: request)
        } else if stale != nil {
            // The origin now forbids storing (`no-store`): the waiting requests get these bytes,
            // and the old copy goes from every tier.
            await configuration.diskCache?.remove(for: key)
            await configuration.dataCache?.remove(for: key)
        }
        return entry
    }

    private func fetch(
        _ request: ImageRequest,
        conditionalHeaders: [String: String],
        admission: SourceAdmission,
        report: @escaping @Sendable (JobUpdate) -> Void,
        body: (@Sendable (Data) -> Void)?
    ) async throws -> DataResponse {
        switch request.source {
        case .url(let url):
            var dataRequest = DataRequest(
                url: url, headers: request.headers.merging(conditionalHeaders) { _, conditional in conditional })
            if let modifier = configuration.requestModifier { dataRequest = try await modifier(dataRequest) }
            if let modifier = request.requestModifier { dataRequest = try await modifier(dataRequest) }
            if admission.isActive {
                dataRequest.willReceiveBody = { try await admission.reserve($0) }
            }
            dataRequest.didReceiveBody = body
            return try await configuration.dataLoader.load(dataRequest) { transfer in
                admission.received(transfer.completed)
                report(.progress(transfer))
            }
        case .data(_, let fetch):
            let data = try await fetch()
            admission.received(Int64(data.count))
            return DataResponse(data: data)
        }
    }

    /// The HTTP facts of a response from an http(s) URL; `nil` for files and custom sources.
    private func httpInfo(for request: ImageRequest, response: DataResponse, requestTime: Date) -> HTTPResponseInfo? {
        guard case .url(let url) = request.source, let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { return nil }
        return HTTPResponseInfo(
            statusCode: response.statusCode, headers: response.headers,
            requestTime: requestTime, responseTime: configuration.time.date(), requestHeaders: request.headers
        )
    }

    private func remember(_ entry: CacheEntry, for request: ImageRequest) async {
        guard !request.options.contains(.disableMemoryCacheWrites) else { return }
        await configuration.dataCache?.store(entry.data, for: request.sourceKey.stringValue, metadata: entry.metadata)
    }
}
