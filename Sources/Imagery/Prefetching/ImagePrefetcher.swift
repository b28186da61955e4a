import Foundation

/// Loads images before they are needed (the rows below a list's visible ones, the next page),
/// into the memory cache or the disk cache, at a priority that keeps it out of urgent work's way.
///
/// Requests run a few at a time (``maximumConcurrentRequests``) in the order they were given, at
/// ``priority`` (default ``ImageRequest/Priority/low``: the pipeline's prefetch lane, which runs
/// only while nothing urgent waits or runs). A request for what is already cached, queued or
/// loading costs nothing more; one made urgent later (an ``ImageTask`` for the same image) joins
/// the prefetch's download. Stopping removes what has not started and cancels what has (its
/// shared download goes on if an urgent task waits on it too). Letting go of the prefetcher stops it
/// the same way: keep it for as long as it should work.
///
/// ```swift
/// let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
/// prefetcher.startPrefetching(with: upcoming)
/// // the user scrolled the other way:
/// prefetcher.stopPrefetching(with: upcoming)
/// ```
///
/// Every operation is O(1) per request (amortised): 10 000 queued requests start and stop at the
/// same cost per request as ten.
public final class ImagePrefetcher: Sendable {
    /// Where prefetched images go.
    public enum Destination: Sendable, Hashable {
        /// Downloaded and decoded at the request's size, into the memory cache (and the disk
        /// cache's original), so that showing it costs nothing.
        case memoryCache
        /// Downloaded into the disk cache only: no decode, nothing kept in memory; a fresh entry
        /// already there is not read or downloaded again.
        case diskCache
    }

    /// How far prefetching has got: `completed + failed` of `total` have ended.
    public struct Progress: Sendable, Hashable {
        /// Requests that ended with the image in the cache (those found there already included).
        public var completed = 0
        /// Requests that ended with an error (cancelled ones are not counted: they leave `total`).
        public var failed = 0
        /// Requests given and not stopped (duplicates of queued or running ones are not counted again).
        public var total = 0

        public init(completed: Int = 0, failed: Int = 0, total: Int = 0) {
            (self.completed, self.failed, self.total) = (completed, failed, total)
        }

        /// Requests not ended yet.
        public var remaining: Int { total - completed - failed }
    }

    /// The pipeline that loads.
    public let pipeline: ImagePipeline
    /// Where the images go.
    public let destination: Destination
    /// The priority of prefetch loads.
    public let priority: ImageRequest.Priority
    /// The most requests loading at once; the rest wait in order.
    public let maximumConcurrentRequests: Int
    /// Told of each request that ends (not of stopped ones), from any thread.
    private let onCompletion: (@Sendable (ImageRequest, Result<Void, any Error>) -> Void)?

    private let state = Locked(State())

    /// - Parameters:
    ///   - pipeline: Loads the images (its caches receive them).
    ///   - destination: Default ``Destination/memoryCache``.
    ///   - priority: Default ``ImageRequest/Priority/low`` (the prefetch lane).
    ///   - maximumConcurrentRequests: Default 2 (one downloading, one decoding or waiting to start).
    ///   - onCompletion: Told of each request that ends, with its error if it failed (stopped
    ///     requests are not reported), from any thread; default `nil`.
    public init(
        pipeline: ImagePipeline, destination: Destination = .memoryCache, priority: ImageRequest.Priority = .low,
        maximumConcurrentRequests: Int = 2,
        onCompletion: (@Sendable (ImageRequest, Result<Void, any Error>) -> Void)? = nil
    ) {
        precondition(maximumConcurrentRequests > 0, "a prefetcher runs at least one request at a time")
        self.pipeline = pipeline
        self.destination = destination
        self.priority = priority
        self.maximumConcurrentRequests = maximumConcurrentRequests
        self.onCompletion = onCompletion
    }

    deinit {
        for task in state.withLock({ $0.running.values.compactMap(\.task) }) { task.cancel() }
    }

    /// Queues `requests` (at the prefetcher's priority, whatever theirs) behind those queued already.
    /// - Complexity: O(1) per request.
    public func startPrefetching(with requests: [ImageRequest]) {
        let toStart = state.withLock { state -> [Started] in
            for var request in requests {
                let key = self.key(of: request)
                guard state.queued[key] == nil, state.running[key] == nil else { continue }
                request.priority = priority
                state.enqueue(key, request)
            }
            return startNext(&state)
        }
        run(toStart)
    }

    /// Stops prefetching `requests`: those waiting leave the queue, those loading are cancelled.
    /// - Complexity: O(1) per request.
    public func stopPrefetching(with requests: [ImageRequest]) {
        let (cancelled, toStart) = state.withLock { state -> ([Task<Void, Never>], [Started]) in
            var cancelled: [Task<Void, Never>] = []
            for request in requests {
                let key = self.key(of: request)
                if state.queued.removeValue(forKey: key) != nil {
                    state.progress.total -= 1
                } else if let running = state.running.removeValue(forKey: key) {
                    state.progress.total -= 1
                    if let task = running.task { cancelled.append(task) }  // else run(_:) cancels it
                }
            }
            state.compactIfSparse()
            return (cancelled, startNext(&state))
        }
        for task in cancelled { task.cancel() }
        run(toStart)
        finishIfIdle()
    }

