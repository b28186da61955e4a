import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import Imagery
import Logging
import NIOCore

/// Result storage's answers to requests written as ones answered before, found by their text alone
/// (``RequestText``), for ``HitHandler`` to send on the event loop: the same alias, freshness and
/// answer (``ImageController/answer(_:terms:negotiated:validators:now:fields:)``) a route uses.
final class StoredHits: Sendable {
    private let controller: ImageController
    let observation: RequestObservation
    let logger: Logger
    let serverName: String
    /// Whether paths other than `/image` may be another proxy's syntax (`#` + path texts).
    private let pathSyntaxes: Bool

    init(controller: ImageController, metrics: ServerMetrics, logger: Logger, serverName: String) {
        self.controller = controller
        observation = RequestObservation(metrics: metrics)
        self.logger = logger
        self.serverName = serverName
        let configuration = controller.service.configuration
        pathSyntaxes = configuration.imgproxyURLs || configuration.thumborURLs
    }

    /// A request result storage answers: its path (for the log line), the response and how to answer.
    struct Hit {
        let path: String
        let stored: StoredResponse
        let alias: ResponseStore.Alias
        let now: Date
    }

    /// The hit for `head` when memory holds a fresh response for its text; `nil` for anything else (a
    /// miss, a stale response, an expired URL, another route): the router answers those. Only texts
    /// the routes remembered resolve, so a path the router gives to another route (`/health`,
    /// `/info`) never does.
    /// - Complexity: Two memory-cache lookups (the text's alias, the response).
    func hit(_ head: RequestHead) -> Hit? {
        guard head.method != .other, !head.needsRoute else { return nil }
        let uri = URI(head.target)
        let path = uri.path
        let text: String
        if path == "/image" {
            text = uri.query ?? ""
        } else if pathSyntaxes {
            text = "#" + path
        } else {
            return nil
        }
        let service = controller.service
        guard let alias = service.alias(forRequestKey: ResponseStore.requestKey(rawQuery: text, accept: head.accept)) else { return nil }
        let now = Date()
        guard !alias.terms.hasExpired(at: Int(now.timeIntervalSince1970)), let stored = service.storedInMemory(alias) else { return nil }
        return Hit(path: path, stored: stored, alias: alias, now: now)
    }

    /// The response head of `hit` (status line, the answer's fields, `Content-Length`, `Date`,
    /// `Server`): a route's answer as the server's encoder writes it.
    /// - Returns: The head, its status, and the body to send after it (`nil`: none; `HEAD` and 304s).
    func response(to hit: Hit, for head: RequestHead, date: String, allocator: ByteBufferAllocator)
        -> (head: ByteBuffer, status: HTTPResponse.Status, body: ByteBuffer?)
    {
        var fields = ResponseHeadBytes(buffer: allocator.buffer(capacity: 384))
        let validators = Validators(ifNoneMatch: head.ifNoneMatch, ifModifiedSince: head.ifModifiedSince)
        let (status, disposition) = controller.answer(
            hit.stored, terms: hit.alias.terms, negotiated: hit.alias.negotiated, validators: validators, now: hit.now, fields: &fields
        )
        if status == .ok { fields.add(.contentLength, String(hit.stored.body.readableBytes)) }
        if let disposition { fields.add(.contentDisposition, disposition) }
        fields.add(.date, date)
        fields.add(.server, serverName)
        var bytes = allocator.buffer(capacity: fields.buffer.readableBytes + 32)
        bytes.writeStaticString(status == .ok ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 304 Not Modified\r\n")
        bytes.writeBuffer(&fields.buffer)
        bytes.writeStaticString("\r\n")
        return (bytes, status, status == .ok && head.method == .get ? hit.stored.body : nil)
    }
}
