import Foundation
import Imagery

extension TestOrigin {
    /// An origin that serves the fixture named by the path (`/rocket.jpg`) with the caching
    /// headers its query asks for: `cc` (Cache-Control), `etag`, `lm` (Last-Modified, seconds
    /// ago), `expires` (seconds from now), `age`, `vary`, `cc304` (the Cache-Control of a 304).
    /// It answers 304 when a validator matches, and 500 while `failing` is set. Every response
    /// carries `Date`, read from `time` (a test that moves the pipeline's time by hand gives the
    /// origin the same time, so that its answers are as old as the test says).
    public static func caching(failing: Flag = Flag(), time: TimeSource = .system) async throws -> TestOrigin {
        let now = time.date()
        return try await TestOrigin.start { request in
            if failing.isSet { return TestOrigin.Response(status: 500, body: Data("down".utf8)) }
            let name = request.path.split(separator: "/").last.map(String.init) ?? ""
            guard let body = try? Fixtures.data(name) else { return TestOrigin.Response(status: 404) }
            var headers: [(String, String)] = [("Content-Type", "image/jpeg"), ("Date", HTTPDate.format(time.date()))]
            let query = request.query
            if let cacheControl = query["cc"] { headers.append(("Cache-Control", cacheControl)) }
            if let etag = query["etag"] { headers.append(("ETag", "\"\(etag)\"")) }
            let lastModified = query["lm"].flatMap(Double.init).map { HTTPDate.format(now.addingTimeInterval(-$0)) }
            if let lastModified { headers.append(("Last-Modified", lastModified)) }
            if let expires = query["expires"].flatMap(Double.init) {
                headers.append(("Expires", HTTPDate.format(time.date().addingTimeInterval(expires))))
            }
            if let age = query["age"] { headers.append(("Age", age)) }
            if let vary = query["vary"] { headers.append(("Vary", vary)) }
            let etagMatches = query["etag"].map { request.headers["if-none-match"] == "\"\($0)\"" } ?? false
            let notModifiedSince = lastModified.map { request.headers["if-modified-since"] == $0 } ?? false
            if etagMatches || notModifiedSince {
                var notModified = headers.filter { $0.0 != "Content-Type" }
                if let refreshed = query["cc304"] {  // the 304 may bring new freshness
                    notModified.removeAll { $0.0 == "Cache-Control" }
                    notModified.append(("Cache-Control", refreshed))
                }
                return TestOrigin.Response(status: 304, headers: notModified)
            }
            return TestOrigin.Response(headers: headers, body: body)
        }
    }
}
