import Foundation

/// The time the core reads: wall-clock dates (HTTP freshness, when an entry was stored) and monotonic
/// instants (time-to-live, deadlines, probe intervals).
///
/// Every part that asks "what time is it" takes one of these, `.system` by default, so that a test can
/// move time by hand (``ManualTime``) instead of sleeping.
public struct TimeSource: Sendable {
    /// The current wall-clock date.
    public var date: @Sendable () -> Date
    /// The current monotonic instant.
    public var instant: @Sendable () -> ContinuousClock.Instant

    /// A source of time from the two readers given.
    public init(date: @escaping @Sendable () -> Date, instant: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.date = date
        self.instant = instant
    }

    /// The machine's own clocks: `Date()` and `ContinuousClock.now`.
    public static let system = TimeSource(date: { Date() }, instant: { ContinuousClock.now })
}

/// Time that moves only when told to: both the date and the instant advance together by ``advance(by:)``.
///
/// Made for tests of expiry and freshness: `let time = ManualTime(); ... time.advance(by: .seconds(61))`.
public final class ManualTime: Sendable {
    private let start: (date: Date, instant: ContinuousClock.Instant)
    private let offset = Locked<Duration>(.zero)  // a lock ThreadSanitizer sees (Locked)

    /// Time that starts at `date` (default: now) and stands still until advanced.
    public init(date: Date = Date()) {
        start = (date, ContinuousClock.now)
    }

    /// Moves time forward by `duration`.
    public func advance(by duration: Duration) {
        offset.withLock { $0 += duration }
    }

    /// How far time has been moved since this was made.
    public var elapsed: Duration { offset.withLock { $0 } }

    /// The current date: the starting date plus ``elapsed``.
    public var date: Date {
        let elapsed = self.elapsed.components
        return start.date.addingTimeInterval(Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18)
    }

    /// The current instant: the instant this was made plus ``elapsed``.
    public var instant: ContinuousClock.Instant { start.instant + elapsed }

    /// A ``TimeSource`` that reads this time.
    public var source: TimeSource {
        TimeSource(date: { [self] in date }, instant: { [self] in instant })
    }
}
