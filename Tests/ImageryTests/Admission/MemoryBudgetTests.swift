import Foundation
import Testing

@testable import Imagery

@Suite("MemoryBudgetStateMachine")
struct MemoryBudgetStateMachineTests {
    typealias Machine = MemoryBudgetStateMachine

    @Test func admitsWhatFitsAndQueuesTheRestFirstInFirstOut() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 60, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 50, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 3, bytes: 10, stage: .decode) == .enqueued)  // fits, but never overtakes 2
        #expect(machine.used == 60 && machine.queued == 2)
        #expect(machine.release(60, reserved: 60, stage: .decode).map(\.id) == [2, 3])
        #expect(machine.used == 60 && machine.activeDecodes == 2 && machine.queued == 0)
    }

    /// Resident memory over its ceiling: one decode at a time and no new download while anything
    /// is held, whatever the bytes say; clearing it admits the line as the bytes allow.
    @Test func underPressureOneDecodeAtATimeAndNoNewDownloads() {
        var machine = Machine(limit: 1_000, maximumQueueLength: 10, decodeSlots: 2)
        #expect(machine.setPressure(true).isEmpty)
        #expect(machine.reserve(id: 1, bytes: 10, stage: .decode) == .admitted, "the line always moves")
        #expect(machine.reserve(id: 2, bytes: 10, stage: .decode) == .enqueued, "a second slot is free and the bytes fit")
        #expect(machine.reserve(id: 3, bytes: 10, stage: .source) == .enqueued)
        #expect(machine.release(10, reserved: 10, stage: .decode).map(\.id) == [2], "one decode follows another")
        #expect(machine.setPressure(false).map(\.id) == [3])
        #expect(machine.reserve(id: 4, bytes: 10, stage: .decode) == .admitted)
        #expect(machine.activeDecodes == 2 && machine.activeSources == 1)
    }

    @Test func refusesWhatCanNeverFitAndWhatFindsTheLineFull() {
        var machine = Machine(limit: 100, maximumQueueLength: 1)
        #expect(machine.reserve(id: 1, bytes: 101, stage: .source) == .refusedTooLarge)
        #expect(machine.reserve(id: 2, bytes: 100, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 3, bytes: 1, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 4, bytes: 1, stage: .source) == .refusedQueueFull)
    }

    @Test func decodesGoBeforeSourcesAndSourcesTakeAtMostHalf() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 40, stage: .source) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 20, stage: .source) == .enqueued)  // 60 > half
        #expect(machine.reserve(id: 3, bytes: 50, stage: .decode) == .admitted)  // decodes may use the rest
        #expect(machine.reserve(id: 4, bytes: 30, stage: .decode) == .enqueued)
        // The source leaves: the waiting decode goes first, then the source fits its half again.
        #expect(machine.release(40, reserved: 40, stage: .source).map(\.id) == [4, 2])
        #expect(machine.used == 100 && machine.sourceBytes == 20)
    }

    @Test func aDecodeIsAdmittedWhenNoneRunsSoTheLineAlwaysMoves() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        #expect(machine.reserve(id: 1, bytes: 50, stage: .source) == .admitted)
        // 50 held by a source that waits for its decode; the decode needs 80: admitted anyway.
        #expect(machine.reserve(id: 2, bytes: 80, stage: .decode) == .admitted)
        #expect(machine.used == 130 && machine.peak == 130)
        #expect(machine.reserve(id: 3, bytes: 80, stage: .decode) == .enqueued)  // one such decode at a time
        #expect(machine.release(80, reserved: 80, stage: .decode).map(\.id) == [3])
    }

    @Test func decodeSlotsBoundDecodesWhateverTheirSize() {
        var machine = Machine(limit: 1_000, maximumQueueLength: 10, decodeSlots: 2)
        #expect(machine.reserve(id: 1, bytes: 1, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 1, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 3, bytes: 1, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 4, bytes: 1, stage: .source) == .enqueued)  // behind a waiting decode
        #expect(machine.release(1, reserved: 1, stage: .decode).map(\.id) == [3, 4])
        #expect(machine.reserve(id: 5, bytes: 1, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 6, bytes: 1, stage: .source) == .enqueued)
        // The waiting decode leaves (cancelled, timed out): the source behind it goes.
        let (removed, admitted) = machine.remove(id: 5)
        #expect(removed?.id == 5 && admitted.map(\.id) == [6] && machine.queued == 0)
        #expect(machine.remove(id: 6).removed == nil)
    }

    /// Before any decode has told its size, a decode is assumed to need a slot's share of half
    /// the limit: a cold start's downloads take at most the other half.
    @Test func aColdStartsDownloadsTakeHalfTheLimit() {
        var machine = Machine(limit: 400, maximumQueueLength: 10, decodeSlots: 2)
        #expect(machine.typicalDecode == 100)
        #expect(machine.reserve(id: 1, bytes: 150, stage: .source) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 60, stage: .source) == .enqueued)  // 210 > 400 - 2 × 100
        #expect(machine.release(150, reserved: 150, stage: .source).map(\.id) == [2])  // its download done
        #expect(machine.reserve(id: 3, bytes: 140, stage: .source) == .admitted)  // 200
    }

    /// Downloads take at most what decodes of the typical size in every slot leave, and a free
    /// slot keeps room for its decode (downloaded sources wait for their decode holding their
    /// bytes: if they fill the budget, decodes run one at a time; measured, a burst of 20 MP
    /// sources kept 1.6 of 2 cores busy).
    @Test func downloadsLeaveRoomForADecodeInEverySlot() {
        var machine = Machine(limit: 400, maximumQueueLength: 10, decodeSlots: 2)
        for id in 1...40 {  // decodes of 100 teach the typical size
            #expect(machine.reserve(id: UInt64(id), bytes: 100, stage: .decode) == .admitted)
            #expect(machine.release(100, reserved: 100, stage: .decode).isEmpty)
        }
        #expect((100...102).contains(machine.typicalDecode))  // downloads: at most 400 - 2 × 100
        #expect(machine.reserve(id: 41, bytes: 100, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 42, bytes: 100, stage: .decode) == .admitted)  // both slots busy
        #expect(machine.reserve(id: 43, bytes: 60, stage: .source) == .admitted)
        #expect(machine.reserve(id: 44, bytes: 100, stage: .source) == .admitted)  // 160 downloading
        #expect(machine.reserve(id: 45, bytes: 60, stage: .source) == .enqueued)  // 220: past the share
        #expect(machine.release(60, reserved: 60, stage: .source).map(\.id) == [45])

        var free = Machine(limit: 400, maximumQueueLength: 10, decodeSlots: 2)
        for id in 1...40 {
            _ = free.reserve(id: UInt64(id), bytes: 100, stage: .decode)
            _ = free.release(100, reserved: 100, stage: .decode)
        }
        #expect(free.reserve(id: 41, bytes: 100, stage: .decode) == .admitted)  // one slot free
        free.charge(150)  // downloaded sources waiting for their decodes
        #expect(free.reserve(id: 42, bytes: 20, stage: .source) == .admitted)  // the one download always allowed
        // 270 held: 40 more would leave 90, less than the decode of 100 the free slot will run.
        #expect(free.reserve(id: 43, bytes: 40, stage: .source) == .enqueued)
        #expect(free.reserve(id: 44, bytes: 100, stage: .decode) == .admitted)  // so it fits: both slots busy
        #expect(free.release(100, reserved: 100, stage: .decode).isEmpty)
        #expect(free.release(150, reserved: 0, stage: nil).map(\.id) == [43])
    }

    /// With slots, a decode that fits may go before a waiting one that does not, while a slot is
    /// free; a waiter is passed at most twice.
    @Test func aSmallerDecodeBackfillsAFreeSlotAtMostTwicePerWaiter() {
        var machine = Machine(limit: 300, maximumQueueLength: 10, decodeSlots: 2)
        #expect(machine.reserve(id: 1, bytes: 200, stage: .decode) == .admitted)
        #expect(machine.reserve(id: 2, bytes: 250, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 3, bytes: 50, stage: .decode) == .admitted)  // passes 2
        #expect(machine.reserve(id: 4, bytes: 50, stage: .decode) == .enqueued)  // no slot free
        #expect(machine.release(50, reserved: 50, stage: .decode).map(\.id) == [4])  // passes 2 again
        #expect(machine.release(50, reserved: 50, stage: .decode).isEmpty)
        #expect(machine.reserve(id: 5, bytes: 50, stage: .decode) == .enqueued)  // 2 was passed twice
        #expect(machine.release(200, reserved: 200, stage: .decode).map(\.id) == [2, 5])
    }

    @Test func chargesCountButNeverWaitAndLeavingTheLineAdmitsWhoWasBehind() {
        var machine = Machine(limit: 100, maximumQueueLength: 10)
        machine.charge(90)
        #expect(machine.reserve(id: 1, bytes: 20, stage: .decode) == .admitted)  // no decode runs
        #expect(machine.reserve(id: 2, bytes: 20, stage: .decode) == .enqueued)
        #expect(machine.reserve(id: 3, bytes: 5, stage: .source) == .enqueued)
        _ = machine.release(20, reserved: 20, stage: .decode)  // 2 admitted (no decode running)
        #expect(machine.activeDecodes == 1 && machine.queued == 1)
        #expect(machine.release(90, reserved: 0, stage: nil).map(\.id) == [3])
        #expect(machine.used == 25)
    }
}

