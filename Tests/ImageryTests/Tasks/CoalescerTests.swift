import Foundation
import Testing

@testable import Imagery

/// The coalescer with real tasks (no I/O): the work is a closure that counts calls and waits at a
/// gate the test opens, so no outcome depends on how long anything takes.
@Suite("Coalescer")
struct CoalescerTests {
    @Test func concurrentCallersShareOneRunOfTheWork() async throws {
        let coalescer = Coalescer<String, Int>()
        let calls = Counter()
        let gate = Gate()
        let callers = (0..<50).map { _ in
            Task {
                try await coalescer.value(for: "k", priority: PriorityCell(.normal)) { _ in
                    calls.increment()
                    try await gate.wait()
                    return 42
                }
            }
        }
        // Every caller has joined the one job, which is still at its gate.
        try await eventually("50 waiters on one job") { coalescer.waiterCount(for: "k") == 50 }
        gate.open()
        var results: [Int] = []
        for caller in callers { results.append(try await caller.value) }
        #expect(results == Array(repeating: 42, count: 50))
        #expect(calls.value == 1)
        #expect(coalescer.jobCount == 0)
    }

    @Test func aCallerAfterTheJobEndedStartsANewOne() async throws {
        let coalescer = Coalescer<String, Int>()
        let calls = Counter()
        let work: Coalescer<String, Int>.Work = { _ in
            calls.increment()
            return calls.value
        }
        #expect(try await coalescer.value(for: "k", priority: PriorityCell(.normal), work: work) == 1)
        #expect(try await coalescer.value(for: "k", priority: PriorityCell(.normal), work: work) == 2)
        #expect(coalescer.jobCount == 0)
    }

    @Test func differentKeysRunTheirOwnJobs() async throws {
        let coalescer = Coalescer<String, String>()
        let gate = Gate()
        let tasks = ["a", "b", "c"].map { key in
            Task {
                try await coalescer.value(for: key, priority: PriorityCell(.normal)) { _ in
                    try await gate.wait()
                    return key.uppercased()
                }
            }
        }
        try await eventually("three jobs") { coalescer.jobCount == 3 }
        gate.open()
        var values: [String] = []
        for task in tasks { values.append(try await task.value) }
        #expect(values == ["A", "B", "C"])
    }

    @Test func everyWaiterGetsTheJobsError() async throws {
        struct Failure: Error, Equatable {}
        let coalescer = Coalescer<String, Int>()
        let gate = Gate()
        let waiters = (0..<3).map { _ in
            Task {
                try await coalescer.value(for: "k", priority: PriorityCell(.normal)) { _ in
                    try await gate.wait()
                    throw Failure()
                }
            }
        }
        try await eventually("three waiters") { coalescer.waiterCount(for: "k") == 3 }
        gate.open()
        for waiter in waiters {
            await #expect(throws: Failure.self) { try await waiter.value }
        }
        #expect(coalescer.jobCount == 0)
    }

    @Test func progressReachesEveryWaiter() async throws {
        let coalescer = Coalescer<String, Int>()
        let gate = Gate()
        let reports = EventLog<Int64>()
        let work: Coalescer<String, Int>.Work = { job in
            try await gate.wait()
            job.report(.progress(TransferProgress(completed: 5, total: 10)))
            return 1
        }
        let first = Task {
            try await coalescer.value(
                for: "k", priority: PriorityCell(.normal),
                updates: { update in
                    if case .progress(let progress) = update { reports.append(progress.completed) }
                }, work: work)
        }
        let second = Task {
            try await coalescer.value(
                for: "k", priority: PriorityCell(.normal),
                updates: { update in
                    if case .progress(let progress) = update { reports.append(progress.completed) }
                }, work: work)
        }
        try await eventually("two waiters") { coalescer.waiterCount(for: "k") == 2 }
        gate.open()
        _ = try await (first.value, second.value)
        #expect(reports.all == [5, 5])
    }

