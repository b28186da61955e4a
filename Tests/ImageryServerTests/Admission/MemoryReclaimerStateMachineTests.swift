import Foundation
import Imagery
import Testing

@testable import ImageryServer

/// The memory reclaimer's decisions without memory or clocks: pressure only over the ceiling after a trim,
/// trims when they can help, and the rate-limited lines that say so.
@Suite("Memory reclaimer decisions")
struct MemoryReclaimerStateMachineTests {
    typealias Machine = MemoryReclaimerStateMachine
    static let mebibyte = 1 << 20
    static let ceiling = 612 * mebibyte
    static let start = ContinuousClock.now

    /// The default server's numbers: a 512 MiB limit, its ceiling 100 MiB above, a 64 MiB retained limit;
    /// 40 MiB resident that is not the allocator's.
    static func machine() -> Machine {
        let configuration = Machine.Configuration(residentCeiling: ceiling, retainedLimit: 64 * mebibyte)
        return Machine(configuration: configuration, floor: 40 * mebibyte, admitted: 0)
    }

    /// A reading at `milliseconds` after the start: `resident` MiB, of which `inUse` are the allocator's in use.
    static func reading(
        _ resident: Int, inUse: Int? = nil, free: Int? = nil, at milliseconds: Int,
        _ admission: Machine.Admission = .init()
    ) -> Machine.Reading {
        Machine.Reading(
            resident: resident * mebibyte, allocatorInUse: inUse.map { $0 * mebibyte },
            allocatorFree: free.map { $0 * mebibyte },
            admission: admission, now: start + .milliseconds(milliseconds)
        )
    }

    @Test func memoryATrimGivesBackNeverHoldsAdmissionBack() {
        var machine = Self.machine()
        // Over the ceiling: a trim first, nothing held back yet.
        // (Over the ceiling, heaps' free tops go back at each free: no trim returns them but the main arena's.)
        let over = machine.look(Self.reading(700, inUse: 450, free: 250, at: 50))
        #expect(over == Machine.Step(pressure: false, trim: .ceiling, trimsHeapTops: true))
        // The allocator's freed memory was all that was over.
        let after = machine.lookAfterTrim(Self.reading(500, inUse: 450, free: 250, at: 80), trimmed: true)
        #expect(after == Machine.Step(pressure: false))
        #expect(!machine.underPressure && machine.episodes == 0)
        #expect(machine.floor == 50 * Self.mebibyte)  // what the trim left that is not in use
    }

    @Test func pressureStartsWhenResidentMemoryStaysOverTheCeilingAfterATrim() {
        var machine = Self.machine()
        let admission = Machine.Admission(used: 200 * Self.mebibyte, queued: 3, admitted: 40, waited: 5, refused: 1)
        #expect(machine.look(Self.reading(700, inUse: 640, free: 20, at: 50, admission)).trim == .ceiling)
        let step = machine.lookAfterTrim(Self.reading(690, inUse: 640, free: 10, at: 90, admission), trimmed: true)
        let expected = Machine.Start(
            resident: 690 * Self.mebibyte, residentBeforeTrim: 700 * Self.mebibyte, ceiling: Self.ceiling,
            allocatorInUse: 640 * Self.mebibyte, allocatorFree: 10 * Self.mebibyte, logged: true
        )
        #expect(step == Machine.Step(pressure: true, events: [.started(expected)], trimsHeapTops: true))
        #expect(machine.underPressure && machine.episodes == 1)

        // Still over, nothing the allocator keeps could bring it under: held, no trim.
        #expect(
            machine.look(Self.reading(695, inUse: 645, at: 140, admission))
                == Machine.Step(pressure: true, trimsHeapTops: true))

