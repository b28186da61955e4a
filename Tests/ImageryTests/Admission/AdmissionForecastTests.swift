import Foundation
import Testing

@testable import Imagery

/// The pace rule behind the budget's deadlines and its refusals at once: pure arithmetic, no clock.
@Suite("AdmissionForecast")
struct AdmissionForecastTests {
    /// Waiters let in on a guessed pace are refused as soon as the measured pace says they cannot be
    /// admitted by their deadline, not when it passes (the rule, without a clock: the budget applies it
    /// whenever a decode ends).
    @Test func waitersTheMeasuredPaceCannotServeInTimeAreLate() {
        var machine = MemoryBudgetStateMachine(limit: 100, maximumQueueLength: 64, decodeSlots: 1)
        #expect(machine.reserve(id: 1, bytes: 80, stage: .decode) == .admitted)
        for id in 2...9 { #expect(machine.reserve(id: UInt64(id), bytes: 80, stage: .decode) == .enqueued) }
        #expect(machine.reserve(id: 10, bytes: 10, stage: .source) == .enqueued)
        let line = machine.waitersInLine()
        #expect(
            line.map(\.id) == Array(2...10) && line.map(\.ahead) == Array(1...9),
            "each behind the running one and those before it")
        let now = ContinuousClock.now
        let deadline: (UInt64) -> ContinuousClock.Instant? = { _ in now + .seconds(3) }
        // At the guessed 10 ms a decode all are in time; at a measured 0.5 s, 7 or more ahead are not.
        #expect(AdmissionForecast(slots: 1, decodeHold: 0.01).late(line, now: now, deadline: deadline).isEmpty)
        #expect(AdmissionForecast(slots: 1, decodeHold: 0.5).late(line, now: now, deadline: deadline) == [8, 9, 10])
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

    /// The wait of one more decode with `ahead` before it: whole rounds of the decodes running in
    /// parallel, nothing while a slot is free.
    @Test(
        arguments: [
            (1, 1.0, 0, 0), (1, 1.0, 1, 1_000), (1, 1.0, 5, 5_000),
            (2, 1.0, 0, 0), (2, 1.0, 1, 0), (2, 1.0, 2, 500), (2, 1.0, 4, 1_500),
            (4, 0.2, 3, 0), (4, 0.2, 4, 50), (4, 0.2, 11, 400),
        ] as [(Int, Double, Int, Int)])
    func theWaitIsRoundsOfTheDecodesRunning(slots: Int, hold: Double, ahead: Int, milliseconds: Int) {
        #expect(AdmissionForecast(slots: slots, decodeHold: hold).wait(ahead: ahead) == .milliseconds(milliseconds))
    }

    @Test func slotsAndTheMeasuredParallelismAreAtLeastOne() {
        #expect(AdmissionForecast(slots: 0, decodeHold: 1).parallel == 1)
        #expect(AdmissionForecast(slots: -3, decodeHold: 1).parallel == 1)
        #expect(AdmissionForecast(slots: 4, decodeHold: 1, running: 0.2).parallel == 1)
        #expect(AdmissionForecast(slots: 4, decodeHold: 1, running: 2.5).parallel == 2.5)
        #expect(AdmissionForecast(slots: 4, decodeHold: 1, running: 9).parallel == 4)
    }

    @Test func aWaiterWithoutADeadlineIsNeverLate() {
        let now = ContinuousClock.now
        let pace = AdmissionForecast(slots: 1, decodeHold: 10)
        let late = pace.late([(1, 5), (2, 50), (3, 0)], now: now) { $0 == 2 ? now + .seconds(1) : nil }
        #expect(late == [2])
    }

    @Test func aDeadlineAlreadyPastIsLateOnlyWithDecodesAhead() {
        let pace = AdmissionForecast(slots: 2, decodeHold: 0.5)
        #expect(!pace.isLate(ahead: 0, window: .seconds(-5)))
        #expect(!pace.isLate(ahead: 1, window: .seconds(-5)), "a free slot: no wait")
        #expect(pace.isLate(ahead: 2, window: .seconds(-5)))
        #expect(!pace.isLate(ahead: 2, window: .milliseconds(250)), "a wait of exactly the window is in time")
        #expect(pace.isLate(ahead: 2, window: .milliseconds(249)))
    }
}
