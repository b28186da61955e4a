import Hummingbird
import NIOCore

/// The request context of `imagery serve`: Hummingbird's basics, and the connection the request
/// came on (so that expensive work can be cancelled when its client goes, ``ConnectionWatcher``).
struct ServerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
