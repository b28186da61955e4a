import Foundation

/// Decides whether a response may be stored, whether a stored one is fresh,
/// and how to revalidate a stale one: RFC 9111 for a private cache.
///
/// - Freshness lifetime: `max-age`, else `Expires` minus `Date`, else a fraction
///   (``heuristicFraction``) of the time since `Last-Modified`, capped by
///   ``maximumHeuristicLifetime``; else 0. A response with no explicit expiry
///   (no `max-age`, no `Expires`) is fresh for at least ``minimumHeuristicLifetime``.
/// - Age: the corrected initial age (apparent age, `Age` plus response delay)
///   plus the time resident in the cache.
/// - `no-store` is never stored; `no-cache` (and `Pragma: no-cache`) always
///   revalidates; `must-revalidate` forbids serving stale, even on error;
///   `stale-if-error=N` allows serving stale for N seconds past expiry when the origin fails.
/// - `Vary`: a stored response matches only requests with the same values of the
///   named headers; `Vary: *` is never stored.
///
/// ``Mode/aggressive(ttl:)`` ignores response headers: every successful response
/// is stored and fresh for `ttl` seconds, then revalidated, and served stale when the origin fails.
public struct HTTPCachePolicy: Sendable, Hashable {
    /// How response headers are treated.
    public enum Mode: Sendable, Hashable {
        /// Follow the response's caching headers (the default).
        case http
        /// Ignore them: store everything, fresh for `ttl` seconds.
        case aggressive(ttl: TimeInterval)
    }

    /// How response headers are treated; default ``Mode/http``.
    public var mode: Mode
    /// Heuristic freshness as a fraction of the time since `Last-Modified`; default 0.1.
    public var heuristicFraction: Double
    /// The longest heuristic freshness, in seconds; default one day.
    public var maximumHeuristicLifetime: TimeInterval
    /// The least freshness, in seconds, of a response that states no expiry of its own
    /// (no `max-age`, no `Expires`): a floor for origins that send nothing useful, so that
    /// not every use asks them again. Explicit `max-age`, `Expires`, `no-cache` and
    /// `no-store` are followed as sent. Default 0 (the RFC's heuristic alone).
    public var minimumHeuristicLifetime: TimeInterval

    /// A policy; defaults follow the RFC's suggestions.
    public init(
        mode: Mode = .http, heuristicFraction: Double = 0.1, maximumHeuristicLifetime: TimeInterval = 86_400,
        minimumHeuristicLifetime: TimeInterval = 0
    ) {
        self.mode = mode
        self.heuristicFraction = heuristicFraction
        self.maximumHeuristicLifetime = maximumHeuristicLifetime
        self.minimumHeuristicLifetime = minimumHeuristicLifetime
    }

    /// What to do with a stored response for a request.
    public enum Decision: Sendable, Hashable {
        /// Use it as it is.
        case fresh
        /// Revalidate first: send these conditional headers (`If-None-Match`,
        /// `If-Modified-Since`); may be empty when there is no validator.
        case stale(conditionalHeaders: [String: String])
        /// It was stored for other values of the headers it varies on: treat as a miss.
        case mismatch
    }

    /// Whether a response may be stored at all.
    public func isStorable(_ response: HTTPResponseInfo) -> Bool {
        // Only complete image bodies are worth keeping.
        guard response.statusCode == 200 else { return false }
        if case .aggressive = mode { return true }
        let directives = Self.cacheControl(response.headers["cache-control"])
        // `private` is fine: this is a private cache.
        if directives["no-store"] != nil { return false }
        if Self.varyNames(response.headers["vary"]).contains("*") { return false }
        return true
    }

    /// Whether bytes with this metadata may be kept (and everything made from them):
    /// always for sources that are not HTTP, else ``isStorable(_:)-(HTTPResponseInfo)``.
    public func isStorable(_ metadata: CacheMetadata) -> Bool {
        metadata.http.map(isStorable) ?? true
    }

    /// Decides how to use `stored` for a request with `requestHeaders` at `now`:
    /// fresh while `now` is before ``freshUntil(_:)``.
    public func evaluate(_ stored: CacheMetadata, requestHeaders: [String: String] = [:], now: Date = Date())
        -> Decision
    {
        if let response = stored.http, !response.varyingRequestHeaders.isEmpty {
            var lowerRequest: [String: String] = [:]
            for (name, value) in requestHeaders { lowerRequest[name.lowercased()] = value }
            for (name, value) in response.varyingRequestHeaders where (lowerRequest[name] ?? "") != value {
                return .mismatch
            }
        }
        if now < freshUntil(stored) { return .fresh }
        return .stale(conditionalHeaders: stored.http.map(conditionalHeaders) ?? [:])
    }

