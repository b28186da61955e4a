import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 child channel with a ``StoredHitHandler`` after its connection-state
/// handler (which `additionalChannelHandlers` would put it before: idle timeouts and graceful
/// shutdown would then not see the requests it answers).
struct StoredHitChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let http1: HTTP1Channel
    let hits: StoredHits
    let serverName: String

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let state = try pipeline.handler(type: HTTPConnectionStateHandler.self)
            try pipeline.addHandler(StoredHitHandler(hits: hits, serverName: serverName), position: .after(state))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with hits answered on the event loop (`hits`), or plain HTTP/1 (`nil`).
    static func http1(configuration: HTTP1Channel.Configuration, hits: StoredHits?, serverName: String) -> HTTPServerBuilder {
        guard let hits else { return .http1(configuration: configuration) }
        return HTTPServerBuilder { responder in
            StoredHitChannel(http1: HTTP1Channel(responder: responder, configuration: configuration), hits: hits, serverName: serverName)
        }
    }
}
