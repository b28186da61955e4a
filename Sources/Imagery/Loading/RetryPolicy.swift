import Foundation

/// When and how a failed load is tried again: transient failures only (a connection refused or
/// reset, the statuses in ``retriedStatuses``), after a wait that grows exponentially with jitter,
/// or as long as the origin's `Retry-After` asks (up to ``maximumRetryAfter``), for at most
/// ``maximumAttempts`` attempts within ``deadline``.
///
/// An ``ImagePipeline`` retries its source loads with ``ImagePipeline/Configuration/retryPolicy``
/// (on by default, with ``standard``); each retry is an event of the ``ImageTask`` and of the
/// pipeline's observer. A wait holds no download slot, and cancelling the task ends it at once.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included; 1 never retries. Default 3.
    public var maximumAttempts: Int
    /// The wait before the second attempt; each further wait is ``multiplier`` times longer.
    /// Default 0.5 s.
    public var initialDelay: Duration
    /// How much longer each wait is than the one before; default 2.
    public var multiplier: Double
    /// The longest wait the backoff grows to; default 8 s.
    public var maximumDelay: Duration
    /// The share of each backoff wait drawn at random (0: none; 0.5: the wait is between half of it
    /// and all of it), so that many clients of one origin do not retry in step. Default 0.5.
    public var jitter: Double
    /// The longest `Retry-After` honoured; an origin that asks for a longer wait is not tried again
    /// (the failure is final). Default 10 s.
    public var maximumRetryAfter: Duration
    /// No attempt starts later than this after the first one began; default 30 s.
    public var deadline: Duration
    /// The HTTP statuses tried again; default 408, 429, 500, 502, 503 and 504.
    public var retriedStatuses: Set<Int>
    /// Whether network failures (``DataLoadingError/transport(_:)``: a refused or reset connection, a
    /// body cut short) are tried again; default `true`. Timeouts are not: the load's time limit is spent.
    public var retriesTransportFailures: Bool
    /// How a wait is done; default `Task.sleep(for:)`. Must throw `CancellationError` when the
    /// calling task is cancelled. A test passes its own (one that records waits, or one it controls).
    public var wait: @Sendable (Duration) async throws -> Void
    /// Where ``deadline`` is measured; default `ContinuousClock.now`. A test that does its own
    /// ``wait`` passes a clock that moves only with those waits, so that a slow machine does not spend the deadline.
    public var now: @Sendable () -> ContinuousClock.Instant

    /// A policy of the given limits; every default is the one ``standard`` uses.
    public init(
        maximumAttempts: Int = 3,
        initialDelay: Duration = .milliseconds(500),
        multiplier: Double = 2,
        maximumDelay: Duration = .seconds(8),
        jitter: Double = 0.5,
        maximumRetryAfter: Duration = .seconds(10),
        deadline: Duration = .seconds(30),
        retriedStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        retriesTransportFailures: Bool = true
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumRetryAfter = maximumRetryAfter
        self.deadline = deadline
        self.retriedStatuses = retriedStatuses
        self.retriesTransportFailures = retriesTransportFailures
        self.wait = { try await Task.sleep(for: $0) }
        self.now = { ContinuousClock.now }
    }

    /// Three attempts, waits from 0.5 s doubling to 8 s, `Retry-After` up to 10 s, 30 s in all.
    public static var standard: RetryPolicy { RetryPolicy() }

    /// One attempt: nothing is tried again.
    public static var never: RetryPolicy { RetryPolicy(maximumAttempts: 1) }

    /// One retry the policy decided on.
    public struct Retry: Sendable {
        /// The attempt about to start: 2 for the first retry.
        public var attempt: Int
        /// How long it waits first.
        public var delay: Duration
        /// Why the attempt before failed.
        public var error: any Error

        /// The HTTP status that failed the attempt before, `nil` for a network failure.
        public var status: Int? {
            if case .badStatus(let status, _)? = error as? DataLoadingError { return status }
            return nil
        }
    }

    /// What the policy makes of a failure: whether it is tried again, and whether the origin said when.
    public enum Verdict: Sendable, Hashable {
        /// Final: not tried again.
        case final
        /// Tried again after the backoff's wait.
        case transient
        /// Tried again after the wait the origin asked for (`Retry-After`).
        case transientAfter(Duration)
    }

    /// How the policy judges `error`: ``DataLoadingError``s by ``retriedStatuses`` and
    /// ``retriesTransportFailures``; every other error is final.
    public func verdict(on error: any Error) -> Verdict {
        switch error as? DataLoadingError {
        case .badStatus(let status, let retryAfter)? where retriedStatuses.contains(status):
            retryAfter.map { .transientAfter($0) } ?? .transient
        case .transport? where retriesTransportFailures: .transient
        default: .final
        }
    }

    /// The wait before the attempt after `attempt`; `nil`: no further attempt.
    /// - Parameters:
    ///   - attempt: The attempt that failed (1 for the first).
    ///   - verdict: What the policy made of its failure (``verdict(on:)``).
    ///   - elapsed: The time since the first attempt began.
    ///   - random: A number in 0..<1 that draws the jitter.
    public func delay(after attempt: Int, verdict: Verdict, elapsed: Duration, random: Double) -> Duration? {
        guard attempt < maximumAttempts else { return nil }
        let delay: Duration
        switch verdict {
        case .final: return nil
        case .transientAfter(let asked):
            guard asked <= maximumRetryAfter else { return nil }
            delay = max(asked, .zero)
        case .transient:
            let grown = initialDelay * pow(multiplier, Double(attempt - 1))
            let capped = min(grown, maximumDelay)
            let share = min(max(jitter, 0), 1)
            delay = capped * (1 - share * min(max(random, 0), 1))
        }
        guard elapsed + delay < deadline else { return nil }
        return delay
    }

    /// Runs `operation` until it succeeds, fails for good, or the policy's attempts or deadline are spent.
    /// - Parameters:
    ///   - verdict: Judges a failure; default ``verdict(on:)``.
    ///   - onRetry: Told of each retry before its wait.
    ///   - operation: One attempt, given its number (1 for the first).
    /// - Throws: The last attempt's error, or `CancellationError` when cancelled during a wait.
    public func run<Value>(
        verdict: (any Error) -> Verdict,
        onRetry: (Retry) -> Void = { _ in },
        _ operation: (Int) async throws -> Value
    ) async throws -> Value {
        let start = now()
        var attempt = 1
        while true {
            do {
                return try await operation(attempt)
            } catch {
                if error is CancellationError || Task.isCancelled { throw error }
                let judged = verdict(error)
                let elapsed = now() - start
                guard let delay = delay(after: attempt, verdict: judged, elapsed: elapsed, random: .random(in: 0..<1))
                else { throw error }
                attempt += 1
                onRetry(Retry(attempt: attempt, delay: delay, error: error))
                try await wait(delay)
            }
        }
    }

    /// Runs `operation` with the policy's own ``verdict(on:)``.
    public func run<Value>(onRetry: (Retry) -> Void = { _ in }, _ operation: (Int) async throws -> Value)
        async throws -> Value
    {
        try await run(verdict: { verdict(on: $0) }, onRetry: onRetry, operation)
    }

    /// The wait a `Retry-After` header's value asks for: whole seconds, or an HTTP date (less `now`);
    /// `nil` when it is neither.
    public static func retryAfter(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return .seconds(seconds) }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return .milliseconds(max(0, Int((date.timeIntervalSince(now) * 1000).rounded(.up))))
    }
}
