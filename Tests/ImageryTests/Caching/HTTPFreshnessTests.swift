import Foundation
import Testing

@testable import Imagery

/// RFC 9111's freshness rules for a private cache, case by case: the lifetime a response states
/// (`max-age`, `Expires`, `s-maxage` ignored), the heuristic when it states none, and its age.
@Suite("HTTP freshness (RFC 9111 4.2)")
struct HTTPFreshnessTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// A response received at `t0` (sent `delay` seconds earlier), its `Date` `t0` unless given.
    static func response(_ headers: [String: String], delay: TimeInterval = 0, status: Int = 200) -> HTTPResponseInfo {
        var headers = headers
        if headers["Date"] == nil { headers["Date"] = HTTPDate.format(t0) }
        if headers["Date"] == "" { headers["Date"] = nil }
        return HTTPResponseInfo(
            statusCode: status, headers: headers, requestTime: t0.addingTimeInterval(-delay), responseTime: t0,
            requestHeaders: [:]
        )
    }

    static func date(_ offset: TimeInterval) -> String { HTTPDate.format(t0.addingTimeInterval(offset)) }

    /// The lifetime each set of headers gives, in seconds (the default policy: a tenth of the time
    /// since `Last-Modified`, at most a day, no floor).
    @Test(
        arguments: [
            // max-age, as sent (quoted or not, any case), whatever Expires says
            (["Cache-Control": "max-age=3600"], 3_600.0),
            (["Cache-Control": "MAX-AGE=60"], 60),
            (["Cache-Control": "max-age=\"90\""], 90),
            (["Cache-Control": "public, max-age=0"], 0),
            (["Cache-Control": "max-age=100", "Expires": date(10)], 100),
            (["Cache-Control": "max-age=100", "Last-Modified": date(-1_000_000)], 100),
            // invalid max-age: stale (not the Expires or heuristic behind it)
            (["Cache-Control": "max-age=-5", "Expires": date(600)], 0),
            (["Cache-Control": "max-age", "Expires": date(600)], 0),
            (["Cache-Control": "max-age=1.5"], 0),
            // s-maxage is for shared caches: a private one ignores it
            (["Cache-Control": "s-maxage=600"], 0),
            (["Cache-Control": "max-age=10, s-maxage=600"], 10),
            (["Cache-Control": "s-maxage=600", "Expires": date(30)], 30),
            // Expires minus Date
            (["Expires": date(90)], 90),
            (["Expires": date(-90)], 0),
            (["Expires": "0"], 0),
            (["Expires": "-1"], 0),
            (["Expires": "tomorrow"], 0),
            (["Expires": date(90), "Date": date(-3_600)], 3_690),
            (["Expires": date(90), "Last-Modified": date(-1_000_000)], 90),
            // the heuristic: a tenth of the time since Last-Modified, capped at a day
            (["Last-Modified": date(-1_000)], 100),
            (["Last-Modified": date(-864_000)], 86_400),
            (["Last-Modified": date(-10 * 864_000)], 86_400),
            (["Last-Modified": date(600)], 0),
            (["Last-Modified": "garbage"], 0),
            ([:], 0),
            (["Cache-Control": "private"], 0),
        ] as [([String: String], Double)])
    func theFreshnessLifetimeIsWhatTheResponseStates(headers: [String: String], lifetime: Double) {
        #expect(HTTPCachePolicy().freshnessLifetime(Self.response(headers)) == lifetime, "\(headers)")
    }

    @Test func theHeuristicFollowsItsFractionAndCapAndAFloorOnlyWithoutAnExpiry() {
        let lastModified = Self.response(["Last-Modified": Self.date(-10_000)])
        #expect(HTTPCachePolicy(heuristicFraction: 0.5).freshnessLifetime(lastModified) == 5_000)
        #expect(
            HTTPCachePolicy(heuristicFraction: 0.5, maximumHeuristicLifetime: 60).freshnessLifetime(lastModified) == 60)
        let floored = HTTPCachePolicy(minimumHeuristicLifetime: 300)
        #expect(floored.freshnessLifetime(Self.response([:])) == 300, "nothing stated: the floor")
        #expect(floored.freshnessLifetime(lastModified) == 1_000, "a heuristic above the floor")
        #expect(floored.freshnessLifetime(Self.response(["Last-Modified": Self.date(-100)])) == 300)
        // Explicit expiry is followed as sent, however short.
        #expect(floored.freshnessLifetime(Self.response(["Cache-Control": "max-age=0"])) == 0)
        #expect(floored.freshnessLifetime(Self.response(["Expires": Self.date(5)])) == 5)
        #expect(floored.freshnessLifetime(Self.response(["Expires": "0"])) == 0)
    }

    /// current age = max(apparent age, Age + response delay) + time resident (RFC 9111 4.2.3).
    @Test(
        arguments: [
            // (headers, request sent this long before t0, seconds since t0, age)
            ([:], 0.0, 0.0, 0.0),
            ([:], 0, 50, 50),
            (["Age": "30"], 0, 0, 30),
            (["Age": "30"], 5, 0, 35),
            (["Age": "30"], 5, 10, 45),
            (["Date": date(-100)], 0, 0, 100),  // apparent age: the origin sent it 100 s before it arrived
            (["Date": date(-100), "Age": "30"], 5, 0, 100),  // the larger of the two
            (["Date": date(-10), "Age": "30"], 5, 0, 35),
            (["Date": date(100)], 0, 0, 0),  // a clock ahead: no negative age
            (["Date": ""], 3, 7, 10),  // no Date: dated when it arrived; the delay still counts
            (["Age": "not a number"], 0, 0, 0),
            (["Age": "-30"], 0, 0, 0),
            (["Age": " 12 "], 0, 0, 12),
        ] as [([String: String], Double, Double, Double)])
    func theCurrentAgeAddsTheInitialAgeAndTheTimeResident(
        headers: [String: String], delay: Double, later: Double, age: Double
    ) {
        let response = Self.response(headers, delay: delay)
        #expect(HTTPCachePolicy().currentAge(response, now: Self.t0.addingTimeInterval(later)) == age, "\(headers)")
    }

    @Test func aTimeBeforeTheResponseArrivedAddsNoResidentTime() {
        let response = Self.response(["Age": "10"])
        #expect(HTTPCachePolicy().currentAge(response, now: Self.t0.addingTimeInterval(-100)) == 10)
    }

    /// Fresh while the current age is below the lifetime: the boundary itself is stale.
    @Test(
        arguments: [
            (["Cache-Control": "max-age=100"], 0.0, 99.0, true),
            (["Cache-Control": "max-age=100"], 0, 100, false),
            (["Cache-Control": "max-age=100", "Age": "40"], 0, 59, true),
            (["Cache-Control": "max-age=100", "Age": "40"], 0, 60, false),
            (["Cache-Control": "max-age=100", "Age": "40"], 10, 49, true),  // the delay counts as age
            (["Cache-Control": "max-age=100", "Age": "40"], 10, 50, false),
            (["Cache-Control": "max-age=100", "Date": date(-30)], 0, 69, true),
            (["Expires": date(60)], 0, 59, true),
            (["Expires": date(60)], 0, 60, false),
            (["Last-Modified": date(-1_000)], 0, 99, true),
            (["Last-Modified": date(-1_000)], 0, 100, false),
            (["Cache-Control": "max-age=0"], 0, 0, false),
            ([:], 0, 0, false),
        ] as [([String: String], Double, Double, Bool)])
    func aResponseIsFreshWhileItsAgeIsBelowItsLifetime(
        headers: [String: String], delay: Double, later: Double, fresh: Bool
    ) {
        let metadata = CacheMetadata(storedAt: Self.t0, http: Self.response(headers, delay: delay))
        let decision = HTTPCachePolicy().evaluate(metadata, now: Self.t0.addingTimeInterval(later))
        #expect((decision == .fresh) == fresh, "\(headers) at +\(later)")
        #expect((Self.t0.addingTimeInterval(later) < HTTPCachePolicy().freshUntil(metadata)) == fresh)
    }

    @Test func noCacheInAnyFormRevalidatesEveryUse() {
        let policy = HTTPCachePolicy()
        for headers in [
            ["Cache-Control": "no-cache"], ["Cache-Control": "max-age=600, no-cache"],
            ["Cache-Control": "no-cache=\"set-cookie\""],
            ["Cache-Control": "NO-CACHE"], ["Pragma": "no-cache"], ["Pragma": "No-Cache", "Expires": Self.date(600)],
        ] {
            let metadata = CacheMetadata(storedAt: Self.t0, http: Self.response(headers))
            #expect(policy.freshUntil(metadata) == .distantPast, "\(headers)")
            #expect(policy.evaluate(metadata, now: Self.t0) == .stale(conditionalHeaders: [:]), "\(headers)")
        }
        // Pragma is HTTP/1.0's: Cache-Control, when there is one, decides.
        let both = CacheMetadata(
            storedAt: Self.t0, http: Self.response(["Pragma": "no-cache", "Cache-Control": "max-age=60"]))
        #expect(policy.evaluate(both, now: Self.t0) == .fresh)
    }

    @Test func metadataOfSourcesThatAreNotHTTPIsFreshUntilEvicted() {
        let policy = HTTPCachePolicy()
        let file = CacheMetadata(contentType: "image/png", storedAt: Self.t0)
        #expect(policy.freshUntil(file) == .distantFuture)
        #expect(
            policy.evaluate(file, requestHeaders: ["Accept": "x"], now: .distantFuture.addingTimeInterval(-1)) == .fresh
        )
        #expect(policy.isStorable(file))
        #expect(policy.allowsStaleOnError(file, now: .distantFuture))
        #expect(!policy.allowsStaleWhileRevalidate(file, now: Self.t0))
        let assessment = policy.assess(file)
        #expect(
            assessment.freshUntil == .distantFuture && assessment.isStorable && assessment.directives.isEmpty
                && assessment.initialAge == nil)
    }

    @Test func aggressiveModeIsFreshForItsTimeToLiveFromWhenItWasStored() {
        let policy = HTTPCachePolicy(mode: .aggressive(ttl: 120))
        let stored = CacheMetadata(
            storedAt: Self.t0.addingTimeInterval(30),
            http: Self.response(["Cache-Control": "no-store, no-cache, max-age=0", "Age": "9999"]))
        #expect(policy.freshUntil(stored) == Self.t0.addingTimeInterval(150))
        #expect(policy.evaluate(stored, now: Self.t0.addingTimeInterval(149)) == .fresh)
        #expect(policy.evaluate(stored, now: Self.t0.addingTimeInterval(150)) == .stale(conditionalHeaders: [:]))
        #expect(
            policy.isStorable(stored) && policy.assess(stored).isStorable && policy.assess(stored).initialAge == nil)
        #expect(!policy.allowsStaleWhileRevalidate(stored, now: Self.t0.addingTimeInterval(151)))
        #expect(policy.allowsStaleOnError(stored, now: .distantFuture))
        // A file's metadata is fresh for the time to live too, from when it was stored.
        #expect(policy.freshUntil(CacheMetadata(storedAt: Self.t0)) == Self.t0.addingTimeInterval(120))
    }
}
