import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 origin on 127.0.0.1 for tests: it serves whatever its
/// handler returns, can delay the head and throttle the body, counts requests
/// per path, and notices connections closed before a body was fully sent.
public final class TestOrigin: Sendable {
    /// A request as the origin saw it.
    public struct Request: Sendable {
        public var method: String
        /// The path without the query.
        public var path: String
        /// The query items.
        public var query: [String: String]
        /// The request headers, names lower-cased.
        public var headers: [String: String]
    }

    /// What to answer.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: Data
        /// Wait this long before sending the head.
        public var delay: Duration
        /// Send the body in chunks of this many bytes...
        public var chunkSize: Int
        /// ...waiting this long between chunks.
        public var chunkDelay: Duration
        /// Close the connection once this many body bytes are sent (a transfer cut short); `nil`: never.
        public var closeAfter: Int?
        /// Once this many body bytes are sent, wait ``stall`` before the rest (a transfer that
        /// stops part way, for a test to act on while it is stopped); `nil`: never.
        public var stallAfter: Int?
        public var stall: Duration = .seconds(60)

        public init(
            status: Int = 200, headers: [(String, String)] = [], body: Data = Data(),
            delay: Duration = .zero, chunkSize: Int = 1 << 20, chunkDelay: Duration = .zero, closeAfter: Int? = nil
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
            self.chunkSize = max(1, chunkSize)
            self.chunkDelay = chunkDelay
            self.closeAfter = closeAfter
        }
    }

    public typealias Handler = @Sendable (Request) -> Response

    private struct Stats {
        var requests: [Request] = []
        var aborted = 0
        var completed = 0
        var held = 0
        var inFlight = 0
        var peakInFlight = 0
    }

    // NIO's lock (a pthread mutex), which ThreadSanitizer understands.
    private let stats = NIOLockedValueBox(Stats())
    /// Whether every held response may go, and how often each name was released.
    private let released = NIOLockedValueBox((all: false, names: [String: Int]()))
    let handler: Handler
    private let channel: any Channel
    /// The origin's port on 127.0.0.1.
    public let port: Int

    private init(handler: @escaping Handler, channel: any Channel) {
        self.handler = handler
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
    }

    /// Starts an origin on a free port of 127.0.0.1.
    public static func start(handler: @escaping Handler) async throws -> TestOrigin {
        let box = HandlerBox()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(OriginHandler(origin: box.origin!))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let origin = TestOrigin(handler: handler, channel: channel)
        box.origin = origin
        return origin
    }

    /// An origin serving the files under `directory` by path; the query can ask for
    /// `delay_ms`, `chunk` (bytes) with `chunk_delay_ms`, `status`, and `held=NAME` (the response waits for
    /// ``release(_:)``; with `held_at=N`, after the head and N bytes of its body; with `held_at=N1,N2,...`,
    /// at each of those offsets in turn, the k-th waiting for the k-th ``release(_:)`` of NAME: a body
    /// that a test lets through part by part).
    public static func serving(directory: URL) async throws -> TestOrigin {
        try await start { request in
            let status = request.query["status"].flatMap(Int.init) ?? 200
            let delay = Duration.milliseconds(request.query["delay_ms"].flatMap(Int.init) ?? 0)
            let chunk = request.query["chunk"].flatMap(Int.init) ?? (1 << 20)
            let chunkDelay = Duration.milliseconds(request.query["chunk_delay_ms"].flatMap(Int.init) ?? 0)
            let file = directory.appendingPathComponent(String(request.path.dropFirst()))
            guard status == 200 else {
                return Response(status: status, body: Data("status \(status)\n".utf8), delay: delay)
            }
            guard !request.path.contains(".."), let body = FileManager.default.contents(atPath: file.path) else {
                return Response(status: 404, body: Data("not found\n".utf8), delay: delay)
            }
            return Response(
                headers: [("Content-Type", "application/octet-stream")], body: body,
                delay: delay, chunkSize: chunk, chunkDelay: chunkDelay
            )
        }
    }

    /// An origin that answers its first requests with `failures`, in turn, and every later one with
    /// `body` (a 200), whatever the path: a flaky origin, for retries.
    public static func failing(_ failures: [Response], thenServing body: Data) async throws -> TestOrigin {
        let count = NIOLockedValueBox(0)
        return try await start { _ in
            let index = count.withLockedValue { count in
                defer { count += 1 }
                return count
            }
            return index < failures.count ? failures[index] : Response(body: body)
        }
    }

    /// `http://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)/\(path.hasPrefix("/") ? String(path.dropFirst()) : path)")!
    }

    /// Every request so far, in arrival order.
    public var requests: [Request] { stats.withLockedValue { $0.requests } }
    /// How many requests arrived.
    public var requestCount: Int { stats.withLockedValue { $0.requests.count } }
    /// How many requests arrived for `path`.
    public func requestCount(path: String) -> Int {
        let path = path.hasPrefix("/") ? path : "/" + path
        return stats.withLockedValue { $0.requests.filter { $0.path == path }.count }
    }
    /// Responses whose connection closed before the whole body was sent.
    public var abortedCount: Int { stats.withLockedValue { $0.aborted } }
    /// Responses sent in full.
    public var completedCount: Int { stats.withLockedValue { $0.completed } }
    /// The most requests the origin was answering at once.
    public var peakInFlight: Int { stats.withLockedValue { $0.peakInFlight } }

    /// Lets responses to requests with `held=NAME` in their query go, whatever the name (they wait until then).
    public func release() { released.withLockedValue { $0.all = true } }
    /// Lets responses to requests with `held=name` go (past their next `held_at` offset).
    public func release(_ name: String) { released.withLockedValue { $0.names[name, default: 0] += 1 } }
    func isReleased(_ name: String, times: Int = 1) -> Bool {
        released.withLockedValue { $0.all || $0.names[name, default: 0] >= times }
    }

    /// Stops listening (again is fine).
    public func shutdown() async throws {
        do {
            try await channel.close()
        } catch ChannelError.alreadyClosed {
        }
    }

    func record(_ request: Request) {
        stats.withLockedValue { stats in
            stats.requests.append(request)
            stats.inFlight += 1
            stats.peakInFlight = max(stats.peakInFlight, stats.inFlight)
        }
    }

    /// How many responses sent their body up to `held_at` and wait for their release.
    public var heldCount: Int { stats.withLockedValue { $0.held } }

    func recordHeld(bytes: Int) { stats.withLockedValue { $0.held += 1 } }

    func recordAborted() {
        stats.withLockedValue {
            $0.aborted += 1
            $0.inFlight -= 1
        }
    }
    func recordCompleted() {
        stats.withLockedValue {
            $0.completed += 1
            $0.inFlight -= 1
        }
    }
}

