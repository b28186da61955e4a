import Foundation
import HTTPTypes
import Imagery
import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import ImageryServer

/// Result storage held in memory (or on disk in a temporary directory), with the ``StoredHits`` that
/// ``HitHandler`` answers from: a server's routes without a server.
final class StoredHitsFixture {
    let service: ImageService
    let controller: ImageController
    let metrics = ServerMetrics()
    let log = CapturedLog()
    let hits: StoredHits

    init(configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.caching.directory = nil
        configure(&configuration)
        service = try ImageService(configuration: configuration, observer: metrics, logger: log.logger)
        controller = try ImageController(service: service, watcher: ConnectionWatcher())
        hits = StoredHits(controller: controller, metrics: metrics, logger: log.logger, serverName: "imagery")
    }

    /// Keeps `body` in memory as the response to requests written as `text` (a native query, or `#`
    /// and an imgproxy or thumbor path) with `accept`, fresh until `freshUntil`.
    @discardableResult
    func store(
        _ body: [UInt8], text: String, accept: String? = nil, contentType: String = "image/jpeg",
        terms: ResponseTerms = ResponseTerms(),
        freshUntil: Date = Date().addingTimeInterval(3600)
    ) -> StoredResponse {
        let response = StoredResponse(
            data: Data(body), contentType: contentType, source: CacheMetadata(contentType: contentType),
            freshUntil: freshUntil,
            policy: service.cachePolicy
        )
        let memoryKey = "memory:" + text + "|" + (accept ?? "")
        service.responses.remember(
            ResponseStore.requestKey(rawQuery: text, accept: accept),
            as: .init(memoryKey: memoryKey, diskKey: nil, negotiated: false, terms: terms)
        )
        service.responses.keepInMemory(response, memoryKey: memoryKey)
        return response
    }

    /// The fields a route sends with `stored` (all but `Content-Length`, `Date`, `Server`), as `name: value`
    /// lines, but those that change with the clock (``WrittenResponse/timeless(_:)``).
    func routeFields(
        of stored: StoredResponse, terms: ResponseTerms = ResponseTerms(), requestHeaders: HTTPFields = [:]
    ) -> [String] {
        let answer = controller.answers.answer(stored, terms: terms, negotiated: false, requestHeaders: requestHeaders)
        return WrittenResponse.timeless(answer.headers.map { "\($0.name.rawName): \($0.value)" })
    }

    /// `imagery_event_loop_hits_total`.
    var eventLoopHits: Int {
        let line = metrics.exposition(of: service).split(separator: "\n").first {
            $0.hasPrefix("imagery_event_loop_hits_total ")
        }
        return line.flatMap { Int(Double($0.split(separator: " ").last ?? "") ?? -1) } ?? 0
    }

    func shutdown() async throws {
        try await service.loader.shutdown()
    }
}

/// A ``HitHandler`` in an `EmbeddedChannel`, in the pipeline the server gives it (``StoredHitChannel``),
/// with stand-ins around it: the wire (``Wire``: what is written, in order), the server's HTTP decoder
/// (NIO's, behind a ``PassedOn`` record of the bytes it is given), ``RoutedRequests``, and the router
/// (``Route``: the requests it is given; ``answerRoute(_:)`` answers the oldest).
final class HitChannel {
    let channel = EmbeddedChannel()
    let wire = Wire()
    let passedOn = PassedOn()
    let route = Route()

    /// - Parameter idleTimeout: `nil`: no idle check scheduled.
    init(
        _ fixture: StoredHitsFixture, idleTimeout: TimeAmount? = nil,
        limits: RequestHead.Limits = RequestHeadTests.limits
    ) throws {
        let handler = HitHandler(hits: fixture.hits, limits: limits, idleTimeout: idleTimeout)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(wire)
        try pipeline.addHandler(handler)
        try pipeline.addHandler(RouteAnswers(wire: wire))
        try pipeline.addHandler(passedOn)
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)))
        try pipeline.addHandler(HTTPTypesRequestParts())
        try pipeline.addHandler(RoutedRequests(handler))
        try pipeline.addHandler(route)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
    }

    /// The client sends `text`, in one read.
    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        try channel.writeInbound(ByteBuffer(bytes: bytes))
    }

    /// The router answers the oldest request it was given (a head and an end, as the server's codec writes them).
    func answerRoute(_ status: HTTPResponse.Status = .ok) throws {
        guard !route.requests.isEmpty else { throw HitChannelError.noRequestToAnswer }
        route.answered += 1
        try channel.writeOutbound(RoutedRequests.OutboundIn.head(HTTPResponse(status: status)))
        try channel.writeOutbound(RoutedRequests.OutboundIn.end(nil))
    }

    /// Runs the idle checks due by now.
    func runIdleChecks() {
        channel.embeddedEventLoop.advanceTime(to: .now())
    }

    func finish() {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }
}

enum HitChannelError: Error { case noRequestToAnswer }

/// What leaves the channel, in order: bytes (the handler's answers), files (its large disk hits),
/// the route's answers.
final class Wire: ChannelOutboundHandler {
    typealias OutboundIn = IOData

