import Foundation
import Synchronization

/// A fixed set of threads for blocking work (decoding, resizing, encoding).
///
/// Swift's cooperative pool has one thread per core (two on a small server);
/// a 100 ms decode there stalls every other task. Work submitted here runs on
/// the pool's own threads, first come first served, and the awaiting task is
/// suspended, not blocked. Work still queued when its task is cancelled is skipped.
public final class WorkerPool: Sendable {
    private final class Queue: @unchecked Sendable {
        // Guarded by `condition`.
        let condition = NSCondition()
        // Jobs run are set to nil at once, so their captures are released.
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var stopped = false
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
    /// - Throws: `CancellationError` if the task was cancelled before `work` started, or what `work` throws.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
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
                queue.jobs.append(job)
                queue.condition.signal()
                queue.condition.unlock()
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// Queues `work` to run on one of the pool's threads and returns at once.
    /// With one thread, work runs in the order it was queued.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.condition.lock()
        queue.jobs.append(work)
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
            while queue.head == queue.jobs.count && !queue.stopped {
                queue.condition.wait()
            }
            if queue.head == queue.jobs.count {  // stopped and drained
                queue.condition.unlock()
                return
            }
            let job = queue.jobs[queue.head]
            queue.jobs[queue.head] = nil
            queue.head += 1
            if queue.head > 1024, queue.head * 2 > queue.jobs.count {
                queue.jobs.removeFirst(queue.head)
                queue.head = 0
            }
            queue.condition.unlock()
            job?()
        }
    }
}
