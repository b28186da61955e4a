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
///   later, smaller request never overtakes an earlier one of its stage, with one exception: with
///   decode slots, when the first waiting decode does not fit and a slot is free, a smaller one
///   a few places behind it may go first (backfilling: a core would idle otherwise), at most
///   ``maximumOvertakes`` times per waiter. Sources are admitted
///   up to half the limit (unless nothing is held): the rest stays for the decodes that free
///   them, so a decode waits for a decode, never for sources that wait for it. With decode slots,
///   the sources' share is what a decode of the typical size (``typicalDecode``) in every slot
///   leaves, and a source also leaves room for a decode in every slot that is free: downloaded
///   sources wait for their decode holding their bytes, and if they filled the budget a second
///   decode could never start beside the first (measured: a burst of 20 MP sources kept 1.6 of 2
///   cores busy; with these rules and backfilling, 1.83).
/// - Bytes larger than the whole limit are refused outright; so is any reservation that would
///   make the line longer than its bound.
/// - Under pressure (the process's resident memory is over its ceiling: ``setPressure(_:)``),
///   nothing more is admitted while work of its stage runs: one decode at a time, sources only when
///   nothing is held. What the estimates miss (allocator slack, libraries' own buffers) then stops
///   growing until the work in flight ends.
struct MemoryBudgetStateMachine: Sendable {
    struct Waiter: Sendable, Equatable {
        let id: UInt64
        let bytes: Int
        let stage: MemoryBudget.Stage
        /// How many later decodes were admitted before it (``maximumOvertakes``).
        var overtaken = 0
    }

    /// How far down the line of decodes a smaller one may be admitted before the head that does
    /// not fit, and how often one head may be passed: a free slot then decodes something while
    /// the head waits for memory, and the head is delayed by at most this many (smaller) decodes.
    static let backfillWindow = 4
    static let maximumOvertakes = 2

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
    /// Resident memory is over its ceiling.
    private(set) var underPressure = false
    private var decodes = Queue()
    private var sources = Queue()
    /// The bytes decodes have been reserving (exponentially weighted); before the first, a slot's
    /// share of half the limit (a cold start's downloads take half, as without slots). Measured:
    /// a slot's share of the whole limit (one download at a time until decodes tell their size)
    /// served a burst of large sources no faster, and refused 60–230 of a cold start's first
    /// small requests where this refuses 0–15.
    private(set) var typicalDecode: Int

    init(limit: Int, maximumQueueLength: Int, decodeSlots: Int? = nil) {
        self.limit = limit
        self.maximumQueueLength = maximumQueueLength
        self.decodeSlots = decodeSlots
        typicalDecode = limit / (2 * max(1, decodeSlots ?? 1))
    }

    /// Waiting reservations.
    var queued: Int { decodes.count + sources.count }

    /// Waiting decode reservations.
    var waitingDecodes: Int { decodes.count }

    /// Every waiter, with the decodes that will run before its own (``decodesAhead(of:)``, and its
    /// place in its line).
    func waitersInLine() -> [(id: UInt64, ahead: Int)] {
        let decodesAhead = decodesAhead(of: .decode)
        let sourcesAhead = activeDecodes + decodes.count + activeSources
        return (0..<decodes.count).map { (decodes[$0].id, decodesAhead - decodes.count + $0) }
            + (0..<sources.count).map { (sources[$0].id, sourcesAhead + $0) }
    }

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
        if stage == .decode, ahead < Self.backfillWindow, mayPass(ahead), fits(bytes, .decode) {
            decodes.passOver(ahead)
            hold(bytes, .decode)
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

    /// Charges `bytes` only if they fit under the limit now, nothing waits in line and memory is not
    /// under pressure (work that may be left out, such as a preview, never goes before what waits
    /// nor past the limit); returns whether it charged them. Released as a charge (stage `nil`).
    mutating func chargeIfRoom(_ bytes: Int) -> Bool {
        guard queued == 0, !underPressure, bytes <= limit - used else { return false }
        charge(bytes)
        return true
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

    /// Sets or clears pressure; returns the waiters admitted when it clears.
    mutating func setPressure(_ on: Bool) -> [Waiter] {
        underPressure = on
        return on ? [] : admitWaiting()
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
            if underPressure { return activeDecodes == 0 }
            return used + bytes <= limit || activeDecodes == 0
        case .source:
            if used == 0 { return true }
            if underPressure { return false }
            guard used + bytes <= limit else { return false }
            // Downloads take at most a share: the rest is left to the decodes that free them (half
            // the limit; with slots, what decodes of the typical size in every slot leave). One
            // download at a time is always allowed, so that the next decode has work. (Downloaded
            // sources wait for their decode holding their bytes, but then no source is admitted:
            // a source waits while a decode does.)
            guard sourceBytes > 0 else { return true }
            let share = decodeSlots.map { limit - $0 * typicalDecode } ?? limit / 2
            guard sourceBytes + bytes <= share else { return false }
            // And a free decode slot keeps room for the decode that will fill it.
            let freeSlots = decodeSlots.map { max(0, $0 - activeDecodes) } ?? 0
            return used + bytes + freeSlots * typicalDecode <= limit
        }
    }

    private mutating func hold(_ bytes: Int, _ stage: MemoryBudget.Stage) {
        used += bytes
        peak = max(peak, used)
        switch stage {
        case .decode:
            activeDecodes += 1
            typicalDecode = (typicalDecode * 4 + bytes) / 5
        case .source:
            sourceBytes += bytes
            activeSources += 1
        }
    }

    /// Whether a decode may be admitted before the first `count` waiting decodes: decodes are
    /// bounded by slots and one is free (else nothing is gained; without slots the line is first in,
    /// first out), and none of them has been passed too often.
    private func mayPass(_ count: Int) -> Bool {
        guard let decodeSlots, activeDecodes < decodeSlots else { return false }
        return (0..<count).allSatisfy { decodes[$0].overtaken < Self.maximumOvertakes }
    }

    private mutating func admitWaiting() -> [Waiter] {
        var admitted: [Waiter] = []
        while true {
            if let head = decodes.first {
                if fits(head.bytes, .decode) {
                    decodes.removeFirst()
                    hold(head.bytes, .decode)
                    admitted.append(head)
                    continue
                }
                // The head does not fit: a smaller decode a little further down may (backfilling).
                guard
                    let index = (1..<min(Self.backfillWindow, decodes.count)).first(where: {
                        mayPass($0) && fits(decodes[$0].bytes, .decode)
                    })
                else { break }
                let waiter = decodes[index]
                decodes.passOver(index)
                decodes.remove(at: index)
                hold(waiter.bytes, .decode)
                admitted.append(waiter)
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

        /// The waiter `offset` places from the front.
        subscript(offset: Int) -> Waiter { items[head + offset] }

        /// Counts one overtaking against each of the first `count` waiters.
        mutating func passOver(_ count: Int) {
            for index in head..<(head + count) { items[index].overtaken += 1 }
        }

        mutating func remove(at offset: Int) {
            items.remove(at: head + offset)
        }

        mutating func remove(id: UInt64) -> Waiter? {
            guard let index = items[head...].firstIndex(where: { $0.id == id }) else { return nil }
            return items.remove(at: index)
        }
    }
}
