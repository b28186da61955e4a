import Foundation
import Testing

@testable import Imagery

@Suite("Retry policy")
struct RetryPolicyTests {
    let policy = RetryPolicy.standard

    @Test func theBackoffDoublesWithinItsJitterAndStopsAtItsCap() {
        let none = RetryPolicy(maximumAttempts: 10, jitter: 0, deadline: .seconds(3600))
        let waits = (1...6).map { none.delay(after: $0, verdict: .transient, elapsed: .zero, random: 0.7) }
        #expect(waits == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)])
        #expect(policy.delay(after: 1, verdict: .transient, elapsed: .zero, random: 0) == .milliseconds(500))
        #expect(policy.delay(after: 1, verdict: .transient, elapsed: .zero, random: 0.999)! > .milliseconds(250))
    }

    @Test func attemptsAndTheDeadlineBoundTheRetries() {
        #expect(policy.delay(after: 2, verdict: .transient, elapsed: .zero, random: 0) != nil)
        #expect(policy.delay(after: 3, verdict: .transient, elapsed: .zero, random: 0) == nil, "three attempts in all")
        #expect(policy.delay(after: 1, verdict: .transient, elapsed: .seconds(29.8), random: 0) == nil)
        #expect(RetryPolicy.never.delay(after: 1, verdict: .transient, elapsed: .zero, random: 0) == nil)
    }

    @Test func retryAfterIsHonouredUpToItsCap() {
        #expect(
            policy.delay(after: 1, verdict: .transientAfter(.seconds(2)), elapsed: .zero, random: 0.5) == .seconds(2))
        #expect(policy.delay(after: 1, verdict: .transientAfter(.seconds(11)), elapsed: .zero, random: 0.5) == nil)
    }

    @Test func onlyTransientFailuresAreRetried() {
        #expect(policy.verdict(on: DataLoadingError.badStatus(503)) == .transient)
        #expect(
            policy.verdict(on: DataLoadingError.badStatus(429, retryAfter: .seconds(1))) == .transientAfter(.seconds(1))
        )
        for status in [408, 500, 502, 504] {
            #expect(policy.verdict(on: DataLoadingError.badStatus(status)) == .transient)
        }
        for status in [400, 401, 403, 404, 410, 501] {
            #expect(policy.verdict(on: DataLoadingError.badStatus(status)) == .final)
        }
        #expect(policy.verdict(on: DataLoadingError.transport("reset")) == .transient)
        #expect(policy.verdict(on: DataLoadingError.timedOut) == .final)
        #expect(policy.verdict(on: DataLoadingError.tooLarge(limit: 1)) == .final)
        #expect(policy.verdict(on: CancellationError()) == .final)
    }

    @Test func retryAfterReadsSecondsAndHTTPDates() {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        #expect(RetryPolicy.retryAfter("2", now: now) == .seconds(2))
        #expect(RetryPolicy.retryAfter(" 120 ", now: now) == .seconds(120))
        #expect(RetryPolicy.retryAfter(HTTPDate.format(now.addingTimeInterval(30)), now: now) == .seconds(30))
        #expect(RetryPolicy.retryAfter(HTTPDate.format(now.addingTimeInterval(-30)), now: now) == .zero)
        #expect(RetryPolicy.retryAfter("soon", now: now) == nil)
        #expect(RetryPolicy.retryAfter("-1", now: now) == nil)
    }

    @Test func runStopsAtTheFirstSuccessAndReportsEachRetry() async throws {
        var policy = RetryPolicy.standard
        policy.wait = { _ in }
        let attempts = Locked<[Int]>([])
        var retries: [Int] = []
        let value = try await policy.run(onRetry: { retries.append($0.attempt) }) { attempt in
            attempts.withLock { $0.append(attempt) }
            if attempt < 3 { throw DataLoadingError.badStatus(502) }
            return "done"
        }
        #expect(value == "done" && attempts.withLock { $0 } == [1, 2, 3] && retries == [2, 3])
    }
}
