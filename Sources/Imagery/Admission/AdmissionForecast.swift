/// When a request for memory can be served, from the pace decodes have been going: the rule
/// behind a ``MemoryBudget``'s admission deadline and its refusals at once. Pure arithmetic (no
/// clock, no lock): the budget gives it what it measured.
///
/// Decodes run `parallel` at a time (the slots, or fewer when memory holds them back), each
/// holding its slot for `decodeHold` (measured; a guess before the first has finished). One more
/// decode, with `ahead` decodes before it, starts after `(ahead - parallel + 1) / parallel` rounds
/// of `decodeHold`; once started, the request's own work is its decode and an encode of about as long.
struct AdmissionForecast: Sendable, Equatable {
    /// Decodes that run at once (at least 1).
    let parallel: Double
    /// Seconds a decode holds its slot.
    let decodeHold: Double

    /// - Parameters:
    ///   - slots: The decode slots.
    ///   - running: How many decodes have been running at once while others waited (measured; `nil`:
    ///     none waited yet, so the slots): large sources may fit in memory fewer at a time than there
    ///     are slots. Measured on a burst of 64 new 20 MP PNGs at 2048 px: forecast on the slots
    ///     alone, 7 requests were let wait 21.6 s and then refused.
    init(slots: Int, decodeHold: Double, running: Double? = nil) {
        parallel = max(1, min(Double(max(1, slots)), running ?? Double(slots)))
        self.decodeHold = decodeHold
    }

    /// How long one more decode waits with `ahead` decodes before it.
    func wait(ahead: Int) -> Duration {
        let rounds = max(0, Double(ahead) - parallel + 1) / parallel
        return .milliseconds(Int64((rounds * decodeHold * 1000).rounded()))
    }

    /// The time a request needs once admitted: its decode, and an encode of about as long.
    var ownWork: Duration { .milliseconds(Int64((2 * decodeHold * 1000).rounded())) }

    /// The longest a request that may take `requestTime` in all can wait for admission and still
    /// finish in time: `requestTime` less its own work, never less than half of it (a slow
    /// pace must not refuse what a lone request could still do).
    func admissionWindow(within requestTime: Duration) -> Duration {
        max(requestTime / 2, requestTime - ownWork)
    }

    /// Which of `waiters` (each with the decodes ahead of it) are predicted to start after their
    /// deadline, `now`.
    func late(
        _ waiters: [(id: UInt64, ahead: Int)], now: ContinuousClock.Instant,
        deadline: (UInt64) -> ContinuousClock.Instant?
    ) -> [UInt64] {
        waiters.compactMap { waiter in
            guard let deadline = deadline(waiter.id) else { return nil }
            return isLate(ahead: waiter.ahead, window: now.duration(to: deadline)) ? waiter.id : nil
        }
    }

    /// Whether one more decode, `ahead` before it, is predicted to start later than `window`
    /// from now. Nothing ahead is never late: the request's own time was used by its download or
    /// a busy machine, and refusing it would waste that work.
    func isLate(ahead: Int, window: Duration) -> Bool {
        let wait = wait(ahead: ahead)
        return wait > .zero && wait > window
    }
}
