import Foundation
import Testing

@testable import Imagery

/// How long a test waits for an event before it gives up: a guard against a hang, never the thing
/// a test asserts (every wait ends with the event itself on any machine, however loaded).
let hangGuard: Duration = .seconds(300)

/// What a wait that outlived ``hangGuard`` throws: the event it waited for never came.
struct HangGuardExpired: Error, CustomStringConvertible {
    let waitingFor: String
    var description: String { "gave up waiting for \(waitingFor) after \(hangGuard)" }
}

/// State that tasks change and tests await: `wait(until:)` returns as soon as the state meets a
/// condition (at once if it does already), however long that takes, without polling.
///
/// Waits honour task cancellation (they throw `CancellationError`), so a fake that waits on one
/// (a loader held at a gate) is aborted when the pipeline cancels it.
final class Watched<State: Sendable>: Sendable {
    private struct Waiter {
        let isMet: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Storage {
        var state: State
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let storage: Locked<Storage>

    private enum WaitOutcome { case met, cancelled, waiting }

    init(_ state: State) {
        storage = Locked(Storage(state: state))
    }

    /// The state now.
    var value: State { storage.withLock { $0.state } }

    /// Changes the state, then resumes every waiter whose condition now holds.
    @discardableResult
    func update<Result>(_ change: (inout State) -> Result) -> Result {
        let (result, met) = storage.withLock { storage -> (Result, [CheckedContinuation<Void, any Error>]) in
            let result = change(&storage.state)
            var met: [CheckedContinuation<Void, any Error>] = []
            for (id, waiter) in storage.waiters where waiter.isMet(storage.state) {
                storage.waiters[id] = nil
                met.append(waiter.continuation)
            }
            return (result, met)
        }
        for continuation in met { continuation.resume() }
        return result
    }

    /// Returns once `isMet` holds for the state.
    /// - Parameter what: What is awaited, for the message of a wait that outlives ``hangGuard``.
    /// - Throws: `CancellationError` when the waiting task is cancelled, ``HangGuardExpired``.
    func wait(_ what: @autoclosure () -> String, until isMet: @escaping @Sendable (State) -> Bool) async throws {
        let id = storage.withLock { storage -> UInt64 in
            storage.nextID += 1
            return storage.nextID
        }
        let description = what()
        let guardTask = Task { [weak self] in
            try? await Task.sleep(for: hangGuard)
            guard !Task.isCancelled else { return }
            self?.abandon(id, with: HangGuardExpired(waitingFor: description))
        }
        defer { guardTask.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = storage.withLock { storage -> WaitOutcome in
                    if isMet(storage.state) { return .met }
                    if Task.isCancelled { return .cancelled }
                    storage.waiters[id] = Waiter(isMet: isMet, continuation: continuation)
                    return .waiting
                }
                switch outcome {
                case .met: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            abandon(id, with: CancellationError())
        }
    }

    private func abandon(_ id: UInt64, with error: any Error) {
        storage.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(throwing: error)
    }
}

/// A latch the test opens: whatever waits at it (a load, a decode's start) stays there until then.
final class Gate: Sendable {
    private let isOpen = Watched(false)

    init(open: Bool = false) {
        if open { isOpen.update { $0 = true } }
    }

    /// Lets everything waiting (and everything that comes later) through.
    func open() { isOpen.update { $0 = true } }

    var isOpened: Bool { isOpen.value }

    /// Returns once the gate is open.
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    func wait() async throws {
        try await isOpen.wait("a gate to open") { $0 }
    }
}

/// Things that happened, in order, that a test awaits by count: `try await log.waitForCount(3)`.
final class EventLog<Event: Sendable>: Sendable {
    private let events = Watched<[Event]>([])

    init() {}

    func append(_ event: Event) { events.update { $0.append(event) } }

    /// Every event so far, first to last.
    var all: [Event] { events.value }
    var count: Int { all.count }

    /// Returns the first `count` events once there are that many.
    @discardableResult
    func waitForCount(_ count: Int, _ what: String = "events") async throws -> [Event] {
        try await events.wait("\(count) \(what)") { $0.count >= count }
        return Array(all.prefix(count))
    }

    /// Returns once the events so far satisfy `isMet`.
    func waitUntil(_ what: String, _ isMet: @escaping @Sendable ([Event]) -> Bool) async throws {
        try await events.wait(what, until: isMet)
    }

    /// Returns once an event satisfies `isMatch`, with that event.
    @discardableResult
    func waitFor(_ what: String, where isMatch: @escaping @Sendable (Event) -> Bool) async throws -> Event {
        try await events.wait(what) { $0.contains(where: isMatch) }
        return all.first(where: isMatch)!
    }
}

/// Waits until `condition` holds, checking after each yield of the cooperative pool: for state that
/// no event announces (a pipeline's queue counts). It never asserts on time; ``hangGuard`` only
/// ends a wait whose condition never comes true.
func eventually(
    _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: @Sendable () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + hangGuard
    var spins = 0
    while !condition() {
        if clock.now > deadline {
            Issue.record("gave up waiting for \(what)", sourceLocation: sourceLocation)
            throw HangGuardExpired(waitingFor: what)
        }
        spins += 1
        // Yield first (the work that makes it true is usually one hop away); then back off a little
        // so a wait for a decode thread does not spin a loaded machine's cores.
        if spins < 100 { await Task.yield() } else { try await Task.sleep(for: .milliseconds(1)) }
    }
}