    enum Written: Equatable {
        case bytes([UInt8])
        /// A file region (its length): a large disk hit's body.
        case file(length: Int)
        /// A route's answer: its head (its status), its end.
        case routeHead(Int)
        case routeEnd
    }

    private(set) var written: [Written] = []
    /// The file regions written, closed once written or not.
    private(set) var files: [FileRegion] = []

    func record(_ item: Written) {
        written.append(item)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .byteBuffer(let buffer): written.append(.bytes(Array(buffer.readableBytesView)))
        case .fileRegion(let region):
            written.append(.file(length: region.readableBytes))
            files.append(region)
        }
        promise?.succeed()
    }

    /// The bytes written, all answers together (the route's as `<route 200>`).
    var transcript: [UInt8] {
        written.flatMap { written -> [UInt8] in
            switch written {
            case .bytes(let bytes): bytes
            case .file(let length): Array("<file \(length)>".utf8)
            case .routeHead(let status): Array("<route \(status)>".utf8)
            case .routeEnd: []
            }
        }
    }

    /// The handler's answers, parsed (`HEAD`'s and 304s have no body).
    func responses(toHEAD: Set<Int> = []) -> [WrittenResponse] {
        var bytes = written.compactMap { if case .bytes(let bytes) = $0 { bytes } else { nil } }.flatMap { $0 }[...]
        var responses: [WrittenResponse] = []
        while !bytes.isEmpty, let response = WrittenResponse.parse(&bytes, head: toHEAD.contains(responses.count)) {
            responses.append(response)
        }
        return responses
    }
}

/// One response as bytes on the wire.
struct WrittenResponse: Equatable {
    var statusLine: String
    /// `name: value`, in order.
    var fields: [String]
    var body: [UInt8]

    func field(_ name: String) -> String? {
        fields.last { $0.lowercased().hasPrefix(name.lowercased() + ":") }.map {
            String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces)
        }
    }

    /// The fields but those that change with the clock (`Date`, `Age`, the seconds of `max-age`).
    var timelessFields: [String] { Self.timeless(fields) }

    /// `fields` (`name: value` lines) but those that change with the clock.
    static func timeless(_ fields: [String]) -> [String] {
        fields.filter { !$0.lowercased().hasPrefix("date:") && !$0.lowercased().hasPrefix("age:") }
            .map { $0.replacing(/max-age=\d+/, with: "max-age=N") }
    }

    static func parse(_ bytes: inout ArraySlice<UInt8>, head: Bool) -> WrittenResponse? {
        let end = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.indices.first(where: { bytes[$0...].starts(with: end) }) else { return nil }
        let lines = String(decoding: bytes[bytes.startIndex..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        var response = WrittenResponse(statusLine: lines[0], fields: Array(lines.dropFirst()), body: [])
        let length =
            head || response.statusLine.contains(" 304 ") ? 0 : Int(response.field("content-length") ?? "0") ?? 0
        let bodyStart = headEnd + 4
        guard bytes.endIndex - bodyStart >= length else { return nil }
        response.body = Array(bytes[bodyStart..<(bodyStart + length)])
        bytes = bytes[(bodyStart + length)...]
        return response
    }
}

/// The route's answers, as the server's encoder would write them: kept on the ``Wire`` in their place.
final class RouteAnswers: ChannelOutboundHandler {
    typealias OutboundIn = RoutedRequests.OutboundIn
    let wire: Wire

    init(wire: Wire) { self.wire = wire }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head): wire.record(.routeHead(head.status.code))
        case .body: break
        case .end: wire.record(.routeEnd)
        }
        promise?.succeed()
    }
}

/// Keeps the bytes ``HitHandler`` passes on (each read as it came), and passes them to the decoder.
final class PassedOn: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private(set) var reads: [[UInt8]] = []
    var bytes: [UInt8] { reads.flatMap { $0 } }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reads.append(Array(unwrapInboundIn(data).readableBytesView))
        context.fireChannelRead(data)
    }
}

/// NIO's request parts as HTTP types' (the server's codec, `HTTP1ToHTTPServerCodec`, does this).
final class HTTPTypesRequestParts: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = RoutedRequests.InboundIn

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let request = HTTPRequest(
                method: HTTPRequest.Method(head.method.rawValue)!, scheme: nil, authority: nil, path: head.uri)
            context.fireChannelRead(wrapInboundOut(.head(request)))
        case .body(let body): context.fireChannelRead(wrapInboundOut(.body(body)))
        case .end: context.fireChannelRead(wrapInboundOut(.end(nil)))
        }
    }
}

/// The router: the requests given it (`METHOD target`), and bodies' bytes.
final class Route: ChannelInboundHandler {
    typealias InboundIn = RoutedRequests.InboundIn

    private(set) var requests: [String] = []
    private(set) var bodyBytes = 0
    private(set) var ends = 0
    var answered = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): requests.append("\(head.method.rawValue) \(head.path ?? "")")
        case .body(let body): bodyBytes += body.readableBytes
        case .end: ends += 1
        }
    }
}
