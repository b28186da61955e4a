import Foundation
import Testing

@testable import Imagery

/// RFC 9111's other rules: what may be stored (3), `Vary` (4.1), revalidation and its 304 (4.3),
/// `must-revalidate`, and RFC 5861's `stale-while-revalidate` and `stale-if-error`.
@Suite("HTTP storage, Vary and staleness")
struct HTTPStorageAndStalenessTests {
    static let t0 = HTTPFreshnessTests.t0

    static func stored(
        _ headers: [String: String], status: Int = 200, requestHeaders: [String: String] = [:]
    ) -> CacheMetadata {
        var headers = headers
        if headers["Date"] == nil { headers["Date"] = HTTPDate.format(t0) }
        let info = HTTPResponseInfo(
            statusCode: status, headers: headers, requestTime: t0, responseTime: t0, requestHeaders: requestHeaders)
        return CacheMetadata(storedAt: t0, http: info)
    }

    static func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    @Test(
        arguments: [
            (200, ["Cache-Control": "max-age=60"], true),
            (200, ["Cache-Control": "private, max-age=60"], true),  // a private cache may keep it
            (200, ["Cache-Control": "no-cache"], true),  // kept, revalidated on every use
            (200, [:], true),
            (200, ["Cache-Control": "no-store"], false),
            (200, ["Cache-Control": "max-age=60, NO-STORE"], false),
            (200, ["Vary": "*"], false),
            (200, ["Vary": "Accept, *"], false),
            (200, ["Vary": "Accept"], true),
            (206, ["Cache-Control": "max-age=60"], false),  // only whole image bodies
            (304, [:], false),
            (404, ["Cache-Control": "max-age=60"], false),
            (500, [:], false),
        ] as [(Int, [String: String], Bool)])
    func onlyWholeResponsesThatAllowItAreStored(status: Int, headers: [String: String], storable: Bool) {
        let metadata = Self.stored(headers, status: status)
        let policy = HTTPCachePolicy()
        #expect(policy.isStorable(metadata) == storable, "\(status) \(headers)")
        #expect(policy.isStorable(metadata.http!) == storable)
        #expect(policy.assess(metadata).isStorable == storable)
        // Aggressive mode keeps every whole response, and nothing else.
        #expect(HTTPCachePolicy(mode: .aggressive(ttl: 60)).isStorable(metadata) == (status == 200))
    }

    @Test func theResponseInfoKeepsOnlyTheHeadersCachingNeedsInLowerCase() {
        let info = HTTPResponseInfo(
            statusCode: 200,
            headers: [
                "Cache-Control": "max-age=1", "ETAG": "\"x\"", "Set-Cookie": "a=b", "Content-Length": "10",
                "Content-Type": "image/png",
                "Pragma": "no-cache", "X-Custom": "1", "Vary": "Accept-Encoding, Accept",
            ],
            requestTime: Self.t0, responseTime: Self.t0,
            requestHeaders: ["ACCEPT": "image/avif", "Cookie": "secret"]
        )
        #expect(Set(info.headers.keys) == ["cache-control", "etag", "content-type", "pragma", "vary"])
        #expect(info.headers["etag"] == "\"x\"")
        // The request headers it varies on, by lower-cased name, "" when the request had none.
        #expect(info.varyingRequestHeaders == ["accept-encoding": "", "accept": "image/avif"])
        let star = HTTPResponseInfo(
            statusCode: 200, headers: ["Vary": "*"], requestTime: Self.t0, responseTime: Self.t0, requestHeaders: [:])
        #expect(star.varyingRequestHeaders.isEmpty)
    }

