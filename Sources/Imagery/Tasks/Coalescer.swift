import Foundation

/// Runs one job per key however many callers ask for it at once.
///
/// Each caller is a waiter with its own priority, handler of the job's updates (progress, retries) and
/// partial-result handler (a download's bytes so far, a decode's previews: ``PartialResult``). The job
/// runs in its own task at the highest priority of its waiters; when the last
/// waiter is cancelled, the job's task is cancelled too (which aborts a
/// download in flight). The bookkeeping is ``CoalescingStateMachine``.
///
/// `package`: the server shares its encodes and revalidations through it too,
/// with ``value(for:work:)`` (no priorities, no updates).
package final class Coalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    typealias Work = @Sendable (JobContext) async throws -> Value

    private struct WaiterEntry: Sendable {
        let continuation: CheckedContinuation<Value, any Error>
        let cell: PriorityCell
        let updates: (@Sendable (JobUpdate) -> Void)?
        let partial: (@Sendable (PartialResult) -> Void)?
    }

    private struct RunningJob: Sendable {
        let task: Task<Void, Never>
        let context: JobContext
    }

    private typealias Machine = CoalescingStateMachine<Key, WaiterEntry, RunningJob>

    private let state = Locked(Machine())

    package init() {}

    /// The value for `key`: joins the job running for it, or starts one with `work`; for callers
    /// with no priority or updates to pass on (each waits at `.normal`).
    ///
    /// A caller that is cancelled stops waiting at once (it throws `CancellationError`); the job
    /// goes on for the others, and is cancelled with the last of them.
    ///
    /// - Parameters:
    ///   - key: Which job: one runs per key at a time.
    ///   - work: Computes the value; called only when no job runs for `key`.
    /// - Throws: The job's error, or `CancellationError` when the calling task is cancelled.
    package func value(for key: Key, work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await value(for: key, priority: PriorityCell(.normal)) { _ in try await work() }
    }

    /// The value for `key`: joins the job running for it, or starts one with `work`.
    ///
    /// - Parameters:
    ///   - priority: The caller's priority; later changes to it reach the job.
    ///   - updates: Told of the job's progress and retries, from any thread.
    ///   - partial: Told of the job's partial results, from any thread; `nil`: the caller wants none
    ///     (``JobContext/wantsPartialResults`` says whether any waiter does).
    ///   - work: Computes the value; called only when no job runs for `key`.
    /// - Throws: The job's error, or `CancellationError` when the calling task is cancelled.
    func value(
        for key: Key,
        priority: PriorityCell,
        updates: (@Sendable (JobUpdate) -> Void)? = nil,
        partial: (@Sendable (PartialResult) -> Void)? = nil,
        work: @escaping Work
    ) async throws -> Value {
        let id = state.withLock { $0.makeWaiterID() }
        defer { priority.stopObserving() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let entry = WaiterEntry(
                    continuation: continuation, cell: priority, updates: updates, partial: partial)
                let raised: JobContext? = state.withLock { machine in
                    // Checked under the lock: a cancellation handler that ran before
                    // this point found no waiter, so the waiter must not be added.
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return nil
                    }
                    switch machine.join(key, waiter: entry, id: id, priority: priority.value) {
                    case .startJob(let jobID, let jobPriority):
                        let context = JobContext(
                            priority: jobPriority,
                            report: { [weak self] in self?.report($0, key: key, job: jobID) },
                            reportPartial: { [weak self] in self?.reportPartial($0, key: key, job: jobID) },
                            wantsPartialResults: { [weak self] in
                                self?.wantsPartialResults(key: key, job: jobID) ?? false
                            }
                        )
                        // Holds the coalescer until the job ends, so its waiters are always answered.
                        let task = Task {
                            let result: Result<Value, any Error>
                            do { result = .success(try await work(context)) } catch { result = .failure(error) }
                            self.finish(key: key, job: jobID, with: result)
                        }
                        _ = machine.attach(RunningJob(task: task, context: context), to: key, job: jobID)
                        return nil
                    case .joined(_, let changed):
                        return changed == nil ? nil : machine.handle(of: key)?.context
                    }
                }
                if let raised {
                    raised.priority.value = state.withLock { $0.priority(of: key) } ?? raised.priority.value
                }
                let current = priority.observe { [weak self] in
                    self?.updatePriority(key: key, waiter: id, to: priority.value)
                }
                updatePriority(key: key, waiter: id, to: current)
            }
        } onCancel: {
            let (action, context) = state.withLock { machine in
                let action = machine.leave(key, id: id)
                return (action, machine.handle(of: key)?.context)
            }
            switch action {
            case .none:
                break
            case .cancelWaiter(let waiter, let changed):
                waiter.continuation.resume(throwing: CancellationError())
                if let changed { context?.priority.value = changed }
            case .cancelWaiterAndJob(let waiter, let job):
                waiter.continuation.resume(throwing: CancellationError())
                job?.task.cancel()
            }
        }
    }

    /// How many jobs run now.
    var jobCount: Int { state.withLock { $0.jobCount } }

    /// How many callers wait on the job for `key`.
    func waiterCount(for key: Key) -> Int { state.withLock { $0.waiterCount(of: key) } }

    private func updatePriority(key: Key, waiter id: Machine.WaiterID, to priority: ImageRequest.Priority) {
        let context: JobContext? = state.withLock { machine in
            guard machine.updatePriority(key, id: id, to: priority) != nil else { return nil }
            return machine.handle(of: key)?.context
        }
        // Re-read under the lock so racing updates settle on the latest value.
        if let context, let latest = state.withLock({ $0.priority(of: key) }) {
            context.priority.value = latest
        }
    }

    private func report(_ update: JobUpdate, key: Key, job: Machine.JobID) {
        let waiters = state.withLock { $0.waiters(of: key, job: job) }
        for waiter in waiters { waiter.updates?(update) }
    }

    private func reportPartial(_ partial: PartialResult, key: Key, job: Machine.JobID) {
        let waiters = state.withLock { $0.waiters(of: key, job: job) }
        for waiter in waiters { waiter.partial?(partial) }
    }

    private func wantsPartialResults(key: Key, job: Machine.JobID) -> Bool {
        state.withLock { $0.waiters(of: key, job: job).contains { $0.partial != nil } }
    }

    private func finish(key: Key, job: Machine.JobID, with result: Result<Value, any Error>) {
        let waiters = state.withLock { $0.finish(key, job: job) }
        for waiter in waiters { waiter.continuation.resume(with: result) }
    }
}

