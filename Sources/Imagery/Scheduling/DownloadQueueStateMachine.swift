/// Who may start a download now, in two lanes (``Lane``):
///
/// - **urgent** (priority ``ImageRequest/Priority/normal`` and above: what is on screen) runs up
///   to `urgentLimit` at once, highest priority first, equal ones in arrival order;
/// - **prefetch** (``ImageRequest/Priority/low`` and below) runs up to `prefetchLimit` at once,
///   and starts only while no urgent entry waits or runs: urgent work has the network to itself.
///
/// An entry's lane follows its priority. A waiting entry that changes priority moves to the back
/// of its new line. A running entry is never stopped: raised, it counts as urgent (and pauses the
/// prefetch lane); lowered ("no longer urgent"), it counts as prefetch work and finishes its
/// download. Downloads running in all stay within `urgentLimit + prefetchLimit`, so entries
/// lowered while they run (a fling through a list) cannot pile up beyond that.
///
/// A value type: events return what to resume; no I/O, tested directly. Every operation is O(1)
/// (amortised): lines drop cancelled and moved entries lazily.
struct DownloadQueueStateMachine<Payload> {
    typealias Priority = ImageRequest.Priority

    struct TicketID: Hashable { let raw: UInt64 }

    /// Where an entry runs: on-screen work, or work that waits for it.
    enum Lane: Sendable, Equatable {
        case urgent
        case prefetch

        init(_ priority: Priority) {
            self = priority >= .normal ? .urgent : .prefetch
        }
    }

    private struct Waiting {
        let payload: Payload
        var priority: Priority
        /// Which of the entry's places in the lines is the live one (a move leaves the old one behind).
        var generation: UInt32
    }

    let urgentLimit: Int
    let prefetchLimit: Int
    private(set) var runningUrgent = 0
    private(set) var runningPrefetch = 0
    /// The lane each running entry counts in.
    private var runningLanes: [TicketID: Lane] = [:]
    private var waiting: [TicketID: Waiting] = [:]
    /// One first-in-first-out line per priority, of (entry, generation); stale places are skipped.
    private var lines: [FIFOLine<Place>] = Array(repeating: FIFOLine(), count: Priority.allCases.count)
    /// Live waiting entries per lane.
    private var waitingUrgent = 0
    private var nextID: UInt64 = 0

    /// - Parameters:
    ///   - limit: The most urgent downloads at once.
    ///   - prefetchLimit: The most prefetch downloads at once (while nothing urgent waits or runs).
    init(limit: Int, prefetchLimit: Int = 1) {
        precondition(limit > 0, "the download limit must be at least 1")
        precondition(prefetchLimit > 0, "the prefetch limit must be at least 1")
        self.urgentLimit = limit
        self.prefetchLimit = prefetchLimit
    }

    mutating func makeTicketID() -> TicketID {
        nextID += 1
        return TicketID(raw: nextID)
    }

    /// Downloads running now, in both lanes.
    var running: Int { runningUrgent + runningPrefetch }

    /// Entries waiting for a slot, in both lanes.
    var pendingCount: Int { waiting.count }

    enum EnqueueAction {
        /// A slot was free: start now.
        case run(Payload)
        /// Wait until an event hands over a slot.
        case wait
    }

    /// An entry asks for a slot.
    mutating func enqueue(_ id: TicketID, priority: Priority, payload: Payload) -> EnqueueAction {
        let lane = Lane(priority)
        if mayStart(lane), !hasWaiting(at: lane) {
            startRunning(id, in: lane)
            return .run(payload)
        }
        waiting[id] = Waiting(payload: payload, priority: priority, generation: 0)
        lines[priority.rawValue].append(Place(id: id, generation: 0))
        if lane == .urgent { waitingUrgent += 1 }
        return .wait
    }

    /// A running entry is done: returns the entries to start now.
    mutating func finish(_ id: TicketID) -> [Payload] {
        guard let lane = runningLanes.removeValue(forKey: id) else {
            preconditionFailure("finish without a running entry")
        }
        switch lane {
        case .urgent: runningUrgent -= 1
        case .prefetch: runningPrefetch -= 1
        }
        return startWaiting()
    }