    /// A response stored for one request matches another only with the same values of what it varies
    /// on (names in any case; a header absent on both sides matches; absent on one side does not).
    @Test(
        arguments: [
            (["Accept": "image/webp"], ["accept": "image/webp"], true),
            (["Accept": "image/webp"], ["ACCEPT": "image/webp", "Accept-Language": "fr"], true),  // not varied on
            (["Accept": "image/webp"], ["Accept": "image/png"], false),
            (["Accept": "image/webp"], ["Accept": "image/webp "], false),  // values compared as they are
            (["Accept": "image/webp"], [:], false),
            ([:], [:], true),
            ([:], ["Accept": "image/webp"], false),
            ([:], ["Accept": ""], true),
        ] as [([String: String], [String: String], Bool)])
    func varyMatchesOnlyTheSameValues(storedFor: [String: String], request: [String: String], matches: Bool) {
        let metadata = Self.stored(["Cache-Control": "max-age=60", "Vary": "Accept"], requestHeaders: storedFor)
        let decision = HTTPCachePolicy().evaluate(metadata, requestHeaders: request, now: Self.t0)
        #expect(decision == (matches ? .fresh : .mismatch), "\(storedFor) vs \(request)")
    }

    @Test func aMismatchIsAMissEvenWhenStale() {
        let metadata = Self.stored(
            ["Cache-Control": "max-age=0", "Vary": "Accept", "ETag": "\"v\""], requestHeaders: ["Accept": "a"])
        #expect(HTTPCachePolicy().evaluate(metadata, requestHeaders: ["Accept": "b"], now: Self.at(100)) == .mismatch)
        #expect(
            HTTPCachePolicy().evaluate(metadata, requestHeaders: ["Accept": "a"], now: Self.at(100))
                == .stale(conditionalHeaders: ["If-None-Match": "\"v\""]))
    }

    @Test(
        arguments: [
            ([:], [:]),
            (["ETag": "\"abc\""], ["If-None-Match": "\"abc\""]),
            (["ETag": "W/\"weak\""], ["If-None-Match": "W/\"weak\""]),
            (
                ["Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT"],
                ["If-Modified-Since": "Tue, 14 Nov 2023 22:13:20 GMT"]
            ),
            (
                ["ETag": "\"e\"", "Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT"],
                ["If-None-Match": "\"e\"", "If-Modified-Since": "Tue, 14 Nov 2023 22:13:20 GMT"]
            ),
        ] as [([String: String], [String: String])])
    func aStaleResponseIsRevalidatedWithTheValidatorsItHas(validators: [String: String], conditional: [String: String])
    {
        var headers = validators
        headers["Cache-Control"] = "max-age=10"
        #expect(
            HTTPCachePolicy().evaluate(Self.stored(headers), now: Self.at(10))
                == .stale(conditionalHeaders: conditional))
    }

    @Test func a304UpdatesTheStoredHeadersButNotTheContentTypeAndResetsTheTimes() throws {
        let policy = HTTPCachePolicy()
        let original = Self.stored([
            "Cache-Control": "max-age=10", "ETag": "\"1\"", "Content-Type": "image/png", "Last-Modified": "x",
        ])
        let later = Self.at(1_000)
        let notModified = HTTPResponseInfo(
            statusCode: 304,
            headers: [
                "Cache-Control": "max-age=300", "ETag": "\"1\"", "Content-Type": "text/html",
                "Date": HTTPDate.format(later), "Age": "5",
            ],
            requestTime: later.addingTimeInterval(-1), responseTime: later, requestHeaders: [:]
        )
        let refreshed = policy.refreshed(original, notModified: notModified)
        let http = try #require(refreshed.http)
        #expect(http.statusCode == 200, "still the stored 200")
        #expect(http.headers["content-type"] == "image/png")
        #expect(
            http.headers["cache-control"] == "max-age=300" && http.headers["age"] == "5"
                && http.headers["last-modified"] == "x")
        #expect(http.requestTime == later.addingTimeInterval(-1) && http.responseTime == later)
        #expect(refreshed.storedAt == later)
        // Age 5 and a second's delay: fresh for 294 s from the 304.
        #expect(policy.evaluate(refreshed, now: later.addingTimeInterval(293)) == .fresh)
        #expect(policy.evaluate(refreshed, now: later.addingTimeInterval(294)) != .fresh)
    }

    @Test func a304ForMetadataThatWasNotHTTPBecomesItsResponse() {
        let later = Self.at(50)
        let notModified = HTTPResponseInfo(
            statusCode: 304, headers: ["Cache-Control": "max-age=9"], requestTime: later, responseTime: later,
            requestHeaders: [:])
        let refreshed = HTTPCachePolicy().refreshed(
            CacheMetadata(contentType: "image/gif", storedAt: Self.t0), notModified: notModified)
        #expect(refreshed.http == notModified && refreshed.storedAt == later && refreshed.contentType == "image/gif")
    }

    /// `stale-if-error=N`: served stale for N seconds past expiry when the origin fails, never with
    /// `must-revalidate` or `proxy-revalidate`; nothing without the directive.
    @Test(
        arguments: [
            ("max-age=10, stale-if-error=60", 10.0, true),
            ("max-age=10, stale-if-error=60", 70, true),  // exactly 60 s stale
            ("max-age=10, stale-if-error=60", 71, false),
            ("max-age=10, stale-if-error=60", 5, true),  // still fresh
            ("max-age=10, stale-if-error=0", 10, true),
            ("max-age=10, stale-if-error=0", 11, false),
            ("max-age=10, stale-if-error=abc", 11, false),
            ("max-age=10, stale-if-error", 11, false),
            ("max-age=10", 11, false),
            ("max-age=10, must-revalidate, stale-if-error=60", 11, false),
            ("max-age=10, proxy-revalidate, stale-if-error=60", 11, false),
            ("no-cache, stale-if-error=60", 30, true),  // stale at once, the window counts from storage
        ] as [(String, Double, Bool)])
    func staleIfErrorAllowsAWindowPastExpiry(cacheControl: String, later: Double, allowed: Bool) {
        let metadata = Self.stored(["Cache-Control": cacheControl])
        #expect(
            HTTPCachePolicy().allowsStaleOnError(metadata, now: Self.at(later)) == allowed,
            "\(cacheControl) at +\(later)")
    }

    /// `stale-while-revalidate=N`: used stale for N seconds past expiry while revalidated in the
    /// background; never when every use must be revalidated first.
    @Test(
        arguments: [
            ("max-age=60, stale-while-revalidate=30", 70.0, true),
            ("max-age=60, stale-while-revalidate=30", 90, true),
            ("max-age=60, stale-while-revalidate=30", 91, false),
            ("max-age=60, stale-while-revalidate=30, must-revalidate", 70, false),
            ("max-age=60, stale-while-revalidate=30, proxy-revalidate", 70, false),
            ("no-cache, stale-while-revalidate=30", 1, false),
            ("max-age=60, stale-while-revalidate=x", 70, false),
            ("max-age=60", 70, false),
        ] as [(String, Double, Bool)])
    func staleWhileRevalidateAllowsAWindowPastExpiry(cacheControl: String, later: Double, allowed: Bool) {
        let metadata = Self.stored(["Cache-Control": cacheControl])
        #expect(
            HTTPCachePolicy().allowsStaleWhileRevalidate(metadata, now: Self.at(later)) == allowed,
            "\(cacheControl) at +\(later)")
    }

    @Test func mustRevalidateLeavesAFreshResponseFresh() {
        let metadata = Self.stored(["Cache-Control": "max-age=60, must-revalidate"])
        #expect(HTTPCachePolicy().evaluate(metadata, now: Self.at(59)) == .fresh)
        #expect(HTTPCachePolicy().evaluate(metadata, now: Self.at(60)) != .fresh)
    }

    @Test func theAssessmentKeepsTheParsedDirectivesAndTheInitialAge() {
        let assessment = HTTPCachePolicy().assess(
            Self.stored(["Cache-Control": "Public, Max-Age=\"60\", stale-if-error=5", "Age": "7"]))
        #expect(assessment.directives == ["public": String?.none, "max-age": "60", "stale-if-error": "5"])
        #expect(assessment.initialAge == 7)
        #expect(assessment.freshUntil == Self.at(53))
    }
}
