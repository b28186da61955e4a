import Foundation
import Testing

@testable import Imagery

@Suite("HTTPCachePolicy")
struct HTTPCachePolicyTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    func stored(_ headers: [String: String], requestHeaders: [String: String] = [:], delay: TimeInterval = 0)
        -> CacheMetadata
    {
        var headers = headers
        if headers["Date"] == nil { headers["Date"] = HTTPDate.format(t0) }
        let info = HTTPResponseInfo(
            statusCode: 200, headers: headers, requestTime: t0, responseTime: t0.addingTimeInterval(delay),
            requestHeaders: requestHeaders
        )
        return CacheMetadata(storedAt: t0, http: info)
    }

    @Test func deltaSecondsAreDigitsOnlyAndBounded() {
        #expect(HTTPCachePolicy.deltaSeconds(" 600 ") == 600)
        #expect(HTTPCachePolicy.deltaSeconds("0") == 0)
        #expect(HTTPCachePolicy.deltaSeconds("99999999999999999999999") == 2_147_483_648)
        for bad in ["", "-1", "1.5", "inf", "nan", "1e300", "0x10", "+5", "5 5"] {
            #expect(HTTPCachePolicy.deltaSeconds(bad) == nil, "\(bad)")
        }
        #expect(HTTPCachePolicy.deltaSeconds(String?.none) == nil)
    }

    @Test func anInvalidMaxAgeIsStaleAndAHugeAgeIsBounded() {
        let policy = HTTPCachePolicy()
        // RFC 9111 4.2.1: invalid freshness information means stale, even with a later Expires.
        let invalid = stored(["Cache-Control": "max-age=soon", "Expires": HTTPDate.format(t0.addingTimeInterval(600))])
        #expect(policy.freshnessLifetime(invalid.http!) == 0)
        // Age: 1e300 was a Double the response's Age arithmetic trapped on; now it is not a delta-seconds.
        let huge = stored(["Cache-Control": "max-age=60", "Age": "1e300"])
        #expect(policy.assess(huge).initialAge == 0)
        let big = stored(["Cache-Control": "max-age=60", "Age": "99999999999999999999"])
        #expect(policy.assess(big).initialAge == 2_147_483_648)
    }

    @Test func aDateWithNonASCIIBytesIsNotADate() {
        // Foundation's DateFormatter trapped on this one (the fuzzer's find): it never reaches it now.
        let hostile =
            "Tue, 15 \u{591}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}#\u{FFFD}\u{FFFD}r\u{FFFD}"
        #expect(HTTPDate.parse(hostile) == nil)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test func headerListsSplitOnEveryCommaByteEvenBeforeACombiningMark() {
        // ",\u{353}" is one Character: a split on Characters would glue the two names together.
        #expect(HTTPHeaderList.elements("Accept,\u{353}X, \tOrigin ,,") == ["Accept", "\u{353}X", "Origin"])
        #expect(HTTPCachePolicy.varyNames("Accept,\u{353}*") == ["accept", "\u{353}*"])
        #expect(HTTPHeaderList.elements("") == [] && HTTPHeaderList.elements(" , ") == [])
    }

    @Test func anAssessmentAgreesWithTheQuestionsItAnswersAtOnce() {
        let cases: [[String: String]] = [
            ["Cache-Control": "max-age=600"], ["Cache-Control": "private, max-age=60", "Age": "20"],
            ["Cache-Control": "no-store"], ["Cache-Control": "no-cache", "ETag": "\"a\""], ["Pragma": "no-cache"],
            ["Expires": HTTPDate.format(t0.addingTimeInterval(90))], ["Expires": "0"],
            ["Vary": "*", "Cache-Control": "max-age=5"],
            ["Last-Modified": HTTPDate.format(t0.addingTimeInterval(-86_400))], [:],
            [
                "Cache-Control": "max-age=60, stale-while-revalidate=30",
                "Date": HTTPDate.format(t0.addingTimeInterval(-10)),
            ],
        ]
        for policy in [
            HTTPCachePolicy(), HTTPCachePolicy(minimumHeuristicLifetime: 300),
            HTTPCachePolicy(mode: .aggressive(ttl: 50)),
        ] {
            for headers in cases {
                for metadata in [stored(headers), stored(headers, delay: 3)] {
                    let assessment = policy.assess(metadata)
                    #expect(assessment.freshUntil == policy.freshUntil(metadata), "\(headers)")
                    #expect(assessment.isStorable == policy.isStorable(metadata), "\(headers)")
                    #expect(
                        assessment.directives == HTTPCachePolicy.cacheControl(metadata.http?.headers["cache-control"]),
                        "\(headers)")
                    let age =
                        policy.mode == .http ? metadata.http.map { policy.currentAge($0, now: $0.responseTime) } : nil
                    #expect(assessment.initialAge == age, "\(headers)")
                }
            }
            let local = policy.assess(CacheMetadata(storedAt: t0))
            #expect(
                local.freshUntil == policy.freshUntil(CacheMetadata(storedAt: t0)) && local.isStorable
                    && local.initialAge == nil)
        }
    }

    @Test func maxAgeDecidesFreshnessAndWinsOverExpires() {
        let policy = HTTPCachePolicy()
        let metadata = stored([
            "Cache-Control": "public, max-age=100", "Expires": HTTPDate.format(t0.addingTimeInterval(10)),
        ])
        #expect(policy.evaluate(metadata, now: t0.addingTimeInterval(99)) == .fresh)
        #expect(policy.evaluate(metadata, now: t0.addingTimeInterval(101)) == .stale(conditionalHeaders: [:]))
    }

    @Test func expiresIsMeasuredFromDateAndAnInvalidExpiresIsAlreadyStale() {
        let policy = HTTPCachePolicy()
        // The origin's clock is an hour behind: Expires - Date still gives 60 s.
        let skewed = stored([
            "Date": HTTPDate.format(t0.addingTimeInterval(-3600)),
            "Expires": HTTPDate.format(t0.addingTimeInterval(-3540)),
        ])
        #expect(policy.freshnessLifetime(skewed.http!) == 60)
        #expect(policy.evaluate(stored(["Expires": "0"]), now: t0) == .stale(conditionalHeaders: [:]))
    }

    @Test func ageAndResponseDelayAddToTheCurrentAge() {
        let policy = HTTPCachePolicy()
        let metadata = stored(["Cache-Control": "max-age=100", "Age": "30"], delay: 5)
        #expect(policy.currentAge(metadata.http!, now: t0.addingTimeInterval(5)) == 35)
        #expect(policy.evaluate(metadata, now: t0.addingTimeInterval(60)) == .fresh)
        #expect(policy.evaluate(metadata, now: t0.addingTimeInterval(75)) != .fresh)
    }

    @Test func heuristicFreshnessIsATenthOfTheAgeSinceModificationCappedAtADay() {
        let policy = HTTPCachePolicy()
        let recent = stored(["Last-Modified": HTTPDate.format(t0.addingTimeInterval(-1000))])
        #expect(policy.freshnessLifetime(recent.http!) == 100)
        let old = stored(["Last-Modified": HTTPDate.format(t0.addingTimeInterval(-100 * 86_400))])
        #expect(policy.freshnessLifetime(old.http!) == 86_400)
        #expect(policy.freshnessLifetime(stored([:]).http!) == 0)
    }

    @Test func revalidationSendsTheValidatorsItHas() {
        let policy = HTTPCachePolicy()
        let metadata = stored([
            "Cache-Control": "no-cache", "ETag": "\"abc\"", "Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT",
        ])
        #expect(
            policy.evaluate(metadata, now: t0)
                == .stale(conditionalHeaders: [
                    "If-None-Match": "\"abc\"", "If-Modified-Since": "Tue, 14 Nov 2023 22:13:20 GMT",
                ]))
        #expect(
            policy.evaluate(
                stored(["Pragma": "no-cache", "Expires": HTTPDate.format(t0.addingTimeInterval(60))]), now: t0)
                != .fresh)
    }

    @Test func noStoreAndVaryStarAreNotStorable() {
        let policy = HTTPCachePolicy()
        #expect(!policy.isStorable(stored(["Cache-Control": "no-store"]).http!))
        #expect(!policy.isStorable(stored(["Vary": "*"]).http!))
        #expect(policy.isStorable(stored(["Cache-Control": "private, max-age=60"]).http!))
        #expect(HTTPCachePolicy(mode: .aggressive(ttl: 60)).isStorable(stored(["Cache-Control": "no-store"]).http!))
    }

    @Test func varyMatchesOnlyTheSameRequestHeaderValues() {
        let policy = HTTPCachePolicy()
        let metadata = stored(
            ["Cache-Control": "max-age=60", "Vary": "Accept, Accept-Language"], requestHeaders: ["Accept": "image/webp"]
        )
        #expect(policy.evaluate(metadata, requestHeaders: ["accept": "image/webp"], now: t0) == .fresh)
        #expect(policy.evaluate(metadata, requestHeaders: ["Accept": "image/png"], now: t0) == .mismatch)
        #expect(
            policy.evaluate(metadata, requestHeaders: ["Accept": "image/webp", "Accept-Language": "fr"], now: t0)
                == .mismatch)
    }

    @Test func staleIfErrorHasAWindowAndMustRevalidateForbidsIt() {
        let policy = HTTPCachePolicy()
        let tolerant = stored(["Cache-Control": "max-age=10, stale-if-error=60"])
        #expect(policy.allowsStaleOnError(tolerant, now: t0.addingTimeInterval(50)))
        #expect(!policy.allowsStaleOnError(tolerant, now: t0.addingTimeInterval(80)))
        #expect(
            !policy.allowsStaleOnError(
                stored(["Cache-Control": "max-age=10, must-revalidate, stale-if-error=60"]),
                now: t0.addingTimeInterval(20)))
        #expect(!policy.allowsStaleOnError(stored(["Cache-Control": "max-age=10"]), now: t0.addingTimeInterval(20)))
    }

    @Test func aggressiveModeIgnoresHeadersForATimeToLive() {
        let policy = HTTPCachePolicy(mode: .aggressive(ttl: 600))
        let metadata = stored(["Cache-Control": "no-cache, max-age=0", "ETag": "\"e\""])
        #expect(policy.evaluate(metadata, now: t0.addingTimeInterval(599)) == .fresh)
        #expect(
            policy.evaluate(metadata, now: t0.addingTimeInterval(601))
                == .stale(conditionalHeaders: ["If-None-Match": "\"e\""]))
        #expect(policy.allowsStaleOnError(metadata, now: t0.addingTimeInterval(10_000)))
    }

    @Test func aNotModifiedResponseRefreshesHeadersAndTimes() {
        let policy = HTTPCachePolicy()
        let metadata = stored(["Cache-Control": "max-age=0", "ETag": "\"1\"", "Content-Type": "image/png"])
        let later = t0.addingTimeInterval(1000)
        let notModified = HTTPResponseInfo(
            statusCode: 304, headers: ["Cache-Control": "max-age=300", "Date": HTTPDate.format(later)],
            requestTime: later, responseTime: later, requestHeaders: [:])
        let refreshed = policy.refreshed(metadata, notModified: notModified)
        #expect(refreshed.http?.headers["cache-control"] == "max-age=300")
        #expect(refreshed.http?.headers["etag"] == "\"1\"")
        #expect(refreshed.http?.statusCode == 200)
        #expect(policy.evaluate(refreshed, now: later.addingTimeInterval(100)) == .fresh)
    }

    @Test func parsesTheThreeHTTPDateForms() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("yesterday") == nil)
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test func staleWhileRevalidateHasAWindowAndYieldsToMustRevalidate() {
        let policy = HTTPCachePolicy()
        let swr = stored(["Cache-Control": "max-age=60, stale-while-revalidate=30"])
        #expect(policy.evaluate(swr, now: t0.addingTimeInterval(10)) == .fresh)
        #expect(policy.allowsStaleWhileRevalidate(swr, now: t0.addingTimeInterval(80)))
        #expect(!policy.allowsStaleWhileRevalidate(swr, now: t0.addingTimeInterval(95)))
        #expect(
            !policy.allowsStaleWhileRevalidate(
                stored(["Cache-Control": "max-age=60, stale-while-revalidate=30, must-revalidate"]),
                now: t0.addingTimeInterval(80)))
        #expect(
            !policy.allowsStaleWhileRevalidate(
                stored(["Cache-Control": "no-cache, stale-while-revalidate=30"]), now: t0.addingTimeInterval(1)))
        #expect(
            !policy.allowsStaleWhileRevalidate(stored(["Cache-Control": "max-age=60"]), now: t0.addingTimeInterval(80)))
    }

    @Test func parsesCacheControlDirectives() {
        #expect(HTTPCachePolicy.cacheControl("max-age=60, private") == ["max-age": "60", "private": String?.none])
        #expect(
            HTTPCachePolicy.cacheControl(" No-Cache ,\tMAX-AGE = \"120\" ") == [
                "no-cache": String?.none, "max-age": "120",
            ])
        #expect(
            HTTPCachePolicy.cacheControl("stale-if-error=30,,must-revalidate,") == [
                "stale-if-error": "30", "must-revalidate": String?.none,
            ])
        #expect(HTTPCachePolicy.cacheControl("=x, private=\"set-cookie\"") == ["private": "set-cookie"])
        #expect(HTTPCachePolicy.cacheControl("") == [:])
        #expect(HTTPCachePolicy.cacheControl(nil) == [:])
    }

    @Test func theHandWrittenIMFFixdateParserAgreesWithDateFormatter() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {  // 1900 to 2100, whole seconds
            let date = Date(
                timeIntervalSince1970: TimeInterval(Int64.random(in: -2_208_988_800...4_102_444_800, using: &generator))
            )
            let text = HTTPDate.format(date)
            #expect(HTTPDate.parseIMFFixdate(text) == date, "\(text)")
        }
        #expect(HTTPDate.parse(" Thu, 29 Feb 2024 23:59:59 GMT ") == Date(timeIntervalSince1970: 1_709_251_199))
        for bad in [
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 0x Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT!", "",
        ] {
            #expect(HTTPDate.parseIMFFixdate(bad) == nil, "\(bad)")
        }
    }
}
