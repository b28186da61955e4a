import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Imagery
import ImageryDiskCache
import Logging
import NIOCore

/// Result storage's answers to requests written as ones answered before, found by their text alone
/// (``RequestText``), for ``HitHandler`` to send on the event loop: the same alias, freshness and
/// answer (``ImageAnswers/answer(_:terms:negotiated:validators:now:fields:)``) a route uses.
final class StoredHits: Sendable {
    private let controller: ImageController
    let observation: RequestObservation
    let logger: Logger
    /// `logger`'s handler, when it is `imagery serve`'s (which writes a request's line from its fields).
    let lineWriter: ServerLogHandler?
    let serverName: String
    /// Whether paths other than `/image` may be another proxy's syntax (`#` + path texts).
    private let pathSyntaxes: Bool

    init(controller: ImageController, metrics: ServerMetrics, logger: Logger, serverName: String) {
        self.controller = controller
        observation = RequestObservation(metrics: metrics)
        self.logger = logger
        lineWriter = logger.handler as? ServerLogHandler
        self.serverName = serverName
        let configuration = controller.service.configuration
        pathSyntaxes = configuration.imgproxy.enabled || configuration.thumbor.enabled
    }

    /// A request result storage answers: its path (for the log line), the response and how to answer.
    struct Hit {
        let path: String
        let stored: Stored
        let alias: ResponseStore.Alias
        let now: Date
    }

    /// Where a hit's response is: in memory, or in a file on disk (sent from it).
    enum Stored {
        case memory(StoredResponse)
        case disk(DiskCache.Body, DiskHead)

        var bodySize: Int {
            switch self {
            case .memory(let response): response.body.readableBytes
            case .disk(let body, _): body.size
            }
        }

        var identity: UInt64 {
            switch self {
            case .memory(let response): response.identity
            case .disk(_, let head): head.identity
            }
        }
    }

    /// The hit for `head` when memory holds a fresh response for its text; `nil` for anything else (a
    /// miss, a stale response, an expired URL, another route): the router answers those. Only texts
    /// the routes remembered resolve, so a path the router gives to another route (`/health`,
    /// `/info`) never does.
    /// - Complexity: Two memory-cache lookups (the text's alias, the response).
    func hit(_ head: RequestHead) -> Hit? {
        guard !head.needsRoute else { return nil }
        let (path, query) = Self.pathAndQuery(of: head.target)
        let text: String
        if path == "/image" {
            text = query.map(String.init) ?? ""
        } else if pathSyntaxes {
            text = "#" + path
        } else {
            return nil
        }
        let service = controller.service
        guard let alias = service.alias(forRequestKey: ResponseStore.requestKey(rawQuery: text, accept: head.accept))
        else { return nil }
        let now = service.configuration.time.date()
        guard !alias.terms.hasExpired(at: Int(now.timeIntervalSince1970)) else { return nil }
        if let stored = service.storedInMemory(alias, at: now) {
            return Hit(path: String(path), stored: .memory(stored), alias: alias, now: now)
        }
        if let (body, head) = service.storedOnDisk(alias, at: now) {
            return Hit(path: String(path), stored: .disk(body, head), alias: alias, now: now)
        }
        return nil
    }

    /// Counts `hit` as sent (memory hits are counted when found: they are always sent).
    func sent(_ hit: Hit) {
        if case .disk = hit.stored { controller.service.countDiskHit() }
    }

    /// The path and query of a target in origin form, as Hummingbird's `URI` reads them (what a
    /// route's request has): the path up to the first `?`, the query after it up to a `#`.
    static func pathAndQuery(of target: String) -> (path: Substring, query: Substring?) {
        let utf8 = target.utf8
        guard let mark = utf8.firstIndex(of: UInt8(ascii: "?")) else { return (target[...], nil) }
        let start = utf8.index(after: mark)
        let end = utf8[start...].firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
        return (target[..<mark], start == utf8.endIndex ? nil : target[start..<end])
    }

    /// A disk hit's body, read to be sent: kept in memory when the response is hot (``DiskHead/heat``:
    /// its second answer from disk in a minute), so that its next hits are memory's; one answered
    /// once stays on disk (the page cache holds its bytes, not this process). Kept as a copy of its
    /// own: `body` is a slice of the buffer sent, head included, which memory's limit would not count.
    func read(_ body: ByteBuffer, of hit: Hit) {
        guard case .disk(let file, let head) = hit.stored, head.heat.isHot(at: Int(hit.now.timeIntervalSince1970))
        else { return }
        let own = ByteBuffer(bytes: body.readableBytesView)
        controller.service.keepInMemory(StoredResponse(body: own, file: file, head: head), for: hit.alias)
    }

    /// The response head of `hit` (status line, the answer's fields, `Content-Length`, `Date`,
    /// `Server`): a route's answer as the server's encoder writes it.
    /// - Parameter date: `Date`'s value: `hit.now` as an IMF-fixdate.
    /// - Returns: The head, its status, and whether the body follows (not for `HEAD` and 304s).
    /// - Complexity: An unconditional answer's head is written once a second for a stored response
    ///   and text on each event loop (``HitHeads``): the same second, the same bytes.
    func response(to hit: Hit, for head: RequestHead, date: String, allocator: ByteBufferAllocator)
        -> (head: ByteBuffer, status: HTTPResponse.Status, sendsBody: Bool)
    {
        let (terms, negotiated) = (hit.alias.terms, hit.alias.negotiated)
        controller.service.countSkippedFilters(terms.skippedFilters)
        let conditional = head.ifNoneMatch != nil || head.ifModifiedSince != nil
        let second = Int(hit.now.timeIntervalSince1970)
        let heads = HitHeads.current
        if !conditional,
            let kept = heads.head(of: hit.stored.identity, terms: terms, negotiated: negotiated, second: second)
        {
            return (kept, .ok, head.method == .get)
        }
        var fields = ResponseHeadBytes(buffer: allocator.buffer(capacity: 384))
        let validators = Validators(ifNoneMatch: head.ifNoneMatch, ifModifiedSince: head.ifModifiedSince)
        let (status, disposition) =
            switch hit.stored {
            case .memory(let stored):
                controller.answers.answer(
                    stored, terms: terms, negotiated: negotiated, validators: validators, now: hit.now, fields: &fields)
            case .disk(_, let stored):
                controller.answers.answer(
                    stored, terms: terms, negotiated: negotiated, validators: validators, now: hit.now, fields: &fields)
            }
        if status == .ok { fields.add(.contentLength, String(hit.stored.bodySize)) }
        if let disposition { fields.add(.contentDisposition, disposition) }
        fields.add(.date, date)
        fields.add(.server, serverName)
        var bytes = allocator.buffer(capacity: fields.buffer.readableBytes + 32)
        bytes.writeStaticString(status == .ok ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 304 Not Modified\r\n")
        bytes.writeBuffer(&fields.buffer)
        bytes.writeStaticString("\r\n")
        if !conditional {
            heads.keep(bytes, of: hit.stored.identity, terms: terms, negotiated: negotiated, second: second)
        }
        return (bytes, status, status == .ok && head.method == .get)
    }
}
