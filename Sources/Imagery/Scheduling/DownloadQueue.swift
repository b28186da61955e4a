
/// Limits how many downloads run at once and starts waiting ones by priority.
/// A waiting download whose priority changes is moved at once; a cancelled one
/// leaves the line without taking a slot.
final class DownloadQueue: Sendable {
    private typealias Machine = DownloadQueueStateMachine<CheckedContinuation<Void, any Error>>
    private let state: Locked<Machine>

    /// A queue that runs at most `limit` downloads at once.
    init(limit: Int) {
        state = Locked(Machine(limit: limit))
    }

    /// Downloads waiting for a slot.
    var waiting: Int { state.withLock { $0.pendingCount } }

    /// Runs `body` when a slot is free, at the priority `priority` holds (and follows its changes while waiting).
    /// - Parameters:
    ///   - deadline: When set, a wait for a slot past it ends with `timeoutError()` (admission: a
    ///     request waits a bounded time in all, ``MemoryBudget``).
    /// - Throws: `CancellationError` if cancelled while waiting, `timeoutError()`, or what `body` throws.
    func run<T: Sendable>(
        priority: PriorityCell,
        deadline: ContinuousClock.Instant? = nil,
        timeoutError: @escaping @Sendable () -> any Error = { CancellationError() },
        _ body: () async throws -> T
    ) async throws -> T {
        let id = state.withLock { $0.makeTicketID() }
        let timer = Locked<Task<Void, Never>?>(nil)
        defer { timer.withLock { $0?.cancel() } }
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
                        timer.withLock {
                            $0 = Task { [weak self] in
                                try? await Task.sleep(until: deadline, clock: .continuous)
                                guard !Task.isCancelled, let self else { return }
                                let waiting = self.state.withLock { $0.cancel(id) }
                                waiting?.resume(throwing: timeoutError())
                            }
                        }
                    }
                    priority.observe { [weak self] in
                        let latest = priority.value
                        self?.state.withLock { $0.updatePriority(id, to: latest) }
                    }
                    let latest = priority.value
                    state.withLock { $0.updatePriority(id, to: latest) }
                }
            }
        } onCancel: {
            let continuation = state.withLock { $0.cancel(id) }
            continuation?.resume(throwing: CancellationError())
        }
        priority.stopObserving()
        defer {
            let next = state.withLock { $0.finish() }
            next?.resume()
        }
        return try await body()
    }

    /// How many downloads run now.
    var runningCount: Int { state.withLock { $0.running } }

    /// How many downloads wait for a slot.
    var pendingCount: Int { state.withLock { $0.pendingCount } }
}