        // Under at the next look: it ends, with what waited and was refused meanwhile.
        let later = Machine.Admission(used: 100 * Self.mebibyte, queued: 0, admitted: 52, waited: 12, refused: 3)
        let end = machine.look(Self.reading(600, inUse: 550, at: 2_090, later))
        let ended = Machine.End(
            resident: 600 * Self.mebibyte, ceiling: Self.ceiling, lasted: .seconds(2), waited: 7, refused: 2,
            logged: true
        )
        #expect(end == Machine.Step(pressure: false, events: [.ended(ended)]))
        #expect(!machine.underPressure && machine.episodes == 1 && machine.held == .seconds(2))
    }

    /// Under pressure, a trim is tried again when what the allocator keeps freed could bring resident memory
    /// under the ceiling, at most every 250 ms.
    @Test func underPressureTrimsAgainOnlyWhenItCouldHelpAndNotTooOften() {
        var machine = Self.machine()
        _ = machine.look(Self.reading(700, inUse: 650, at: 0))
        #expect(machine.lookAfterTrim(Self.reading(700, inUse: 650, at: 20), trimmed: true).pressure)  // floor 50 MiB
        // 50 MiB freed and kept since (retained 100, floor 50; within the retained limit): 610 without
        // them, under the ceiling; but the last trim was 100 ms ago.
        #expect(
            machine.look(Self.reading(660, inUse: 560, at: 120)) == Machine.Step(pressure: true, trimsHeapTops: true))
        #expect(machine.look(Self.reading(660, inUse: 560, at: 270)).trim == .ceiling)
        // The trim brought it under: pressure ends.
        let after = machine.lookAfterTrim(Self.reading(605, inUse: 560, at: 300), trimmed: true)
        #expect(!after.pressure && !after.trimsHeapTops && after.events.count == 1)
        guard case .ended(let end)? = after.events.first else {
            Issue.record("no end")
            return
        }
        #expect(end.lasted == .milliseconds(280))
    }

    /// A trim skipped because one ran just before leaves the floor as it was.
    @Test func aSkippedTrimLeavesTheFloor() {
        var machine = Self.machine()
        _ = machine.look(Self.reading(700, inUse: 450, at: 0))
        _ = machine.lookAfterTrim(Self.reading(690, inUse: 450, at: 10), trimmed: false)
        #expect(machine.floor == 40 * Self.mebibyte)
        #expect(machine.underPressure)  // still over after the trim that ran just before
    }

    /// Near the ceiling, freed memory kept past the retained limit is trimmed while work goes on; far
    /// from it, it is not even counted.
    @Test func freedMemoryIsTrimmedNearTheCeilingOnly() {
        var machine = Self.machine()
        #expect(!machine.needsAllocatorCounts(resident: 400 * Self.mebibyte))
        #expect(machine.needsAllocatorCounts(resident: 500 * Self.mebibyte))
        #expect(machine.look(Self.reading(300, at: 50)).trim == nil)
        // 560 resident, 400 in use: 160 kept, 120 past the floor (over 64).
        #expect(machine.look(Self.reading(560, inUse: 400, at: 100)).trim == .retained)
        #expect(
            machine.lookAfterTrim(Self.reading(450, inUse: 400, at: 120), trimmed: true)
                == Machine.Step(pressure: false))
        #expect(machine.look(Self.reading(560, inUse: 480, at: 150)).trim == nil)  // 80 kept, 30 past the new floor
    }

    /// Idle trims: after work, once four looks in a row (every fifth look) saw nothing held and nothing waiting.
    @Test func anIdleBudgetAfterWorkIsTrimmedOnce() {
        var machine = Self.machine()
        var trims: [Int] = []
        for look in 1...60 {
            let admission = Machine.Admission(admitted: look < 5 ? 0 : 10)  // work admitted before the fifth look
            if machine.look(Self.reading(300, at: look * 50, admission)).trim == .idle {
                trims.append(look)
                _ = machine.lookAfterTrim(Self.reading(250, at: look * 50 + 10, admission), trimmed: true)
            }
        }
        #expect(trims == [20])  // looks 5, 10, 15, 20 idle; no new work after
    }

    /// Work admitted before a trim under load, still held after it, is work too: what it frees once done
    /// is trimmed when the budget falls idle (else it stayed resident: 448 MB 20 s after a burst of 64, against
    /// 302–364 in the runs where it was trimmed).
    @Test func workStillHeldAfterATrimIsTrimmedOnceIdle() {
        // Every admission before the machine's start: none is seen after the trim.
        let configuration = Machine.Configuration(residentCeiling: Self.ceiling, retainedLimit: 64 * Self.mebibyte)
        var machine = Machine(configuration: configuration, floor: 40 * Self.mebibyte, admitted: 10)
        let working = Machine.Admission(used: 100 * Self.mebibyte, admitted: 10)
        for look in 1...4 { _ = machine.look(Self.reading(300, at: look * 50, working)) }
        // A trim of retained memory while the work still holds its bytes.
        #expect(machine.look(Self.reading(560, inUse: 400, at: 250, working)).trim == .retained)
        _ = machine.lookAfterTrim(Self.reading(450, inUse: 400, at: 260, working), trimmed: true)
        var trims: [Int] = []
        for look in 6...60 {
            let admission = look <= 10 ? working : Machine.Admission(admitted: 10)  // done after the tenth look
            if machine.look(Self.reading(300, at: look * 50, admission)).trim == .idle { trims.append(look) }
        }
        #expect(trims == [30])  // held at look 10; idle at looks 15, 20, 25 and 30
    }

    /// A state that flaps logs one start every 10 s at most; the episodes between are summed in the next
    /// line, and the counts see every one.
    @Test func aFlappingStateCannotFloodTheLog() {
        var machine = Self.machine()
        var lines: [Machine.Event] = []
        var starts = 0
        var ends = 0
        // An episode every second for 25 s: 400 ms over the ceiling, then under.
        for second in 0..<25 {
            let at = second * 1000
            for event in machine.look(Self.reading(700, inUse: 660, at: at)).events {
                Issue.record("unexpected \(event)")
            }
            for event in machine.lookAfterTrim(Self.reading(700, inUse: 660, at: at + 20), trimmed: true).events {
                starts += 1
                if case .started(let start) = event, start.logged { lines.append(event) }
            }
            for event in machine.look(Self.reading(500, inUse: 460, at: at + 420)).events {
                ends += 1
                if case .ended(let end) = event, end.logged { lines.append(event) }
            }
        }
        #expect(starts == 25 && ends == 25 && machine.episodes == 25)
        #expect(machine.held == .milliseconds(400 * 25))
        // Starts logged at 0 s, 10 s and 20 s (each with its end); the 9 episodes between are summed in the next start.
        let loggedStarts = lines.compactMap { event -> Machine.Start? in
            if case .started(let start) = event { start } else { nil }
        }
        #expect(loggedStarts.count == 3)
        let nine = Machine.Unlogged(episodes: 9, held: .milliseconds(3_600))
        #expect(loggedStarts.map(\.unlogged) == [nil, nine, nine])
        #expect(lines.count == 6)
        // Then, more than 10 s after the last line, an episode that is not logged at its start is summed at its end.
        _ = machine.look(Self.reading(700, inUse: 660, at: 25_000))
        _ = machine.lookAfterTrim(Self.reading(700, inUse: 660, at: 25_020), trimmed: true)  // not logged (20 s line)
        _ = machine.look(Self.reading(500, inUse: 460, at: 26_000))  // 4 not logged, 21–24 s; this one: not due yet
        _ = machine.look(Self.reading(700, inUse: 660, at: 29_000))
        _ = machine.lookAfterTrim(Self.reading(700, inUse: 660, at: 29_020), trimmed: true)
        let tail = machine.look(Self.reading(500, inUse: 460, at: 30_500)).events
        guard case .ended(let end)? = tail.first else {
            Issue.record("no end")
            return
        }
        #expect(end.logged && end.unlogged?.episodes == 6)
    }
}
