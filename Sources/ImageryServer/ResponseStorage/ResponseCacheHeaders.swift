import Foundation
import Imagery

/// The cache headers of an image response, following its source (what the origin said
/// of the bytes holds for everything made from them):
///
/// - `Cache-Control: no-store` when the source was `no-store`;
/// - `private` when the source was `private`, else `public`; `no-cache` passed on;
/// - `max-age`: the smaller of the operator's maximum and the source's remaining freshness,
///   stated with `Age` when the source has aged (`max-age` = remaining + age), as a shared
///   cache would, so clients and CDNs downstream expire it when the source expires;
/// - `Last-Modified`: the source's.
struct ResponseCacheHeaders: Equatable {
    let cacheControl: String
    let age: Int?
    let lastModified: String?

    /// - Parameters:
    ///   - maximumAge: The operator's `--max-age`, in seconds.
    ///   - policy: The policy the source's freshness was computed with.
    init(for response: StoredResponse, maximumAge: Int, policy: HTTPCachePolicy, now: Date = Date()) {
        let http = response.source.http
        lastModified = http?.headers["last-modified"]
        guard policy.isStorable(response.source) else {
            (cacheControl, age) = ("no-store", nil)
            return
        }
        let directives = HTTPCachePolicy.cacheControl(http?.headers["cache-control"])
        let visibility = directives["private"] != nil ? "private" : "public"
        if response.freshUntil == .distantPast {  // no-cache: revalidated before each use, here and downstream
            (cacheControl, age) = ("\(visibility), no-cache", nil)
            return
        }
        let remaining = response.freshUntil == .distantFuture
            ? maximumAge : Int(max(0, min(Double(maximumAge), response.freshUntil.timeIntervalSince(now))).rounded())
        var sourceAge = 0
        if case .http = policy.mode, let http { sourceAge = Int(max(0, policy.currentAge(http, now: now))) }
        if sourceAge > 0, remaining > 0 {
            (cacheControl, age) = ("\(visibility), max-age=\(remaining + sourceAge)", sourceAge)
        } else {
            (cacheControl, age) = ("\(visibility), max-age=\(remaining)", nil)
        }
    }
}