/// What a coalesced job's work can see: its current priority (which changes as
/// waiters come, go and change theirs) and ways to tell every waiter of its progress, retries and partial results.
final class JobContext: Sendable {
    /// The job's priority: the highest of its waiters'. Observe it to pass it on.
    let priority: PriorityCell
    /// Tells every waiter of an update (progress, a retry).
    let report: @Sendable (JobUpdate) -> Void
    /// Tells every waiter that asked for them of a partial result.
    let reportPartial: @Sendable (PartialResult) -> Void
    /// Whether a waiter asks for partial results now (waiters come and go while the job runs).
    let wantsPartialResults: @Sendable () -> Bool

    init(
        priority: ImageRequest.Priority,
        report: @escaping @Sendable (JobUpdate) -> Void,
        reportPartial: @escaping @Sendable (PartialResult) -> Void = { _ in },
        wantsPartialResults: @escaping @Sendable () -> Bool = { false }
    ) {
        self.priority = PriorityCell(priority)
        self.report = report
        self.reportPartial = reportPartial
        self.wantsPartialResults = wantsPartialResults
    }
}

/// What a coalesced job hands its waiters before its value, for progressive previews.
enum PartialResult: Sendable {
    /// A download's body so far (from its start).
    case body(Data)
    /// A preview of the image being loaded.
    case preview(Image)
}

/// What a running job tells its waiters before its value.
enum JobUpdate: Sendable {
    /// More of the source's bytes arrived.
    case progress(TransferProgress)
    /// A load failed and is tried again (``RetryPolicy``).
    case retrying(RetryPolicy.Retry)
}
