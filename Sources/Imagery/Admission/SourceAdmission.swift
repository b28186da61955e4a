import Foundation

/// A download's bytes against the pipeline's ``MemoryBudget``: the size the response announces is
/// reserved (waiting in the budget's line) before its body is read; bytes past that, or of a
/// loader that announces nothing, are charged as they arrive. Inert without a budget.
final class SourceAdmission: Sendable {
    private let budget: MemoryBudget?
    private let deadline: ContinuousClock.Instant?
    private let reservation = Locked<Reservation?>(nil)

    /// - Parameter deadline: The request's admission deadline (``MemoryBudget/admissionDeadline()``).
    init(budget: MemoryBudget?, deadline: ContinuousClock.Instant?) {
        self.budget = budget
        self.deadline = deadline
    }

    var isActive: Bool { budget != nil }

    /// Reserves `expectedBytes` (0 when unknown), waiting while they do not fit.
    /// - Throws: ``MemoryBudgetError``, or `CancellationError`.
    func reserve(_ expectedBytes: Int64?) async throws {
        guard let budget else { return }
        let reserved = try await budget.reserve(Int(clamping: expectedBytes ?? 0), for: .source, deadline: deadline)
        let previous = reservation.withLock { current in
            defer { current = reserved }
            return current
        }
        previous?.release()  // a redirect's earlier response, or bytes charged before the announcement
    }

    /// `completed` bytes have arrived: charges what the reservation does not cover.
    func received(_ completed: Int64) {
        guard let budget, completed > 0 else { return }
        let bytes = Int(clamping: completed)
        let current = reservation.withLock { current -> Reservation in
            if let current { return current }
            let charged = budget.charge(0)
            current = charged
            return charged
        }
        current.grow(to: bytes)
    }

    /// Gives the bytes back.
    func release() {
        reservation.withLock { current in
            defer { current = nil }
            return current
        }?.release()
    }
}
