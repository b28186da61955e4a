import Foundation
import Testing

@testable import Imagery

/// Deadlines are set in the past (due at once) or an hour away (never due within a test): what a
/// test awaits is the action itself, on any machine.
@Suite("DeadlineTimers")
struct DeadlineTimersTests {
    @Test func aDueActionRuns() async throws {
        let timers = DeadlineTimers(name: "test.timers")
        let ran = EventLog<String>()
        timers.schedule(after: .zero) { ran.append("ran") }
        #expect(try await ran.waitForCount(1) == ["ran"])
        #expect(timers.pendingCount == 0)
    }

    @Test func anEarlierDeadlineWakesTheThreadSleepingUntilALaterOne() async throws {
        let timers = DeadlineTimers()
        let ran = EventLog<Int>()
        timers.schedule(after: .seconds(3_600)) { ran.append(1) }
        timers.schedule(after: .seconds(-1)) { ran.append(2) }
        #expect(try await ran.waitForCount(1) == [2])
        #expect(timers.pendingCount == 1)
    }

    @Test func aCancelledActionNeverRuns() async throws {
        let timers = DeadlineTimers()
        let ran = EventLog<Int>()
        let cancelled = (0..<3_000).map { index in timers.schedule(after: .seconds(3_600)) { ran.append(index) } }
        cancelled.forEach(timers.cancel)
        #expect(timers.pendingCount == 0)
        // One still due runs, alone: the thread skipped or dropped every cancelled entry.
        timers.schedule(after: .zero) { ran.append(-1) }
        #expect(try await ran.waitForCount(1) == [-1])
        timers.cancel(cancelled[0])  // twice: nothing
        #expect(timers.pendingCount == 0)
    }

    @Test func dueActionsRunInTheOrderOfTheirDeadlines() async throws {
        let timers = DeadlineTimers()
        let ran = EventLog<Int>()
        // The thread is held by a first action while the others are scheduled, in shuffled order.
        let hold = DispatchSemaphore(value: 0)
        timers.schedule(after: .zero) {
            ran.append(-1)
            hold.wait()
        }
        try await ran.waitForCount(1)
        let now = ContinuousClock.now
        for index in (0..<200).shuffled() {
            timers.schedule(at: now - .milliseconds(1_000 - index)) { ran.append(index) }
        }
        hold.signal()
        #expect(try await ran.waitForCount(201) == [-1] + Array(0..<200))
    }

    @Test func manyThreadsScheduleAndCancelAtOnce() async throws {
        let timers = DeadlineTimers()
        let ran = EventLog<Int>()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        let far = timers.schedule(after: .seconds(3_600)) { ran.append(-1) }
                        if index % 50 == 0 { timers.schedule(after: .zero) { ran.append(task) } }
                        timers.cancel(far)
                    }
                }
            }
        }
        let events = try await ran.waitForCount(80)
        #expect(!events.contains(-1))
        #expect(timers.pendingCount == 0)
    }
}
