import Foundation
import Testing

@testable import Imagery

/// The budget with its locks, waits and timers. Time is a ``ManualTime`` the test moves (how long a
/// decode held its bytes, deadlines); a waiter that must wait is given a deadline an hour away (the
/// line's timer sleeps in real time for what is left), one that must time out a deadline already past.
@Suite("MemoryBudget")
struct MemoryBudgetTests {
    /// A budget whose waits never time out while a test runs.
    static func patient(
        limit: Int = 100, queue: Int = 64, slots: Int? = nil, initialHold: Duration = .milliseconds(500),
        time: ManualTime = ManualTime()
    ) -> MemoryBudget {
        MemoryBudget(
            configuration: .init(
                limit: limit, maximumQueueLength: queue, maximumWait: .seconds(3600), maximumConcurrentDecodes: slots,
                initialDecodeHold: initialHold
            ),
            time: time.source
        )
    }

    @Test func aWaiterIsAdmittedWhenBytesAreReleased() async throws {
        let budget = Self.patient()
        let first = try await budget.reserve(80, for: .decode)
        let second = Task { try await budget.reserve(80, for: .decode) }
        try await eventually("a waiter") { budget.snapshot.queued == 1 }
        first.release()
        let admitted = try await second.value
        #expect(admitted.bytes == 80 && budget.snapshot.used == 80 && budget.snapshot.waited == 1)
        admitted.release()
        #expect(budget.snapshot.used == 0 && budget.snapshot.peak == 80 && budget.snapshot.admitted == 2)
    }

