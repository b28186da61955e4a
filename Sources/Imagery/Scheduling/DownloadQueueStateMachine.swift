/// Who may start a download now: at most `limit` run at once; the rest wait in
/// one first-in-first-out line per priority, and the highest non-empty line
/// goes next. A waiting entry whose priority changes moves to the back of its
/// new line. A value type: events return what to resume; no I/O, tested directly.
struct DownloadQueueStateMachine<Payload> {
    typealias Priority = ImageRequest.Priority

    struct TicketID: Hashable { let raw: UInt64 }

    private struct Entry {
        let id: TicketID
        let payload: Payload
    }

    let limit: Int
    private(set) var running = 0
    private var lines: [[Entry]] = Array(repeating: [], count: Priority.allCases.count)
    private var priorities: [TicketID: Priority] = [:]
    private var nextID: UInt64 = 0

    init(limit: Int) {
        precondition(limit > 0, "the download limit must be at least 1")
        self.limit = limit
    }

    mutating func makeTicketID() -> TicketID {
        nextID += 1
        return TicketID(raw: nextID)
    }

    enum EnqueueAction {
        /// A slot was free: start now.
        case run(Payload)
        /// Wait until ``finish()`` or a cancellation hands over a slot.
        case wait
    }

    /// An entry asks for a slot.
    mutating func enqueue(_ id: TicketID, priority: Priority, payload: Payload) -> EnqueueAction {
        if running < limit, pendingCount == 0 {
            running += 1
            return .run(payload)
        }
        lines[priority.rawValue].append(Entry(id: id, payload: payload))
        priorities[id] = priority
        return .wait
    }

    /// A running entry is done: returns the next entry to start, if any.
    mutating func finish() -> Payload? {
        precondition(running > 0, "finish without a running entry")
        running -= 1
        return startNext()
    }

    /// A waiting entry gives up: returns its payload (to resume with cancellation), or
    /// `nil` if it was not waiting (it already runs; it will call ``finish()``).
    mutating func cancel(_ id: TicketID) -> Payload? {
        guard let priority = priorities.removeValue(forKey: id),
              let position = lines[priority.rawValue].firstIndex(where: { $0.id == id })
        else { return nil }
        return lines[priority.rawValue].remove(at: position).payload
    }

    /// A waiting entry's priority changed: it moves to its new line.
    mutating func updatePriority(_ id: TicketID, to priority: Priority) {
        guard let old = priorities[id], old != priority,
              let position = lines[old.rawValue].firstIndex(where: { $0.id == id })
        else { return }
        let entry = lines[old.rawValue].remove(at: position)
        lines[priority.rawValue].append(entry)
        priorities[id] = priority
    }

    var pendingCount: Int { priorities.count }

    /// The waiting entries' payloads in the order they would start (for tests).
    var pendingInOrder: [Payload] { lines.reversed().flatMap { $0.map(\.payload) } }

    private mutating func startNext() -> Payload? {
        guard running < limit else { return nil }
        for rawPriority in stride(from: lines.count - 1, through: 0, by: -1) where !lines[rawPriority].isEmpty {
            let entry = lines[rawPriority].removeFirst()
            priorities[entry.id] = nil
            running += 1
            return entry.payload
        }
        return nil
    }
}
