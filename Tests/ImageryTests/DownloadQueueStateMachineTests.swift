import Testing

@testable import Imagery

@Suite("DownloadQueueStateMachine")
struct DownloadQueueStateMachineTests {
    typealias Machine = DownloadQueueStateMachine<String>

    @Test func runsUpToTheLimitThenQueues() {
        var machine = Machine(limit: 2)
        #expect(machine.enqueue(machine.makeTicketID(), priority: .normal, payload: "a").runs == "a")
        #expect(machine.enqueue(machine.makeTicketID(), priority: .normal, payload: "b").runs == "b")
        #expect(machine.enqueue(machine.makeTicketID(), priority: .normal, payload: "c").runs == nil)
        #expect(machine.running == 2)
        #expect(machine.finish() == "c")
        #expect(machine.finish() == nil)
        #expect(machine.running == 1)
    }

    @Test func startsHigherPrioritiesFirstAndEqualOnesInArrivalOrder() {
        var machine = Machine(limit: 1)
        _ = machine.enqueue(machine.makeTicketID(), priority: .normal, payload: "running")
        _ = machine.enqueue(machine.makeTicketID(), priority: .low, payload: "low")
        _ = machine.enqueue(machine.makeTicketID(), priority: .high, payload: "high1")
        _ = machine.enqueue(machine.makeTicketID(), priority: .veryLow, payload: "veryLow")
        _ = machine.enqueue(machine.makeTicketID(), priority: .high, payload: "high2")
        #expect(machine.pendingInOrder == ["high1", "high2", "low", "veryLow"])
        var order: [String] = []
        while let next = machine.finish() { order.append(next) }
        #expect(order == ["high1", "high2", "low", "veryLow"])
    }

    @Test func aPriorityChangeMovesAWaitingEntry() {
        var machine = Machine(limit: 1)
        _ = machine.enqueue(machine.makeTicketID(), priority: .normal, payload: "running")
        let prefetch = machine.makeTicketID()
        _ = machine.enqueue(prefetch, priority: .veryLow, payload: "prefetch")
        _ = machine.enqueue(machine.makeTicketID(), priority: .normal, payload: "visible")
        machine.updatePriority(prefetch, to: .veryHigh)
        #expect(machine.pendingInOrder == ["prefetch", "visible"])
        machine.updatePriority(prefetch, to: .low)
        #expect(machine.pendingInOrder == ["visible", "prefetch"])
    }

    @Test func aCancelledEntryLeavesWithoutTakingASlot() {
        var machine = Machine(limit: 1)
        _ = machine.enqueue(machine.makeTicketID(), priority: .normal, payload: "running")
        let waiting = machine.makeTicketID()
        _ = machine.enqueue(waiting, priority: .normal, payload: "waiting")
        #expect(machine.cancel(waiting) == "waiting")
        #expect(machine.cancel(waiting) == nil)
        #expect(machine.pendingCount == 0)
        #expect(machine.finish() == nil)
        #expect(machine.running == 0)
    }
}

extension DownloadQueueStateMachine.EnqueueAction {
    var runs: Payload? { if case .run(let payload) = self { payload } else { nil } }
}
