import Foundation

/// Bytes held against a ``MemoryBudget``: given back by ``release()``, or when it is released.
public final class Reservation: Sendable {
    private let budget: MemoryBudget
    private let stage: MemoryBudget.Stage?
    private let start: ContinuousClock.Instant
    /// The bytes it was admitted with.
    private let reserved: Int
    /// Bytes held; `nil` once released.
    private let held: Locked<Int?>

    init(budget: MemoryBudget, bytes: Int, stage: MemoryBudget.Stage?) {
        self.budget = budget
        self.stage = stage
        start = budget.time.instant()
        reserved = bytes
        held = Locked(bytes)
    }

    /// The bytes held now (0 once released).
    public var bytes: Int { held.withLock { $0 ?? 0 } }

    /// Holds at least `total` bytes: charges the difference when more arrived than reserved (never waits).
    public func grow(to total: Int) {
        let added: Int = held.withLock { held in
            guard let current = held, total > current else { return 0 }
            held = total
            return total - current
        }
        if added > 0 { budget.add(added) }
    }

    /// Gives the bytes back (once; later calls do nothing).
    public func release() {
        guard
            let bytes = held.withLock({ held -> Int? in
                defer { held = nil }
                return held
            })
        else { return }
        budget.release(bytes, reserved: reserved, stage: stage, held: budget.time.instant() - start)
    }

    deinit { release() }
}