    @Test func aWaitWhoseDeadlineHasPassedIsRefusedWithARetryAfter() async throws {
        let time = ManualTime()
        let budget = MemoryBudget(configuration: .init(limit: 100, maximumWait: .seconds(7)), time: time.source)
        let held = try await budget.reserve(100, for: .decode)
        let past = time.instant - .seconds(1)
        // In line, then refused by its timer at once: no decode has finished, so the retry is the whole wait.
        await #expect(throws: MemoryBudgetError.overloaded(retryAfter: 7)) {
            _ = try await budget.reserve(10, for: .decode, deadline: past)
        }
        await #expect(throws: MemoryBudgetError.overloaded(retryAfter: 7)) {
            _ = try await budget.reserve(10, for: .source, deadline: past)
        }
        #expect(budget.snapshot.refusedOverloaded == 2 && budget.snapshot.queued == 0)
        held.release()
        // Nothing held: admitted at once, deadline or not.
        let late = try await budget.reserve(10, for: .decode, deadline: past)
        #expect(budget.snapshot.used == 10)
        late.release()
    }

    @Test func aNewSourceThatTheDecodesAheadCannotReachInTimeIsRefusedBeforeItsDownloadWaits() async throws {
        // One decode slot, a decode running, no decode finished yet (one second each assumed).
        let time = ManualTime()
        let budget = Self.patient(limit: 1_000, slots: 1, initialHold: .seconds(1), time: time)
        let held = try await budget.reserve(10, for: .decode)
        let soon = time.instant + .milliseconds(2500)
        // Two requests waiting for a download slot and the running decode: three seconds ahead.
        #expect(throws: MemoryBudgetError.overloaded(retryAfter: 3)) {
            try budget.refuseIfLate(alsoAhead: 2, deadline: soon)
        }
        #expect(budget.snapshot.refusedOverloaded == 1)
        // With one waiting, two seconds: in time.
        try budget.refuseIfLate(alsoAhead: 1, deadline: soon)
        #expect(budget.snapshot.refusedOverloaded == 1 && budget.snapshot.used == 10)
        // A second later, the same two seconds are too many.
        time.advance(by: .seconds(1))
        #expect(throws: MemoryBudgetError.self) { try budget.refuseIfLate(alsoAhead: 1, deadline: soon) }
        held.release()
    }

    /// Decodes that memory lets run one at a time, though there are two slots, are forecast one at
    /// a time once measured: the line ahead of a request then takes twice as long.
    @Test func decodesHeldBackByMemoryAreForecastAsFewerRunning() async throws {
        let time = ManualTime()
        let budget = Self.patient(limit: 100, slots: 2, initialHold: .milliseconds(300), time: time)
        // Two slots at 0.3 s: ten more ahead start within (10 - 1) / 2 rounds, 1.35 s: in time.
        try budget.refuseIfLate(alsoAhead: 10, deadline: time.instant + .milliseconds(3200))
        let first = try await budget.reserve(80, for: .decode)
        let second = Task { try await budget.reserve(80, for: .decode) }  // a free slot, but no memory
        try await eventually("the second decode to wait") { budget.snapshot.queued == 1 }
        time.advance(by: .milliseconds(300))
        first.release()  // one was running, for 0.3 s, while one waited
        let running = try await second.value
        // One at a time at 0.3 s each: the running one and ten more take 3.3 s (on two slots, 1.5 s).
        #expect(throws: MemoryBudgetError.self) {
            try budget.refuseIfLate(alsoAhead: 10, deadline: time.instant + .milliseconds(3200))
        }
        try budget.refuseIfLate(alsoAhead: 10, deadline: time.instant + .milliseconds(3300))
        running.release()
    }

    /// When a decode ends, the pace it measured decides at once who in line can no longer be admitted
    /// by their deadline: they are refused now, not when the deadline passes.
    @Test func waitersTheMeasuredPaceCannotServeInTimeAreRefusedWhenADecodeEnds() async throws {
        let time = ManualTime()
        let budget = Self.patient(limit: 1_000, slots: 1, initialHold: .milliseconds(10), time: time)
        let first = try await budget.reserve(10, for: .decode)
        // A deadline far off in real time (the line's timers never fire here), reached by moving time.
        let deadline = time.instant + .seconds(1000)
        let waiters = (0..<3).map { _ in Task { try await budget.reserve(10, for: .decode, deadline: deadline) } }
        try await eventually("three waiters") { budget.snapshot.queued == 3 }
        // That decode took 600 s: the next one is admitted; the two behind it would start 600 s and
        // 1200 s from now, past their deadline 400 s away.
        time.advance(by: .seconds(600))
        first.release()
        var admitted: [Reservation] = []
        var refused = 0
        for waiter in waiters {
            switch await waiter.result {
            case .success(let reservation): admitted.append(reservation)
            case .failure(let error): if error is MemoryBudgetError { refused += 1 }
            }
        }
        #expect(admitted.count == 1 && refused == 2)
        #expect(budget.snapshot.refusedOverloaded == 2 && budget.snapshot.queued == 0)
        admitted.forEach { $0.release() }
    }

    /// The deadline bounds waiting behind others: work that reaches the budget past it with
    /// nothing ahead (its own download was slow) is admitted, not thrown away.
    @Test func nothingAheadIsNeverLateEvenPastTheDeadline() async throws {
        let time = ManualTime()
        let budget = Self.patient(limit: 1_000, slots: 2, initialHold: .seconds(1), time: time)
        let past = time.instant - .seconds(1)
        try budget.refuseIfLate(alsoAhead: 0, deadline: past)
        let decode = try await budget.reserve(10, for: .decode, deadline: past)
        #expect(budget.snapshot.refusedOverloaded == 0 && budget.snapshot.used == 10)
        // With work ahead that must finish first, the same deadline refuses.
        #expect(throws: MemoryBudgetError.self) { try budget.refuseIfLate(alsoAhead: 2, deadline: past) }
        decode.release()
    }

    /// The server's budget: its wait is the request timeout less the request's own work (a decode
    /// and an encode at the pace assumed, 1 s each).
    @Test func theDeadlineLeavesTimeForTheRequestsOwnWork() {
        let time = ManualTime()
        let budget = MemoryBudget(
            configuration: .init(
                limit: 1_000, maximumWait: .seconds(30), maximumConcurrentDecodes: 2, initialDecodeHold: .seconds(1),
                leavesTimeForOwnWork: true
            ),
            time: time.source
        )
        #expect(budget.admissionDeadline() == time.instant + .seconds(28))
        let fixed = MemoryBudget(
            configuration: .init(limit: 1_000, maximumWait: .seconds(30), maximumConcurrentDecodes: 2),
            time: time.source)
        #expect(fixed.admissionDeadline() == time.instant + .seconds(30))
        // Without slots there is no pace: the whole wait, even when asked to leave time.
        let unbounded = MemoryBudget(
            configuration: .init(limit: 1_000, maximumWait: .seconds(30), leavesTimeForOwnWork: true), time: time.source
        )
        #expect(unbounded.admissionDeadline() == time.instant + .seconds(30))
    }

    @Test func tooLargeAndAFullLineAreRefusedAtOnce() async throws {
        let budget = MemoryBudget(configuration: .init(limit: 100, maximumQueueLength: 0))
        await #expect(throws: MemoryBudgetError.tooLarge(bytes: 101, limit: 100)) {
            _ = try await budget.reserve(101, for: .source)
        }
        let held = try await budget.reserve(100, for: .decode)
        await #expect(throws: MemoryBudgetError.self) { _ = try await budget.reserve(1, for: .decode) }
        #expect(budget.snapshot.refusedTooLarge == 1 && budget.snapshot.refusedOverloaded == 1)
        held.release()
    }

    @Test func cancellingAWaiterTakesItOutOfTheLineAndLetsTheNextIn() async throws {
        let budget = Self.patient()
        let held = try await budget.reserve(60, for: .decode)
        let cancelled = Task { try await budget.reserve(50, for: .decode) }
        try await eventually("a waiter") { budget.snapshot.queued == 1 }
        let behind = Task { try await budget.reserve(10, for: .source) }  // a source waits while a decode does
        try await eventually("two waiters") { budget.snapshot.queued == 2 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
        let source = try await behind.value  // admitted when the decode ahead of it left
        #expect(budget.snapshot.queued == 0 && budget.snapshot.used == 70)
        held.release()
        source.release()
        #expect(budget.snapshot.used == 0)
    }

    @Test func anAlreadyCancelledTaskIsNotQueued() async throws {
        let budget = Self.patient()
        let held = try await budget.reserve(100, for: .decode)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await budget.reserve(10, for: .decode)
        }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(budget.snapshot.queued == 0 && budget.snapshot.admitted == 1)
        held.release()
    }

    @Test func aReservationLetGoIsReleasedAndGrowingChargesTheDifference() async throws {
        let budget = Self.patient()
        do {
            let reservation = try await budget.reserve(10, for: .source)
            reservation.grow(to: 30)
            reservation.grow(to: 20)  // never shrinks
            #expect(budget.snapshot.used == 30 && reservation.bytes == 30)
        }
        #expect(budget.snapshot.used == 0)
        let twice = try await budget.reserve(40, for: .decode)
        twice.release()
        twice.release()  // once only
        twice.grow(to: 90)  // released: nothing to grow
        #expect(budget.snapshot.used == 0 && twice.bytes == 0)
    }

    @Test func chargesAreNeverRefusedAndCountAgainstTheLimit() async throws {
        let budget = Self.patient()
        let charge = budget.charge(150)  // more than the limit: held already, so counted
        #expect(budget.snapshot.used == 150 && budget.snapshot.admitted == 0)
        let decode = Task { try await budget.reserve(10, for: .source) }
        try await eventually("the source to wait") { budget.snapshot.queued == 1 }
        charge.release()
        try await decode.value.release()
        #expect(budget.snapshot.used == 0)
        #expect(budget.charge(-5).bytes == 0, "a negative charge is none")
    }

    @Test func residentPressureHoldsTheLineUntilCleared() async throws {
        let budget = Self.patient(limit: 1_000)
        budget.setResidentPressure(true)
        #expect(budget.snapshot.underPressure)
        let first = try await budget.reserve(10, for: .decode)
        let second = Task { try await budget.reserve(10, for: .decode) }  // one decode at a time
        try await eventually("the second decode to wait") { budget.snapshot.queued == 1 }
        budget.setResidentPressure(true)  // again: nothing changes
        budget.setResidentPressure(false)
        let admitted = try await second.value
        #expect(!budget.snapshot.underPressure && budget.snapshot.used == 20)
        first.release()
        admitted.release()
    }

    @Test func aRefusalOutsideTheLineIsCountedWithTheOthers() {
        let budget = MemoryBudget(configuration: .init(limit: 100, maximumWait: .seconds(12)))
        #expect(budget.overloaded() == .overloaded(retryAfter: 12))
        #expect(budget.snapshot.refusedOverloaded == 1)
    }

    @Test func theRetryAfterFollowsThePaceOfDecodes() async throws {
        let time = ManualTime()
        let budget = MemoryBudget(
            configuration: .init(limit: 100, maximumQueueLength: 0, maximumWait: .seconds(3600)), time: time.source)
        let decode = try await budget.reserve(100, for: .decode)
        time.advance(by: .seconds(4))
        decode.release()  // decodes hold their bytes 4 s
        let next = try await budget.reserve(100, for: .decode)
        // One in the line's place (none waits) over one decode running: 4 s.
        await #expect(throws: MemoryBudgetError.overloaded(retryAfter: 4)) {
            _ = try await budget.reserve(1, for: .decode)
        }
        next.release()
    }

    @Test func errorsSayWhatHappenedInWords() {
        #expect(
            MemoryBudgetError.overloaded(retryAfter: 3).description == "too much work is in flight: try again in 3 s")
        #expect(
            MemoryBudgetError.tooLarge(bytes: 300 << 20, limit: 256 << 20).description
                == "the work needs about 300 MiB of memory, more than the in-flight budget of 256 MiB")
    }

    @Test func manyConcurrentReservationsNeverLoseOrDoubleCountAByte() async throws {
        // A wait long enough that no deadline passes while the suite loads the machine: what this
        // test checks is the count.
        let budget = MemoryBudget(
            configuration: .init(
                limit: 1_000, maximumQueueLength: 1_000, maximumWait: .seconds(3600), maximumConcurrentDecodes: 3))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask {
                    let stage: MemoryBudget.Stage = index % 2 == 0 ? .source : .decode
                    let reservation = try await budget.reserve(1 + index % 300, for: stage)
                    if index % 3 == 0 { reservation.grow(to: reservation.bytes + 7) }
                    if index % 7 == 0 { await Task.yield() }
                    if index % 5 != 0 { reservation.release() }  // the rest go when released by deinit
                }
            }
            try await group.waitForAll()
        }
        let snapshot = budget.snapshot
        #expect(snapshot.used == 0 && snapshot.queued == 0 && snapshot.admitted == 400)
    }
}
