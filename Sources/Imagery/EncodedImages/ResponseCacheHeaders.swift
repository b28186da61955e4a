import Foundation

/// The cache headers of an image response, following its source (what the origin said
/// of the bytes holds for everything made from them):
///
/// - `Cache-Control: no-store` when the source was `no-store`;
/// - `private` when the source was `private`, else `public`; `no-cache` passed on;
/// - `max-age`: the smaller of the operator's maximum and the source's remaining freshness,
///   stated with `Age` when the source has aged (`max-age` = remaining + age), as a shared
///   cache would, so clients and CDNs downstream expire it when the source expires;
/// - `stale-while-revalidate=N` passed on (as this server honours it, so may a CDN in front);
/// - `Last-Modified`: the source's, when it is an HTTP date.
///
/// Everything that needs the source's headers parsed is worked out once, when a response is
/// stored (``init(source:assessment:freshUntil:)``); each response then costs some arithmetic.
public struct ResponseCacheHeaders: Sendable {
    private enum Kind: Sendable { case noStore, noCache, fresh }
    private let kind: Kind
    private let visibility: String
    /// `, stale-while-revalidate=N` when the source allows it, else empty.
    private let extensions: String
    private let freshUntil: Date
    /// The source's age when it arrived (RFC 9111's corrected initial age) and when that was;
    /// `nil` when ages do not apply (not HTTP, or aggressive mode).
    private let initialAge: (seconds: TimeInterval, at: Date)?
    public let lastModified: String?

    /// Whether the response may be kept at all (its source was not `no-store`).
    public var isStorable: Bool { kind != .noStore }

    /// The cache headers of a response made from `source`.
    /// - Parameters:
    ///   - source: The metadata of the source the response was made from.
    ///   - assessment: A policy's ``HTTPCachePolicy/assess(_:)`` of `source`.
    ///   - freshUntil: When the response stops being fresh (its source's freshness, as assessed or
    ///     as the pipeline kept it).
    public init(source: CacheMetadata, assessment: HTTPCachePolicy.Assessment, freshUntil: Date) {
        // A value that is no HTTP date is not passed on (nothing downstream could compare it).
        lastModified = source.http?.headers["last-modified"].flatMap { HTTPDate.parse($0) == nil ? nil : $0 }
        self.freshUntil = freshUntil
        let directives = assessment.directives
        visibility = directives["private"] != nil ? "private" : "public"
        extensions =
            HTTPCachePolicy.deltaSeconds(directives["stale-while-revalidate"]).map {
                ", stale-while-revalidate=\(Int($0))"
            } ?? ""
        kind = !assessment.isStorable ? .noStore : freshUntil == .distantPast ? .noCache : .fresh
        if let age = assessment.initialAge, let arrival = source.http?.responseTime {
            initialAge = (age, arrival)
        } else {
            initialAge = nil
        }
    }

    /// `Cache-Control` and `Age` (`nil`: none) at `now`, `max-age` at most `maximumAge` seconds.
    /// - Parameters:
    ///   - maximumAge: The longest `max-age` sent, in seconds (the operator's).
    ///   - now: The time to judge at.
    ///   - maxAgeFirst: `max-age=N, public` (imgproxy's order, which some clients parse by position)
    ///     rather than `public, max-age=N`.
    public func values(maximumAge: Int, now: Date = Date(), maxAgeFirst: Bool = false) -> (
        cacheControl: String, age: Int?
    ) {
        switch kind {
        case .noStore: return ("no-store", nil)
        case .noCache: return ("\(visibility), no-cache", nil)
        case .fresh: break
        }
        let remaining =
            freshUntil == .distantFuture
            ? maximumAge : Int(max(0, min(Double(maximumAge), freshUntil.timeIntervalSince(now))).rounded())
        let age = initialAge.map { Int(max(0, $0.seconds + now.timeIntervalSince($0.at))) } ?? 0
        let sent = age > 0 && remaining > 0 ? remaining + age : remaining
        let cacheControl =
            maxAgeFirst
            ? "max-age=\(sent), \(visibility)\(extensions)" : "\(visibility), max-age=\(sent)\(extensions)"
        return (cacheControl, age > 0 && remaining > 0 ? age : nil)
    }
}
