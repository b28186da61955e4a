import Foundation

/// A wait that reached its hang guard: the state `what` describes never came.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration
    public var description: String { "gave up after \(limit) waiting for \(what) (a hang guard, not a timing bound)" }
}

/// The hang guard of every wait in the tests: generous, so that no loaded or slowed machine reaches it;
/// a test reaches it only when what it waits for never comes.
public let hangGuard: Duration = .seconds(300)

/// Waits until `condition` holds, checking it every few milliseconds.
///
/// For states a test observes from outside (a counter, a metric, a file, a log line) that no hook
/// announces. Ordering comes from the condition, never from how long the wait took: `limit` is only a
/// hang guard, and reaching it throws ``WaitTimedOut``.
public func waitUntil(
    _ what: @autoclosure () -> String,
    limit: Duration = hangGuard,
    every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(what: what(), limit: limit) }
        try await Task.sleep(for: interval)
    }
}

/// Waits until `value` gives something, checking it every few milliseconds, and returns it
/// (the same hang guard as ``waitUntil(_:limit:every:_:)``).
public func waitFor<T>(
    _ what: @autoclosure () -> String,
    limit: Duration = hangGuard,
    every interval: Duration = .milliseconds(10),
    _ value: () async throws -> T?
) async throws -> T {
    let deadline = ContinuousClock.now + limit
    while true {
        if let value = try await value() { return value }
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(what: what(), limit: limit) }
        try await Task.sleep(for: interval)
    }
}
