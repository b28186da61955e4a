import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 child channel with hits answered before its decoder: a ``HitHandler`` first
/// in the pipeline, and ``RoutedRequests`` after the connection-state handler. `http1` comes without
/// an idle timeout: the ``HitHandler`` keeps it, as it alone sees every request.
struct StoredHitChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let http1: HTTP1Channel
    let hits: StoredHits
    let limits: RequestHead.Limits
    let idleTimeout: TimeAmount?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let handler = HitHandler(hits: hits, limits: limits, idleTimeout: idleTimeout)
            try pipeline.addHandler(handler, position: .first)
            try pipeline.addHandler(
                RoutedRequests(handler), position: .after(try pipeline.handler(type: HTTPConnectionStateHandler.self)))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with hits answered before the decoder (`hits`), or plain HTTP/1 (`nil`).
    static func http1(configuration: HTTP1Channel.Configuration, hits: StoredHits?, limits: RequestHead.Limits)
        -> HTTPServerBuilder
    {
        guard let hits else { return .http1(configuration: configuration) }
        var configuration = configuration
        let idleTimeout = configuration.idleTimeout
        configuration.idleTimeout = nil
        return HTTPServerBuilder { [configuration] responder in
            StoredHitChannel(
                http1: HTTP1Channel(responder: responder, configuration: configuration), hits: hits, limits: limits,
                idleTimeout: idleTimeout
            )
        }
    }
}
