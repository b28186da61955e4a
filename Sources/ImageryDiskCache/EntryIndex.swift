import Imagery

/// The disk cache's entries in memory, in the order they are evicted: GreedyDual-Size
/// (Cao and Irani, 1997) with a cost of 1 per entry, or plain least-recently-used.
///
/// Each entry has a priority, set when it is stored or read: the inflation value `L` plus
/// `2^32 / size` (size-aware) or plus 1 (LRU). Eviction takes the lowest priority and raises `L`
/// to it, so an entry not read for a while sinks below new ones whatever its size, and among
/// entries of one age the large go first: one evicted original of 1.4 MB makes room for seventy
/// 20 KB responses, and a lookup hits as often whatever the size of what it finds. Equal
/// priorities go in the order entries were last used (`sequence`), so with entries of one size
/// either policy is LRU. Measured on a full 8 MB filesystem (`DiskFaultTests`): LRU kept no
/// response of a repeated pass of 80; size-aware kept all of them.
///
/// Not thread-safe: the cache uses it under its lock. Lookups are O(1), stores, reads and evictions
/// O(log n) (a binary heap of slot numbers; slots are reused).
struct EntryIndex {
    typealias Policy = DiskCache.Eviction

    struct Place: Sendable, Equatable {
        /// Lower goes first.
        var priority: Int64
        /// When last used: breaks ties between equal priorities.
        var sequence: Int64

        static func < (lhs: Place, rhs: Place) -> Bool { (lhs.priority, lhs.sequence) < (rhs.priority, rhs.sequence) }
    }

    private struct Slot {
        var entry: DiskCache.IndexEntry
        var place: Place
        var heapIndex: Int
        /// Used since the last ``takeTouched()`` (its slot is in `touchedSlots`).
        var touched = false
    }

    let policy: Policy
    /// The most bytes held; storing past it evicts. The cache lowers it when the filesystem is full.
    var costLimit: Int
    let countLimit: Int
    private(set) var totalCost = 0
    /// GreedyDual's `L`: the priority of the last entry evicted.
    private(set) var inflation: Int64 = 0
    private var sequence: Int64 = 0
    private var slots: [Slot?] = []
    private var freeSlots: [Int] = []
    private var slotsByKey: [String: Int] = [:]
    private var heap: [Int] = []
    /// The slots used since the last ``takeTouched()``, each once (a slot emptied or reused since may be here too).
    private var touchedSlots: [Int] = []

    init(policy: Policy, costLimit: Int, countLimit: Int) {
        (self.policy, self.costLimit, self.countLimit) = (policy, costLimit, countLimit)
    }

    var count: Int { slotsByKey.count }

    subscript(key: String) -> DiskCache.IndexEntry? {
        slotsByKey[key].flatMap { slots[$0]?.entry }
    }

    /// Every entry with its place, in no order.
    var all: [(entry: DiskCache.IndexEntry, place: Place)] {
        slots.compactMap { $0.map { ($0.entry, $0.place) } }
    }

    /// The place a use of an entry of `size` bytes gets now.
    private mutating func nextPlace(size: Int) -> Place {
        sequence += 1
        return Place(priority: inflation &+ credit(size: size), sequence: sequence)
    }

    private func credit(size: Int) -> Int64 {
        switch policy {
        case .leastRecentlyUsed: 1
        case .greedyDualSize: max(1, Int64(1 << 32) / Int64(max(size, 1)))
        }
    }

    /// Makes room for a new entry of `size` bytes (replacing `key`'s, if any) within `limit` by
    /// evicting, lowest first, only entries that rank below where the new one would: one large
    /// entry does not push out many small ones that are read as recently (GreedyDual-Size with
    /// admission). With LRU a new entry ranks above all, so room is always made.
    /// - Returns: The entries evicted, or nil when the entry is not to be stored (nothing evicted).
    mutating func makeRoom(for size: Int, replacing key: String, within limit: Int) -> [DiskCache.IndexEntry]? {
        guard size <= limit else { return nil }
        let rank = Place(priority: inflation &+ credit(size: size), sequence: sequence + 1)
        let replaced = self[key]?.size ?? 0
        var taken: [(entry: DiskCache.IndexEntry, place: Place)] = []
        var freed = 0
        while totalCost + size - replaced > limit, let lowest = heap.first, let slot = slots[lowest] {
            guard slot.place < rank, slot.entry.key != key else {
                for (entry, place) in taken { _ = insert(entry, at: place) }  // put back as they were
                return nil
            }
            taken.append((slot.entry, slot.place))
            freed += slot.entry.size
            removeValue(for: slot.entry.key)
        }
        if let last = taken.last { inflation = max(inflation, last.place.priority) }
        return taken.map(\.entry)
    }

