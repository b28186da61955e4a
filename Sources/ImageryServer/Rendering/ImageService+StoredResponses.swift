import Foundation
import ImageryDiskCache

/// Result storage as the routes and ``HitHandler`` read it: a request's text to what it resolved to,
/// the response in memory or its file on disk, and what each answer counts.
extension ImageService {
    /// The fresh stored response (in memory, else on disk) for a request written exactly as one seen
    /// before (its query and `Accept`), with whether its format was negotiated; `nil` otherwise (then:
    /// ``lookUp(_:accept:text:)``, which also knows what to do with a stale one). The cheapest
    /// answer there is: no parsing, no URL, no signature check (the text passed them the first time).
    func storedResponse(forRequestKey requestKey: String) async -> (
        response: StoredResponse, alias: ResponseStore.Alias
    )? {
        guard let alias = responses.alias(for: requestKey) else { return nil }
        let now = configuration.time.date()
        if let stored = storedInMemory(alias, at: now) { return (stored, alias) }
        guard let diskKey = alias.diskKey, let stored = await responses.onDisk(diskKey), stored.isFresh(at: now) else {
            return nil
        }
        metrics?.cacheLookup("response", hit: false)
        metrics?.cacheLookup("response_disk", hit: true)
        // Answered on the event loop, the next hit is sent from the file (the page cache holds its
        // bytes, not this process); without it, memory keeps the bytes read.
        if !configuration.listener.answersHitsOnEventLoop {
            responses.keepInMemory(stored, memoryKey: alias.memoryKey)
        }
        return (stored, alias)
    }

    /// What a request written as `requestKey` resolved to before, if it was seen.
    /// - Complexity: One memory-cache lookup.
    func alias(forRequestKey requestKey: String) -> ResponseStore.Alias? {
        responses.alias(for: requestKey)
    }

    /// The response `alias` names, if memory holds it fresh at `now` (counted as a hit in memory).
    /// - Complexity: One memory-cache lookup.
    func storedInMemory(_ alias: ResponseStore.Alias, at now: Date) -> StoredResponse? {
        guard let stored = responses.inMemory(alias.memoryKey), stored.isFresh(at: now) else { return nil }
        metrics?.cacheLookup("response", hit: true)
        return stored
    }

    /// The response `alias` names on this instance's disk, fresh at `now`, as its file and head: sent
    /// from the file, not read, not kept in memory. Not counted: ``countDiskHit()`` once it is sent.
    func storedOnDisk(_ alias: ResponseStore.Alias, at now: Date) -> (body: DiskCache.Body, head: DiskHead)? {
        guard let diskKey = alias.diskKey, let (body, head) = responses.fileOnDisk(diskKey), head.isFresh(at: now)
        else {
            return nil
        }
        return (body, head)
    }

    /// Counts a response sent from its file on disk: a miss in memory and a hit on disk. (A file found
    /// short is not sent: the route then answers, and counts, that request.)
    func countDiskHit() {
        metrics?.cacheLookup("response", hit: false)
        metrics?.cacheLookup("response_disk", hit: true)
    }

    /// Keeps `response`, read from disk, in memory for the requests `alias` names.
    func keepInMemory(_ response: StoredResponse, for alias: ResponseStore.Alias) {
        responses.keepInMemory(response, memoryKey: alias.memoryKey)
    }

    /// Counts an answer that names skipped thumbor filters (`imagery_thumbor_filters_skipped_total`).
    func countSkippedFilters(_ names: [String]) {
        guard !names.isEmpty, let metrics else { return }
        for name in names { metrics.thumborFilterSkipped(name) }
    }
}
