import Foundation

/// A bound, in bytes, on the memory that work in flight holds: source bytes being downloaded or
/// waiting to be decoded, and decodes with their buffers and results. Work reserves its bytes
/// before the expensive part starts and waits, in a bounded line, while they do not fit; what
/// cannot wait (the line is full, or the wait grew too long) is refused at once with
/// ``MemoryBudgetError/overloaded(retryAfter:)``, and what could never fit with
/// ``MemoryBudgetError/tooLarge(bytes:limit:)``.
///
/// The pipeline charges it (``ImagePipeline/Configuration/memoryBudget``):
/// - **source**: a download reserves the size its response announces (`Content-Length`) before
///   reading the body; bytes past that are charged as they arrive;
/// - **decode**: the source's bytes, then the decoder's estimate from the image header
///   (``DecodeCostEstimating``): pixels at the scale it will decode at, working buffers, result.
///
/// Cache hits never touch it. Decodes are admitted before sources (fetching more while fetched
/// sources wait for a decode would only hold more), and when no decode runs the next one is
/// admitted whatever it costs, so the line always moves; the limit can then be passed by at most
/// one decode's estimate.
///
/// Deadlines, and how long decodes hold their bytes (the pace its forecasts use), are instants of its
/// ``TimeSource`` (`.system` by default; a test's ``ManualTime`` makes a decode last as long as it says).
/// A waiter's timer (``DeadlineTimers``) runs on the continuous clock for what is left, by that source,
/// until its deadline: a deadline already past refuses it at once.
public final class MemoryBudget: Sendable {
    /// What a reservation is for.
    public enum Stage: Sendable, Hashable {
        /// Source bytes (a download).
        case source
        /// A decode (admitted before sources).
        case decode
    }

    public let configuration: Configuration
    /// Where the budget reads the time: deadlines, and how long decodes hold their bytes.
    public let time: TimeSource

    private struct Waiting {
        let continuation: CheckedContinuation<Void, any Error>
        let timer: DeadlineTimers.Token
        let deadline: ContinuousClock.Instant
    }

    private struct State {
        var machine: MemoryBudgetStateMachine
        var waiting: [UInt64: Waiting] = [:]
        var nextID: UInt64 = 0
        var admitted = 0
        var waited = 0
        var refusedOverloaded = 0
        var refusedTooLarge = 0
        /// How long decodes held their bytes, on average (seconds; exponentially weighted).
        var decodeHold: Double?
        /// How many decodes were running when one ended with others waiting (exponentially weighted).
        var runningWhileWaited: Double?
    }

    private let state: Locked<State>

    /// A budget of `configuration`, reading the time from `time` (default ``TimeSource/system``).
    public init(configuration: Configuration, time: TimeSource = .system) {
        self.configuration = configuration
        self.time = time
        state = Locked(
            State(
                machine: MemoryBudgetStateMachine(
                    limit: configuration.limit, maximumQueueLength: configuration.maximumQueueLength,
                    decodeSlots: configuration.maximumConcurrentDecodes
                )))
    }

    /// A budget of `limit` bytes with the default line.
    public convenience init(limit: Int) {
        self.init(configuration: Configuration(limit: limit))
    }

    /// The deadline of a request that starts waiting now: ``Configuration/maximumWait`` from now,
    /// less the request's own work when ``Configuration/leavesTimeForOwnWork``.
    public func admissionDeadline() -> ContinuousClock.Instant {
        guard configuration.leavesTimeForOwnWork, let forecast = state.withLock({ forecast($0) }) else {
            return time.instant() + configuration.maximumWait
        }
        return time.instant() + forecast.admissionWindow(within: configuration.maximumWait)
    }

