import Foundation
import Testing

@testable import Imagery

/// Transient origin failures are tried again (``RetryPolicy``): the waits are recorded, not slept,
/// except where a test cancels one.
@Suite("Pipeline retries")
struct PipelineRetryTests {
    /// Waits recorded instead of slept.
    final class Waits: Sendable {
        let log = EventLog<Duration>()
        var policy: RetryPolicy {
            var policy = RetryPolicy.standard
            policy.wait = { [log] in log.append($0) }
            policy.now = PipelineRetryTests.clock(log)
            return policy
        }
    }

    /// A clock that moves only with the waits recorded in `log`: the deadline is spent by waits, not by a slow machine.
    static func clock(_ log: EventLog<Duration>) -> @Sendable () -> ContinuousClock.Instant {
        let start = ContinuousClock.now
        return { start + log.all.reduce(.zero, +) }
    }

    /// An origin that answers `failures` (in turn) before the image.
    static func flaky(_ failures: [MockDataLoader.Stub]) -> MockDataLoader {
        let count = Locked(0)
        return MockDataLoader { _ in
            let attempt = count.withLock { count in
                defer { count += 1 }
                return count
            }
            return attempt < failures.count ? failures[attempt] : MockDataLoader.Stub()
        }
    }

    static let unavailable = MockDataLoader.Stub(data: Data(), statusCode: 503)

    @Test func twoServiceUnavailableAnswersThenTheImageTakeThreeRequests() async throws {
        let waits = Waits()
        let test = TestPipeline(loader: Self.flaky([Self.unavailable, Self.unavailable])) {
            $0.retryPolicy = waits.policy
        }
        let task = test.pipeline.imageTask(for: thumbnailRequest(testURL("a.jpg"), 8, 8))
        let events = task.events
        let image = try await task.image
        #expect(image.width == 8)
        #expect(test.loader.loadCount == 3)
        #expect(waits.log.count == 2)
        let delays = waits.log.all
        #expect(delays[0] >= .milliseconds(250) && delays[0] <= .milliseconds(500), "half jitter of 0.5 s")
        #expect(delays[1] >= .milliseconds(500) && delays[1] <= .seconds(1), "doubled")
        var retries: [Int] = []
        for await event in events {
            if case .retrying(let retry) = event {
                retries.append(retry.attempt)
                #expect(retry.status == 503)
            }
        }
        #expect(retries == [2, 3])
        #expect(
            PipelineObserverTests.sequence(test).filter { $0.hasPrefix("retry") } == [
                "retry 2 after 503", "retry 3 after 503",
            ])
    }

    @Test func retryAfterIsWaitedAsTheOriginAsks() async throws {
        let waits = Waits()
        let busy = MockDataLoader.Stub(data: Data(), statusCode: 429, headers: ["retry-after": "2"])
        let test = TestPipeline(loader: Self.flaky([busy])) { $0.retryPolicy = waits.policy }
        _ = try await test.pipeline.image(for: thumbnailRequest(testURL("a.jpg"), 8, 8))
        #expect(waits.log.all == [.seconds(2)])
        #expect(test.loader.loadCount == 2)
    }

    @Test func aRetryAfterLongerThanTheCapIsNotWaited() async throws {
        let waits = Waits()
        let closed = MockDataLoader.Stub(data: Data(), statusCode: 503, headers: ["retry-after": "3600"])
        let test = TestPipeline(loader: Self.flaky([closed])) { $0.retryPolicy = waits.policy }
        await #expect(throws: DataLoadingError.badStatus(503, retryAfter: .seconds(3600))) {
            try await test.pipeline.image(for: thumbnailRequest(testURL("a.jpg"), 8, 8))
        }
        #expect(waits.log.count == 0 && test.loader.loadCount == 1)
    }

    @Test(arguments: [400, 401, 403, 404, 410])
    func otherClientErrorsAreNotRetried(status: Int) async throws {
        let waits = Waits()
        let test = TestPipeline(loader: Self.flaky([.init(data: Data(), statusCode: status)])) {
            $0.retryPolicy = waits.policy
        }
        await #expect(throws: DataLoadingError.badStatus(status)) {
            try await test.pipeline.image(for: thumbnailRequest(testURL("a.jpg"), 8, 8))
        }
        #expect(test.loader.loadCount == 1 && waits.log.count == 0)
    }

    @Test func networkFailuresAreRetriedUpToTheAttemptLimit() async throws {
        let waits = Waits()
        let reset = MockDataLoader.Stub.failure(DataLoadingError.transport("connection reset by peer"))
        let test = TestPipeline(loader: Self.flaky([reset, reset, reset, reset])) { $0.retryPolicy = waits.policy }
        await #expect(throws: DataLoadingError.transport("connection reset by peer")) {
            try await test.pipeline.image(for: thumbnailRequest(testURL("a.jpg"), 8, 8))
        }
        #expect(test.loader.loadCount == 3, "the standard policy's three attempts")
    }

    @Test func cancellingDuringABackoffEndsTheTaskAtOnce() async throws {
        let waitStarted = EventLog<Duration>()
        let test = TestPipeline(loader: Self.flaky([Self.unavailable])) { configuration in
            // A wait as long as the cap allows, slept for real: only cancellation ends it early.
            var policy = RetryPolicy(maximumRetryAfter: .seconds(3600), deadline: .seconds(7200))
            policy.wait = { duration in
                waitStarted.append(duration)
                try await Task.sleep(for: .seconds(3600))
            }
            configuration.retryPolicy = policy
        }
        let task = test.pipeline.imageTask(for: thumbnailRequest(testURL("a.jpg"), 8, 8))
        try await waitStarted.waitForCount(1, "the backoff's wait")
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.image }
        #expect(test.loader.loadCount == 1)
        #expect(test.pipeline.activeJobCount == (0, 0))
    }

    @Test func aStaleEntryStandsInOnceRetriesAreSpent() async throws {
        let waits = Waits()
        let served = Shared(true)
        let loader = MockDataLoader { _ in
            served.value
                ? MockDataLoader.Stub(headers: ["cache-control": "max-age=60, stale-if-error=600"]) : Self.unavailable
        }
        let test = TestPipeline(loader: loader) { $0.retryPolicy = waits.policy }
        let request = thumbnailRequest(testURL("a.jpg"), 8, 8)
        _ = try await test.pipeline.data(for: request)
        served.value = false
        test.advance(seconds: 120)
        _ = try await test.pipeline.data(for: request)
        #expect(test.loader.loadCount == 4, "one load, then three attempts to revalidate")
    }
}
