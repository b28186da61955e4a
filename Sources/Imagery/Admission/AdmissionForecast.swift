/// When a request for memory can be served, from the pace decodes have been going: the rule
/// behind a ``MemoryBudget``'s admission deadline and its refusals at once. Pure arithmetic (no
/// clock, no lock): the budget gives it what it measured.
///
/// Decodes run `slots` at a time, each holding its slot for `decodeHold` (measured; a guess
/// before the first has finished). One more decode, with `ahead` decodes before it, starts after
/// `(ahead - slots + 1) / slots` rounds of `decodeHold`; once started, the request's own work is
/// its decode and an encode of about as long.
struct AdmissionForecast: Sendable, Equatable {
    let slots: Int
    /// Seconds a decode holds its slot.
    let decodeHold: Double

    /// How long one more decode waits with `ahead` decodes before it.
    func wait(ahead: Int) -> Duration {
        let rounds = Double(max(0, ahead - slots + 1)) / Double(max(1, slots))
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

    /// Whether one more decode, `ahead` before it, is predicted to start later than `window`
    /// from now. Nothing ahead is never late: the request's own time was used by its download or
    /// a busy machine, and refusing it would waste that work.
    func isLate(ahead: Int, window: Duration) -> Bool {
        let wait = wait(ahead: ahead)
        return wait > .zero && wait > window
    }
}