    /// Reserves `bytes` for `stage`, waiting in line while they do not fit, until `deadline`
    /// (default: ``Configuration/maximumWait`` from now).
    /// - Returns: The reservation: release it when the bytes are no longer held (or let it go).
    /// - Throws: ``MemoryBudgetError``, or `CancellationError` when the calling task is cancelled while it waits.
    public func reserve(_ bytes: Int, for stage: Stage, deadline: ContinuousClock.Instant? = nil) async throws
        -> Reservation
    {
        let deadline = deadline ?? admissionDeadline()
        let bytes = max(0, bytes)
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case admitted, enqueued
                    case refused(MemoryBudgetError)
                    case cancelled
                }
                let outcome: Outcome = state.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    // Refused now rather than at its deadline when the decodes ahead of it will, at
                    // the pace decodes have been going, take longer than it may wait: it would
                    // hold its bytes (a source downloaded for nothing) and a client for nothing.
                    if let refusal = lateRefusal(for: stage, &state, alsoAhead: 0, deadline: deadline) {
                        return .refused(refusal)
                    }
                    switch state.machine.reserve(id: id, bytes: bytes, stage: stage) {
                    case .admitted:
                        state.admitted += 1
                        return .admitted
                    case .refusedTooLarge:
                        state.refusedTooLarge += 1
                        return .refused(.tooLarge(bytes: bytes, limit: configuration.limit))
                    case .refusedQueueFull:
                        state.refusedOverloaded += 1
                        return .refused(.overloaded(retryAfter: retryAfter(state)))
                    case .enqueued:
                        let remaining = time.instant().duration(to: deadline)
                        let timer = DeadlineTimers.shared.schedule(after: remaining) { [weak self] in
                            self?.abandon(id, timedOut: true)
                        }
                        // Resumed by a release that admits it, or by abandon (cancelled, timed out).
                        state.waiting[id] = Waiting(continuation: continuation, timer: timer, deadline: deadline)
                        return .enqueued
                    }
                }
                switch outcome {
                case .admitted: continuation.resume()
                case .enqueued: break
                case .refused(let error): continuation.resume(throwing: error)
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            abandon(id, timedOut: false)
        }
        return Reservation(budget: self, bytes: bytes, stage: stage)
    }

    /// Refuses at once a request for a new source that could not be decoded by `deadline`: the
    /// decodes ahead of it are those this budget knows of (``reserve(_:for:deadline:)``'s rule)
    /// and `alsoAhead` more (requests still waiting for a download slot, each a decode to come).
    /// Called before a request takes its place in the download line, so that a burst's requests
    /// that cannot be served in time are answered now, not after their turn for a slot and a round
    /// trip to the origin.
    /// - Throws: ``MemoryBudgetError/overloaded(retryAfter:)``, counted with the budget's refusals.
    public func refuseIfLate(alsoAhead: Int, deadline: ContinuousClock.Instant) throws(MemoryBudgetError) {
        if let refusal = state.withLock({ lateRefusal(for: .source, &$0, alsoAhead: alsoAhead, deadline: deadline) }) {
            throw refusal
        }
    }

    /// The refusal (counted) of a reservation of `stage` that the decodes ahead of it, and
    /// `alsoAhead` more, cannot reach by `deadline`; `nil` when they can or nothing predicts it.
    /// Nothing ahead (no wait predicted) is never late, even past `deadline`: the request's own
    /// download or a busy machine used its time, and refusing it now would only waste that work
    /// (CI saw a lone request on an idle server answered 503 while the suite's start loaded the machine).
    private func lateRefusal(for stage: Stage, _ state: inout State, alsoAhead: Int, deadline: ContinuousClock.Instant)
        -> MemoryBudgetError?
    {
        guard let forecast = forecast(state) else { return nil }
        let ahead = state.machine.decodesAhead(of: stage) + alsoAhead
        guard forecast.isLate(ahead: ahead, window: time.instant().duration(to: deadline)) else { return nil }
        state.refusedOverloaded += 1
        return .overloaded(retryAfter: Self.seconds(forecast.wait(ahead: ahead)))
    }

    /// The refusal of a request that waited too long outside this budget's own line (for a
    /// download slot), counted with the budget's refusals.
    public func overloaded() -> MemoryBudgetError {
        state.withLock { state in
            state.refusedOverloaded += 1
            return .overloaded(retryAfter: retryAfter(state))
        }
    }

    /// Charges `bytes` that are held already (or must be: no waiting); never refuses.
    /// - Returns: The charge: release it when the bytes are no longer held (or let it go).
    public func charge(_ bytes: Int) -> Reservation {
        let bytes = max(0, bytes)
        state.withLock { $0.machine.charge(bytes) }
        return Reservation(budget: self, bytes: bytes, stage: nil)
    }

    /// Charges `bytes` for work that may be left out (a preview) only if they fit now: under the
    /// limit, with nothing waiting in line and no resident pressure; never waits, never counts a refusal.
    /// - Returns: The charge (release it as ``charge(_:)``'s), or `nil`: leave the work out.
    func chargeIfRoom(_ bytes: Int) -> Reservation? {
        let bytes = max(0, bytes)
        guard state.withLock({ $0.machine.chargeIfRoom(bytes) }) else { return nil }
        return Reservation(budget: self, bytes: bytes, stage: nil)
    }

    /// The budget's state now.
    public var snapshot: Snapshot {
        state.withLock { state in
            Snapshot(
                limit: configuration.limit, used: state.machine.used, peak: state.machine.peak,
                queued: state.machine.queued,
                admitted: state.admitted, waited: state.waited, refusedOverloaded: state.refusedOverloaded,
                refusedTooLarge: state.refusedTooLarge, underPressure: state.machine.underPressure
            )
        }
    }

    /// Holds admission back while the process's resident memory is over its ceiling (`true`): one
    /// decode at a time, no new download while anything is held; `false` lets the line move again.
    /// The budget counts what work announces and estimates; resident memory is what it costs (the
    /// allocator's slack, libraries' buffers), measured by whoever calls this (the server, 4 times a
    /// second).
    public func setResidentPressure(_ on: Bool) {
        let admitted: [Waiting] = state.withLock { state in
            guard state.machine.underPressure != on else { return [] }
            return takeAdmitted(state.machine.setPressure(on), &state)
        }
        for waiter in admitted {
            DeadlineTimers.shared.cancel(waiter.timer)
            waiter.continuation.resume()
        }
    }

    // MARK: - Internal

    func add(_ bytes: Int) {
        state.withLock { $0.machine.charge(bytes) }
    }

    func release(_ bytes: Int, reserved: Int, stage: Stage?, held: Duration) {
        var late: [UInt64] = []
        let admitted: [Waiting] = state.withLock { state in
            if stage == .decode {
                let seconds = Double(held.components.seconds) + Double(held.components.attoseconds) / 1e18
                state.decodeHold = state.decodeHold.map { $0 * 0.8 + seconds * 0.2 } ?? seconds
                if state.machine.waitingDecodes > 0 {
                    let running = Double(state.machine.activeDecodes)
                    state.runningWhileWaited = state.runningWhileWaited.map { $0 * 0.8 + running * 0.2 } ?? running
                }
            }
            let admitted = takeAdmitted(state.machine.release(bytes, reserved: reserved, stage: stage), &state)
            if stage == .decode { late = lateWaiters(state) }
            return admitted
        }
        for waiter in admitted {
            DeadlineTimers.shared.cancel(waiter.timer)
            waiter.continuation.resume()
        }
        // The pace measured anew: who can no longer be served in time is told now, not at its deadline.
        for id in late { abandon(id, timedOut: true) }
    }

    /// The waiters the pace measured now says will not be admitted by their deadline (their place in
    /// line is what is ahead of them). A cold start lets a burst wait on a guessed pace; measured on
    /// a burst of 64 new 20 MP PNGs at 2048 px, 4–6 of them waited 21–22 s and were then refused.
    private func lateWaiters(_ state: State) -> [UInt64] {
        guard let forecast = forecast(state) else { return [] }
        return forecast.late(state.machine.waitersInLine(), now: time.instant()) { state.waiting[$0]?.deadline }
    }

    /// A waiter leaves the line: cancelled, or waited too long.
    private func abandon(_ id: UInt64, timedOut: Bool) {
        let (left, admitted, retry): (Waiting?, [Waiting], Int) = state.withLock { state in
            let (removed, admitted) = state.machine.remove(id: id)
            guard removed != nil, let waiting = state.waiting.removeValue(forKey: id) else { return (nil, [], 0) }
            if timedOut { state.refusedOverloaded += 1 }
            return (waiting, takeAdmitted(admitted, &state), retryAfter(state))
        }
        for waiter in admitted {
            DeadlineTimers.shared.cancel(waiter.timer)
            waiter.continuation.resume()
        }
        guard let left else { return }
        DeadlineTimers.shared.cancel(left.timer)
        left.continuation.resume(
            throwing: timedOut ? MemoryBudgetError.overloaded(retryAfter: retry) : CancellationError())
    }

    private func takeAdmitted(_ waiters: [MemoryBudgetStateMachine.Waiter], _ state: inout State) -> [Waiting] {
        waiters.compactMap { waiter in
            state.admitted += 1
            state.waited += 1
            return state.waiting.removeValue(forKey: waiter.id)
        }
    }

    /// The pace decodes have been going at: how long they have held their slot
    /// (``Configuration/initialDecodeHold`` until one has finished: a burst's first seconds must not
    /// download what cannot be decoded in time); `nil` when decodes are not bounded by slots (memory
    /// alone then decides, and the line's deadline holds). The decodes ahead of a reservation are
    /// those running, those waiting, and for a source every source before it.
    private func forecast(_ state: State) -> AdmissionForecast? {
        guard let slots = configuration.maximumConcurrentDecodes, slots > 0 else { return nil }
        let initial = configuration.initialDecodeHold.components
        return AdmissionForecast(
            slots: slots, decodeHold: state.decodeHold ?? Double(initial.seconds) + Double(initial.attoseconds) / 1e18,
            running: state.runningWhileWaited
        )
    }

    private static func seconds(_ duration: Duration) -> Int {
        min(60, max(1, Int(duration.components.seconds) + (duration.components.attoseconds > 0 ? 1 : 0)))
    }

    /// Seconds after which a refused request may well be admitted: the line ahead, served at the
    /// pace decodes have been holding their bytes, by the decodes running in parallel (1...60).
    private func retryAfter(_ state: State) -> Int {
        guard let hold = state.decodeHold else { return max(1, Int(configuration.maximumWait.components.seconds)) }
        let drain = hold * Double(state.machine.queued + 1) / Double(max(1, state.machine.activeDecodes))
        return min(60, max(1, Int(drain.rounded(.up))))
    }
}