@Suite("MemoryBudget")
struct MemoryBudgetTests {
    @Test func aWaiterIsAdmittedWhenBytesAreReleased() async throws {
        let budget = MemoryBudget(limit: 100)
        let first = try await budget.reserve(80, for: .decode)
        let second = Task { try await budget.reserve(80, for: .decode) }
        try await waitUntil { budget.snapshot.queued == 1 }
        first.release()
        let admitted = try await second.value
        #expect(admitted.bytes == 80 && budget.snapshot.used == 80 && budget.snapshot.waited == 1)
        admitted.release()
        #expect(budget.snapshot.used == 0 && budget.snapshot.peak == 80)
    }

    @Test func aWaitPastItsDeadlineIsRefusedWithARetryAfter() async throws {
        let budget = MemoryBudget(configuration: .init(limit: 100, maximumWait: .milliseconds(100)))
        let held = try await budget.reserve(100, for: .decode)
        let start = ContinuousClock.now
        await #expect(throws: MemoryBudgetError.self) { _ = try await budget.reserve(10, for: .decode) }
        #expect(ContinuousClock.now - start >= .milliseconds(100))
        do {
            _ = try await budget.reserve(10, for: .decode)
        } catch let MemoryBudgetError.overloaded(retryAfter) {
            #expect(retryAfter >= 1)
        }
        #expect(budget.snapshot.refusedOverloaded == 2 && budget.snapshot.queued == 0)
        held.release()
    }

