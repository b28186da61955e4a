import Foundation

/// Runs actions at deadlines, all of them from one thread of its own that sleeps until the
/// earliest one.
///
/// For limits that almost never run out (a request's time limit, a wait for memory): a `Task`
/// that sleeps for each of them costs a task, a timer and, when it is cancelled at the end of
/// the work it guarded, a wakeup of a pool thread, for every request. Here a limit is an entry
/// in a heap: scheduling one later than the earliest (limits of one length, as a server's are)
/// wakes nothing, and cancelling one only forgets its action (its entry is skipped when its time
/// comes, or dropped when cancelled entries outnumber the live ones).
///
/// Actions run on the timers' thread, one after another: they must be short and must not block
/// (resume a continuation, cancel a task, set a flag).
public final class DeadlineTimers: @unchecked Sendable {
    // @unchecked: `state` is only touched while `condition` is locked.

    /// The timers most of the package uses.
    public static let shared = DeadlineTimers()

    /// A scheduled action, to cancel it.
    public struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let id: UInt64
    }

    private struct State {
        var heap: [Entry] = []  // a binary min-heap by deadline
        var actions: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        var started = false
        /// When the thread will look next on its own (`nil`: it waits for a signal).
        var sleepingUntil: ContinuousClock.Instant?
    }

    private let condition = NSCondition()
    private var state = State()
    private let name: String

    /// Timers whose thread (started with the first action) is called `name`.
    public init(name: String = "imagery.timers") {
        self.name = name
    }

    /// Runs `action` after `delay` (at once, on the timers' thread, when it is not positive),
    /// unless it is cancelled first.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Token {
        schedule(at: .now + delay, action)
    }

    /// Runs `action` at `deadline` unless it is cancelled first.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        condition.lock()
        defer { condition.unlock() }
        state.nextID += 1
        let id = state.nextID
        state.actions[id] = action
        push(Entry(deadline: deadline, id: id))
        if !state.started {
            state.started = true
            let thread = Thread { [self] in run() }
            thread.name = name
            thread.start()
        } else if state.sleepingUntil.map({ deadline < $0 }) ?? true {
            condition.signal()
        }
        return Token(id: id)
    }

    /// Forgets `token`'s action: it will not run (unless it is running already).
    public func cancel(_ token: Token) {
        condition.lock()
        defer { condition.unlock() }
        guard state.actions.removeValue(forKey: token.id) != nil else { return }
        // Cancelled entries wait in the heap for their time; when they outnumber the live ones, go.
        if state.heap.count > 1_024, state.heap.count > 2 * state.actions.count {
            let live = state.actions
            state.heap.removeAll { live[$0.id] == nil }
            state.heap.sort { $0.deadline < $1.deadline }  // a sorted array is a heap
        }
    }

    /// Actions scheduled and not yet run or cancelled.
    public var pendingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return state.actions.count
    }

    private func run() {
        condition.lock()
        while true {
            let now = ContinuousClock.now
            var due: [@Sendable () -> Void] = []
            while let first = state.heap.first, first.deadline <= now {
                popFirst()
                if let action = state.actions.removeValue(forKey: first.id) { due.append(action) }
            }
            if !due.isEmpty {
                condition.unlock()
                for action in due { action() }
                condition.lock()
                continue
            }
            if let first = state.heap.first {
                state.sleepingUntil = first.deadline
                let (seconds, attoseconds) = now.duration(to: first.deadline).components
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) * 1e-18))
            } else {
                state.sleepingUntil = nil
                condition.wait()
            }
        }
    }

    // MARK: - The heap

    private func push(_ entry: Entry) {
        state.heap.append(entry)
        var child = state.heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard state.heap[child].deadline < state.heap[parent].deadline else { break }
            state.heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() {
        let last = state.heap.removeLast()
        guard !state.heap.isEmpty else { return }
        state.heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < state.heap.count, state.heap[left].deadline < state.heap[smallest].deadline { smallest = left }
            if right < state.heap.count, state.heap[right].deadline < state.heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            state.heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
