import Foundation
import Imagery
import NIOCore
import Synchronization

/// Cancels the work of requests whose client has gone: a request registers a cancellation with
/// its connection for as long as its expensive part runs (a miss in every cache: a fetch, a
/// decode, an encode), and when the connection closes (the client disconnected, or timed out)
/// every registered cancellation runs. The pipeline then cancels a job whose last waiter this
/// was: its download is aborted and its memory budget given back.
///
/// Registrations live in a table keyed by connection and are removed when their request ends, so
/// a keep-alive connection that carries many requests holds only those in flight (callbacks on
/// the channel's `closeFuture` would pile up for the life of the connection).
final class ConnectionWatcher: @unchecked Sendable {
    // @unchecked: `table` is only touched under `lock`.
    private struct State {
        var waiting: [ObjectIdentifier: [UInt64: @Sendable () -> Void]] = [:]
        var nextID: UInt64 = 0
    }

    private let lock = NSLock()
    private var table = State()
    private func withLock<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&table)
    }

    /// Runs `operation` in a task of its own that is cancelled if `channel` closes first (`nil`: a
    /// connection not watched), if it runs longer than `limit`, or if the calling task is cancelled.
    /// - Throws: What `operation` throws; ``RequestTimeout`` when `limit` ran out.
    func cancellingOnClose<T: Sendable>(
        _ channel: (any Channel)?, within limit: Duration? = nil, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let work = Task { try await operation() }
        let timedOut = Flag()
        // A limit that almost never runs out: an entry of the shared timers, not a sleeping task.
        let timer = limit.map { limit in
            DeadlineTimers.shared.schedule(after: limit) {
                timedOut.set()
                work.cancel()
            }
        }
        defer { timer.map(DeadlineTimers.shared.cancel) }
        let registration = channel.map { channel in
            let connection = ObjectIdentifier(channel)
            return (
                connection,
                withLock { state in
                    state.nextID += 1
                    state.waiting[connection, default: [:]][state.nextID] = { work.cancel() }
                    return state.nextID
                }
            )
        }
        // A connection that closed before this registration is not noticed: its work runs on, as
        // it would without a watcher (`isActive` cannot tell: channels of in-process tests never are).
        defer {
            if let (connection, id) = registration {
                withLock { state in
                    state.waiting[connection]?[id] = nil
                    if state.waiting[connection]?.isEmpty == true { state.waiting[connection] = nil }
                }
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                work.cancel()
            }
        } catch  where timedOut.isSet {
            throw RequestTimeout(limit: limit ?? .zero)
        }
    }

    /// `channel` has closed: cancels what its requests registered.
    func closed(_ channel: any Channel) {
        let cancellations = withLock { $0.waiting.removeValue(forKey: ObjectIdentifier(channel)) }
        cancellations?.values.forEach { $0() }
    }

    /// The channel handler that tells the watcher when a connection closes.
    func handler() -> Handler { Handler(watcher: self) }

    final class Handler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = NIOAny
        let watcher: ConnectionWatcher

        init(watcher: ConnectionWatcher) { self.watcher = watcher }

        func channelInactive(context: ChannelHandlerContext) {
            watcher.closed(context.channel)
            context.fireChannelInactive()
        }

        /// The client closed its side (the server allows half-closed connections): it has gone,
        /// as a browser that navigates away, or a CDN that gives up, does.
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { watcher.closed(context.channel) }
            context.fireUserInboundEventTriggered(event)
        }
    }
}

/// A request's work ran longer than the server allows (`--request-timeout`); it was cancelled.
struct RequestTimeout: Error, Sendable {
    let limit: Duration
}

/// A flag set once, from any thread.
private final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
