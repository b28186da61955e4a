import Testing

@testable import Imagery

@Suite("CoalescingStateMachine")
struct CoalescingStateMachineTests {
    typealias Machine = CoalescingStateMachine<String, String, String>

    @Test func startsOneJobForManyWaitersAndAnswersThemAll() {
        var machine = Machine()
        let first = machine.makeWaiterID()
        guard case .startJob(let job, .normal) = machine.join("k", waiter: "w1", id: first, priority: .normal) else {
            Issue.record("first waiter must start the job")
            return
        }
        #expect(machine.attach("task", to: "k", job: job).isKeep)
        for index in 2...5 {
            guard
                case .joined(let joinedJob, nil) = machine.join(
                    "k", waiter: "w\(index)", id: machine.makeWaiterID(), priority: .normal)
            else {
                Issue.record("later waiters join")
                return
            }
            #expect(joinedJob == job)
        }
        #expect(machine.waiterCount(of: "k") == 5)
        #expect(Set(machine.finish("k", job: job)) == ["w1", "w2", "w3", "w4", "w5"])
        #expect(machine.jobCount == 0)
    }

    @Test func runsAtTheHighestPriorityOfItsWaiters() {
        var machine = Machine()
        let low = machine.makeWaiterID()
        _ = machine.join("k", waiter: "low", id: low, priority: .low)
        let high = machine.makeWaiterID()
        guard case .joined(_, .high) = machine.join("k", waiter: "high", id: high, priority: .high) else {
            Issue.record("joining at a higher priority raises the job")
            return
        }
        // The high waiter leaves: the job drops back to low.
        guard case .cancelWaiter("high", .low) = machine.leave("k", id: high) else {
            Issue.record("leaving lowers the job to the remaining waiters' highest")
            return
        }
        // The low waiter asks for very high.
        #expect(machine.updatePriority("k", id: low, to: .veryHigh) == .veryHigh)
        #expect(machine.priority(of: "k") == .veryHigh)
        #expect(machine.updatePriority("k", id: low, to: .veryHigh) == nil)
    }

    @Test func theLastWaiterLeavingCancelsTheJob() {
        var machine = Machine()
        let a = machine.makeWaiterID()
        let b = machine.makeWaiterID()
        guard case .startJob(let job, _) = machine.join("k", waiter: "a", id: a, priority: .normal) else { return }
        _ = machine.attach("task", to: "k", job: job)
        _ = machine.join("k", waiter: "b", id: b, priority: .normal)
        guard case .cancelWaiter("a", nil) = machine.leave("k", id: a) else {
            Issue.record("first leave only answers that waiter")
            return
        }
        guard case .cancelWaiterAndJob("b", "task") = machine.leave("k", id: b) else {
            Issue.record("last leave cancels the job")
            return
        }
        #expect(machine.jobCount == 0)
        // The cancelled job's late result reaches nobody.
        #expect(machine.finish("k", job: job).isEmpty)
    }

    @Test func aJobAbandonedBeforeItsHandleArrivesIsCancelledOnAttach() {
        var machine = Machine()
        let a = machine.makeWaiterID()
        guard case .startJob(let job, _) = machine.join("k", waiter: "a", id: a, priority: .normal) else { return }
        guard case .cancelWaiterAndJob("a", nil) = machine.leave("k", id: a) else {
            Issue.record("leave before attach has no handle")
            return
        }
        guard case .cancel("task") = machine.attach("task", to: "k", job: job) else {
            Issue.record("attach after abandonment cancels")
            return
        }
    }

    @Test func aNewJobForAKeyIsNotFinishedByItsCancelledPredecessor() {
        var machine = Machine()
        let a = machine.makeWaiterID()
        guard case .startJob(let old, _) = machine.join("k", waiter: "a", id: a, priority: .normal) else { return }
        _ = machine.leave("k", id: a)
        let b = machine.makeWaiterID()
        guard case .startJob(let new, _) = machine.join("k", waiter: "b", id: b, priority: .normal) else {
            Issue.record("a key with no job starts a new one")
            return
        }
        #expect(old != new)
        #expect(machine.finish("k", job: old).isEmpty)
        #expect(machine.finish("k", job: new) == ["b"])
    }

    @Test func leavingAfterTheJobFinishedDoesNothing() {
        var machine = Machine()
        let a = machine.makeWaiterID()
        guard case .startJob(let job, _) = machine.join("k", waiter: "a", id: a, priority: .normal) else { return }
        _ = machine.finish("k", job: job)
        guard case .none = machine.leave("k", id: a) else {
            Issue.record("a waiter already answered cannot be cancelled")
            return
        }
    }
}

extension CoalescingStateMachine.AttachAction {
    var isKeep: Bool { if case .keep = self { true } else { false } }
}
