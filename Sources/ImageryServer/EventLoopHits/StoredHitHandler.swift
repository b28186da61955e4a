import Foundation
import Hummingbird
import HummingbirdCore
import Imagery
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers hits on the event loop: a request whose text result storage resolved before and whose
/// response memory holds fresh (``StoredHits``) is answered here, in the channel, without going
/// through the server's async channel, a task and the router (most of a hit's cost); every other
/// request passes on untouched. The answer is a route's (the same fields, status, 304s, `HEAD`),
/// with the fields the server adds (`Content-Length`, `Date`, `Server`), the same log line and metrics.
///
/// It sits after Hummingbird's connection-state handler, so idle timeouts and graceful shutdown see
/// every request and answer. Requests on a connection are answered in order: a request is answered
/// here only when no request passed to the router still awaits its response's end (with pipelining,
/// a hit behind a miss waits in the router's queue, as every request did before).
final class StoredHitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let hits: StoredHits
    private let serverName: String
    /// Requests passed to the router whose response has not ended.
    private var routed = 0
    /// The request being read, when it is answered here: sent when its end arrives.
    private var pending: (hit: StoredHits.Hit, method: HTTPRequest.Method, start: ContinuousClock.Instant)?
    /// Answers written since the last flush.
    private var unflushed = false
    /// The `Date` field's value and the second it was made for.
    private var date: (second: Int, text: String) = (0, "")

    init(hits: StoredHits, serverName: String) {
        self.hits = hits
        self.serverName = serverName
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let start = ContinuousClock.now
            if routed == 0, let hit = hits.hit(request) {
                hits.observation.started()
                pending = (hit, request.method, start)
                return
            }
            routed += 1
            context.fireChannelRead(data)
        case .body:
            // A hit has no body (`StoredHits` passes those on): only a routed request's parts are here.
            if pending == nil { context.fireChannelRead(data) }
        case .end:
            guard let (hit, method, start) = pending else {
                context.fireChannelRead(data)
                return
            }
            pending = nil
            send(hit, method: method, start: start, context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed -= 1 }
        context.write(data, promise: promise)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    private func send(_ hit: StoredHits.Hit, method: HTTPRequest.Method, start: ContinuousClock.Instant, context: ChannelHandlerContext) {
        let answer = hit.answer
        var fields = answer.headers
        let length = answer.body?.readableBytes ?? 0
        fields[.contentLength] = String(length)
        if let disposition = answer.disposition { fields[.contentDisposition] = disposition }
        fields[.date] = currentDate()
        fields[.server] = serverName
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: fields))), promise: nil)
        if let body = answer.body, method != .head {
            context.write(wrapOutboundOut(.body(body)), promise: nil)
        }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        unflushed = true
        let bytes = answer.status == .ok ? length : 0
        hits.observation.metrics.eventLoopHit()
        hits.observation.finished(
            method: method, path: hit.path, status: Int(answer.status.code), bytes: bytes, since: start, logger: hits.logger, requestID: RequestID()
        )
    }

    /// `Date`: an IMF-fixdate, made once a second.
    private func currentDate() -> String {
        let now = time(nil)
        if now != date.second { date = (now, HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(now)))) }
        return date.text
    }
}

@available(*, unavailable)
extension StoredHitHandler: Sendable {}