    @Test func aNewSourceThatTheDecodesAheadCannotReachInTimeIsRefusedBeforeItsDownloadWaits() async throws {
        // One decode slot, a decode running, no decode finished yet (one second each assumed).
        let budget = MemoryBudget(configuration: .init(
            limit: 1_000, maximumWait: .seconds(5), maximumConcurrentDecodes: 1, initialDecodeHold: .seconds(1)
        ))
        let held = try await budget.reserve(10, for: .decode)
        let soon = ContinuousClock.now + .milliseconds(2500)
        // Two requests waiting for a download slot and the running decode: three seconds ahead.
        #expect(throws: MemoryBudgetError.self) { try budget.refuseIfLate(alsoAhead: 2, deadline: soon) }
        #expect(budget.snapshot.refusedOverloaded == 1)
        // With one waiting, two seconds: in time.
        try budget.refuseIfLate(alsoAhead: 1, deadline: soon)
        #expect(budget.snapshot.refusedOverloaded == 1 && budget.snapshot.used == 10)
        held.release()
    }

    /// Decodes that memory lets run one at a time, though there are two slots, are forecast one at
    /// a time once measured: the line ahead of a request then takes twice as long.
    @Test func decodesHeldBackByMemoryAreForecastAsFewerRunning() async throws {
        let budget = MemoryBudget(configuration: .init(limit: 100, maximumConcurrentDecodes: 2, initialDecodeHold: .milliseconds(300)))
        // Two slots at 0.3 s: ten more ahead start within (10 - 1) / 2 rounds, 1.35 s: in time.
        try budget.refuseIfLate(alsoAhead: 10, deadline: ContinuousClock.now + .milliseconds(3200))
        let first = try await budget.reserve(80, for: .decode)
        let second = Task { try await budget.reserve(80, for: .decode) }  // a free slot, but no memory
        for _ in 0..<400 where budget.snapshot.queued == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try #require(budget.snapshot.queued == 1)
        try await Task.sleep(for: .milliseconds(300))
        first.release()  // one was running while one waited
        let running = try await second.value
        // One at a time at 0.3 s or more each: the running one and ten more take 3.3 s or more (on
        // two slots, 1.5 s at this pace).
        #expect(throws: MemoryBudgetError.self) { try budget.refuseIfLate(alsoAhead: 10, deadline: ContinuousClock.now + .milliseconds(3200)) }
        running.release()
    }

