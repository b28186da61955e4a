import Foundation
import Imagery
import ImageryServer

/// An origin's cache headers as every tier reads them: `Cache-Control` directives, HTTP dates,
/// `Age`, `Vary`, freshness, revalidation, the stored metadata's JSON, and the cache headers of
/// the image response made from them. Input: header lines, each a byte choosing the name and
/// the value up to a newline; the first byte says how many are the response's (the rest are a
/// 304's).
enum CacheHeadersTarget {
    static let names = [
        "Cache-Control", "Expires", "Date", "Age", "ETag", "Last-Modified", "Vary", "Content-Type", "Pragma", "Accept",
    ]
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func run(_ bytes: [UInt8]) throws(FuzzFailure) {
        var reader = FuzzReader(bytes)
        let responseCount = Int(reader.byte() % 8)
        let delay = TimeInterval(reader.byte() % 8)
        var response: [String: String] = [:]
        var notModified: [String: String] = [:]
        var index = 0
        while !reader.isAtEnd, index < 16 {
            let name = names[Int(reader.byte()) % names.count]
            let value = reader.text()
            if index < responseCount { response[name] = value } else { notModified[name] = value }
            index += 1
        }

        for value in Array(response.values) + Array(notModified.values) {
            try checkDate(value)
            for (name, _) in HTTPCachePolicy.cacheControl(value) {
                try require(
                    !name.isEmpty && !name.utf8.contains { (0x41...0x5A).contains($0) },
                    "directive name \(name) of \(value)")
            }
            if let seconds = HTTPCachePolicy.deltaSeconds(value) {
                try require(
                    (0...2_147_483_648).contains(seconds) && seconds.rounded() == seconds,
                    "delta-seconds \(seconds) of \(value)")
            }
        }

        let requestHeaders = ["Accept": notModified["Accept"] ?? "image/webp"]
        let info = HTTPResponseInfo(
            statusCode: 200, headers: response, requestTime: t0, responseTime: t0 + delay,
            requestHeaders: requestHeaders
        )
        let stored = CacheMetadata(contentType: response["Content-Type"], storedAt: t0 + delay, http: info)

        // What the disk index keeps is what it gives back.
        do {
            let json = try JSONEncoder().encode(stored)
            let decoded = try JSONDecoder().decode(CacheMetadata.self, from: json)
            try require(decoded == stored, "metadata does not survive JSON: \(stored)")
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure("metadata cannot go through JSON: \(error)")
        }

        for policy in [HTTPCachePolicy(), HTTPCachePolicy(mode: .aggressive(ttl: 300))] {
            let assessment = policy.assess(stored)
            try require(!assessment.freshUntil.timeIntervalSince1970.isNaN, "freshUntil is NaN")
            try require(assessment.isStorable == policy.isStorable(stored), "assess and isStorable disagree")
            if assessment.isStorable, case .http = policy.mode {
                try require(assessment.directives["no-store"] == nil, "no-store stored")
            }
            if let age = assessment.initialAge { try require(age.isFinite && age >= 0, "initial age \(age)") }
            for later in [0.0, 1, 3600, 1e9] {
                _ = policy.evaluate(stored, requestHeaders: requestHeaders, now: t0 + later)
                _ = policy.allowsStaleOnError(stored, now: t0 + later)
                _ = policy.allowsStaleWhileRevalidate(stored, now: t0 + later)
            }
            let headers = ResponseCacheHeaders(
                source: stored, assessment: assessment, freshUntil: assessment.freshUntil)
            for later in [0.0, 7, 86_400, 1e10] {
                let (cacheControl, age) = headers.values(maximumAge: 86_400, now: t0 + later)
                if let maxAge = cacheControl.split(separator: "max-age=").dropFirst().first.flatMap({
                    Int($0.prefix { $0.isNumber })
                }) {
                    try require(
                        maxAge >= 0 && maxAge <= 86_400 + (age ?? 0),
                        "\(cacheControl) with Age \(String(describing: age))")
                }
                if let age { try require(age > 0, "Age: \(age)") }
            }
            let refreshed = policy.refreshed(
                stored,
                notModified: HTTPResponseInfo(
                    statusCode: 304, headers: notModified, requestTime: t0 + 100, responseTime: t0 + 101,
                    requestHeaders: requestHeaders
                )
            )
            try require(refreshed.contentType == stored.contentType, "a 304 changed the content type")
            _ = policy.assess(refreshed)
        }
    }

    /// A date that parses prints as one that parses to the same instant (years 1900 to 9999).
    static func checkDate(_ text: String) throws(FuzzFailure) {
        guard let date = HTTPDate.parse(text) else { return }
        let seconds = date.timeIntervalSince1970
        guard seconds >= -2_208_988_800, seconds < 253_402_300_800 else { return }
        let printed = HTTPDate.format(date)
        try require(HTTPDate.parse(printed) == date, "\(text) -> \(printed) does not parse back")
    }
}
