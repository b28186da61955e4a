import Foundation

/// The state behind ``MemoryCache``: a dictionary of indices into an array of
/// nodes that form a doubly linked list, most recently used at `head`.
/// A value type, so the cache can keep it behind a lock.
///
/// Everything is `@usableFromInline`/`@inlinable` so that a client's
/// `MemoryCache<Key, Value>` is specialised for its types (several times
/// faster than generic dispatch across the module boundary).
@usableFromInline
struct LRUStorage<Key: Hashable, Value> {
    @usableFromInline
    struct Node {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// Nanoseconds (``LRUStorage/nanoseconds(_:)``) after which the entry is gone; `Int64.max`: never.
        /// (A plain integer keeps `Node` a fixed-layout type: copies stay cheap.)
        @usableFromInline var expiry: Int64
        @usableFromInline var previous: Int
        @usableFromInline var next: Int

        @inlinable
        init(key: Key?, value: Value?, cost: Int, expiry: Int64, previous: Int, next: Int) {
            self.key = key
            self.value = value
            self.cost = cost
            self.expiry = expiry
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline static var none: Int { -1 }

    /// `instant` as monotonic nanoseconds since the first cache was made, for expiry times (negative
    /// for an instant before that: a ``ManualTime`` made earlier).
    @usableFromInline static func nanoseconds(_ instant: ContinuousClock.Instant) -> Int64 {
        let elapsed = instant - clockStart
        let (seconds, attoseconds) = elapsed.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    @usableFromInline var index: [Key: Int] = [:]
    @usableFromInline var nodes: [Node] = []
    @usableFromInline var free: [Int] = []
    @usableFromInline var head = LRUStorage.none
    @usableFromInline var tail = LRUStorage.none
    @usableFromInline var totalCost = 0
    @usableFromInline var costLimit: Int
    @usableFromInline var countLimit: Int
    /// Time to live in nanoseconds, or `nil`.
    @usableFromInline let ttl: Int64?

    @inlinable
    init(costLimit: Int, countLimit: Int, ttl: Int64?) {
        self.costLimit = costLimit
        self.countLimit = countLimit
        self.ttl = ttl
    }

    @inlinable var count: Int { index.count }

    /// The value and, if it had expired, the removed value (to release outside the lock).
    @inlinable mutating func value(for key: Key, now: Int64?) -> (Value?, Value?) {
        guard let slot = index[key] else { return (nil, nil) }
        if let now, nodes[slot].expiry <= now {
            return (nil, remove(slot: slot))
        }
        moveToFront(slot)
        return (nodes[slot].value, nil)
    }

    /// Inserts and trims; returns what was displaced or evicted.
    @inlinable mutating func insert(_ value: Value, for key: Key, cost: Int, now: Int64?) -> [Value] {
        var released: [Value] = []
        if let slot = index[key], let old = remove(slot: slot) { released.append(old) }
        guard cost <= costLimit, countLimit > 0 else { return released }
        let node = Node(
            key: key, value: value, cost: cost, expiry: ttl.flatMap { ttl in now.map { $0 &+ ttl } } ?? .max,
            previous: Self.none, next: head)
        let slot: Int
        if let reused = free.popLast() {
            nodes[reused] = node
            slot = reused
        } else {
            nodes.append(node)
            slot = nodes.count - 1
        }
        if head != Self.none { nodes[head].previous = slot }
        head = slot
        if tail == Self.none { tail = slot }
        index[key] = slot
        totalCost += cost
        released += trim()
        return released
    }

    @inlinable mutating func removeValue(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return remove(slot: slot)
    }

    @inlinable mutating func removeAll() {
        self = LRUStorage(costLimit: costLimit, countLimit: countLimit, ttl: ttl)
    }

    /// Evicts from the tail until both limits hold.
    @inlinable mutating func trim() -> [Value] {
        var evicted: [Value] = []
        while totalCost > costLimit || index.count > countLimit, tail != Self.none {
            if let value = remove(slot: tail) { evicted.append(value) }
        }
        return evicted
    }

    @inlinable func keysByRecency() -> [Key] {
        var keys: [Key] = []
        var slot = head
        while slot != Self.none {
            if let key = nodes[slot].key { keys.append(key) }
            slot = nodes[slot].next
        }
        return keys
    }

    @inlinable mutating func remove(slot: Int) -> Value? {
        let previous = nodes[slot].previous
        let next = nodes[slot].next
        if previous != Self.none { nodes[previous].next = next } else { head = next }
        if next != Self.none { nodes[next].previous = previous } else { tail = previous }
        if let key = nodes[slot].key { index[key] = nil }
        totalCost -= nodes[slot].cost
        let value = nodes[slot].value
        nodes[slot].key = nil
        nodes[slot].value = nil
        nodes[slot].cost = 0
        free.append(slot)
        return value
    }

    @inlinable mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        let previous = nodes[slot].previous
        let next = nodes[slot].next
        // Unlink (slot is not head, so it has a previous node).
        nodes[previous].next = next
        if next != Self.none { nodes[next].previous = previous } else { tail = previous }
        // Link at the front.
        nodes[slot].previous = Self.none
        nodes[slot].next = head
        nodes[head].previous = slot
        head = slot
    }

    @inlinable func checkInvariants() {
        var seen = 0
        var cost = 0
        var previous = Self.none
        var slot = head
        while slot != Self.none {
            let node = nodes[slot]
            precondition(node.previous == previous, "broken back link at \(slot)")
            guard let key = node.key else { preconditionFailure("free node \(slot) in the list") }
            precondition(index[key] == slot, "index does not point at node \(slot)")
            seen += 1
            cost += node.cost
            precondition(seen <= nodes.count, "cycle in the list")
            previous = slot
            slot = node.next
        }
        precondition(previous == tail, "tail is not the last node")
        precondition(seen == index.count, "list has \(seen) nodes, index \(index.count)")
        precondition(
            seen + free.count == nodes.count, "nodes leaked: \(seen) used + \(free.count) free != \(nodes.count)")
        precondition(cost == totalCost, "total cost \(totalCost) != sum \(cost)")
        precondition(totalCost <= costLimit, "cost \(totalCost) over limit \(costLimit)")
        precondition(index.count <= countLimit, "count \(index.count) over limit \(countLimit)")
    }
}

/// The reference point of ``LRUStorage/nanoseconds(_:)``.
@usableFromInline let clockStart = ContinuousClock.now