    /// Stops everything: the queue is emptied and every load cancelled.
    public func stopPrefetching() {
        let cancelled = state.withLock { state -> [Task<Void, Never>] in
            let tasks = state.running.values.compactMap(\.task)
            state.progress.total -= state.queued.count + state.running.count
            state.queued.removeAll()
            state.order = FIFOLine()
            state.running.removeAll()
            return tasks
        }
        for task in cancelled { task.cancel() }
        finishIfIdle()
    }

    /// How far prefetching has got.
    public var progress: Progress { state.withLock { $0.progress } }

    /// Requests waiting to start.
    public var queuedCount: Int { state.withLock { $0.queued.count } }

    /// Requests loading now.
    public var runningCount: Int { state.withLock { $0.running.count } }

    /// Returns once nothing is queued or loading, and every completion has been reported (at once if so).
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.isIdle else {
                    state.idleWaiters.append(continuation)
                    return false
                }
                return true
            }
            if idle { continuation.resume() }
        }
    }

    // MARK: - Running

    /// What identifies a request's work for this destination: the decoded variant, or the original.
    private func key(of request: ImageRequest) -> String {
        switch destination {
        case .memoryCache: request.imageKey.stringValue
        case .diskCache: request.sourceKey.stringValue
        }
    }

    private struct Started {
        let key: String
        let generation: UInt64
        let request: ImageRequest
    }

    /// Moves queued requests to running while there is room (under the lock); the tasks are made
    /// by ``run(_:)`` outside it.
    private func startNext(_ state: inout State) -> [Started] {
        var started: [Started] = []
        while state.running.count < maximumConcurrentRequests, let (key, request) = state.dequeue() {
            state.nextGeneration += 1
            state.running[key] = Running(generation: state.nextGeneration, task: nil)
            started.append(Started(key: key, generation: state.nextGeneration, request: request))
        }
        return started
    }

    private func run(_ started: [Started]) {
        for item in started {
            // The load holds the pipeline, not the prefetcher: a prefetcher let go cancels its loads (deinit).
            let (pipeline, destination) = (self.pipeline, self.destination)
            let task = Task { [weak self] in
                let result: Result<Void, any Error>
                do {
                    try await Self.load(item.request, pipeline: pipeline, destination: destination)
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                self?.finish(item, with: result)
            }
            let stillRunning = state.withLock { state -> Bool in
                guard state.running[item.key]?.generation == item.generation else { return false }
                state.running[item.key]?.task = task
                return true
            }
            if !stillRunning { task.cancel() }  // stopped between the lock and here
        }
    }

    private static func load(_ request: ImageRequest, pipeline: ImagePipeline, destination: Destination) async throws {
        let cell = PriorityCell(request.priority)
        switch destination {
        case .memoryCache:
            if pipeline.cachedImage(for: request) != nil { return }
            _ = try await pipeline.loadImage(request, priority: cell, updates: nil)
        case .diskCache:
            _ = try await pipeline.storeOriginal(request, priority: cell)
        }
    }

    private func finish(_ item: Started, with result: Result<Void, any Error>) {
        let (counted, toStart) = state.withLock { state -> (Bool, [Started]) in
            // Stopped meanwhile (it left `total` then), or another run of the key: not this one's to count.
            guard state.running[item.key]?.generation == item.generation else { return (false, startNext(&state)) }
            state.running[item.key] = nil
            switch result {
            case .success: state.progress.completed += 1
            case .failure(let error) where error is CancellationError:
                state.progress.total -= 1
                return (false, startNext(&state))
            case .failure: state.progress.failed += 1
            }
            if onCompletion != nil { state.reporting += 1 }
            return (true, startNext(&state))
        }
        if counted, let onCompletion {
            onCompletion(item.request, result)
            state.withLock { $0.reporting -= 1 }
        }
        run(toStart)
        finishIfIdle()
    }

    private func finishIfIdle() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.isIdle else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private struct Running {
        let generation: UInt64
        var task: Task<Void, Never>?
    }

    private struct State {
        var progress = Progress()
        /// Waiting requests by key; `order` holds their keys first to last, with stopped ones
        /// skipped lazily (a key is live in `order` while `queued` holds it with that place's number).
        var queued: [String: (request: ImageRequest, place: UInt64)] = [:]
        var order = FIFOLine<(key: String, place: UInt64)>()
        var nextPlace: UInt64 = 0
        var running: [String: Running] = [:]
        var nextGeneration: UInt64 = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// `onCompletion` calls under way.
        var reporting = 0

        /// Nothing queued, loading or being reported.
        var isIdle: Bool { queued.isEmpty && running.isEmpty && reporting == 0 }

        mutating func enqueue(_ key: String, _ request: ImageRequest) {
            nextPlace += 1
            queued[key] = (request, nextPlace)
            order.append((key, nextPlace))
            progress.total += 1
        }

        mutating func dequeue() -> (String, ImageRequest)? {
            while let (key, place) = order.popFirst() {
                if let entry = queued[key], entry.place == place {
                    queued[key] = nil
                    return (key, entry.request)
                }
            }
            return nil
        }

        /// Drops the places of stopped requests once they outnumber the queued ones.
        mutating func compactIfSparse() {
            guard order.count > 64, order.count > 2 * queued.count else { return }
            order.keep { queued[$0.key]?.place == $0.place }
        }
    }
}
