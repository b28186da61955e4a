import Foundation
import Testing

@testable import Imagery

/// The coalescer with real tasks (no I/O): the work is a closure that counts calls.
@Suite("Coalescer")
struct CoalescerTests {
    @Test func concurrentCallersShareOneRunOfTheWork() async throws {
        let coalescer = Coalescer<String, Int>()
        let calls = Counter()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await coalescer.value(for: "k", priority: PriorityCell(.normal)) { _ in
                        calls.increment()
                        try await Task.sleep(for: .milliseconds(100))
                        return 42
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == Array(repeating: 42, count: 50))
        #expect(calls.value == 1)
        #expect(coalescer.jobCount == 0)
    }

    @Test func cancellingOneOfTwoWaitersLeavesTheOtherItsResult() async throws {
        let coalescer = Coalescer<String, Int>()
        let work: Coalescer<String, Int>.Work = { _ in
            try await Task.sleep(for: .milliseconds(300))
            return 7
        }
        let first = Task { try await coalescer.value(for: "k", priority: PriorityCell(.normal), work: work) }
        let second = Task { try await coalescer.value(for: "k", priority: PriorityCell(.normal), work: work) }
        try await waitUntil { coalescer.waiterCount(for: "k") == 2 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(try await second.value == 7)
    }

    @Test func cancellingEveryWaiterCancelsTheWork() async throws {
        let coalescer = Coalescer<String, Int>()
        let workCancelled = Flag()
        let waiters = (0..<3).map { _ in
            Task {
                try await coalescer.value(for: "k", priority: PriorityCell(.normal)) { _ in
                    do {
                        try await Task.sleep(for: .seconds(30))
                    } catch {
                        workCancelled.set()
                        throw error
                    }
                    return 1
                }
            }
        }
        try await waitUntil { coalescer.waiterCount(for: "k") == 3 }
        for waiter in waiters { waiter.cancel() }
        for waiter in waiters {
            await #expect(throws: CancellationError.self) { try await waiter.value }
        }
        try await waitUntil { workCancelled.isSet }
        #expect(coalescer.jobCount == 0)
    }

    @Test func anAlreadyCancelledCallerNeverStartsWork() async {
        let coalescer = Coalescer<String, Int>()
        let calls = Counter()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await coalescer.value(for: "k", priority: PriorityCell(.normal)) { _ in
                calls.increment()
                return 1
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(calls.value == 0)
    }

    @Test func theWorkSeesTheHighestPriorityOfItsWaitersAsItChanges() async throws {
        let coalescer = Coalescer<String, Int>()
        let seen = Locked<[ImageRequest.Priority]>([])
        let release = Flag()
        let low = PriorityCell(.low)
        let work: Coalescer<String, Int>.Work = { job in
            job.priority.observe { seen.withLock { $0.append(job.priority.value) } }
            seen.withLock { $0.append(job.priority.value) }
            while !release.isSet { try await Task.sleep(for: .milliseconds(5)) }
            return 1
        }
        let first = Task { try await coalescer.value(for: "k", priority: low, work: work) }
        try await waitUntil { seen.withLock { !$0.isEmpty } }
        low.value = .high
        try await waitUntil { seen.withLock { $0.last == .high } }
        let other = PriorityCell(.veryHigh)
        let second = Task { try await coalescer.value(for: "k", priority: other, work: work) }
        try await waitUntil { seen.withLock { $0.last == .veryHigh } }
        second.cancel()
        try await waitUntil { seen.withLock { $0.last == .high } }
        release.set()
        #expect(try await first.value == 1)
        #expect(seen.withLock { $0 } == [.low, .high, .veryHigh, .high])
    }

    @Test func stressRandomCancellationsNeverLoseOrDoubleAnswerAWaiter() async throws {
        let coalescer = Coalescer<Int, Int>()
        let answered = Counter()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                let task = Task {
                    try await coalescer.value(for: index % 7, priority: PriorityCell(.normal)) { _ in
                        try await Task.sleep(for: .milliseconds(Int.random(in: 0...3)))
                        return index % 7
                    }
                }
                group.addTask {
                    if index % 3 == 0 { task.cancel() }
                    switch await task.result {
                    case .success(let value): if value == index % 7 { answered.increment() }
                    case .failure(let error): if error is CancellationError { answered.increment() }
                    }
                }
            }
        }
        #expect(answered.value == 400)
        try await waitUntil { coalescer.jobCount == 0 }
    }
}

/// Polls `condition` every 5 ms for up to `timeout` (two minutes: at the start of the full suite, tests
/// whose bodies decode synchronously hold the cooperative pool, and a new task once waited over 30 s to run).
func waitUntil(timeout: Duration = .seconds(120), _ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within \(timeout)")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
