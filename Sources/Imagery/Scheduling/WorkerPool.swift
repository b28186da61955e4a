import Foundation
import Synchronization

/// A fixed set of threads for blocking work (decoding, resizing, encoding).
///
/// Swift's cooperative pool has one thread per core (two on a small server);
/// a 100 ms decode there stalls every other task. Work submitted here runs on
/// the pool's own threads, and the awaiting task is suspended, not blocked.
/// Work still queued when its task is cancelled is skipped.
///
/// Urgent work goes first: a free thread takes the oldest queued work whose `isUrgent` says so
/// (read then, so work raised while it waits moves ahead); other work starts only while no urgent
/// work runs, so urgent work has the cores to itself. Work that has started always finishes: a
/// decode cannot be paused half way, and one takes tens of milliseconds.
public final class WorkerPool: Sendable {
    private final class Queue: @unchecked Sendable {
        // Guarded by `condition`.
        let condition = NSCondition()
        // Jobs taken are set to nil at once (their captures are released); the line's head is
        // always a queued job's place, `pending` how many are queued.
        var jobs = FIFOLine<Job?>()
        var pending = 0
        /// Urgent jobs running now: other work waits for them.
        var runningUrgent = 0
        var stopped = false

        /// Takes the next job: the oldest urgent one among the first 256 queued, else (while no urgent
        /// job runs) the oldest; `nil`: none may start now. Called with `condition` held.
        func take() -> (job: Job, urgent: Bool)? {
            guard pending > 0 else { return nil }
            var chosen: Int?
            var looked = 0
            for place in jobs.indices {
                guard looked < 256 else { break }
                guard let job = jobs[place] else { continue }
                if job.isUrgent?() ?? true {
                    chosen = place
                    break
                }
                looked += 1
            }
            let urgent = chosen != nil
            if !urgent, runningUrgent > 0 { return nil }
            let place = chosen ?? jobs.head
            let job = jobs[place]!
            jobs[place] = nil
            pending -= 1
            if urgent { runningUrgent += 1 }
            jobs.dropFirst { $0 == nil }
            return (job, urgent)
        }

        func append(_ job: Job) {
            jobs.append(job)
            pending += 1
        }
    }

    private struct Job {
        let isUrgent: (@Sendable () -> Bool)?
        let run: @Sendable () -> Void
    }

    private let queue = Queue()
    /// How many threads run work.
    public let threadCount: Int

    /// Starts `threadCount` threads named `name`.
    public init(threadCount: Int, name: String = "imagery.worker") {
        precondition(threadCount > 0, "a worker pool needs at least one thread")
        self.threadCount = threadCount
        for index in 0..<threadCount {
            let queue = self.queue
            let thread = Thread { WorkerPool.runLoop(queue) }
            thread.name = "\(name).\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    deinit {
        queue.condition.lock()
        queue.stopped = true
        queue.condition.broadcast()
        queue.condition.unlock()
    }

    /// Runs `work` on one of the pool's threads and returns its result.
    /// - Parameters:
    ///   - isUrgent: Whether the work is urgent now (read each time a thread looks for work);
    ///     `nil`: always. Urgent work is taken before other queued work.
    ///   - work: What to run; it may block its thread.
    /// - Throws: `CancellationError` if the task was cancelled before `work` started, or what `work` throws.
    public func run<T: Sendable>(
        isUrgent: (@Sendable () -> Bool)? = nil, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let cancelled = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job: @Sendable () -> Void = {
                    if cancelled.isSet {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume(with: Result { try work() })
                    }
                }
                queue.condition.lock()
                queue.append(Job(isUrgent: isUrgent, run: job))
                queue.condition.signal()
                queue.condition.unlock()
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// Queues `work` to run on one of the pool's threads and returns at once.
    /// With one thread, work runs in the order it was queued (none of it says it is not urgent).
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.condition.lock()
        queue.append(Job(isUrgent: nil, run: work))
        queue.condition.signal()
        queue.condition.unlock()
    }

    private final class CancellationFlag: Sendable {
        private let flag = Atomic<Bool>(false)
        var isSet: Bool { flag.load(ordering: .acquiring) }
        func set() { flag.store(true, ordering: .releasing) }
    }

    private static func runLoop(_ queue: Queue) {
        while true {
            queue.condition.lock()
            var next = queue.take()
            while next == nil {
                if queue.stopped && queue.pending == 0 {  // stopped and drained
                    queue.condition.unlock()
                    return
                }
                queue.condition.wait()
                next = queue.take()
            }
            queue.condition.unlock()
            let (job, urgent) = next!
            job.run()
            if urgent {
                queue.condition.lock()
                queue.runningUrgent -= 1
                // Work that waited for urgent work to end may start now.
                if queue.runningUrgent == 0 && queue.pending > 0 { queue.condition.broadcast() }
                queue.condition.unlock()
            }
        }
    }
}
