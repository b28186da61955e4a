import Foundation
import Imagery
import NIOConcurrencyHelpers

extension TestOrigin {
    /// The version of the source a ``TestOrigin/ranges(version:)`` origin serves; change it to
    /// change the source (its ETag, and its bytes: version 2 serves the fixture reversed).
    public final class SourceVersion: Sendable {
        private let value = NIOLockedValueBox(1)
        public init() {}
        public var current: Int {
            get { value.withLockedValue { $0 } }
            set { value.withLockedValue { $0 = newValue } }
        }
    }

    /// An origin that serves the fixture named by the path with a strong ETag (`"vN"`, N the
    /// version), `Accept-Ranges: bytes`, and byte ranges (`Range: bytes=N-`, honoured only when
    /// `If-Range` names the current ETag, else the whole body with 200). The query can ask for
    /// `cut` (bytes: the first response to that URL closes its connection after that many), `chunk`
    /// and `chunk_delay_ms` (a slow body), `stall_after` (bytes: a whole answer stops there for a
    /// minute; ranges are served at once), and, as on every ``TestOrigin``, `held_at` with `held` (the
    /// head and that many bytes, the rest when released: with `cut` at the same offset, a cut made once
    /// the test has seen those bytes arrive).
    public static func ranges(version: SourceVersion = SourceVersion()) async throws -> TestOrigin {
        let cutOnce = NIOLockedValueBox(Set<String>())
        return try await TestOrigin.start { request in
            let name = request.path.split(separator: "/").last.map(String.init) ?? ""
            guard var body = try? Fixtures.data(name) else { return TestOrigin.Response(status: 404) }
            let current = version.current
            if current > 1 { body = Data(body.reversed()) }
            let etag = "\"v\(current)\""
            var headers: [(String, String)] = [
                ("Content-Type", "image/jpeg"), ("ETag", etag), ("Accept-Ranges", "bytes"),
            ]
            let chunk = request.query["chunk"].flatMap(Int.init) ?? (1 << 20)
            let chunkDelay = Duration.milliseconds(request.query["chunk_delay_ms"].flatMap(Int.init) ?? 0)
            if let range = request.headers["range"], range.hasPrefix("bytes="), range.hasSuffix("-"),
                let start = Int(range.dropFirst(6).dropLast()), start < body.count,
                request.headers["if-range"] == nil || request.headers["if-range"] == etag
            {
                headers.append(("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)"))
                return TestOrigin.Response(
                    status: 206, headers: headers, body: body.subdata(in: start..<body.count), chunkSize: chunk,
                    chunkDelay: chunkDelay
                )
            }
            let uri = request.path + "?" + request.query.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "&")
            let cut = request.query["cut"].flatMap(Int.init).flatMap {
                cutOnce.withLockedValue { $0.insert(uri).inserted } ? $0 : nil
            }
            var response = TestOrigin.Response(
                headers: headers, body: body, chunkSize: chunk, chunkDelay: chunkDelay, closeAfter: cut)
            response.stallAfter = request.query["stall_after"].flatMap(Int.init)
            return response
        }
    }
}