    /// A waiting entry gives up: returns its payload (to resume with cancellation), `nil` if it was
    /// not waiting (it already runs; it will call ``finish(_:)``), and the entries to start now (the
    /// last urgent entry leaving resumes the prefetch lane).
    mutating func cancel(_ id: TicketID) -> (payload: Payload?, started: [Payload]) {
        guard let entry = waiting.removeValue(forKey: id) else { return (nil, []) }
        if Lane(entry.priority) == .urgent { waitingUrgent -= 1 }
        compactIfSparse()
        return (entry.payload, startWaiting())
    }

    /// An entry's priority changed: a waiting one moves to its new line, a running one to its new
    /// lane's count. Returns the entries to start now (lowering a running entry can free an urgent
    /// slot; lowering the last urgent entry resumes the prefetch lane).
    mutating func updatePriority(_ id: TicketID, to priority: Priority) -> [Payload] {
        let lane = Lane(priority)
        if let old = runningLanes[id] {
            guard old != lane else { return [] }
            runningLanes[id] = lane
            switch lane {
            case .urgent: (runningUrgent, runningPrefetch) = (runningUrgent + 1, runningPrefetch - 1)
            case .prefetch: (runningUrgent, runningPrefetch) = (runningUrgent - 1, runningPrefetch + 1)
            }
            return startWaiting()
        }
        guard var entry = waiting[id], entry.priority != priority else { return [] }
        let oldLane = Lane(entry.priority)
        entry.priority = priority
        entry.generation &+= 1
        waiting[id] = entry
        lines[priority.rawValue].append(Place(id: id, generation: entry.generation))
        if oldLane != lane { waitingUrgent += lane == .urgent ? 1 : -1 }
        compactIfSparse()
        return startWaiting()
    }

    /// The lane a running entry counts in; `nil` when it does not run.
    func lane(ofRunning id: TicketID) -> Lane? { runningLanes[id] }

    /// The waiting entries' payloads in the order they would start if slots were free (for tests).
    var pendingInOrder: [Payload] { pendingEntriesInOrder.map(\.payload) }

    /// The waiting entries' priorities in the order they would start if slots were free (for tests).
    var pendingPrioritiesInOrder: [Priority] { pendingEntriesInOrder.map(\.priority) }

    private var pendingEntriesInOrder: [Waiting] {
        Priority.allCases.reversed().flatMap { priority in
            lines[priority.rawValue].live.compactMap { place in
                guard let entry = waiting[place.id], entry.priority == priority, entry.generation == place.generation
                else { return nil }
                return entry
            }
        }
    }

    // MARK: - Starting

    private func mayStart(_ lane: Lane) -> Bool {
        guard running < urgentLimit + prefetchLimit else { return false }
        switch lane {
        case .urgent: return runningUrgent < urgentLimit
        case .prefetch: return runningPrefetch < prefetchLimit && runningUrgent == 0 && waitingUrgent == 0
        }
    }

    private func hasWaiting(at lane: Lane) -> Bool {
        lane == .urgent ? waitingUrgent > 0 : waiting.count > waitingUrgent
    }

    private mutating func startRunning(_ id: TicketID, in lane: Lane) {
        runningLanes[id] = lane
        switch lane {
        case .urgent: runningUrgent += 1
        case .prefetch: runningPrefetch += 1
        }
    }

    /// Starts waiting entries while their lanes allow, highest priority first.
    private mutating func startWaiting() -> [Payload] {
        var started: [Payload] = []
        for priority in Priority.allCases.reversed() {
            let lane = Lane(priority)
            while mayStart(lane), let place = popLive(priority) {
                let entry = waiting.removeValue(forKey: place.id)!
                if lane == .urgent { waitingUrgent -= 1 }
                startRunning(place.id, in: lane)
                started.append(entry.payload)
            }
        }
        return started
    }

    /// The first live place of `priority`'s line, removed; stale places before it are dropped.
    private mutating func popLive(_ priority: Priority) -> Place? {
        while let place = lines[priority.rawValue].popFirst() {
            if let entry = waiting[place.id], entry.priority == priority, entry.generation == place.generation {
                return place
            }
        }
        return nil
    }

    /// Drops stale places once they outnumber the live ones, so that lines hold O(live) places.
    private mutating func compactIfSparse() {
        let places = lines.reduce(0) { $0 + $1.count }
        guard places > 64, places > 2 * waiting.count else { return }
        for index in lines.indices {
            let priority = Priority(rawValue: index)!
            lines[index].keep { place in
                guard let entry = waiting[place.id] else { return false }
                return entry.priority == priority && entry.generation == place.generation
            }
        }
    }

    private struct Place {
        let id: TicketID
        let generation: UInt32
    }
}
