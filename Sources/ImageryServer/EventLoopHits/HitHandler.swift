import Foundation
import HTTPTypes
import Hummingbird
import Imagery
import ImageryDiskCache
import NIOCore
import NIOHTTPTypes

/// Answers hits where the connection's bytes arrive, before the HTTP decoder: a request whose head
/// ``RequestHead`` reads and whose text result storage resolved (``StoredHits``) is answered at
/// once from the bytes kept in memory: no decoder, no HTTP types, no encoder, no async channel, no
/// task, no router (a hit through all of them cost twice what nginx spends on a static file, most
/// of it theirs). Every other request's bytes go on to the decoder, whole, and the route answers.
/// The answer is a route's, byte for byte but the time (`Date`, `Age`, max-age), with the same
/// log line and metrics.
///
/// - Order: a request is answered here only when every request passed on has been answered
///   (``RoutedRequests`` counts them); pipelined hits behind a miss go to the router in turn.
/// - Bytes the reader does not read (a body, HTTP/1.0, an unusual field; ``RequestHead``) go to the
///   decoder, and so does everything after them on that connection: the decoder's limits and
///   errors hold as before.
/// - Idle connections: the server's own idle timeout would not see the requests answered here, so
///   this handler keeps it (``ServerConfiguration/Listener/idleTimeout``) for every request, as it did: closed
///   when no whole request arrived and no answer ended for that long (a dripping head included),
///   never while a route is answering.
final class HitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let hits: StoredHits
    private let limits: RequestHead.Limits
    private let idleTimeout: TimeAmount?
    /// Requests passed on whose answer has not ended, and whether the last one's end is still to come in.
    private var routed = 0
    private var routedBeingRead = false
    /// The bytes go to the decoder, unread, from now on.
    private var passingThrough = false
    /// The start of a request whose head is not all here yet.
    private var unread: ByteBuffer?
    private var unflushed = false
    /// Whether the socket is corked: a file's answer waits to go out with its head in full frames.
    private var corked = false
    private var lastActivity = NIODeadline.now()
    private var idleTask: Scheduled<Void>?
    /// The `Date` field's value and the second it was made for.
    private var date: (second: Int, text: String) = (0, "")

    init(hits: StoredHits, limits: RequestHead.Limits, idleTimeout: TimeAmount?) {
        self.hits = hits
        self.limits = limits
        self.idleTimeout = idleTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !passingThrough else {
            context.fireChannelRead(data)
            return
        }
        var buffer = unwrapInboundIn(data)
        if var start = unread.take() {
            start.writeBuffer(&buffer)
            buffer = start
        }
        while buffer.readableBytes > 0 {
            switch buffer.withUnsafeReadableBytes({ RequestHead.read($0, limits: limits) }) {
            case .incomplete:
                unread = buffer
                return
            case .unsupported:
                passingThrough = true
                context.fireChannelRead(wrapInboundOut(buffer))
                return
            case .complete(let head):
                if routed == 0, let hit = hits.hit(head), send(hit, for: head, context: context) {
                    buffer.moveReaderIndex(forwardBy: head.length)
                } else {
                    // The decoder reads it whole and passes it up at once (``RoutedRequests`` counts it).
                    context.fireChannelRead(wrapInboundOut(buffer.readSlice(length: head.length)!))
                }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        if corked {
            corked = false
            try? context.channel.syncOptions?.setOption(Self.cork, value: 0)  // what is left of the last frame goes now
        }
        context.fireChannelReadComplete()
    }

    /// Sends the answer to `hit`; `false` when it cannot be sent from here after all (no descriptor
    /// left to send a file from): nothing was written, and the router answers.
    private func send(_ hit: StoredHits.Hit, for head: RequestHead, context: ChannelHandlerContext) -> Bool {
        let start = ContinuousClock.now
        let second = Int(hit.now.timeIntervalSince1970)
        var (bytes, status, sendsBody) = hits.response(
            to: hit, for: head, date: date(at: second), allocator: context.channel.allocator)
        var body: IOData?
        var file: NIOFileHandle?
        if sendsBody {
            switch hit.stored {
            case .memory(let stored):
                body = .byteBuffer(stored.body)
            case .disk(let stored, _) where stored.size <= Self.largestReadBody:
                // Read in after its head, and sent with it in one write (one copy more than `sendfile`, four
                // system calls fewer: measured faster for thumbnails). A file shorter than its entry now is a miss.
                // The body is read to a 64-byte boundary (the kernel's copy to an unaligned one measured at
                // three times the cost): the head goes just before it.
                var buffer = context.channel.allocator.buffer(
                    capacity: Self.alignment + bytes.readableBytes + stored.size)
                let base = buffer.withVeryUnsafeMutableBytes { Int(bitPattern: $0.baseAddress) }
                let start = (Self.alignment - (base + bytes.readableBytes) % Self.alignment) % Self.alignment
                buffer.moveWriterIndex(to: start)
                buffer.moveReaderIndex(to: start)
                buffer.writeImmutableBuffer(bytes)
                let headLength = buffer.writerIndex
                let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: stored.size) { bytes in
                    var offset = 0
                    while offset < stored.size {
                        let result = pread(
                            stored.file.descriptor, bytes.baseAddress! + offset, stored.size - offset, off_t(offset))
                        if result < 0, errno == EINTR { continue }
                        if result <= 0 { break }
                        offset += result
                    }
                    return offset
                }
                guard count == stored.size else { return false }
                hits.read(buffer.getSlice(at: headLength, length: count)!, of: hit)
                bytes = buffer
            case .disk(let stored, _):
                // `sendfile` from a descriptor of its own, closed once written (or not): the cache
                // may close its own meanwhile. A file shorter than its entry now is a miss (`sendfile`
                // would stop short of the length the head states).
                var status = stat()
                guard fstat(stored.file.descriptor, &status) == 0, Int(status.st_size) == stored.size else {
                    return false
                }
                let descriptor = dup(stored.file.descriptor)
                guard descriptor >= 0 else { return false }
                let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
                body = .fileRegion(FileRegion(fileHandle: handle, readerIndex: 0, endIndex: stored.size))
                file = handle
                // The head is written, then the file is sent: corked, they leave in full frames rather than
                // the head in a packet of its own (nginx's `tcp_nopush`); uncorked when the turn's writes are out.
                if !corked {
                    corked = (try? context.channel.syncOptions?.setOption(Self.cork, value: 1)) != nil
                }
            }
        }
        context.write(NIOAny(bytes), promise: nil)
        if let body {
            let written = file.map { file in
                let promise = context.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenComplete { _ in try? file.close() }
                return promise
            }
            context.write(NIOAny(body), promise: written)
        }
        unflushed = true
        lastActivity = .now()
        hits.sent(hit)
        hits.observation.metrics.eventLoopHit()
        hits.observation.finished(
            method: head.method == .head ? .head : .get, path: hit.path, status: Int(status.code),
            bytes: status == .ok ? hit.stored.bodySize : 0, since: start, logger: hits.logger,
            requestID: HitRequestID.next(), counted: false,
            lineWriter: hits.lineWriter
        )
        return true
    }

    /// Bodies up to this size are read and written with their head; larger ones are sent from their file.
    static let largestReadBody = 64 * 1024
    private static let alignment = 64
    private static let cork = ChannelOptions.Types.SocketOption(
        level: SocketOptionLevel(IPPROTO_TCP), name: SocketOptionName(TCP_CORK))

    /// `Date` at `second` (since 1970): an IMF-fixdate, made once a second.
    private func date(at second: Int) -> String {
        if second != date.second { date = (second, HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(second)))) }
        return date.text
    }

    // MARK: - Requests passed on (told by ``RoutedRequests``)

    fileprivate func routedHeadRead() {
        routed += 1
        routedBeingRead = true
        lastActivity = .now()
    }

    fileprivate func routedEndRead() {
        routedBeingRead = false
    }

    fileprivate func routedAnswerEnded(context: ChannelHandlerContext) {
        routed -= 1
        if routed == 0 {
            lastActivity = .now()
            scheduleIdleCheck(at: lastActivity, context: context)
        }
    }

    // MARK: - Idle connections

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { scheduleIdleCheck(at: .now(), context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTask?.cancel()
        idleTask = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        lastActivity = .now()
        scheduleIdleCheck(at: lastActivity, context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTask?.cancel()
        idleTask = nil
        context.fireChannelInactive()
    }

    private func scheduleIdleCheck(at activity: NIODeadline, context: ChannelHandlerContext) {
        guard let idleTimeout, idleTask == nil else { return }
        idleTask = context.eventLoop.assumeIsolated().scheduleTask(deadline: activity + idleTimeout) { [self] in
            idleTask = nil
            // A route is answering a request read whole: its end schedules the next check.
            if routed > 0, !routedBeingRead { return }
            if NIODeadline.now() >= lastActivity + idleTimeout {
                context.close(promise: nil)
            } else {
                scheduleIdleCheck(at: lastActivity, context: context)
            }
        }
    }
}

/// Counts the requests ``HitHandler`` passed on, after the server's HTTP codec: their heads and
/// ends coming in, their answers' ends going out.
final class RoutedRequests: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let hits: HitHandler

    init(_ hits: HitHandler) { self.hits = hits }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: hits.routedHeadRead()
        case .end: hits.routedEndRead()
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ended = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if ended { hits.routedAnswerEnded(context: context) }
    }
}

@available(*, unavailable)
extension HitHandler: Sendable {}

@available(*, unavailable)
extension RoutedRequests: Sendable {}
