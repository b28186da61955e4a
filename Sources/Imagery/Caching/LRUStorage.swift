import Foundation

/// The state behind ``MemoryCache``: a dictionary of indices into an array of
/// nodes that form a doubly linked list, most recently used at `head`.
/// A value type, so the cache can keep it in a `Mutex`.
struct LRUStorage<Key: Hashable, Value> {
    struct Node {
        var key: Key?
        var value: Value?
        var cost: Int
        var expiry: ContinuousClock.Instant?
        var previous: Int
        var next: Int
    }

    private static var none: Int { -1 }

    private var index: [Key: Int] = [:]
    private var nodes: [Node] = []
    private var free: [Int] = []
    private var head = LRUStorage.none
    private var tail = LRUStorage.none
    private(set) var totalCost = 0
    var costLimit: Int
    var countLimit: Int
    let ttl: Duration?

    init(costLimit: Int, countLimit: Int, ttl: Duration?) {
        self.costLimit = costLimit
        self.countLimit = countLimit
        self.ttl = ttl
    }

    var count: Int { index.count }

    /// The value and, if it had expired, the removed value (to release outside the lock).
    mutating func value(for key: Key, now: ContinuousClock.Instant) -> (Value?, Value?) {
        guard let slot = index[key] else { return (nil, nil) }
        if let expiry = nodes[slot].expiry, expiry <= now {
            return (nil, remove(slot: slot))
        }
        moveToFront(slot)
        return (nodes[slot].value, nil)
    }

    /// Inserts and trims; returns what was displaced or evicted.
    mutating func insert(_ value: Value, for key: Key, cost: Int, now: ContinuousClock.Instant) -> [Value] {
        var released: [Value] = []
        if let slot = index[key], let old = remove(slot: slot) { released.append(old) }
        guard cost <= costLimit, countLimit > 0 else { return released }
        let node = Node(key: key, value: value, cost: cost, expiry: ttl.map { now + $0 }, previous: Self.none, next: head)
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

    mutating func removeValue(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return remove(slot: slot)
    }

    mutating func removeAll() {
        self = LRUStorage(costLimit: costLimit, countLimit: countLimit, ttl: ttl)
    }

    /// Evicts from the tail until both limits hold.
    mutating func trim() -> [Value] {
        var evicted: [Value] = []
        while (totalCost > costLimit || index.count > countLimit), tail != Self.none {
            if let value = remove(slot: tail) { evicted.append(value) }
        }
        return evicted
    }

    func keysByRecency() -> [Key] {
        var keys: [Key] = []
        var slot = head
        while slot != Self.none {
            if let key = nodes[slot].key { keys.append(key) }
            slot = nodes[slot].next
        }
        return keys
    }

    private mutating func remove(slot: Int) -> Value? {
        let node = nodes[slot]
        if node.previous != Self.none { nodes[node.previous].next = node.next } else { head = node.next }
        if node.next != Self.none { nodes[node.next].previous = node.previous } else { tail = node.previous }
        if let key = node.key { index[key] = nil }
        totalCost -= node.cost
        nodes[slot] = Node(key: nil, value: nil, cost: 0, expiry: nil, previous: Self.none, next: Self.none)
        free.append(slot)
        return node.value
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        let node = nodes[slot]
        // Unlink (slot is not head, so it has a previous node).
        nodes[node.previous].next = node.next
        if node.next != Self.none { nodes[node.next].previous = node.previous } else { tail = node.previous }
        // Link at the front.
        nodes[slot].previous = Self.none
        nodes[slot].next = head
        nodes[head].previous = slot
        head = slot
    }

    func checkInvariants() {
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
        precondition(seen + free.count == nodes.count, "nodes leaked: \(seen) used + \(free.count) free != \(nodes.count)")
        precondition(cost == totalCost, "total cost \(totalCost) != sum \(cost)")
        precondition(totalCost <= costLimit, "cost \(totalCost) over limit \(costLimit)")
        precondition(index.count <= countLimit, "count \(index.count) over limit \(countLimit)")
    }
}