    /// `key`'s entry when `accept` takes it, recorded as used: it moves up, and ``takeTouched()``
    /// reports its new place. One lookup of the key.
    /// - Returns: The entry, or nil if it is not held or `accept` refused it (then it is not moved).
    mutating func use(_ key: String, if accept: (DiskCache.IndexEntry) -> Bool) -> DiskCache.IndexEntry? {
        guard let slot = slotsByKey[key], let entry = slots[slot]?.entry, accept(entry) else { return nil }
        slots[slot]!.place = nextPlace(size: entry.size)
        if !slots[slot]!.touched {
            slots[slot]!.touched = true
            touchedSlots.append(slot)
        }
        siftDown(slots[slot]!.heapIndex)  // a place only ever rises
        return entry
    }

    /// How many entries were used since the last ``takeTouched()`` (at most).
    var touchedCount: Int { touchedSlots.count }

    /// The places of the entries used since the last call, each once, for the index on disk.
    mutating func takeTouched() -> [(key: String, order: Int64, priority: Int64)] {
        var touches: [(key: String, order: Int64, priority: Int64)] = []
        touches.reserveCapacity(touchedSlots.count)
        for slot in touchedSlots {
            guard let held = slots[slot], held.touched else { continue }  // emptied, or reused and not used since
            slots[slot]!.touched = false
            touches.append((held.entry.key, held.place.sequence, held.place.priority))
        }
        touchedSlots.removeAll(keepingCapacity: true)
        return touches
    }

    /// Stores `entry` (replacing the key's entry), then evicts the lowest until within the limits.
    /// - Parameter place: The place it had (when loaded from the index); default: a new use.
    /// - Returns: The replaced and evicted entries, and the entry's place.
    mutating func insert(_ entry: DiskCache.IndexEntry, at place: Place? = nil) -> (
        removed: [DiskCache.IndexEntry], place: Place
    ) {
        var removed = removeValue(for: entry.key).map { [$0] } ?? []
        let place = place ?? nextPlace(size: entry.size)
        sequence = max(sequence, place.sequence)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = slots.count
            slots.append(nil)
        }
        slots[slot] = Slot(entry: entry, place: place, heapIndex: heap.count)
        heap.append(slot)
        siftUp(heap.count - 1)
        slotsByKey[entry.key] = slot
        totalCost += entry.size
        removed += evict { $0.totalCost > $0.costLimit || $0.count > $0.countLimit }
        return (removed, place)
    }

    /// Replaces the metadata of `key`'s entry; its place is kept.
    mutating func update(_ metadata: CacheMetadata, for key: String) -> DiskCache.IndexEntry? {
        guard let slot = slotsByKey[key] else { return nil }
        slots[slot]!.entry.metadata = metadata
        slots[slot]!.entry.revision &+= 1
        return slots[slot]!.entry
    }

    @discardableResult
    mutating func removeValue(for key: String) -> DiskCache.IndexEntry? {
        guard let slot = slotsByKey.removeValue(forKey: key), let removed = slots[slot] else { return nil }
        let last = heap.count - 1
        if removed.heapIndex != last {
            move(heap[last], to: removed.heapIndex)
            heap.removeLast()
            siftUp(removed.heapIndex)
            siftDown(removed.heapIndex)
        } else {
            heap.removeLast()
        }
        slots[slot] = nil
        freeSlots.append(slot)
        totalCost -= removed.entry.size
        return removed.entry
    }

    mutating func removeAll() {
        (slots, freeSlots, slotsByKey, heap, totalCost) = ([], [], [:], [], 0)
        touchedSlots.removeAll()
    }

    /// Evicts the lowest entries until at most `cost` bytes are held.
    mutating func trim(toCost cost: Int) -> [DiskCache.IndexEntry] {
        evict { $0.totalCost > cost }
    }

    /// Starts the inflation at the lowest priority held (after loading an index, so new entries
    /// do not start below everything an earlier run kept).
    mutating func settleInflation() {
        if let lowest = heap.first { inflation = max(inflation, slots[lowest]!.place.priority) }
    }

    private mutating func evict(while overLimit: (Self) -> Bool) -> [DiskCache.IndexEntry] {
        var evicted: [DiskCache.IndexEntry] = []
        while overLimit(self), let lowest = heap.first, let slot = slots[lowest] {
            inflation = max(inflation, slot.place.priority)
            evicted.append(removeValue(for: slot.entry.key)!)
        }
        return evicted
    }

    // MARK: - Heap

    private mutating func move(_ slot: Int, to index: Int) {
        heap[index] = slot
        slots[slot]!.heapIndex = index
    }

    private func place(at index: Int) -> Place { slots[heap[index]]!.place }

    private mutating func siftUp(_ start: Int) {
        var index = start
        let slot = heap[index]
        let place = slots[slot]!.place
        while index > 0 {
            let parent = (index - 1) / 2
            guard place < self.place(at: parent) else { break }
            move(heap[parent], to: index)
            index = parent
        }
        move(slot, to: index)
    }

    private mutating func siftDown(_ start: Int) {
        var index = start
        let slot = heap[index]
        let place = slots[slot]!.place
        while true {
            let left = 2 * index + 1
            guard left < heap.count else { break }
            let right = left + 1
            let child = right < heap.count && self.place(at: right) < self.place(at: left) ? right : left
            guard self.place(at: child) < place else { break }
            move(heap[child], to: index)
            index = child
        }
        move(slot, to: index)
    }
}
