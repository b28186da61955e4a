import Foundation
import Hummingbird
import HummingbirdCore
import Imagery
import HTTPTypes
import Logging
import NIOCore

/// Result storage's answers to requests written as ones answered before, found by their text alone
/// (``RequestText``), for ``StoredHitHandler`` to send on the event loop: the same alias, freshness
/// and answer (``ImageController/answer(_:terms:negotiated:requestHeaders:now:)``) a route uses.
final class StoredHits: Sendable {
    private let controller: ImageController
    let observation: RequestObservation
    let logger: Logger
    /// Whether paths other than `/image` may be another proxy's syntax (`#` + path texts).
    private let pathSyntaxes: Bool

    init(controller: ImageController, metrics: ServerMetrics, logger: Logger) {
        self.controller = controller
        observation = RequestObservation(metrics: metrics)
        self.logger = logger
        let configuration = controller.service.configuration
        pathSyntaxes = configuration.imgproxyURLs || configuration.thumborURLs
    }

    /// A request result storage can answer: its path, and the answer.
    struct Hit {
        let path: String
        let answer: StoredAnswer
    }

    /// The answer to `request` when memory holds a fresh response for its text; `nil` for anything
    /// else (a miss, a stale response, a request with a body, an expired URL, another route): the
    /// router answers those. Only texts the routes remembered resolve, so a path the router gives to
    /// another route (`/health`, `/info`) never does.
    /// - Complexity: Two memory-cache lookups (the text's alias, the response).
    func hit(_ request: HTTPRequest) -> Hit? {
        guard request.method == .get || request.method == .head, let target = request.path else { return nil }
        let fields = request.headerFields
        // What the router's path does differently: a body to read, a connection to close, an upgrade.
        if let length = fields[.contentLength], length != "0" { return nil }
        if fields[.transferEncoding] != nil || fields[.upgrade] != nil { return nil }
        if let connection = fields[.connection], connection.lowercased().contains("close") { return nil }
        let uri = URI(target)
        let path = uri.path
        let text: String
        if path == "/image" {
            text = uri.query ?? ""
        } else if pathSyntaxes {
            text = "#" + path
        } else {
            return nil
        }
        let key = ResponseStore.requestKey(rawQuery: text, accept: fields[.accept])
        let service = controller.service
        guard let alias = service.alias(forRequestKey: key) else { return nil }
        let now = Date()
        guard !alias.terms.hasExpired(at: Int(now.timeIntervalSince1970)), let stored = service.storedInMemory(alias) else { return nil }
        let answer = controller.answer(stored, terms: alias.terms, negotiated: alias.negotiated, requestHeaders: fields, now: now)
        return Hit(path: path, answer: answer)
    }
}