private final class HandlerBox: @unchecked Sendable {
    // Set once before the first connection is accepted.
    var origin: TestOrigin?
}

/// One connection's request handling. Runs on its channel's event loop only.
private final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let origin: TestOrigin
    private var head: HTTPRequestHead?
    private var responding = false

    init(origin: TestOrigin) {
        self.origin = origin
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            respond(to: head, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if responding {
            responding = false
            origin.recordAborted()
        }
        context.fireChannelInactive()
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let components = URLComponents(string: head.uri)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        let request = TestOrigin.Request(
            method: head.method.rawValue, path: components?.path ?? head.uri, query: query, headers: headers
        )
        origin.record(request)
        let response = origin.handler(request)
        responding = true
        let loop = context.eventLoop.assumeIsolated()
        let held = request.query["held"]
        // `held_at=N` with `held=NAME`: the head and N bytes of the body go at once, the rest when released
        // (with more offsets, the body up to each one in turn, at each release).
        let cuts = request.query["held_at"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? []
        loop.scheduleTask(in: .nanoseconds(response.delay.nanosecondCount)) {
            if let held, !cuts.isEmpty {
                self.sendHead(
                    response, held: nil, context: context,
                    body: { self.sendBody(response, from: 0, context: context, held: (held, cuts)) })
            } else {
                self.sendHead(response, held: held, context: context)
            }
        }
    }

    private func sendHead(
        _ response: TestOrigin.Response, held: String?, context: ChannelHandlerContext, body: (() -> Void)? = nil
    ) {
        guard responding, context.channel.isActive else { return }
        if let held, !origin.isReleased(held) {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(5)) {
                self.sendHead(response, held: held, context: context)
            }
            return
        }
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.flush()
        if let body { body() } else { sendBody(response, from: 0, context: context) }
    }

    private func sendBody(
        _ response: TestOrigin.Response, from offset: Int, context: ChannelHandlerContext,
        held: (name: String, cuts: [Int])? = nil
    ) {
        guard responding, context.channel.isActive else { return }
        if let held {
            // Past the k-th offset, the k-th release lets the body go on (to the next offset, or to its end).
            let reached = held.cuts.filter { $0 <= offset }.count
            if reached > 0, !origin.isReleased(held.name, times: reached) {
                context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(5)) {
                    self.sendBody(response, from: offset, context: context, held: held)
                }
                return
            }
            if let next = held.cuts.first(where: { $0 > offset }), offset < response.body.count {
                let end = min(response.body.count, next)
                let buffer = context.channel.allocator.buffer(
                    bytes: response.body[response.body.startIndex + offset..<response.body.startIndex + end])
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                origin.recordHeld(bytes: end)
                sendBody(response, from: next, context: context, held: held)
                return
            }
        }
        if offset >= response.body.count {
            responding = false
            origin.recordCompleted()
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        if let closeAfter = response.closeAfter, offset >= closeAfter {
            context.close(promise: nil)  // channelInactive counts it as aborted
            return
        }
        if var stalled = response.stallAfter.map({ _ in response }), let stallAfter = response.stallAfter,
            offset >= stallAfter
        {
            stalled.stallAfter = nil
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(response.stall.nanosecondCount)) {
                self.sendBody(stalled, from: offset, context: context)
            }
            return
        }
        let end = min(
            response.body.count, offset + response.chunkSize, response.closeAfter ?? Int.max,
            response.stallAfter ?? Int.max)
        let buffer = context.channel.allocator.buffer(
            bytes: response.body[response.body.startIndex + offset..<response.body.startIndex + end])
        let written = context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))))
        if let closeAfter = response.closeAfter, end >= closeAfter {
            // Closed once the bytes before the cut are with the kernel: a close with writes still
            // pending would drop them, so a busy machine would cut earlier than asked.
            // channelInactive counts it as aborted
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        }
        if response.chunkDelay == .zero {
            sendBody(response, from: end, context: context)
        } else {
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(response.chunkDelay.nanosecondCount)) {
                self.sendBody(response, from: end, context: context)
            }
        }
    }
}

extension Duration {
    fileprivate var nanosecondCount: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
