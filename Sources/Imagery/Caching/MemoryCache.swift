import Foundation

/// A thread-safe, least-recently-used cache with a cost limit, a count limit
/// and an optional time to live.
///
/// Every operation is O(1): a dictionary finds an entry, and a doubly linked
/// list kept in one array (indices, not references, so no reference counting)
/// orders entries by use. A lock guards it all; values removed by eviction
/// are released after the lock is dropped.
///
/// The pipeline uses it twice: for decoded images (cost = pixel bytes) and for
/// encoded data (cost = byte count).
///
/// Expiry reads the monotonic instant of a ``TimeSource`` (`.system` by default), so a test can
/// move time past a time to live by hand (``ManualTime``) instead of sleeping through it.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline let storage: Locked<LRUStorage<Key, Value>>
    @usableFromInline let costFunction: @Sendable (Value) -> Int
    /// Whether entries expire: reading the clock is skipped when they do not.
    @usableFromInline let expires: Bool
    /// Where the time that entries expire by is read (its ``TimeSource/instant``).
    @usableFromInline let time: TimeSource

    /// Creates an empty cache.
    /// - Parameters:
    ///   - costLimit: The most total cost it holds; default `Int.max` (no limit).
    ///   - countLimit: The most entries it holds; default `Int.max` (no limit).
    ///   - ttl: How long an entry lives after it is stored, in seconds; default `nil` (forever).
    ///   - cost: The cost the subscript setter gives a value; default: the value's
    ///     ``CacheCostReporting/cacheCost`` when it conforms (``Image``, `Data`), otherwise 1.
    ///   - time: The clock `ttl` is measured on; default ``TimeSource/system``.
    public init(
        costLimit: Int = .max,
        countLimit: Int = .max,
        ttl: TimeInterval? = nil,
        cost: (@Sendable (Value) -> Int)? = nil,
        time: TimeSource = .system
    ) {
        precondition(costLimit >= 0 && countLimit >= 0, "limits cannot be negative")
        self.storage = Locked(
            LRUStorage(costLimit: costLimit, countLimit: countLimit, ttl: ttl.map { Int64($0 * 1e9) }))
        self.costFunction = cost ?? { ($0 as? any CacheCostReporting)?.cacheCost ?? 1 }
        self.expires = ttl != nil
        self.time = time
    }

    /// Now, as expiry times are measured (`nil` when entries never expire: no clock is read).
    @inlinable func currentTime() -> Int64? {
        expires ? LRUStorage<Key, Value>.nanoseconds(time.instant()) : nil
    }

    /// The value for `key`, or `nil`; a read marks the entry most recently used.
    /// Setting stores with the cost function given at init; setting `nil` removes.
    /// - Complexity: O(1).
    @inlinable public subscript(key: Key) -> Value? {
        get { value(for: key) }
        set {
            if let newValue {
                insert(newValue, for: key, cost: costFunction(newValue))
            } else {
                removeValue(for: key)
            }
        }
    }

    /// The value for `key`, or `nil` when absent or expired. Marks it most recently used.
    /// - Complexity: O(1).
    @inlinable public func value(for key: Key) -> Value? {
        let now = currentTime()
        let (value, expired) = storage.withLock { $0.value(for: key, now: now) }
        _ = expired  // released here, outside the lock
        return value
    }

    /// Stores `value` for `key` as the most recently used entry, replacing any
    /// value there, then evicts least recently used entries until both limits hold.
    /// A value whose cost alone is over the cost limit is not stored (and any old value is removed).
    /// - Returns: The values that left the cache: the one replaced, and those evicted.
    /// - Complexity: O(1) amortised (each eviction is O(1)).
    @inlinable @discardableResult
    public func insert(_ value: Value, for key: Key, cost: Int) -> [Value] {
        let now = currentTime()
        return storage.withLock { $0.insert(value, for: key, cost: max(0, cost), now: now) }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    /// - Returns: The evicted values.
    /// - Complexity: O(k) for k evictions.
    @discardableResult
    public func trim(toCost cost: Int) -> [Value] {
        storage.withLock { storage in
            let limit = storage.costLimit
            storage.costLimit = max(0, cost)
            defer { storage.costLimit = limit }
            return storage.trim()
        }
    }

    /// Removes and returns the value for `key`.
    /// - Complexity: O(1).
    @inlinable @discardableResult
    public func removeValue(for key: Key) -> Value? {
        storage.withLock { $0.removeValue(for: key) }
    }

    /// Removes every entry.
    /// - Complexity: O(n) to release the values.
    @inlinable public func removeAll() {
        let old = storage.withLock { storage in
            let old = storage
            storage.removeAll()
            return old
        }
        _ = old
    }

    /// The sum of the costs of the entries held.
    /// - Complexity: O(1).
    @inlinable public var totalCost: Int { storage.withLock { $0.totalCost } }

    /// The number of entries held (expired ones count until they are touched or evicted).
    /// - Complexity: O(1).
    @inlinable public var count: Int { storage.withLock { $0.count } }

    /// The most total cost held; lowering it evicts at once.
    public var costLimit: Int {
        get { storage.withLock { $0.costLimit } }
        set {
            let evicted = storage.withLock {
                $0.costLimit = max(0, newValue)
                return $0.trim()
            }
            _ = evicted
        }
    }

    /// The most entries held; lowering it evicts at once.
    @inlinable public var countLimit: Int {
        get { storage.withLock { $0.countLimit } }
        set {
            let evicted = storage.withLock {
                $0.countLimit = max(0, newValue)
                return $0.trim()
            }
            _ = evicted
        }
    }

    /// The keys from most to least recently used (for tests and diagnostics).
    /// - Complexity: O(n).
    public var keysByRecency: [Key] { storage.withLock { $0.keysByRecency() } }

    /// Checks the internal invariants (list links, index, cost and count totals,
    /// limits) and stops the program if one is broken. For tests.
    /// - Complexity: O(n).
    public func checkInvariants() {
        storage.withLock { $0.checkInvariants() }
    }
}

/// Values that know what they cost to keep in memory, in bytes.
public protocol CacheCostReporting {
    /// The cost used by ``MemoryCache``'s subscript setter.
    var cacheCost: Int { get }
}

extension Image: CacheCostReporting {
    public var cacheCost: Int { cost }
}

extension Data: CacheCostReporting {
    public var cacheCost: Int { count }
}
