/// The lifecycle of coalesced jobs, one per key, as a value type: each event
/// returns an action that the owner performs after unlocking. It holds no
/// tasks and does no I/O, so it is tested directly.
///
/// A job starts when its first waiter joins, runs at the highest priority of
/// its waiters, and ends either when it finishes (every waiter gets the
/// result) or when its last waiter leaves (the job is cancelled and forgotten,
/// so a later request starts afresh).
///
/// - `Waiter`: what the owner needs to answer a waiter (a continuation).
/// - `Handle`: what the owner needs to cancel a job (a task).
struct CoalescingStateMachine<Key: Hashable, Waiter, Handle> {
    typealias Priority = ImageRequest.Priority

    struct JobID: Hashable { let raw: UInt64 }
    struct WaiterID: Hashable { let raw: UInt64 }

    private struct Job {
        let id: JobID
        var waiters: [WaiterID: (waiter: Waiter, priority: Priority)] = [:]
        var priority: Priority
        var handle: Handle?

        mutating func recomputePriority() -> Priority? {
            let highest = waiters.values.map(\.priority).max() ?? priority
            guard highest != priority else { return nil }
            priority = highest
            return highest
        }
    }

    private var jobs: [Key: Job] = [:]
    private var nextID: UInt64 = 0

    enum JoinAction {
        /// The first waiter: start the job at this priority, then ``attach(_:to:job:)`` its handle.
        case startJob(JobID, Priority)
        /// Joined a running job; if non-nil, the job's priority rose to this.
        case joined(JobID, priorityChanged: Priority?)
    }

    enum LeaveAction {
        /// The waiter had already been answered: nothing to do.
        case none
        /// Answer the waiter with cancellation; the job goes on (possibly at a new priority).
        case cancelWaiter(Waiter, priorityChanged: Priority?)
        /// Answer the waiter with cancellation, and cancel the job: it was the last waiter.
        /// The handle is `nil` if the job had not been attached yet (``attach`` then says so).
        case cancelWaiterAndJob(Waiter, Handle?)
    }

    enum AttachAction {
        /// The job is still wanted.
        case keep
        /// Every waiter left before the handle arrived: cancel it.
        case cancel(Handle)
    }

    mutating func makeWaiterID() -> WaiterID {
        nextID += 1
        return WaiterID(raw: nextID)
    }

    /// A waiter asks for the value of `key`.
    mutating func join(_ key: Key, waiter: Waiter, id: WaiterID, priority: Priority) -> JoinAction {
        if var job = jobs[key] {
            job.waiters[id] = (waiter, priority)
            let changed = job.recomputePriority()
            jobs[key] = job
            return .joined(job.id, priorityChanged: changed)
        }
        nextID += 1
        let jobID = JobID(raw: nextID)
        var job = Job(id: jobID, priority: priority)
        job.waiters[id] = (waiter, priority)
        jobs[key] = job
        return .startJob(jobID, priority)
    }

    /// Gives a started job the handle that cancels it.
    mutating func attach(_ handle: Handle, to key: Key, job jobID: JobID) -> AttachAction {
        guard jobs[key]?.id == jobID else { return .cancel(handle) }
        jobs[key]?.handle = handle
        return .keep
    }

    /// A waiter stops waiting (its task was cancelled).
    mutating func leave(_ key: Key, id: WaiterID) -> LeaveAction {
        guard var job = jobs[key], let entry = job.waiters.removeValue(forKey: id) else { return .none }
        if job.waiters.isEmpty {
            jobs[key] = nil
            return .cancelWaiterAndJob(entry.waiter, job.handle)
        }
        let changed = job.recomputePriority()
        jobs[key] = job
        return .cancelWaiter(entry.waiter, priorityChanged: changed)
    }

    /// A waiter's priority changed; returns the job's new priority if that changed it.
    mutating func updatePriority(_ key: Key, id: WaiterID, to priority: Priority) -> Priority? {
        guard var job = jobs[key], job.waiters[id] != nil else { return nil }
        job.waiters[id]?.priority = priority
        let changed = job.recomputePriority()
        jobs[key] = job
        return changed
    }

    /// The job produced its result: returns every waiter to answer and forgets
    /// the job. A job that was cancelled (or replaced) returns no waiters.
    mutating func finish(_ key: Key, job jobID: JobID) -> [Waiter] {
        guard let job = jobs[key], job.id == jobID else { return [] }
        jobs[key] = nil
        return job.waiters.values.map(\.waiter)
    }

    /// The waiters of a running job, to tell them of progress.
    func waiters(of key: Key, job jobID: JobID) -> [Waiter] {
        guard let job = jobs[key], job.id == jobID else { return [] }
        return job.waiters.values.map(\.waiter)
    }

    /// The handle of the running job for `key`.
    func handle(of key: Key) -> Handle? { jobs[key]?.handle }

    /// The job's current priority, if it is running.
    func priority(of key: Key) -> Priority? { jobs[key]?.priority }

    /// How many jobs are running.
    var jobCount: Int { jobs.count }

    /// How many waiters a job has (0 when no job runs for `key`).
    func waiterCount(of key: Key) -> Int { jobs[key]?.waiters.count ?? 0 }
}