    /// Waiters let in on a guessed pace are refused as soon as the measured pace says they cannot be
    /// admitted by their deadline, not when it passes (the rule, without a clock: the budget applies it
    /// whenever a decode ends).
    @Test func waitersTheMeasuredPaceCannotServeInTimeAreLate() {
        var machine = MemoryBudgetStateMachine(limit: 100, maximumQueueLength: 64, decodeSlots: 1)
        #expect(machine.reserve(id: 1, bytes: 80, stage: .decode) == .admitted)
        for id in 2...9 { #expect(machine.reserve(id: UInt64(id), bytes: 80, stage: .decode) == .enqueued) }
        #expect(machine.reserve(id: 10, bytes: 10, stage: .source) == .enqueued)
        let line = machine.waitersInLine()
        #expect(line.map(\.id) == Array(2...10) && line.map(\.ahead) == Array(1...9), "each behind the running one and those before it")
        let now = ContinuousClock.now
        let deadline: (UInt64) -> ContinuousClock.Instant? = { _ in now + .seconds(3) }
        // At the guessed 10 ms a decode all are in time; at a measured 0.5 s, 7 or more ahead are not.
        #expect(AdmissionForecast(slots: 1, decodeHold: 0.01).late(line, now: now, deadline: deadline).isEmpty)
        #expect(AdmissionForecast(slots: 1, decodeHold: 0.5).late(line, now: now, deadline: deadline) == [8, 9, 10])
    }

    /// The deadline bounds waiting behind others: work that reaches the budget past it with
    /// nothing ahead (its own download was slow) is admitted, not thrown away.
    @Test func nothingAheadIsNeverLateEvenPastTheDeadline() async throws {
        let budget = MemoryBudget(configuration: .init(limit: 1_000, maximumConcurrentDecodes: 2, initialDecodeHold: .seconds(1)))
        let past = ContinuousClock.now - .seconds(1)
        try budget.refuseIfLate(alsoAhead: 0, deadline: past)
        let decode = try await budget.reserve(10, for: .decode, deadline: past)
        #expect(budget.snapshot.refusedOverloaded == 0 && budget.snapshot.used == 10)
        // With work ahead that must finish first, the same deadline refuses.
        #expect(throws: MemoryBudgetError.self) { try budget.refuseIfLate(alsoAhead: 2, deadline: past) }
        decode.release()
    }

    /// The rule, without a clock: a page of 64 new large images on 2 decode slots at 0.8 s a
    /// decode waits at most 25.2 s; with a 30 s request timeout less 1.6 s of its own work, every
    /// one of them is in time (a fixed 5 s wait refuses 50 of them: 14 or more ahead); the 74th is not.
    @Test func theForecastAdmitsWhatCanStillFinishWithinTheRequestTime() {
        let pace = AdmissionForecast(slots: 2, decodeHold: 0.8)
        #expect(pace.wait(ahead: 1) == .zero, "a free slot")
        #expect(pace.wait(ahead: 3) == .milliseconds(800))
        #expect(pace.wait(ahead: 64) == .milliseconds(25_200))
        #expect(pace.ownWork == .milliseconds(1_600))
        let window = pace.admissionWindow(within: .seconds(30))
        #expect(window == .milliseconds(28_400))
        #expect((0..<64).allSatisfy { !pace.isLate(ahead: $0, window: window) })
        #expect(pace.isLate(ahead: 73, window: window))
        #expect((0..<64).filter { pace.isLate(ahead: $0, window: .seconds(5)) }.count == 50)
        // A cold start (0.5 s guessed): 32 connections of new thumbnails are all in time.
        let cold = AdmissionForecast(slots: 2, decodeHold: 0.5)
        #expect((0..<32).allSatisfy { !cold.isLate(ahead: $0, window: cold.admissionWindow(within: .seconds(30))) })
        // Memory letting one decode run at a time on the two slots (measured while others waited):
        // each one ahead is a whole decode: 35 ahead are still in time, 36 are not.
        let oneAtATime = AdmissionForecast(slots: 2, decodeHold: 0.8, running: 1)
        #expect(oneAtATime.wait(ahead: 1) == .milliseconds(800) && oneAtATime.wait(ahead: 3) == .milliseconds(2_400))
        #expect(!oneAtATime.isLate(ahead: 35, window: window) && oneAtATime.isLate(ahead: 36, window: window))
        #expect(AdmissionForecast(slots: 2, decodeHold: 0.8, running: 5) == pace, "never more than the slots")
        // A pace too slow for the window still leaves half of it: a lone request is never refused.
        let slow = AdmissionForecast(slots: 2, decodeHold: 20)
        #expect(slow.admissionWindow(within: .seconds(30)) == .seconds(15))
        #expect(!slow.isLate(ahead: 1, window: .zero))
    }

    /// The server's budget: its wait is the request timeout less the request's own work.
    @Test func theDeadlineLeavesTimeForTheRequestsOwnWork() {
        let budget = MemoryBudget(configuration: .init(
            limit: 1_000, maximumWait: .seconds(30), maximumConcurrentDecodes: 2, initialDecodeHold: .seconds(1), leavesTimeForOwnWork: true
        ))
        let start = ContinuousClock.now
        let window = start.duration(to: budget.admissionDeadline())
        #expect(window >= .seconds(28) && window < .seconds(28.5))
        let fixed = MemoryBudget(configuration: .init(limit: 1_000, maximumWait: .seconds(30), maximumConcurrentDecodes: 2))
        #expect(ContinuousClock.now.duration(to: fixed.admissionDeadline()) > .seconds(29.5))
    }

    @Test func tooLargeAndAFullLineAreRefusedAtOnce() async throws {
        let budget = MemoryBudget(configuration: .init(limit: 100, maximumQueueLength: 0))
        await #expect(throws: MemoryBudgetError.tooLarge(bytes: 101, limit: 100)) { _ = try await budget.reserve(101, for: .source) }
        let held = try await budget.reserve(100, for: .decode)
        await #expect(throws: MemoryBudgetError.self) { _ = try await budget.reserve(1, for: .decode) }
        #expect(budget.snapshot.refusedTooLarge == 1 && budget.snapshot.refusedOverloaded == 1)
        held.release()
    }

    @Test func cancellingAWaiterTakesItOutOfTheLine() async throws {
        let budget = MemoryBudget(limit: 100)
        let held = try await budget.reserve(100, for: .decode)
        let waiter = Task { try await budget.reserve(50, for: .decode) }
        try await waitUntil { budget.snapshot.queued == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(budget.snapshot.queued == 0)
        held.release()
        #expect(budget.snapshot.used == 0)
    }

    @Test func aReservationLetGoIsReleasedAndGrowingChargesTheDifference() async throws {
        let budget = MemoryBudget(limit: 100)
        do {
            let reservation = try await budget.reserve(10, for: .source)
            reservation.grow(to: 30)
            reservation.grow(to: 20)  // never shrinks
            #expect(budget.snapshot.used == 30)
        }
        #expect(budget.snapshot.used == 0)
    }

    @Test func manyConcurrentReservationsNeverLoseOrDoubleCountABye() async throws {
        // A wait long enough that the pace rule never refuses (on a machine busy with the rest of the
        // suite a decode slot is held as long as its task waits for a thread: 30 s refused some in
        // parallel full runs); what this test checks is the count.
        let budget = MemoryBudget(configuration: .init(limit: 1_000, maximumQueueLength: 1_000, maximumWait: .seconds(3600), maximumConcurrentDecodes: 3))
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

    private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(2)) }
        #expect(condition())
    }
}
