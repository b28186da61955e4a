/// Limits how many downloads run at once, in an urgent lane and a prefetch lane
/// (``DownloadQueueStateMachine``): urgent downloads start by priority up to the limit; prefetch
/// downloads start one at a time (``ImagePipeline/Configuration/maximumConcurrentPrefetches``) and
/// only while no urgent download waits or runs. A download's priority is followed while it waits
/// (it moves between lines and lanes) and while it runs (it counts in its new lane); a cancelled
/// one leaves the line without taking a slot.
final class DownloadQueue: Sendable {
    private typealias Machine = DownloadQueueStateMachine<CheckedContinuation<Void, any Error>>
    private let state: Locked<Machine>

    /// A queue that runs at most `limit` urgent downloads and `prefetchLimit` prefetch downloads at once.
    init(limit: Int, prefetchLimit: Int = 1) {
        state = Locked(Machine(limit: limit, prefetchLimit: prefetchLimit))
    }

    /// Downloads waiting for a slot.
    var waiting: Int { state.withLock { $0.pendingCount } }

    /// Runs `body` when a slot is free, at the priority `priority` holds (and follows its changes
    /// while waiting and while running).
    /// - Parameters:
    ///   - deadline: When set, a wait for a slot past it ends with `timeoutError()` (admission: a
    ///     request waits a bounded time in all, ``MemoryBudget``), measured on `time` (the budget's).
    /// - Throws: `CancellationError` if cancelled while waiting, `timeoutError()`, or what `body` throws.
    func run<T: Sendable>(
        priority: PriorityCell,
        deadline: ContinuousClock.Instant? = nil,
        time: TimeSource = .system,
        timeoutError: @escaping @Sendable () -> any Error = { CancellationError() },
        _ body: () async throws -> T
    ) async throws -> T {
        let id = state.withLock { $0.makeTicketID() }
        let timer = Locked<DeadlineTimers.Token?>(nil)
        defer { timer.withLock { $0.map(DeadlineTimers.shared.cancel) } }
        // Follows the priority from now until the download ends: the observer re-reads the latest value.
        priority.observe { [weak self] in
            self?.update(id, to: priority.value)
        }
        defer {
            priority.stopObserving()
            let started = state.withLock { $0.lane(ofRunning: id) == nil ? [] : $0.finish(id) }
            for continuation in started { continuation.resume() }
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let action = state.withLock { machine -> Machine.EnqueueAction? in
                    if Task.isCancelled { return nil }
                    return machine.enqueue(id, priority: priority.value, payload: continuation)
                }
                switch action {
                case nil: continuation.resume(throwing: CancellationError())
                case .run(let continuation): continuation.resume()
                case .wait:
                    if let deadline {
                        let remaining = time.instant().duration(to: deadline)
                        timer.withLock {
                            $0 = DeadlineTimers.shared.schedule(after: remaining) { [weak self] in
                                self?.leave(id, with: timeoutError)
                            }
                        }
                    }
                    // A change between the enqueue and the observer's first call is not lost.
                    update(id, to: priority.value)
                }
            }
        } onCancel: {
            leave(id, with: { CancellationError() })
        }
        return try await body()
    }

    /// The entry `id` (waiting or running) now has `priority`.
    private func update(_ id: Machine.TicketID, to priority: ImageRequest.Priority) {
        let started = state.withLock { $0.updatePriority(id, to: priority) }
        for continuation in started { continuation.resume() }
    }

    /// A waiting entry gives up with `error()`; a running one is left alone (it ends by itself).
    /// `error` is made only for an entry that was waiting (a budget's refusal counts itself).
    private func leave(_ id: Machine.TicketID, with error: () -> any Error) {
        let (cancelled, started) = state.withLock { $0.cancel(id) }
        cancelled?.resume(throwing: error())
        for continuation in started { continuation.resume() }
    }

    /// How many downloads run now, in both lanes.
    var runningCount: Int { state.withLock { $0.running } }

    /// How many downloads run now in each lane.
    var runningByLane: (urgent: Int, prefetch: Int) { state.withLock { ($0.runningUrgent, $0.runningPrefetch) } }

    /// How many downloads wait for a slot.
    var pendingCount: Int { state.withLock { $0.pendingCount } }

    /// The priorities of the downloads waiting for a slot, in the order they would start (for tests).
    var pendingPriorities: [ImageRequest.Priority] { state.withLock { $0.pendingPrioritiesInOrder } }
}
