import Foundation
import Testing

@testable import Imagery

/// Urgent work goes first in the worker pool, and other work waits while urgent work runs.
///
/// Ordering comes from events, never from sleeping: a job blocks its thread at a ``ThreadLatch`` the
/// test opens, and a job's `isUrgent` closure reports each time a free thread looks at it (so the
/// test knows the job is queued, and that a thread passed it over).
@Suite("WorkerPool")
struct WorkerPoolTests {
    /// A latch a pool thread blocks on (the pool's threads are its own, not the cooperative pool's).
    final class ThreadLatch: Sendable {
        private let condition = Locked(false)
        private let signal = DispatchSemaphore(value: 0)

        /// Lets every waiter through, now and later.
        func open() {
            let wasOpen = condition.withLock { open in
                defer { open = true }
                return open
            }
            if !wasOpen { signal.signal() }
        }

        /// Blocks the calling thread until the latch is open (at most ``hangGuard``).
        func wait() {
            guard !condition.withLock({ $0 }) else { return }
            let seconds = Double(hangGuard.components.seconds)
            if signal.wait(timeout: .now() + seconds) == .success { signal.signal() }  // pass it on to the next waiter
        }
    }

    /// How often free threads have looked at a job (its `isUrgent` read), which a test awaits.
    final class Looks: Sendable {
        let count = Watched(0)
        private let urgent: @Sendable () -> Bool

        init(urgent: @escaping @Sendable () -> Bool) { self.urgent = urgent }

        /// The `isUrgent` closure to give the pool.
        var isUrgent: @Sendable () -> Bool {
            { [self] in
                count.update { $0 += 1 }
                return urgent()
            }
        }

        /// Returns once a thread has looked at the job `times` times (so it is queued and was passed over).
        func wait(_ times: Int = 1) async throws {
            try await count.wait("a thread to look at the job \(times) times") { $0 >= times }
        }
    }

    @Test func urgentAndRaisedWorkGoesBeforeBackgroundWorkQueuedEarlier() async throws {
        // Thread A runs an urgent job held at a latch; thread B is free but may not start background
        // work while urgent work runs.
        let pool = WorkerPool(threadCount: 2)
        let latch = ThreadLatch()
        let started = Gate()
        let order = EventLog<String>()
        let raised = Flag()
        async let blocker: Void = pool.run {
            started.open()
            latch.wait()
        }
        defer { latch.open() }  // before the blocker is awaited, should the test end early
        try await started.wait()

        let background = Looks { false }
        async let backgroundJob: Void = pool.run(isUrgent: background.isUrgent) { order.append("background") }
        try await background.wait()  // queued, and passed over by the free thread
        let later = Looks { raised.isSet }
        async let laterJob: Void = pool.run(isUrgent: later.isUrgent) { order.append("raised") }
        try await later.wait()  // queued, not urgent yet
        raised.set()  // raised while it waits: it goes ahead of the background work and of what comes after it
        async let urgentJob: Void = pool.run(isUrgent: { true }) { order.append("urgent") }
        try await order.waitForCount(2, "urgent jobs")
        #expect(order.all == ["raised", "urgent"], "the background job still waits for the blocker")

        latch.open()
        _ = try await (blocker, backgroundJob, laterJob, urgentJob)
        #expect(order.all == ["raised", "urgent", "background"])
    }

    @Test func otherWorkWaitsWhileUrgentWorkRunsThoughAThreadIsFree() async throws {
        let pool = WorkerPool(threadCount: 2)
        let latch = ThreadLatch()
        let started = Gate()
        let backgroundRan = Flag()
        async let urgent: Void = pool.run {
            started.open()
            latch.wait()
        }
        defer { latch.open() }
        try await started.wait()
        let background = Looks { false }
        async let backgroundJob: Void = pool.run(isUrgent: background.isUrgent) { backgroundRan.set() }
        try await background.wait()
        // The free thread runs urgent work that comes later, and still leaves the background job.
        try await pool.run {}
        #expect(!backgroundRan.isSet, "a thread is free, but urgent work runs")
        latch.open()
        _ = try await (urgent, backgroundJob)
        #expect(backgroundRan.isSet)
    }

    @Test func withOneThreadWorkRunsInTheOrderItWasQueued() async throws {
        let pool = WorkerPool(threadCount: 1)
        let order = EventLog<Int>()
        let latch = ThreadLatch()
        defer { latch.open() }
        let started = Gate()
        pool.execute {
            started.open()
            latch.wait()
        }
        try await started.wait()
        for index in 0..<20 { pool.execute { order.append(index) } }  // queued at once, in order
        latch.open()
        #expect(try await order.waitForCount(20) == Array(0..<20))
    }

    @Test func returnsTheResultAndRethrowsTheErrorOfItsWork() async throws {
        struct Failure: Error {}
        let pool = WorkerPool(threadCount: 1)
        #expect(try await pool.run { 6 * 7 } == 42)
        await #expect(throws: Failure.self) { try await pool.run { throw Failure() } }
    }

    @Test func workCancelledWhileQueuedIsSkipped() async throws {
        let pool = WorkerPool(threadCount: 1)
        let latch = ThreadLatch()
        let started = Gate()
        async let blocker: Void = pool.run {
            started.open()
            latch.wait()
        }
        defer { latch.open() }
        try await started.wait()
        let ran = Flag()
        let queued = Task { try await pool.run { ran.set() } }
        queued.cancel()  // queued behind the blocker, or not yet: either way it never runs
        latch.open()
        try await blocker
        await #expect(throws: CancellationError.self) { try await queued.value }
        try await pool.run {}  // everything queued before this has been taken
        #expect(!ran.isSet)
    }

    @Test func anAlreadyCancelledTaskNeverQueuesItsWork() async {
        let pool = WorkerPool(threadCount: 1)
        let ran = Flag()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await pool.run { ran.set() }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!ran.isSet)
    }
}