    /// The moment `stored` stops being fresh (RFC 9111 4.2: while its current age is below its
    /// freshness lifetime): `distantPast` when every use must revalidate (`no-cache`), `distantFuture`
    /// for sources that are not HTTP (fresh until evicted), `storedAt` + ttl in aggressive mode.
    /// Computed once, it makes a freshness check a comparison (the memory tiers keep it).
    public func freshUntil(_ stored: CacheMetadata) -> Date {
        if case .aggressive(let ttl) = mode { return stored.storedAt.addingTimeInterval(ttl) }
        guard let response = stored.http else { return .distantFuture }
        return freshUntil(
            response, directives: Self.cacheControl(response.headers["cache-control"]), date: Self.date(of: response))
    }

    /// ``freshUntil(_:)`` of an HTTP response whose `Cache-Control` and `Date` are parsed.
    private func freshUntil(_ response: HTTPResponseInfo, directives: [String: String?], date: Date) -> Date {
        let pragmaNoCache =
            response.headers["pragma"]?.lowercased().contains("no-cache") == true
            && response.headers["cache-control"] == nil
        if directives["no-cache"] != nil || pragmaNoCache { return .distantPast }
        // current age < lifetime  <=>  now < responseTime + lifetime - corrected initial age
        let initialAge = currentAge(response, date: date, now: response.responseTime)
        return response.responseTime.addingTimeInterval(
            freshnessLifetime(response, directives: directives, date: date) - initialAge)
    }

    /// What a cache that passes a stored response on needs to know of it, from one reading of
    /// its headers (``assess(_:)``).
    public struct Assessment: Sendable {
        /// ``HTTPCachePolicy/freshUntil(_:)``.
        public let freshUntil: Date
        /// ``HTTPCachePolicy/isStorable(_:)-(CacheMetadata)``.
        public let isStorable: Bool
        /// Its `Cache-Control` directives (``HTTPCachePolicy/cacheControl(_:)``); empty when not HTTP.
        public let directives: [String: String?]
        /// Its corrected initial age in seconds (its age when it arrived); `nil` when not HTTP or
        /// in aggressive mode, where ages do not apply.
        public let initialAge: TimeInterval?
    }

    /// ``freshUntil(_:)``, ``isStorable(_:)-(CacheMetadata)``, the directives and the initial age
    /// of `stored`, with `Cache-Control` and `Date` parsed once (a stored response read from disk
    /// needs them all).
    public func assess(_ stored: CacheMetadata) -> Assessment {
        guard let response = stored.http else {
            return Assessment(freshUntil: freshUntil(stored), isStorable: true, directives: [:], initialAge: nil)
        }
        let directives = Self.cacheControl(response.headers["cache-control"])
        guard case .http = mode else {
            return Assessment(
                freshUntil: freshUntil(stored), isStorable: isStorable(response), directives: directives,
                initialAge: nil)
        }
        let date = Self.date(of: response)
        let storable =
            response.statusCode == 200 && directives["no-store"] == nil
            && !Self.varyNames(response.headers["vary"]).contains("*")
        return Assessment(
            freshUntil: freshUntil(response, directives: directives, date: date), isStorable: storable,
            directives: directives,
            initialAge: currentAge(response, date: date, now: response.responseTime)
        )
    }

    /// Whether `stored` may be served stale because the origin failed (`stale-if-error`).
    public func allowsStaleOnError(_ stored: CacheMetadata, now: Date = Date()) -> Bool {
        guard let response = stored.http else { return true }
        if case .aggressive = mode { return true }
        let directives = Self.cacheControl(response.headers["cache-control"])
        if directives["must-revalidate"] != nil || directives["proxy-revalidate"] != nil { return false }
        guard let window = Self.deltaSeconds(directives["stale-if-error"]) else { return false }
        let staleness = currentAge(response, now: now) - freshnessLifetime(response)
        return staleness <= window
    }

    /// Whether `stored`, stale, may be used while it is revalidated in the background: within the
    /// `stale-while-revalidate=N` seconds past its freshness that the response allows (RFC 5861),
    /// and not when it must be revalidated first (`no-cache`, `must-revalidate`). Never in aggressive mode.
    public func allowsStaleWhileRevalidate(_ stored: CacheMetadata, now: Date = Date()) -> Bool {
        guard case .http = mode, let response = stored.http else { return false }
        let directives = Self.cacheControl(response.headers["cache-control"])
        guard directives["must-revalidate"] == nil, directives["proxy-revalidate"] == nil,
            let window = Self.deltaSeconds(directives["stale-while-revalidate"])
        else { return false }
        let expiry = freshUntil(stored)
        return expiry != .distantPast && now.timeIntervalSince(expiry) <= window
    }

    /// The stored response refreshed by a 304: its headers updated with the new
    /// ones (RFC 9111 4.3.4), its times reset.
    public func refreshed(_ stored: CacheMetadata, notModified: HTTPResponseInfo) -> CacheMetadata {
        var metadata = stored
        guard var response = stored.http else {
            metadata.storedAt = notModified.responseTime
            metadata.http = notModified
            return metadata
        }
        for (name, value) in notModified.headers where name != "content-type" { response.headers[name] = value }
        response.requestTime = notModified.requestTime
        response.responseTime = notModified.responseTime
        metadata.http = response
        metadata.storedAt = notModified.responseTime
        return metadata
    }

