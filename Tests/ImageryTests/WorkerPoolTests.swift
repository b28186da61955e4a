import Foundation
import Testing

@testable import Imagery

/// Urgent work goes first in the worker pool, and other work waits while urgent work runs.
@Suite("WorkerPool")
struct WorkerPoolTests {
    /// A flag threads share; a job can block on it until it is set.
    final class Flag: Sendable {
        private let value = Locked(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
        func wait() { while !isSet { usleep(1000) } }
    }

    @Test func urgentWorkQueuedAfterOtherWorkStartsFirst() async throws {
        let pool = WorkerPool(threadCount: 1)
        let (gate, started, raised) = (Flag(), Flag(), Flag())
        let order = Locked<[String]>([])
        async let blocker: Void = pool.run { started.set(); gate.wait() }
        while !started.isSet { try await Task.sleep(for: .milliseconds(1)) }
        async let background: Void = pool.run(isUrgent: { false }) { order.withLock { $0.append("background") } }
        async let later: Void = pool.run(isUrgent: { raised.isSet }) { order.withLock { $0.append("raised") } }
        async let urgent: Void = pool.run(isUrgent: { true }) { order.withLock { $0.append("urgent") } }
        try await Task.sleep(for: .milliseconds(50))
        raised.set()  // raised while it waits: it goes ahead of the background work
        gate.set()
        _ = try await (blocker, background, later, urgent)
        // However the three were queued, the background one runs last.
        #expect(order.withLock { $0.last } == "background")
        #expect(Set(order.withLock { $0 }) == ["background", "raised", "urgent"])
    }

    @Test func otherWorkWaitsWhileUrgentWorkRuns() async throws {
        let pool = WorkerPool(threadCount: 2)
        let (gate, started, backgroundRan) = (Flag(), Flag(), Flag())
        async let urgent: Void = pool.run { started.set(); gate.wait() }
        while !started.isSet { try await Task.sleep(for: .milliseconds(1)) }
        async let background: Void = pool.run(isUrgent: { false }) { backgroundRan.set() }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!backgroundRan.isSet, "a thread is free, but urgent work runs")
        gate.set()
        _ = try await (urgent, background)
        #expect(backgroundRan.isSet)
    }
}
