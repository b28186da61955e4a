import Testing

@testable import Imagery

@Suite("DownloadQueueStateMachine")
struct DownloadQueueStateMachineTests {
    typealias Machine = DownloadQueueStateMachine<String>

    /// Enqueues `payload` under a new ticket; returns the ticket and whether it runs at once.
    @discardableResult
    static func add(_ machine: inout Machine, _ payload: String, _ priority: ImageRequest.Priority = .normal) -> (
        Machine.TicketID, Bool
    ) {
        let id = machine.makeTicketID()
        return (id, machine.enqueue(id, priority: priority, payload: payload).runs == payload)
    }

    @Test func runsUpToTheLimitThenQueues() {
        var machine = Machine(limit: 2)
        let (a, aRuns) = Self.add(&machine, "a")
        let (_, bRuns) = Self.add(&machine, "b")
        let (_, cRuns) = Self.add(&machine, "c")
        #expect([aRuns, bRuns, cRuns] == [true, true, false])
        #expect(machine.running == 2)
        #expect(machine.finish(a) == ["c"])
        #expect(machine.running == 2)
        #expect(machine.pendingCount == 0)
    }

    @Test func startsHigherPrioritiesFirstAndEqualOnesInArrivalOrder() {
        var machine = Machine(limit: 1)
        var (running, _) = Self.add(&machine, "running")
        var ids: [String: Machine.TicketID] = [:]
        for (payload, priority) in [
            ("low", ImageRequest.Priority.low), ("high1", .high), ("veryLow", .veryLow), ("high2", .high),
        ] {
            ids[payload] = Self.add(&machine, payload, priority).0
        }
        #expect(machine.pendingInOrder == ["high1", "high2", "low", "veryLow"])
        var order: [String] = []
        while let next = machine.finish(running).first {
            order.append(next)
            running = ids[next]!
        }
        #expect(order == ["high1", "high2", "low", "veryLow"])
    }

    /// Prefetch work runs one at a time, and not while urgent work waits or runs.
    @Test func thePrefetchLaneWaitsForUrgentWorkAndRunsOneAtATime() {
        var machine = Machine(limit: 2, prefetchLimit: 1)
        let (urgent, urgentRuns) = Self.add(&machine, "urgent")
        let (_, prefetchRuns) = Self.add(&machine, "p1", .low)
        Self.add(&machine, "p2", .veryLow)
        #expect(urgentRuns && !prefetchRuns, "a free slot is not enough while urgent work runs")
        #expect(machine.finish(urgent) == ["p1"], "one prefetch at a time, the higher first")
        #expect(machine.runningPrefetch == 1)
        // Urgent work arriving while a prefetch runs starts at once; the prefetch is not stopped.
        let (second, secondRuns) = Self.add(&machine, "urgent2", .high)
        #expect(secondRuns)
        #expect(machine.runningPrefetch == 1 && machine.runningUrgent == 1)
        #expect(machine.pendingInOrder == ["p2"])
        #expect(machine.finish(second) == [], "p1 still runs: the lane's one slot is taken")
    }

    @Test func aQueuedUrgentEntryPausesThePrefetchLaneUntilItLeaves() {
        var machine = Machine(limit: 1, prefetchLimit: 1)
        let (blocker, _) = Self.add(&machine, "blocker")
        let (waiting, _) = Self.add(&machine, "waiting")
        Self.add(&machine, "prefetch", .low)
        #expect(machine.pendingInOrder == ["waiting", "prefetch"])
        let (cancelled, started) = machine.cancel(waiting)
        #expect(cancelled == "waiting")
        #expect(started.isEmpty, "the blocker still runs")
        #expect(machine.cancel(waiting).payload == nil)
        #expect(machine.finish(blocker) == ["prefetch"])
    }

    @Test func aPriorityChangeMovesAWaitingEntryBetweenLanes() {
        var machine = Machine(limit: 1)
        let (running, _) = Self.add(&machine, "running")
        let (prefetch, _) = Self.add(&machine, "prefetch", .veryLow)
        let (visible, _) = Self.add(&machine, "visible")
        #expect(machine.updatePriority(prefetch, to: .veryHigh) == [])
        #expect(machine.pendingInOrder == ["prefetch", "visible"])
        #expect(machine.updatePriority(prefetch, to: .low) == [])
        #expect(machine.updatePriority(visible, to: .veryLow) == [])
        #expect(machine.pendingInOrder == ["prefetch", "visible"], "both prefetch now, low before veryLow")
        #expect(machine.finish(running) == ["prefetch"], "nothing urgent is left: the prefetch lane resumes")
    }

    /// A running entry's lane follows its priority: lowered, it frees its urgent slot but the total
    /// stays bounded; raised, it pauses the prefetch lane.
    @Test func aRunningEntryCountsInTheLaneOfItsPriority() {
        var machine = Machine(limit: 2, prefetchLimit: 1)
        let (a, _) = Self.add(&machine, "a")
        let (b, _) = Self.add(&machine, "b")
        Self.add(&machine, "c")
        Self.add(&machine, "d")
        #expect(machine.updatePriority(a, to: .low) == ["c"], "a no longer urgent: its urgent slot goes to c")
        #expect((machine.runningUrgent, machine.runningPrefetch) == (2, 1))
        #expect(machine.updatePriority(b, to: .low) == [], "three run: the total is at limit + prefetchLimit")
        #expect((machine.runningUrgent, machine.runningPrefetch) == (1, 2))
        #expect(machine.finish(a) == ["d"])
        #expect(machine.updatePriority(b, to: .high) == [], "raised again: urgent, no new start")
        #expect((machine.runningUrgent, machine.runningPrefetch) == (3, 0))
    }

    /// 10 000 waiting entries moved and cancelled leave nothing behind, and what remains starts in order.
    @Test func manyEntriesMovedAndCancelled() {
        var machine = Machine(limit: 1)
        let (running, _) = Self.add(&machine, "running")
        let ids = (0..<10_000).map { Self.add(&machine, "e\($0)", .low).0 }
        for id in ids where id.raw % 3 == 0 { _ = machine.updatePriority(id, to: .veryLow) }
        for id in ids.dropLast(2) { _ = machine.cancel(id) }
        #expect(machine.pendingCount == 2)
        #expect(machine.pendingInOrder == ["e9998", "e9999"])
        #expect(machine.finish(running) == ["e9998"])
    }
}

extension DownloadQueueStateMachine.EnqueueAction {
    var runs: Payload? { if case .run(let payload) = self { payload } else { nil } }
}