    /// The freshness lifetime in seconds (RFC 9111 4.2.1).
    public func freshnessLifetime(_ response: HTTPResponseInfo) -> TimeInterval {
        freshnessLifetime(
            response, directives: Self.cacheControl(response.headers["cache-control"]), date: Self.date(of: response))
    }

    private func freshnessLifetime(_ response: HTTPResponseInfo, directives: [String: String?], date: Date)
        -> TimeInterval
    {
        if let maxAge = directives["max-age"] {
            // Invalid freshness information (`max-age=-1`, `max-age=soon`) means stale (RFC 9111 4.2.1).
            return Self.deltaSeconds(maxAge) ?? 0
        }
        if let expiresHeader = response.headers["expires"] {
            // An invalid Expires (such as "0") means already expired.
            guard let expires = HTTPDate.parse(expiresHeader) else { return 0 }
            return max(0, expires.timeIntervalSince(date))
        }
        var heuristic: TimeInterval = 0
        if let lastModified = response.headers["last-modified"].flatMap(HTTPDate.parse) {
            heuristic = min(maximumHeuristicLifetime, max(0, date.timeIntervalSince(lastModified) * heuristicFraction))
        }
        return max(heuristic, minimumHeuristicLifetime)
    }

    /// The response's current age in seconds (RFC 9111 4.2.3).
    public func currentAge(_ response: HTTPResponseInfo, now: Date) -> TimeInterval {
        currentAge(response, date: Self.date(of: response), now: now)
    }

    private func currentAge(_ response: HTTPResponseInfo, date: Date, now: Date) -> TimeInterval {
        let apparentAge = max(0, response.responseTime.timeIntervalSince(date))
        let ageValue = Self.deltaSeconds(response.headers["age"]) ?? 0
        let responseDelay = max(0, response.responseTime.timeIntervalSince(response.requestTime))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(response.responseTime))
        return correctedInitialAge + residentTime
    }

    /// The response's `Date`, or when it arrived if it has none (or an invalid one).
    private static func date(of response: HTTPResponseInfo) -> Date {
        response.headers["date"].flatMap(HTTPDate.parse) ?? response.responseTime
    }

    /// `If-None-Match` from `ETag`, `If-Modified-Since` from `Last-Modified`.
    func conditionalHeaders(for response: HTTPResponseInfo) -> [String: String] {
        var headers: [String: String] = [:]
        if let etag = response.headers["etag"] { headers["If-None-Match"] = etag }
        if let lastModified = response.headers["last-modified"] { headers["If-Modified-Since"] = lastModified }
        return headers
    }

    /// `Cache-Control` directives, names lower-cased, values unquoted (`nil` for flags).
    /// - Complexity: One pass over the header's bytes (it is read for every freshness decision).
    public static func cacheControl(_ header: String?) -> [String: String?] {
        guard var header, !header.isEmpty else { return [:] }
        return header.withUTF8 { bytes in
            var directives: [String: String?] = [:]
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
            /// `range` without surrounding spaces and tabs (and, for values, quotes).
            func trimmed(_ range: Range<Int>, quotes: Bool) -> Range<Int> {
                var (lower, upper) = (range.lowerBound, range.upperBound)
                while lower < upper, isSpace(bytes[lower]) { lower += 1 }
                while upper > lower, isSpace(bytes[upper - 1]) { upper -= 1 }
                if quotes {
                    while lower < upper, bytes[lower] == UInt8(ascii: "\"") { lower += 1 }
                    while upper > lower, bytes[upper - 1] == UInt8(ascii: "\"") { upper -= 1 }
                }
                return lower..<upper
            }
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
                var equals = start
                while equals < end, bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                let name = trimmed(start..<equals, quotes: false)
                if !name.isEmpty {
                    let lowered = String(unsafeUninitializedCapacity: name.count) { buffer in
                        for (offset, byte) in bytes[name].enumerated() {
                            buffer[offset] = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
                        }
                        return name.count
                    }
                    let value =
                        equals < end
                        ? String(
                            decoding: UnsafeBufferPointer(rebasing: bytes[trimmed(equals + 1..<end, quotes: true)]),
                            as: UTF8.self)
                        : nil
                    directives[lowered] = .some(value)
                }
                start = end + 1
            }
            return directives
        }
    }

    /// A `delta-seconds` value (RFC 9111 1.2.2: digits only, whitespace around them ignored) of a
    /// directive or header, `nil` when absent, a flag, or not digits (`-1`, `1.5`, `inf`, `0x10`);
    /// values past 2^31 read as 2^31, as the RFC asks, so no arithmetic on it can overflow.
    public static func deltaSeconds(_ value: String??) -> TimeInterval? {
        guard case .some(.some(let text)) = value else { return nil }
        let digits = text.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let limit: Double = 2_147_483_648
        var seconds: Double = 0
        for digit in digits {
            seconds = min(limit, seconds * 10 + Double(digit - 0x30))
        }
        return seconds
    }

    /// The header names listed in `Vary`, lower-cased.
    package static func varyNames(_ header: String?) -> [String] {
        HTTPHeaderList.elements(header ?? "").map { $0.lowercased() }
    }
}