    @Test func cancellingOneOfTwoWaitersLeavesTheOtherItsResult() async throws {
        let coalescer = Coalescer<String, Int>()
        let gate = Gate()
        let work: Coalescer<String, Int>.Work = { _ in
            try await gate.wait()
            return 7
        }
        let first = Task { try await coalescer.value(for: "k", priority: PriorityCell(.normal), work: work) }
        let second = Task { try await coalescer.value(for: "k", priority: PriorityCell(.normal), work: work) }
        try await eventually("two waiters") { coalescer.waiterCount(for: "k") == 2 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(coalescer.waiterCount(for: "k") == 1 && coalescer.jobCount == 1, "the job goes on for the other")
        gate.open()
        #expect(try await second.value == 7)
    }

    @Test func cancellingEveryWaiterCancelsTheWork() async throws {
        let coalescer = Coalescer<String, Int>()
        let workCancelled = Gate()
        let waiters = (0..<3).map { _ in
            Task {
                try await coalescer.value(for: "k", priority: PriorityCell(.normal)) { _ in
                    try await Self.waitForCancellation(opening: workCancelled)
                }
            }
        }
        try await eventually("three waiters") { coalescer.waiterCount(for: "k") == 3 }
        for waiter in waiters { waiter.cancel() }
        for waiter in waiters {
            await #expect(throws: CancellationError.self) { try await waiter.value }
        }
        try await workCancelled.wait()
        try await eventually("the job to end") { coalescer.jobCount == 0 }
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
        #expect(coalescer.jobCount == 0)
    }

    @Test func theWorkSeesTheHighestPriorityOfItsWaitersAsItChanges() async throws {
        let coalescer = Coalescer<String, Int>()
        let seen = Watched<[ImageRequest.Priority]>([])
        let release = Gate()
        let low = PriorityCell(.low)
        let work: Coalescer<String, Int>.Work = { job in
            job.priority.observe { seen.update { $0.append(job.priority.value) } }
            seen.update { $0.append(job.priority.value) }
            try await release.wait()
            return 1
        }
        let first = Task { try await coalescer.value(for: "k", priority: low, work: work) }
        try await seen.wait("the work to start") { !$0.isEmpty }
        low.value = .high
        try await seen.wait("high") { $0.last == .high }
        let other = PriorityCell(.veryHigh)
        let second = Task { try await coalescer.value(for: "k", priority: other, work: work) }
        try await seen.wait("very high") { $0.last == .veryHigh }
        second.cancel()
        try await seen.wait("high again") { $0.count == 4 }
        release.open()
        #expect(try await first.value == 1)
        #expect(seen.value == [.low, .high, .veryHigh, .high])
    }

    @Test func stressRandomCancellationsNeverLoseOrDoubleAnswerAWaiter() async throws {
        let coalescer = Coalescer<Int, Int>()
        let answered = Counter()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                let task = Task {
                    try await coalescer.value(for: index % 7, priority: PriorityCell(.normal)) { _ in
                        // A few hops of the cooperative pool: jobs end while others join and leave.
                        for _ in 0..<(index % 4) { await Task.yield() }
                        try Task.checkCancellation()
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
        try await eventually("every job to end") { coalescer.jobCount == 0 }
    }

    // MARK: The server's entry point, value(for:work:)

    @Test func theServersEntryPointSharesOneJobBetweenTwoCallers() async throws {
        let coalescer = Coalescer<String, Int>()
        let calls = Counter()
        let gate = Gate()
        let work: @Sendable () async throws -> Int = {
            calls.increment()
            try await gate.wait()
            return 9
        }
        let first = Task { try await coalescer.value(for: "k", work: work) }
        let second = Task { try await coalescer.value(for: "k", work: work) }
        try await eventually("two waiters on one job") { coalescer.waiterCount(for: "k") == 2 }
        #expect(coalescer.jobCount == 1)
        gate.open()
        #expect(try await first.value == 9)
        #expect(try await second.value == 9)
        #expect(calls.value == 1)
        #expect(coalescer.jobCount == 0)
    }

    /// The server's encodes: a request that leaves stops waiting at once, the encode goes on for the
    /// one still waiting, and is cancelled when that one leaves too.
    @Test func theServersEntryPointCancelsTheJobOnlyWhenBothCallersAreCancelled() async throws {
        let coalescer = Coalescer<String, Int>()
        let calls = Counter()
        let workCancelled = Gate()
        let work: @Sendable () async throws -> Int = {
            calls.increment()
            return try await Self.waitForCancellation(opening: workCancelled)
        }
        let first = Task { try await coalescer.value(for: "k", work: work) }
        let second = Task { try await coalescer.value(for: "k", work: work) }
        try await eventually("two waiters on one job") { coalescer.waiterCount(for: "k") == 2 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(coalescer.waiterCount(for: "k") == 1 && coalescer.jobCount == 1, "the job goes on for the other")
        #expect(!workCancelled.isOpened)
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        try await workCancelled.wait()
        try await eventually("the job to end") { coalescer.jobCount == 0 }
        #expect(calls.value == 1)
    }

    /// Work that only cancellation ends: it opens `gate` then, and throws.
    static func waitForCancellation(opening gate: Gate) async throws -> Int {
        do {
            try await Gate().wait()  // never opened
        } catch {
            gate.open()
            throw error
        }
        return 1
    }
}
