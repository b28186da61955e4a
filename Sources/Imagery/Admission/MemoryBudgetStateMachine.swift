/// The bookkeeping of a ``MemoryBudget``, with no locks, clocks or tasks (tested on its own).
///
/// - A reservation is admitted when its bytes fit under the limit, or when the budget holds
///   nothing, or (for a decode) when no decode holds any: so one request at a time always
///   makes progress, and the limit is exceeded by at most one decode's estimate (and by what
///   admitted work charges past its reservation). A decode also
///   needs one of the decode slots, when they are bounded (the decoder's threads: an admitted
///   decode then never waits for a thread, so all of its wait is in this line, and timed).
/// - Waiters are served first in, first out, decodes before sources: a source waits while a
///   decode does (the sources already held must be decoded before more are fetched), and a
///   later, smaller request never overtakes an earlier one of its stage. Sources are admitted
///   up to half the limit (unless nothing is held): the rest stays for the decodes that free
///   them, so a decode waits for a decode, never for sources that wait for it.
/// - Bytes larger than the whole limit are refused outright; so is any reservation that would
///   make the line longer than its bound.
struct MemoryBudgetStateMachine: Sendable {
    struct Waiter: Sendable, Equatable {
        let id: UInt64
        let bytes: Int
        let stage: MemoryBudget.Stage
    }

    enum ReserveAction: Sendable, Equatable {
        case admitted
        case enqueued
        case refusedTooLarge
        case refusedQueueFull
    }

    let limit: Int
    let maximumQueueLength: Int
    /// The most decodes admitted at once (`nil`: no bound besides memory).
    let decodeSlots: Int?
    /// Bytes held by admitted reservations and charges.
    private(set) var used = 0
    /// The most bytes ever held at once.
    private(set) var peak = 0
    /// Admitted decode reservations not yet released.
    private(set) var activeDecodes = 0
    /// Bytes of admitted source reservations not yet released.
    private(set) var sourceBytes = 0
    /// Admitted source reservations not yet released (each a decode to come).
    private(set) var activeSources = 0
    private var decodes = Queue()
    private var sources = Queue()

    init(limit: Int, maximumQueueLength: Int, decodeSlots: Int? = nil) {
        self.limit = limit
        self.maximumQueueLength = maximumQueueLength
        self.decodeSlots = decodeSlots
    }

    /// Waiting reservations.
    var queued: Int { decodes.count + sources.count }

    /// Decodes that will run before one more of `stage` could: running and waiting decodes, and
    /// for a source also the sources admitted or waiting (each is a decode to come).
    func decodesAhead(of stage: MemoryBudget.Stage) -> Int {
        activeDecodes + decodes.count + (stage == .source ? activeSources + sources.count : 0)
    }

    mutating func reserve(id: UInt64, bytes: Int, stage: MemoryBudget.Stage) -> ReserveAction {
        guard bytes <= limit else { return .refusedTooLarge }
        let ahead = stage == .decode ? decodes.count : queued
        if ahead == 0, fits(bytes, stage) {
            hold(bytes, stage)
            return .admitted
        }
        guard queued < maximumQueueLength else { return .refusedQueueFull }
        switch stage {
        case .decode: decodes.append(Waiter(id: id, bytes: bytes, stage: stage))
        case .source: sources.append(Waiter(id: id, bytes: bytes, stage: stage))
        }
        return .enqueued
    }

    /// Adds bytes already in use (they arrived, or were needed, past a reservation); never waits.
    mutating func charge(_ bytes: Int) {
        used += bytes
        peak = max(peak, used)
    }

    /// Gives back `bytes` held for `stage` (`nil`: a charge); returns the waiters now admitted.
    /// - Parameter reserved: The bytes the reservation was admitted with (a source's count toward
    ///   the sources' half; what was charged on top does not).
    mutating func release(_ bytes: Int, reserved: Int, stage: MemoryBudget.Stage?) -> [Waiter] {
        used -= bytes
        switch stage {
        case .decode?: activeDecodes -= 1
        case .source?:
            sourceBytes -= reserved
            activeSources -= 1
        case nil: break
        }
        return admitWaiting()
    }

    /// Takes waiter `id` out of the line (cancelled or timed out); returns it if it was waiting,
    /// and the waiters its leaving admits.
    mutating func remove(id: UInt64) -> (removed: Waiter?, admitted: [Waiter]) {
        guard let removed = decodes.remove(id: id) ?? sources.remove(id: id) else { return (nil, []) }
        return (removed, admitWaiting())
    }

    private func fits(_ bytes: Int, _ stage: MemoryBudget.Stage) -> Bool {
        switch stage {
        case .decode:
            if let decodeSlots, activeDecodes >= decodeSlots { return false }
            return used + bytes <= limit || activeDecodes == 0
        case .source:
            // Sources take at most half: the other half is left to the decodes that free them.
            return used == 0 || (used + bytes <= limit && sourceBytes + bytes <= limit / 2)
        }
    }

    private mutating func hold(_ bytes: Int, _ stage: MemoryBudget.Stage) {
        used += bytes
        peak = max(peak, used)
        switch stage {
        case .decode: activeDecodes += 1
        case .source:
            sourceBytes += bytes
            activeSources += 1
        }
    }

    private mutating func admitWaiting() -> [Waiter] {
        var admitted: [Waiter] = []
        while true {
            if let head = decodes.first {
                guard fits(head.bytes, .decode) else { break }
                decodes.removeFirst()
                hold(head.bytes, .decode)
                admitted.append(head)
            } else if let head = sources.first, fits(head.bytes, .source) {
                sources.removeFirst()
                hold(head.bytes, .source)
                admitted.append(head)
            } else {
                break
            }
        }
        return admitted
    }

    /// First in, first out, with removal from the middle (a cancelled waiter). Amortised O(1)
    /// at the ends; removal is O(n) over a line that is bounded and short.
    private struct Queue: Sendable {
        private var items: [Waiter] = []
        private var head = 0

        var count: Int { items.count - head }
        var first: Waiter? { head < items.count ? items[head] : nil }

        mutating func append(_ waiter: Waiter) { items.append(waiter) }

        mutating func removeFirst() {
            head += 1
            if head > 32, head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
        }

        mutating func remove(id: UInt64) -> Waiter? {
            guard let index = items[head...].firstIndex(where: { $0.id == id }) else { return nil }
            return items.remove(at: index)
        }
    }
}
